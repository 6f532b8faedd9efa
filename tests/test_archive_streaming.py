"""``archive`` streams: games are staged on disk as they are verified, a few in flight,
and written a batch at a time; what the archive holds is exactly what it held before.

The pinned digests were taken with the former implementation (all rows of a batch held in memory
as row objects, then written): every table's rows, read back from the Parquet files, are the same,
in one batch or in many, with one process or two.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pytest

from mortecouille.replays.analytics.archive import archive_games, read_manifest, sql_string
from mortecouille.replays.analytics.schema import TABLES
from tests.helpers import golden_logs_with_bot_games

pytestmark = pytest.mark.slow

#: table -> (rows, first 24 hex digits of the sha256 of the rows' repr, ordered by every column)
PINNED = {
    "games": (11, "db3c09a6ae34265e5f2d9f50"),
    "events": (4727, "bf1584666413e4a5d160dea4"),
    "dice": (1274, "602f075f6161155cc109a8b8"),
    "shots": (174, "27d906da8f7a5f60be1f0a65"),
    "collisions": (18, "c00ab5ed435a8cb7c9f3d5d4"),
    "damage": (236, "cd259be570116024f7bd2add"),
    "fires": (6, "6541fcc4f24026150287bbf2"),
    "ships": (67, "21f28e2a04916d318867a1d8"),
    "rulings": (2, "9c14facdfccbbe4cf9980033"),
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The golden logs (both rulesets, rulings, scenarios, contributed dice) and four bot games."""
    folder = golden_logs_with_bot_games(tmp_path_factory.mktemp("logs"), 4, "pin", 40)
    return folder


def table_digests(archive: Path) -> dict[str, tuple[int, str]]:
    connection = duckdb.connect()
    found = {}
    for table in TABLES:
        files = sql_string(str(archive / table / "**" / "*.parquet"))
        rows = connection.execute(
            f"SELECT * FROM read_parquet({files}, hive_partitioning = true) ORDER BY ALL"
        ).fetchall()
        found[table] = (len(rows), hashlib.sha256(repr(rows).encode()).hexdigest()[:24])
    return found


@pytest.mark.parametrize(("flush_events", "jobs"), [(400_000, 1), (500, 2)])
def test_the_archive_holds_the_rows_it_held_before_in_one_batch_or_many(
    logs: Path, tmp_path: Path, flush_events: int, jobs: int
) -> None:
    archive = tmp_path / "archive"
    result = archive_games(
        sorted(logs.glob("*.jsonl")), archive, "2026-01", flush_events=flush_events, jobs=jobs
    )
    assert result.exit_code == 0 and result.events == PINNED["events"][0]
    assert table_digests(archive) == PINNED
    batches = read_manifest(archive).batches
    assert len(batches) == 1 if flush_events > result.events else len(batches) > 1
    # nothing staged is left behind once the run is done
    assert not list(archive.glob(".staging-*"))
    for name in result.archived:
        assert (archive / "logs" / f"{name}.jsonl").read_bytes() == (logs / f"{name}.jsonl").read_bytes()


def test_a_killed_runs_staging_folder_is_removed_and_never_archived(logs: Path, tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    some = sorted(logs.glob("*.jsonl"))[:3]
    archive_games(some, archive, "2026-01", jobs=1)
    # what a run killed before its commit leaves: staged rows and logs of a batch no manifest lists
    left = archive / ".staging-0123456789abcdef0123456789abcdef"
    (left / "logs").mkdir(parents=True)
    (left / "events.jsonl").write_text('{"game": "ghost"}\n')
    (left / "logs" / "ghost.jsonl").write_text("{}\n")
    result = archive_games(sorted(logs.glob("*.jsonl")), archive, "2026-01", jobs=1)
    assert result.exit_code == 0 and len(result.already) == 3
    assert not left.exists()
    assert not (archive / "logs" / "ghost.jsonl").exists()
    assert table_digests(archive) == PINNED
