"""``query``: SQL over the archive (or raw logs) on a connection that cannot change anything."""

from __future__ import annotations

import csv
import gc
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest

from mortecouille.cli import analytics_commands
from mortecouille.events.game import DieRolled
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.analytics.archive import archive_games
from mortecouille.replays.analytics.query import QueryResult, archive_views, read_only_connection
from tests.cli_helpers import run_cli
from tests.helpers import file_digests, write_game

pytestmark = pytest.mark.slow


def rolls(values: list[int]) -> list[DieRolled]:
    return [
        DieRolled(turn=1, phase="wind", ship=None, purpose="wind", index=i, sides=6, value=v, source="table")
        for i, v in enumerate(values)
    ]


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("games")
    write_game(directory, "one", rolls([1, 2, 3, 6]), winner="Anne")
    write_game(directory, "two", rolls([6, 6]))
    return directory


@pytest.fixture(scope="module")
def archive(games: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Shared by the tests of this module: each checks that it left the archive unchanged or reads only."""
    target = tmp_path_factory.mktemp("archive") / "a"
    assert archive_games(sorted(games.glob("*.jsonl")), target, "2026-03").exit_code == 0
    return target


WRITES = [
    "DELETE FROM events",
    "CREATE TABLE stolen AS SELECT * FROM events",
    "INSERT INTO games SELECT * FROM games",
    "UPDATE dice SET value = 6",
    "DROP VIEW events",
    "COPY events TO '{archive}/events/ruleset=mortecouille/month=2026-03/evil.parquet' (FORMAT PARQUET)",
    "COPY (SELECT 1) TO '{archive}/x.csv'",
    "ATTACH '{archive}/other.duckdb' AS other",
    "SET enable_external_access = true",
    "EXPLAIN ANALYZE COPY (SELECT 1) TO '{archive}/y.csv'",
    "EXPLAIN DELETE FROM events",
    "SELECT 1; DELETE FROM events",
    "INSTALL httpfs",
]


@pytest.mark.parametrize("statement", WRITES)
def test_statements_that_could_write_are_refused_with_exit_2(archive: Path, statement: str) -> None:
    before = file_digests(archive)
    result = run_cli("query", str(archive), statement.format(archive=archive))
    assert result.exit_code == 2, result.output
    assert "error: SQL:" in result.output
    assert file_digests(archive) == before


def test_the_engine_itself_is_read_only_even_without_the_statement_check(archive: Path) -> None:
    """The connection ``query`` uses refuses writes and outside files on its own (layer 1)."""
    with read_only_connection(archive_views(archive), archive) as connection:
        assert connection.execute("SELECT count(*) FROM dice").fetchone() == (6,)
        for statement in (
            "CREATE TABLE t AS SELECT 1",
            "DROP VIEW dice",
            "SELECT * FROM read_csv('/etc/passwd')",
            "COPY (SELECT 1) TO '/tmp/mortecouille-should-not-exist.csv'",
            "SET enable_external_access = true",
            "ATTACH ':memory:' AS scratch",
        ):
            with pytest.raises(duckdb.Error):
                connection.execute(statement)
    assert not Path("/tmp/mortecouille-should-not-exist.csv").exists()


def test_reading_statements_run(archive: Path) -> None:
    table = run_cli(
        "query", str(archive), "SELECT value, count(*) AS n FROM dice GROUP BY value ORDER BY value"
    )
    assert table.exit_code == 0, table.output
    assert table.output.splitlines()[0].split() == ["value", "n"]
    assert [line.split() for line in table.output.splitlines()[2:]] == [
        ["1", "1"],
        ["2", "1"],
        ["3", "1"],
        ["6", "3"],
        ["(4", "rows)"],
    ]
    for statement in (
        "DESCRIBE shots",
        "SHOW TABLES",
        "EXPLAIN SELECT * FROM games",
        "PRAGMA version",
        "WITH x AS (SELECT 1 AS a) SELECT a FROM x",
        "FROM games SELECT game",
    ):
        assert run_cli("query", str(archive), statement).exit_code == 0, statement


def test_csv_and_json_formats(archive: Path) -> None:
    sql = "SELECT game, players, events, winner FROM games ORDER BY game"
    as_csv = run_cli("query", str(archive), sql, "--format", "csv")
    assert as_csv.exit_code == 0
    rows = list(csv.reader(io.StringIO(as_csv.output)))
    assert rows == [
        ["game", "players", "events", "winner"],
        ["one", '["Anne","Bart"]', "8", "Anne"],  # the dice inside turn 1 (tests.helpers.write_game)
        ["two", '["Anne","Bart"]', "6", ""],
    ]
    as_json = run_cli("query", str(archive), sql, "--format", "json")
    records = [json.loads(line) for line in as_json.output.splitlines()]
    assert records == [
        {"game": "one", "players": ["Anne", "Bart"], "events": 8, "winner": "Anne"},
        {"game": "two", "players": ["Anne", "Bart"], "events": 6, "winner": None},
    ]


def test_bad_sql_is_exit_2_with_duckdbs_message(archive: Path) -> None:
    result = run_cli("query", str(archive), "SELECT nonsense FROM games")
    assert result.exit_code == 2 and "nonsense" in result.output


def test_a_young_archive_has_every_table_empty(tmp_path: Path) -> None:
    write_game(tmp_path / "g", "quiet")
    archive_games([tmp_path / "g" / "quiet.jsonl"], tmp_path / "a", "2026-03")
    result = run_cli("query", str(tmp_path / "a"), "SELECT count(*) FROM rulings", "--format", "csv")
    assert result.exit_code == 0 and result.output.splitlines() == ["count_star()", "0"]
    described = run_cli("query", str(tmp_path / "a"), "DESCRIBE shots", "--format", "csv")
    assert "dice,INTEGER[]" in described.output


def test_logs_are_queried_directly_with_duckdbs_json_reader(games: Path) -> None:
    expected = Counter(
        (path.stem, event.__struct_config__.tag)
        for path in games.glob("*.jsonl")
        for event in GameLog(path).read()
    )
    result = run_cli(
        "query",
        "--logs",
        str(games),
        "SELECT game, type, count(*) FROM events GROUP BY ALL",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    got = {(r["game"], r["type"]): r["count_star()"] for r in map(json.loads, result.output.splitlines())}
    assert got == dict(expected)
    sixes = run_cli(
        "query", "--logs", str(games), "SELECT count(*) FROM dice WHERE value = 6", "--format", "csv"
    )
    assert sixes.output.splitlines() == ["count_star()", "3"]
    refused = run_cli("query", "--logs", str(games), "COPY events TO 'out.csv'")
    assert refused.exit_code == 2


def test_arguments_are_checked(archive: Path, tmp_path: Path) -> None:
    assert run_cli("query", "SELECT 1").exit_code == 2
    assert run_cli("query", str(tmp_path / "nowhere"), "SELECT 1").exit_code == 2
    assert run_cli("query", "--logs", str(tmp_path), str(archive), "SELECT 1").exit_code == 2


def planted_archive(archive: Path, tmp_path: Path) -> Path:
    """A copy of ``archive`` with a ``schema.sql`` that would overwrite its manifest if run."""
    copy = tmp_path / "planted"
    shutil.copytree(archive, copy)
    (copy / "schema.sql").write_text(f"COPY (SELECT 'owned' AS x) TO '{copy}/manifest.json' (FORMAT CSV);\n")
    (copy / "load.sql").write_text(f"COPY (SELECT 'owned' AS x) TO '{copy}/manifest.json' (FORMAT CSV);\n")
    return copy


@pytest.mark.parametrize(
    "statement",
    [
        "PRAGMA import_database('{archive}')",
        "pragma   IMPORT_DATABASE ('{archive}')",
        "IMPORT DATABASE '{archive}'",
        "SELECT 1; PRAGMA import_database('{archive}')",
        "PRAGMA export_database('{archive}/out')",
        "PRAGMA enable_profiling",
        "PRAGMA threads = 1",
    ],
)
def test_import_database_and_other_pragmas_off_the_read_list_are_refused(
    archive: Path, tmp_path: Path, statement: str
) -> None:
    planted = planted_archive(archive, tmp_path)
    before = file_digests(planted)
    result = run_cli("query", str(planted), statement.format(archive=planted))
    assert result.exit_code == 2 and "error: SQL:" in result.output, result.output
    assert file_digests(planted) == before
    assert (planted / "manifest.json").read_bytes() == (archive / "manifest.json").read_bytes()


def test_reading_pragmas_still_run(archive: Path) -> None:
    for statement in ("PRAGMA show_tables", "PRAGMA table_info('dice')", "PRAGMA database_size"):
        result = run_cli("query", str(archive), statement)
        assert result.exit_code == 0, (statement, result.output)


@pytest.mark.parametrize(
    "reader",
    [
        "SELECT content FROM read_text('{logs}/one.seed')",
        "SELECT content FROM read_text('{logs}/*.seed')",
        "SELECT content FROM read_text('{logs}/*')",
        "SELECT * FROM read_csv('{logs}/one.seed', header = false)",
        "SELECT json FROM read_ndjson_objects('{logs}/*')",
    ],
)
def test_query_logs_cannot_read_the_secret_seeds_beside_the_logs(
    games: Path, tmp_path: Path, reader: str
) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(games, logs)
    (logs / "one.seed").write_text("the-secret-seed-0123456789\n")
    result = run_cli("query", "--logs", str(logs), reader.format(logs=logs))
    assert "the-secret-seed" not in result.output
    assert result.exit_code == 2, result.output
    assert run_cli("query", "--logs", str(logs), "SELECT count(*) FROM events").exit_code == 0


def scratch_dirs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("mortecouille-query-*"))


def test_the_scratch_database_is_gone_before_any_sql_runs_and_stale_ones_are_swept(
    archive: Path, tmp_path: Path
) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = Path(tempfile.gettempdir()) / f"mortecouille-query-{int(dead.stdout)}-left"
    stale.mkdir(exist_ok=True)
    (stale / "views.duckdb").write_bytes(b"what a killed query left")
    before = scratch_dirs()
    with read_only_connection(archive_views(archive), archive) as connection:
        # a kill from here on (the user's SQL) has nothing on disk to leak
        assert not any(str(os.getpid()) in p.name for p in scratch_dirs() - before)
        assert connection.execute("SELECT count(*) FROM dice").fetchone() == (6,)
    assert not stale.exists()


ENDLESS = "SELECT count(*) FROM range(1000000000000) a WHERE hash(a.range) = 0"


def test_a_query_over_its_time_limit_is_stopped_with_exit_2_naming_the_option(archive: Path) -> None:
    result = run_cli("query", "--timeout", "0.2", str(archive), ENDLESS)
    assert result.exit_code == 2 and "--timeout: the query ran longer than 0.2 s" in result.output, (
        result.output
    )
    assert "Traceback" not in result.output


def test_the_memory_limit_has_a_default_and_can_be_set(archive: Path) -> None:
    setting = "SELECT current_setting('memory_limit') AS m"
    default = run_cli("query", "--format", "csv", str(archive), setting)
    assert default.exit_code == 0 and default.output.split() == ["m", "1.8", "GiB"], default.output
    chosen = run_cli("query", "--memory-limit", "100MB", "--format", "csv", str(archive), setting)
    assert chosen.exit_code == 0 and chosen.output.split() == ["m", "95.3", "MiB"], chosen.output
    hungry = run_cli(
        "query", "--memory-limit", "20MB", str(archive), "SELECT list(range) FROM range(50000000)"
    )
    assert hungry.exit_code == 2 and "--memory-limit" in hungry.output, hungry.output
    bad = run_cli("query", "--memory-limit", "lots'; SET x=1; --", str(archive), "SELECT 1")
    assert bad.exit_code == 2 and "--memory-limit" in bad.output


def test_ctrl_c_stops_a_query_with_exit_130_one_line_and_no_traceback(
    archive: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def pressed_ctrl_c(*args: Any) -> QueryResult:
        raise KeyboardInterrupt

    monkeypatch.setattr(analytics_commands, "query_archive", pressed_ctrl_c)
    result = run_cli("query", str(archive), "SELECT 1")
    assert result.exit_code == 130, result.output
    assert result.output == "error: query interrupted (Ctrl-C)\n"


def test_a_query_leaves_no_duckdb_thread_behind(archive: Path) -> None:
    """A query, refused or run, closes all it opened: its statements are parsed by its own
    connection, not by DuckDB's module-wide default one, which would keep its native threads for
    the rest of the process (beside which ``archive`` must spawn its workers instead of forking)."""

    def native_threads() -> int:
        gc.collect()
        return len(os.listdir("/proc/self/task"))

    before = native_threads()
    assert run_cli("query", str(archive), "DELETE FROM events").exit_code == 2
    assert run_cli("query", str(archive), "EXPLAIN DELETE FROM events").exit_code == 2
    assert run_cli("query", str(archive), "SELECT count(*) FROM dice").exit_code == 0
    assert native_threads() == before
