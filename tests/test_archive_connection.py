"""``archive`` opens its one DuckDB connection on a thread while the workers verify, and
writes a batch committed beside the workers on one DuckDB thread, the last batch on all of them:

* a run with nothing new to archive never opens DuckDB;
* a connection that cannot be opened fails the run with its own error and commits nothing;
* the batches committed while games are still being verified are written on one thread, the
  last (even when its last game fills it) on DuckDB's default, every core.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import mortecouille.replays.analytics.archive as archive_module
from mortecouille.replays.analytics.archive import archive_games, read_manifest
from tests.helpers import golden_logs_with_bot_games

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The golden logs and two bot games."""
    folder = golden_logs_with_bot_games(tmp_path_factory.mktemp("logs"), 2, "connection", 8)
    return folder


def test_a_run_with_nothing_new_never_opens_duckdb(
    logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = sorted(logs.glob("*.jsonl"))
    archive = tmp_path / "archive"
    real_connect = archive_module._connect
    opened: list[int] = []

    def counted_connect() -> Any:
        opened.append(1)
        return real_connect()

    monkeypatch.setattr(archive_module, "_connect", counted_connect)
    first = archive_games(paths, archive, "2026-04", jobs=2)
    assert first.exit_code == 0 and first.archived and opened == [1]
    again = archive_games(paths, archive, "2026-04", jobs=2)
    assert again.exit_code == 0 and not again.archived and sorted(again.already) == sorted(first.archived)
    assert opened == [1]


def test_a_connection_that_cannot_be_opened_fails_the_run_and_commits_nothing(
    logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = sorted(logs.glob("*.jsonl"))
    archive = tmp_path / "archive"

    def broken_connect() -> Any:
        raise OSError("no memory for DuckDB")

    monkeypatch.setattr(archive_module, "_connect", broken_connect)
    with pytest.raises(OSError, match="no memory for DuckDB"):
        archive_games(paths, archive, "2026-04", flush_events=300, jobs=2)
    assert read_manifest(archive).batches == []
    assert not list(archive.glob(".staging-*"))
    assert not list((archive / "logs").iterdir())


@pytest.mark.parametrize("flush_events", [300, 1])  # with 1, the last game fills its own batch
def test_batches_committed_beside_the_workers_use_one_duckdb_thread_and_the_last_every_core(
    logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flush_events: int
) -> None:
    paths = sorted(logs.glob("*.jsonl"))
    real_write = archive_module.write_batch
    threads: list[int] = []

    def noted_write(archive: Path, batch: str, sources: dict[str, str], connection: Any) -> None:
        threads.append(connection.execute("SELECT current_setting('threads')").fetchone()[0])
        real_write(archive, batch, sources, connection)

    monkeypatch.setattr(archive_module, "write_batch", noted_write)
    result = archive_games(paths, tmp_path / "archive", "2026-04", flush_events=flush_events, jobs=2)
    assert result.exit_code == 0
    default = archive_module._connect().execute("SELECT current_setting('threads')").fetchone()
    assert default is not None
    assert len(threads) > 2
    assert threads[:-1] == [1] * (len(threads) - 1)
    assert threads[-1] == default[0]
