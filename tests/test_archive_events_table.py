"""``archive`` writes the events table with DuckDB straight from the verified logs, its
workers are forked before the archive's lock is taken, and full batches are committed on a thread
while the next is staged: what the archive holds must not depend on any of it.

* the events table read back from the Parquet files is, row for row, what
  :func:`~mortecouille.replays.analytics.rows.event_rows` builds in Python from the typed events;
* a game whose name holds a file pattern's or SQL's special characters is archived under its
  name (logs are staged under numbers, never read by name);
* forked and spawned workers archive the same tables, and no worker holds the archive's lock;
* a commit failing on its thread fails the run and leaves nothing half done.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest

import mortecouille.replays.analytics.archive as archive_module
from mortecouille.events.codec import decode_lines
from mortecouille.events.rulings import RulingRecorded
from mortecouille.replays.analytics.archive import archive_games, sql_string
from mortecouille.replays.analytics.rows import event_rows
from mortecouille.replays.analytics.schema import TABLES
from tests.helpers import golden_logs_with_bot_games, write_game

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The golden logs (both rulesets, an upcast v1 line, contributed dice, a scenario) and two
    bot games."""
    folder = golden_logs_with_bot_games(tmp_path_factory.mktemp("logs"), 2, "events-table", 8)
    return folder


def table_rows(archive: Path, table: str) -> list[tuple[Any, ...]]:
    files = sql_string(str(archive / table / "**" / "*.parquet"))
    return (
        duckdb.connect()
        .execute(
            f"SELECT * EXCLUDE (ruleset, month), ruleset, month FROM read_parquet({files}, hive_partitioning = true) "
            "ORDER BY ALL"
        )
        .fetchall()
    )


def python_event_rows(logs: Path, month: str) -> list[tuple[Any, ...]]:
    """The events table as rows.event_rows builds it, partition columns added, sorted."""
    rows = []
    for path in sorted(logs.glob("*.jsonl")):
        data = path.read_bytes()
        events = decode_lines(data)
        for row in event_rows(path.stem, events, data.splitlines()):
            values = tuple(getattr(row, name) for name, _ in TABLES["events"])
            rows.append((*values, events[0].ruleset, month))  # type: ignore[attr-defined]
    return sorted(rows, key=sort_key)


def sort_key(row: tuple[Any, ...]) -> tuple[tuple[bool, Any], ...]:
    return tuple((value is None, value) for value in row)


