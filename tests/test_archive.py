"""``archive``: finished, verified games into hive-partitioned Parquet, idempotently (real DuckDB)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mortecouille.app.simulate import simulate
from mortecouille.core.game import fold
from mortecouille.events.codec import canonical
from mortecouille.events.combat import ShotFired
from mortecouille.events.fleet import ShipBought
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage.errors import Conflict
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.analytics.archive import archive_games, read_manifest
from mortecouille.replays.analytics.query import query_archive
from mortecouille.replays.analytics.rows import game_rows
from mortecouille.replays.analytics.schema import (
    PARTITION_COLUMNS,
    ROW_TYPES,
    TABLES,
    readme_text,
    sql_type,
)
from tests.cli_helpers import run_cli
from tests.forgery import forge_with_turn_hashes
from tests.helpers import ROOT, file_digests, write_game

pytestmark = pytest.mark.slow


def count(archive: Path, sql: str) -> int:
    return int(query_archive(archive, sql).rows[0][0])


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three real bot games (seeded, verifiable) and one hand-made game with a ruling."""
    games = tmp_path_factory.mktemp("games")
    simulate(games, 3, "arch", max_turns=12, fleets="demo")  # the fleets these tests were written against
    bought = ShipBought(player="Anne", ship="Hope", kind="green-small", price=20000)
    ruling = RulingRecorded(turn=1, rule="C2", text="the wreck blocks")
    write_game(games, "handmade", [bought, ruling], winner="Anne")
    return games


