"""``query``: SQL over the archive (or raw logs) on a connection that cannot change anything."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from mortecouille.events.game import DieRolled
from mortecouille.events.store import GameLog
from mortecouille.replays.analytics.archive import archive_games
from mortecouille.replays.analytics.query import archive_views, read_only_connection
from tests.cli_helpers import run_cli
from tests.helpers import file_digests, write_game


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