def test_the_events_table_is_what_the_python_rows_say_for_every_line(logs: Path, tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    result = archive_games(sorted(logs.glob("*.jsonl")), archive, "2026-04")
    assert result.exit_code == 0 and not result.unfinished
    read = sorted(table_rows(archive, "events"), key=sort_key)
    expected = python_event_rows(logs, "2026-04")
    assert len(read) == len(expected) == result.events
    assert read == expected
    # both rulesets and lines without a turn or a ship are among them
    assert {row[-2] for row in read} == {"mortecouille", "blockade"}
    assert any(row[2] is None for row in read) and any(row[4] is None for row in read)


@pytest.mark.parametrize("name", ["it's [a]*game?", "x.jsonl", "0", "Ånne's {game} %_"])
def test_a_game_named_with_pattern_or_sql_characters_is_archived_under_its_name(
    name: str, tmp_path: Path
) -> None:
    games = tmp_path / "games"
    ruling = RulingRecorded(turn=1, rule="C2", text="it's [not] *here*")
    write_game(games, name, [ruling], winner="Anne")
    write_game(games, "plain", winner="Bart")
    archive = tmp_path / "archive"
    result = archive_games(sorted(games.glob("*.jsonl")), archive, "2026-04", jobs=2)
    assert result.exit_code == 0 and sorted(result.archived) == sorted([name, "plain"])
    events = table_rows(archive, "events")
    assert {row[0] for row in events} == {name, "plain"}
    named = [row for row in events if row[0] == name]
    assert [row[5].encode() for row in sorted(named, key=lambda row: row[1])] == (
        (games / f"{name}.jsonl").read_bytes().splitlines()
    )
    assert (archive / "logs" / f"{name}.jsonl").read_bytes() == (games / f"{name}.jsonl").read_bytes()
    assert (archive / "logs" / f"{name}.head").read_bytes() == (games / f"{name}.head").read_bytes()
    assert [row[0] for row in table_rows(archive, "rulings")] == [name]


def test_spawned_workers_archive_the_same_tables_as_forked_ones(
    logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = sorted(logs.glob("*.jsonl"))
    forked, spawned = tmp_path / "forked", tmp_path / "spawned"
    assert archive_module._forking_is_safe()  # this test's process has no other thread, on Linux
    archive_games(paths, forked, "2026-04", jobs=2, flush_events=2_000)
    monkeypatch.setattr(archive_module, "_forking_is_safe", lambda: False)
    archive_games(paths, spawned, "2026-04", jobs=2, flush_events=2_000)
    for table in TABLES:
        if any((forked / table).glob("**/*.parquet")):
            assert table_rows(spawned, table) == table_rows(forked, table), table


def test_a_process_holding_a_duckdb_connection_does_not_fork_its_workers() -> None:
    # DuckDB's worker threads are native: Python's threading module does not see them, the kernel
    # does; a fork beside them could leave one of their locks held in the worker forever
    assert archive_module._forking_is_safe()  # nothing else runs in this test's process
    connection = duckdb.connect()
    try:
        connection.execute("SELECT 42").fetchall()
        assert threading.active_count() == 1  # what Python sees: no other thread
        assert not archive_module._forking_is_safe()
    finally:
        connection.close()
    assert archive_module._forking_is_safe()  # closing the connection ends its threads


def test_archive_beside_an_open_duckdb_connection_spawns_its_workers(logs: Path, tmp_path: Path) -> None:
    paths = sorted(logs.glob("*.jsonl"))
    forked = tmp_path / "forked"
    archive_games(paths, forked, "2026-04", jobs=2, flush_events=2_000)
    connection = duckdb.connect()
    try:
        connection.execute("SELECT 42").fetchall()
        methods: list[str] = []
        real_context = multiprocessing.get_context

        def seen(method: str | None = None) -> multiprocessing.context.BaseContext:
            methods.append(str(method))
            return real_context(method)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(multiprocessing, "get_context", seen)
            beside = tmp_path / "beside"
            result = archive_games(paths, beside, "2026-04", jobs=2, flush_events=2_000)
    finally:
        connection.close()
    assert result.exit_code == 0
    assert methods == ["spawn"]
    for table in TABLES:
        if any((forked / table).glob("**/*.parquet")):
            assert table_rows(beside, table) == table_rows(forked, table), table


def test_no_worker_holds_the_archive_lock(logs: Path, tmp_path: Path) -> None:
    from multiprocessing import active_children

    archive = tmp_path / "archive"
    lock = str((archive / ".lock").resolve())
    seen: list[int] = []

    def look(game: str) -> None:
        for child in active_children():
            assert child.pid is not None
            seen.append(child.pid)
            opened = [os.readlink(fd) for fd in Path(f"/proc/{child.pid}/fd").iterdir() if fd.is_symlink()]
            assert lock not in opened, f"worker {child.pid} holds the archive's lock"

    result = archive_games(sorted(logs.glob("*.jsonl")), archive, "2026-04", on_game=look, jobs=2)
    assert result.exit_code == 0
    assert seen, "the run had no worker processes to look at"


def test_a_batch_that_fails_to_commit_on_its_thread_fails_the_run_and_leaves_nothing_half_done(
    logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Full batches are committed on a thread while the next is staged: a commit's failure still
    stops the run with its own error, after the commit in flight, and leaves no staging folder and
    no batch in the manifest; the next run archives every game."""
    paths = sorted(logs.glob("*.jsonl"))
    archive = tmp_path / "archive"
    real_write = archive_module.write_batch
    writes: list[str] = []
    threads: list[threading.Thread] = []

    def failing_write(archive: Path, batch: str, sources: dict[str, str], connection: Any) -> None:
        writes.append(batch)
        threads.append(threading.current_thread())
        if len(writes) == 2:
            raise OSError("disk full while writing the second batch")
        real_write(archive, batch, sources, connection)

    monkeypatch.setattr(archive_module, "write_batch", failing_write)
    with pytest.raises(OSError, match="disk full"):
        archive_games(paths, archive, "2026-04", flush_events=300, jobs=2)
    assert threads[1] is not threading.main_thread()  # batches of 300 events: not the last one
    assert not list(archive.glob(".staging-*"))
    manifest = archive_module.read_manifest(archive)
    assert manifest.batches == writes[:1]  # the first batch committed whole, the second not at all
    monkeypatch.setattr(archive_module, "write_batch", real_write)
    result = archive_games(paths, archive, "2026-04", flush_events=300, jobs=2)
    assert result.exit_code == 0
    assert sorted(result.archived + result.already) == sorted(path.stem for path in paths)
    events = table_rows(archive, "events")  # the failed batch's part files are gone: no row twice
    assert len(events) == sum(path.read_bytes().count(b"\n") for path in paths)
    assert {row[0] for row in events} == {path.stem for path in paths}