@pytest.fixture(scope="module")
def archived(simulated: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    archive = tmp_path_factory.mktemp("archive") / "a"
    result = archive_games(sorted(simulated.glob("*.jsonl")), archive, "2026-03")
    assert result.exit_code == 0 and len(result.archived) == 4, result
    return archive


def test_archive_then_query_gives_the_counts_of_folding_the_logs(simulated: Path, archived: Path) -> None:
    logs = {path.stem: GameLog(path).read() for path in simulated.glob("*.jsonl")}
    every = [event for events in logs.values() for event in events]
    types = Counter(event.__struct_config__.tag for event in every)
    archived_types = dict(query_archive(archived, "SELECT type, count(*) FROM events GROUP BY type").rows)
    assert archived_types == dict(types)
    assert count(archived, "SELECT count(*) FROM dice") == types["die-rolled"] > 0
    assert count(archived, "SELECT count(*) FROM shots") == types["shot-fired"] > 0
    assert count(archived, "SELECT count(*) FROM collisions") == types["collision"]
    assert count(archived, "SELECT count(*) FROM damage") == types["damage"] > 0
    assert count(archived, "SELECT count(*) FROM fires") == types["fire-checked"]
    assert count(archived, "SELECT count(*) FROM rulings WHERE rule = 'C2'") == 1
    ships = sum(len(fold(events).ships) for events in logs.values())
    assert count(archived, "SELECT count(*) FROM ships") == ships
    games = query_archive(archived, "SELECT game, events, winner, ruleset, month FROM games ORDER BY game")
    assert [(g, n) for g, n, *_ in games.rows] == sorted((name, len(e)) for name, e in logs.items())
    assert {(r, m) for *_, r, m in games.rows} == {("mortecouille", "2026-03")}
    winners = {name: fold(events).winner for name, events in logs.items()}
    assert {g: w for g, _, w, _, _ in games.rows} == winners


def test_payload_is_the_log_line_byte_for_byte_and_the_log_is_kept_beside(
    simulated: Path, archived: Path
) -> None:
    name = "sim-arch-1"
    lines = (simulated / f"{name}.jsonl").read_bytes().splitlines()
    payloads = query_archive(archived, f"SELECT payload FROM events WHERE game = '{name}' ORDER BY seq").rows
    assert [p.encode() for (p,) in payloads] == lines
    assert (archived / "logs" / f"{name}.jsonl").read_bytes() == (simulated / f"{name}.jsonl").read_bytes()
    first = json.loads(lines[5])
    claimed = first.pop("hash")
    assert hashlib.sha256(canonical(first)).hexdigest() == claimed


def test_shot_rows_match_the_events(simulated: Path, archived: Path) -> None:
    shots = [
        (e.seq, e.distance, e.cannons, e.mode, list(e.dice), e.hit, str(e.needed))
        for e in GameLog(simulated / "sim-arch-0.jsonl").read()
        if isinstance(e, ShotFired)
    ]
    rows = query_archive(
        archived,
        "SELECT seq, distance, cannons, mode, dice, hit, needed FROM shots WHERE game = 'sim-arch-0' ORDER BY seq",
    ).rows
    assert [tuple(r) for r in rows] == shots


def test_archiving_twice_adds_nothing_whatever_the_month(simulated: Path, archived: Path) -> None:
    before = file_digests(archived)
    again = run_cli("archive", "--games-dir", str(simulated), "--to", str(archived), "--month", "2027-01")
    assert again.exit_code == 0, again.output
    assert "archived 0 game(s)" in again.output and "4 already archived" in again.output
    assert file_digests(archived) == before
    assert count(archived, "SELECT count(DISTINCT month) FROM events") == 1


def test_a_tampered_log_is_refused_by_name_and_the_others_are_archived(
    simulated: Path, tmp_path: Path
) -> None:
    games = tmp_path / "games"
    shutil.copytree(simulated, games)
    path = games / "sim-arch-2.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if b'"die-rolled"' in line)
    lines[index] = lines[index].replace(b'"value":', b'"value":1', 1)  # a 3 becomes a 13
    path.write_bytes(b"".join(lines))
    result = run_cli("archive", "--games-dir", str(games), "--to", str(tmp_path / "a"), "--month", "2026-03")
    assert result.exit_code == 4
    assert "refused sim-arch-2: corrupt or tampered log" in result.output
    assert f"seq {index}" in result.output or f"line {index + 1}" in result.output
    assert "archived 3 game(s)" in result.output
    assert sorted(read_manifest(tmp_path / "a").games) == ["handmade", "sim-arch-0", "sim-arch-1"]
    assert count(tmp_path / "a", "SELECT count(*) FROM games WHERE game = 'sim-arch-2'") == 0


def test_unfinished_games_are_skipped_with_a_note(tmp_path: Path) -> None:
    write_game(tmp_path / "g", "open", ended=False)
    write_game(tmp_path / "g", "done")
    result = run_cli(
        "archive", "--games-dir", str(tmp_path / "g"), "--to", str(tmp_path / "a"), "--month", "2026-03"
    )
    assert result.exit_code == 0
    assert "skipped open: not finished" in result.output and "archived 1 game(s)" in result.output
    assert list(read_manifest(tmp_path / "a").games) == ["done"]


def test_a_log_changed_after_archiving_is_refused_as_a_conflict(tmp_path: Path) -> None:
    log = write_game(tmp_path / "g", "done")
    archive = tmp_path / "a"
    assert archive_games([log.path], archive, "2026-03").archived == ["done"]
    before = file_digests(archive)
    log.append([RulingRecorded(turn=1, rule="T3", text="late ruling")])
    result = run_cli(
        "archive", "--games-dir", str(tmp_path / "g"), "--to", str(archive), "--month", "2026-03"
    )
    assert result.exit_code == 3
    assert "refused done: already archived with last hash" in result.output
    assert file_digests(archive) == before


def test_part_files_of_a_crashed_run_are_removed(tmp_path: Path) -> None:
    log = write_game(tmp_path / "g", "done")
    archive = tmp_path / "a"
    archive_games([log.path], archive, "2026-03")
    committed = sorted(archive.glob("events/**/*.parquet"))
    orphan = committed[0].with_name("part-0123456789abcdef-0.parquet")
    shutil.copy(committed[0], orphan)  # what a run that crashed before its manifest leaves
    assert count(archive, "SELECT count(*) FROM games") == 1
    assert count(archive, "SELECT count(*) FROM events") == 4  # the orphan is read until cleaned
    archive_games([log.path], archive, "2026-03")
    assert not orphan.exists()
    assert count(archive, "SELECT count(*) FROM events") == 2


def test_layout_is_hive_partitioned_with_a_readme_naming_every_column(archived: Path) -> None:
    for table in ("games", "events", "dice", "shots", "damage", "ships"):
        parts = list((archived / table).glob("ruleset=mortecouille/month=2026-03/part-*.parquet"))
        assert parts, table
    readme = (archived / "README.md").read_text()
    assert readme == readme_text()
    for table, columns in TABLES.items():
        assert f"## {table}" in readme
        for column, kind in columns:
            assert f"| {column} | {kind} |" in readme


#: The published schema, pinned: deriving it from the row types must not change a column or a type.
PUBLISHED_COLUMNS = {
    "games": "game:VARCHAR players:VARCHAR[] budget:BIGINT board_width:INTEGER board_height:INTEGER "
    "rules_version:VARCHAR dice_mode:VARCHAR forked_from:VARCHAR scenario:BOOLEAN turns:INTEGER "
    "winner:VARCHAR end_reason:VARCHAR events:BIGINT last_hash:VARCHAR",
    "events": "game:VARCHAR seq:BIGINT turn:INTEGER type:VARCHAR ship:VARCHAR payload:VARCHAR",
    "dice": "game:VARCHAR seq:BIGINT turn:INTEGER phase:VARCHAR ship:VARCHAR purpose:VARCHAR index:INTEGER "
    "sides:INTEGER value:INTEGER source:VARCHAR",
    "shots": "game:VARCHAR seq:BIGINT turn:INTEGER ship:VARCHAR weapon:VARCHAR target:VARCHAR distance:INTEGER "
    "cannons:INTEGER mode:VARCHAR dice:INTEGER[] bonus:INTEGER needed:VARCHAR needed_total:INTEGER "
    "hit:BOOLEAN damage:INTEGER flaming:BOOLEAN",
    "collisions": "game:VARCHAR seq:BIGINT turn:INTEGER round:INTEGER phase:VARCHAR step:INTEGER rule:VARCHAR "
    "ship_a:VARCHAR ship_b:VARCHAR square_x:INTEGER square_y:INTEGER rock_x:INTEGER rock_y:INTEGER",
    "damage": "game:VARCHAR seq:BIGINT turn:INTEGER round:INTEGER phase:VARCHAR ship:VARCHAR amount:DOUBLE "
    "cause:VARCHAR other:VARCHAR rules:VARCHAR[]",
    "fires": "game:VARCHAR seq:BIGINT turn:INTEGER ship:VARCHAR phase:VARCHAR die:INTEGER out:BOOLEAN "
    "damage:INTEGER next_phase:VARCHAR abandoned:BOOLEAN",
    "ships": "game:VARCHAR owner:VARCHAR ship:VARCHAR kind:VARCHAR options:VARCHAR[] fleet_options:VARCHAR[] "
    "price:BIGINT damage:DOUBLE damage_dealt:DOUBLE status:VARCHAR won:BOOLEAN",
    "rulings": "game:VARCHAR seq:BIGINT turn:INTEGER rule:VARCHAR text:VARCHAR adjustments:INTEGER",
}


def test_the_schema_derived_from_the_row_types_is_the_published_one() -> None:
    assert {table: " ".join(f"{n}:{k}" for n, k in columns) for table, columns in TABLES.items()} == (
        PUBLISHED_COLUMNS
    )
    assert list(TABLES) == list(PUBLISHED_COLUMNS)


def test_each_table_is_one_row_type_and_the_rows_are_built_as_it(simulated: Path) -> None:
    for row_type in ROW_TYPES:
        assert [name for name, _ in TABLES[row_type.table]] == list(row_type.__struct_fields__)
    with pytest.raises(TypeError, match="Integer or Bigint"):
        sql_type(int)  # an int column must say its width
    path = next(simulated.glob("*.jsonl"))
    data = path.read_bytes()
    rows = game_rows(path.stem, GameLog(path).read(), data.splitlines())
    by_table = {row_type.table: row_type for row_type in ROW_TYPES}
    assert set(rows) == set(TABLES)
    for table, table_rows in rows.items():
        assert all(type(row) is by_table[table] for row in table_rows), table


def test_the_parquet_files_have_the_schema_columns_and_types(archived: Path) -> None:
    import duckdb

    connection = duckdb.connect()
    for table, columns in TABLES.items():
        if not any((archived / table).glob("**/*.parquet")):
            continue
        described = connection.sql(
            f"DESCRIBE SELECT * FROM read_parquet('{archived}/{table}/**/*.parquet', hive_partitioning = true)"
        ).fetchall()
        found = [(name, kind) for name, kind, *_ in described]
        assert found[: len(columns)] == list(columns), table
        assert sorted(found[len(columns) :]) == sorted((name, "VARCHAR") for name in PARTITION_COLUMNS)


def test_the_archive_reads_without_this_project(archived: Path, tmp_path: Path) -> None:
    """Plain DuckDB in a fresh interpreter, from another directory, no project module on the path."""
    script = (
        "import duckdb, sys\n"
        "con = duckdb.connect()\n"
        f"rows = con.sql(\"SELECT ruleset, month, count(*) FROM read_parquet('{archived}/dice/**/*.parquet', "
        'hive_partitioning = true) GROUP BY ALL").fetchall()\n'
        "assert 'replays' not in sys.modules and 'events' not in sys.modules\n"
        "print(rows)\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[('mortecouille', '2026-03', ")


def test_importing_the_cli_does_not_import_duckdb() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, mortecouille.cli.main; assert 'duckdb' not in sys.modules, 'duckdb imported'",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_no_progress_bar_when_not_a_terminal(tmp_path: Path) -> None:
    write_game(tmp_path / "g", "done")
    result = run_cli(
        "archive", "--games-dir", str(tmp_path / "g"), "--to", str(tmp_path / "a"), "--month", "2026-03"
    )
    assert result.exit_code == 0, result.output
    assert "archived 1 game(s)" in result.output and "archiving" not in result.output


def test_month_must_be_year_and_month(tmp_path: Path) -> None:
    write_game(tmp_path / "g", "done")
    result = run_cli(
        "archive", "--games-dir", str(tmp_path / "g"), "--to", str(tmp_path / "a"), "--month", "2026-13"
    )
    assert result.exit_code == 2 and "--month" in result.output
    assert not (tmp_path / "a").exists()


def test_archiving_with_two_processes_gives_the_same_tables(
    simulated: Path, archived: Path, tmp_path: Path
) -> None:
    parallel = tmp_path / "parallel"
    result = archive_games(sorted(simulated.glob("*.jsonl")), parallel, "2026-03", jobs=2)
    assert result.exit_code == 0 and sorted(result.archived) == sorted(
        p.stem for p in simulated.glob("*.jsonl")
    )
    for table in ("games", "events", "dice", "shots", "collisions", "damage", "fires", "ships"):
        sql = f"SELECT * FROM {table} ORDER BY ALL"
        assert query_archive(parallel, sql).rows == query_archive(archived, sql).rows, table


def test_archive_rederive_option_catches_an_outcome_forged_with_its_turn_hashes(tmp_path: Path) -> None:
    games = tmp_path / "games"
    simulate(games, 1, "edit", max_turns=8, fleets="demo")  # a game known to land a shot
    path = next(games.glob("*.jsonl"))

    def lighter_hit(bodies: list[dict[str, Any]]) -> None:
        damage = next(b for b in bodies if b["type"] == "damage" and b["cause"] == "shot" and b["amount"] > 1)
        damage["amount"] -= 1
        shot = next(
            b
            for b in reversed(bodies[: damage["seq"]])
            if b["type"] == "shot-fired" and b["target"] == damage["ship"] and b["hit"]
        )
        shot["damage"] -= 1

    forge_with_turn_hashes(path, lighter_hit)
    assert archive_games([path], tmp_path / "quick", "2026-03").archived  # chain, dice and hashes agree
    caught = archive_games([path], tmp_path / "full", "2026-03", rederive_turns=True)
    assert not caught.archived and "rederive" in caught.refused[0].reason


def test_archive_to_an_existing_directory_that_is_no_archive_is_refused(tmp_path: Path) -> None:
    write_game(tmp_path / "g", "done")
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("my project's readme\n")
    before = file_digests(project)
    result = run_cli(
        "archive", "--games-dir", str(tmp_path / "g"), "--to", str(project), "--month", "2026-03"
    )
    assert result.exit_code == 2 and "--to" in result.output and "not an archive" in result.output
    assert "README.md" in result.output and "Traceback" not in result.output
    assert file_digests(project) == before and sorted(p.name for p in project.iterdir()) == ["README.md"]
    # the games directory itself is no archive either
    games_before = file_digests(tmp_path / "g")
    again = run_cli("archive", "--games-dir", str(tmp_path / "g"), "--to", str(tmp_path / "g"))
    assert again.exit_code == 2 and file_digests(tmp_path / "g") == games_before


def test_archive_to_an_empty_directory_or_one_a_crashed_first_run_left_is_accepted(tmp_path: Path) -> None:
    log = write_game(tmp_path / "g", "done")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert archive_games([log.path], empty, "2026-03").archived == ["done"]
    crashed = tmp_path / "crashed"
    (crashed / "logs").mkdir(parents=True)
    (crashed / ".lock").write_text("")
    (crashed / "README.md").write_text(readme_text())
    assert archive_games([log.path], crashed, "2026-03").archived == ["done"]
    assert archive_games([log.path], crashed, "2026-03").already == ["done"]


def test_a_waiting_archive_names_the_lock_holder_and_gives_up_with_exit_3(tmp_path: Path) -> None:
    log = write_game(tmp_path / "g", "done")
    archive = tmp_path / "a"
    assert archive_games([log.path], archive, "2026-03").archived == ["done"]
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR); fcntl.flock(fd, fcntl.LOCK_EX); "
            "os.pwrite(fd, b'%d\\n' % os.getpid(), 0); print('held', flush=True); sys.stdin.read()",
            str(archive / ".lock"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(Conflict, match=f"process {holder.pid}") as refused:
            archive_games([log.path], archive, "2026-03", lock_timeout=0.2)
        assert refused.value.exit_code == 3
    finally:
        holder.kill()
        holder.wait()
    assert archive_games([log.path], archive, "2026-03", lock_timeout=0.2).already == ["done"]


KILLED_ARCHIVE = """
import os, signal, sys
from multiprocessing import active_children
from pathlib import Path
from mortecouille.replays.analytics.archive import archive_games

def killed(game: str) -> None:
    print(" ".join(str(child.pid) for child in active_children()), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # as a referee's Ctrl-\\\\ or the OOM killer would

if __name__ == "__main__":
    logs = sorted(Path(sys.argv[1]).glob("*.jsonl"))
    archive_games(logs, Path(sys.argv[2]), "2026-03", on_game=killed, jobs=2)
"""


def test_a_killed_archive_with_workers_leaves_no_worker_holding_the_lock(
    simulated: Path, tmp_path: Path
) -> None:
    script = tmp_path / "killed_archive.py"
    script.write_text(KILLED_ARCHIVE)
    archive, printed = tmp_path / "a", tmp_path / "workers.txt"
    with printed.open("w") as out:  # a file, not a pipe: a surviving worker would hold a pipe open
        code = subprocess.run(
            [sys.executable, str(script), str(simulated), str(archive)], stdout=out, cwd=ROOT
        )
    assert code.returncode == -9
    workers = [int(pid) for pid in printed.read_text().split()]
    assert workers, "the archive run had no worker processes when it was killed"
    try:
        deadline = time.monotonic() + 120  # a bound against hanging, not a speed requirement
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(pid) for pid in workers), "workers outlived the killed archive run"
        result = archive_games(sorted(simulated.glob("*.jsonl")), archive, "2026-03", lock_timeout=60)
        assert result.exit_code == 0 and len(result.archived) == 4
    finally:
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie has finished: it only waits for its reaper)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_damaged_manifest_is_refused_as_corrupt_naming_the_file(tmp_path: Path) -> None:
    """A corrupt manifest is named with exit 4, never an unexpected error."""
    sims, archive = tmp_path / "sims", tmp_path / "archive"
    assert run_cli("simulate", "--games", "1", "--seed", "damaged-manifest", "--to", str(sims)).exit_code == 0
    assert run_cli("archive", "--games-dir", str(sims), "--to", str(archive)).exit_code == 0
    (archive / "manifest.json").write_text("garbage{")
    before = {p: p.read_bytes() for p in archive.rglob("*") if p.is_file()}
    result = run_cli("archive", "--games-dir", str(sims), "--to", str(archive))
    assert result.exit_code == 4, result.output
    assert "manifest.json is damaged" in result.output and "unexpected" not in result.output
    assert {p: p.read_bytes() for p in archive.rglob("*") if p.is_file()} == before
