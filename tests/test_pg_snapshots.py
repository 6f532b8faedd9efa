"""A PostgreSQL game is folded from its snapshot, never trusted over its log.

The store keeps one snapshot per game (the ``snapshots`` table: the seq and hash of the line it
stands on, the format, the state as the file snapshot encodes it). These tests, on a real
PostgreSQL server, hold it to the file snapshot's terms (``app/snapshots.py``): every output is the
same with or without its rows; a row whose hash is not the log's at its seq, of another format,
or whose bytes do not decode is ignored and rewritten; a game dropped and created again under the
same name never picks up the old one's; a fold from it reads only the events after it; and
``verify``, ``export-log`` and ``store copy`` never read it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mortecouille.app.commands import ending, run_command
from mortecouille.app.snapshots import FORMAT, SNAPSHOT_EVERY, encode_state_compact, fold_stored
from mortecouille.cli.main import cli
from mortecouille.core.game import fold
from mortecouille.events.base import Event
from mortecouille.events.game import TurnEnded
from mortecouille.events.storage.postgres import PostgresGameLog, PostgresStore
from tests.postgres_server import PostgresServer
from tests.test_postgres_round_trips import counting_round_trips
from tests.test_store_cli import predictable

pytestmark = pytest.mark.postgres

#: The bots' game every test reads: long enough that a command folding it from its first event
#: rewrites the snapshot (more than SNAPSHOT_EVERY events).
ENDED = "sim-snap-0"
#: A fork of it at a turn's end, still being played.
PLAYING = "playing"
#: The fork's secret seed: the same in every store, so two plays of it roll the same dice.
FORK_SEED = "snapshot-test-seed-0123456789"


def invoke(url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--store", url, *args])


class Played:
    """A schema of the session's cluster holding the bots' game and a fork of it being played."""

    def __init__(self, server: PostgresServer, schema: str) -> None:
        self.server = server
        self.schema = schema
        self.url = f"{server.url}?schema={schema}"
        done = invoke(
            self.url, "simulate", "--games", "1", "--seed", "snap", "--to", self.url, "--max-turns", "20"
        )
        assert done.exit_code == 0, done.output
        self.store = PostgresStore(server.url, schema=schema)
        self.events = self.store.log(ENDED).read()
        assert len(self.events) > 2 * SNAPSHOT_EVERY
        ends = [event.seq for event in self.events if isinstance(event, TurnEnded)]
        self.fork_at = ends[len(ends) // 2]
        forked = invoke(self.url, "fork", ENDED, PLAYING, "--at", str(self.fork_at), "--seed", FORK_SEED)
        assert forked.exit_code == 0, forked.output

    def sql(self, statement: str, *params: Any) -> list[tuple[Any, ...]]:
        """Run one statement on the store's schema (as its tables' owner), return its rows."""
        with psycopg.connect(self.server.url, autocommit=True) as conn:
            conn.execute(f"SET search_path TO {self.schema}")
            cursor = conn.execute(statement, params)
            return cursor.fetchall() if cursor.description is not None else []

    def snapshot_row(self, game: str) -> tuple[int, str, int, bytes] | None:
        rows = self.sql("SELECT seq, hash, format, state FROM snapshots WHERE game = %s", game)
        return None if not rows else (int(rows[0][0]), str(rows[0][1]), int(rows[0][2]), bytes(rows[0][3]))

    def forget_snapshots(self) -> None:
        self.sql("DELETE FROM snapshots")

    def log(self, game: str) -> PostgresGameLog:
        return self.store.log(game)


@pytest.fixture(scope="module")
def played(postgres_server: PostgresServer) -> Iterator[Played]:
    setup = Played(postgres_server, f"snap_{uuid.uuid4().hex[:12]}")
    try:
        yield setup
    finally:
        setup.store.close()


@pytest.fixture
def fresh(postgres_server: PostgresServer) -> Iterator[Played]:
    """A schema of its own, for a test that changes the game."""
    setup = Played(postgres_server, f"snap_{uuid.uuid4().hex[:12]}")
    try:
        yield setup
    finally:
        setup.store.close()


def keep_at(played: Played, game: str, events: list[Event], seq: int) -> None:
    """Keep, as the game's snapshot, the fold of its events up to ``seq`` (as a command would)."""
    state = fold(events[: seq + 1])
    assert played.log(game).write_snapshot(seq, events[seq].hash, FORMAT, encode_state_compact(state))


class CountedRows:
    """Counts the lines the store decodes into events (each row it fetched for a fold)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import mortecouille.events.storage.postgres as store_module

        self.count = 0
        original = store_module.decode_line

        def counted(line: bytes, number: int) -> Event:
            self.count += 1
            return original(line, number)

        monkeypatch.setattr(store_module, "decode_line", counted)


# --- the same outputs with and without it ------------------------------------------------------


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_output_is_the_same_from_a_snapshot_at_any_seq_or_from_none(
    played: Played, data: st.DataObject
) -> None:
    """Property: whatever seq of the game the snapshot stands on, the state, the board and the
    sheet printed are those of the game folded from its first event."""
    events = played.events
    played.forget_snapshots()
    expected = {command: invoke(played.url, command, ENDED) for command in ("state", "board", "sheet")}
    for result in expected.values():
        assert result.exit_code == 0, result.output
    seq = data.draw(st.integers(min_value=0, max_value=len(events) - 1), label="snapshot seq")
    keep_at(played, ENDED, events, seq)
    folded = fold_stored(played.log(ENDED))
    assert folded.state == fold(events)
    assert (folded.start, folded.folded) == (seq + 1, len(events) - seq - 1)
    for command, before in expected.items():
        keep_at(played, ENDED, events, seq)  # a reading command may have moved it
        now = invoke(played.url, command, ENDED)
        assert (now.exit_code, now.output) == (0, before.output), command


def test_commands_print_and_write_the_same_with_and_without_snapshot_rows(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same orders, resolution and readings, played on the same game in two stores: one
    keeps its snapshot (written by the first reading), the other's rows are deleted before every
    command; they print the same and write the same bytes (what a command draws at random made
    the same in both by counters)."""
    runs: list[tuple[list[tuple[int, str]], bytes]] = []
    for keep in (True, False):
        predictable(monkeypatch)
        setup = Played(postgres_server, f"snap_{uuid.uuid4().hex[:12]}")
        try:
            ships = sorted(fold(setup.log(PLAYING).read()).ships)
            commands = [
                ("state", PLAYING),
                *[("order", PLAYING, ship, "idle") for ship in ships],
                ("resolve", PLAYING, "--partial"),
                ("board", PLAYING),
                ("end", PLAYING),
                ("state", PLAYING),
            ]
            outputs = []
            for command in commands:
                if not keep:
                    setup.forget_snapshots()
                result = invoke(setup.url, *command)
                outputs.append((result.exit_code, result.output.replace(setup.schema, "SCHEMA")))
            assert setup.snapshot_row(PLAYING) is not None  # kept (at the end by the last reading)
            runs.append((outputs, setup.log(PLAYING).read_bytes()))
        finally:
            setup.store.close()
    assert runs[0] == runs[1]
    assert sum(code == 0 for code, _ in runs[0][0]) > 4


# --- never trusted over the log ----------------------------------------------------------------


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param("UPDATE snapshots SET hash = repeat('0', 64)", id="a forged hash"),
        pytest.param("UPDATE snapshots SET seq = seq - 1", id="a stale seq (another line's hash)"),
        pytest.param("UPDATE snapshots SET format = format + 1", id="another format"),
        pytest.param("UPDATE snapshots SET state = '\\xc1c1c1'::bytea", id="undecodable bytes"),
        pytest.param("UPDATE snapshots SET state = '\\x90'::bytea", id="bytes of another shape"),
    ],
)
def test_a_snapshot_that_does_not_check_out_is_ignored_and_rewritten(fresh: Played, spoil: str) -> None:
    events = fresh.log(PLAYING).read()
    assert invoke(fresh.url, "state", PLAYING).exit_code == 0
    kept = fresh.snapshot_row(PLAYING)
    assert kept is not None and kept[0] == events[-1].seq
    # the kept row now says something else: the state of the game's very start, under the spoil
    fresh.sql("UPDATE snapshots SET state = %s", encode_state_compact(fold(events[:1])))
    fresh.sql(spoil)
    folded = fold_stored(fresh.log(PLAYING))
    assert (folded.state, folded.start, folded.folded) == (fold(events), 0, len(events))
    # the next command that succeeds rewrites it, on the log's last line
    ended = run_command(fresh.log(PLAYING), ending(fresh.log(PLAYING)))
    assert fresh.snapshot_row(PLAYING) == (
        ended.events[-1].seq,
        ended.events[-1].hash,
        FORMAT,
        encode_state_compact(ended.state),
    )
    assert fold_stored(fresh.log(PLAYING)).folded == 0


def test_a_snapshot_beyond_the_games_head_is_ignored(fresh: Played) -> None:
    """A head moved back (rows past it are not the game's, whatever their hash) takes the
    snapshot standing on them with it: the read of the events says what is wrong."""
    events = fresh.log(PLAYING).read()
    keep_at(fresh, PLAYING, events, len(events) - 1)
    fresh.sql(
        "UPDATE games SET next_seq = %s, last_hash = %s WHERE game = %s",
        len(events) - 1,
        events[-2].hash,
        PLAYING,
    )
    assert fresh.log(PLAYING).snapshot_and_events()[0] is None


def test_a_game_created_again_under_its_name_never_picks_up_the_old_snapshot(fresh: Played) -> None:
    assert invoke(fresh.url, "state", PLAYING).exit_code == 0
    old = fresh.snapshot_row(PLAYING)
    assert old is not None
    for table in ("secrets", "events", "games"):  # dropped by hand: its snapshot goes with it
        fresh.sql(f"DELETE FROM {table} WHERE game = %s", PLAYING)  # noqa: S608 - the tests' own names
    assert fresh.snapshot_row(PLAYING) is None
    # created again, its first events up to the old snapshot's seq and beyond
    again = invoke(fresh.url, "fork", ENDED, PLAYING, "--at", str(fresh.fork_at), "--seed", FORK_SEED)
    assert again.exit_code == 0, again.output
    # even with the old row restored (a backup of the table put back), it is not the new game's
    fresh.sql(
        "INSERT INTO snapshots (game, seq, hash, format, state) VALUES (%s, %s, %s, %s, %s)", PLAYING, *old
    )
    events = fresh.log(PLAYING).read()
    assert events[old[0]].hash != old[1]
    assert fresh.log(PLAYING).snapshot_and_events()[0] is None
    assert fold_stored(fresh.log(PLAYING)).state == fold(events)


# --- the fold reads only the events after it --------------------------------------------------


def test_a_fold_from_a_snapshot_reads_only_the_events_after_it(
    played: Played, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = played.events
    seq = len(events) - 10
    keep_at(played, ENDED, events, seq)
    rows = CountedRows(monkeypatch)
    folded = fold_stored(played.log(ENDED))
    assert folded.state == fold(events)
    assert rows.count == folded.folded == len(events) - 1 - seq
    # without it, every row is read
    played.forget_snapshots()
    rows.count = 0
    assert fold_stored(played.log(ENDED)).folded == rows.count == len(events)


def test_a_fold_from_a_snapshot_is_one_statement(played: Played) -> None:
    """The snapshot, checked against its line, the head and the events after it come in one
    statement: the pool's check of the connection, then one round trip."""
    events = played.events
    keep_at(played, ENDED, events, len(events) - 10)
    with counting_round_trips() as counted:
        folded = fold_stored(played.log(ENDED))
    assert folded.folded == 9
    assert counted.outside_the_feed() == 2, counted.by_thread


def test_a_command_on_a_game_whose_snapshot_is_current_reads_no_event(
    fresh: Played, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert invoke(fresh.url, "state", PLAYING).exit_code == 0
    rows = CountedRows(monkeypatch)
    result = invoke(fresh.url, "end", PLAYING)
    assert result.exit_code == 0, result.output
    assert rows.count == 0
    assert invoke(fresh.url, "state", PLAYING).output == invoke(fresh.url, "state", PLAYING).output


def test_a_command_rewrites_the_snapshot_only_when_it_folded_far_enough(fresh: Played) -> None:
    events = fresh.log(PLAYING).read()
    keep_at(fresh, PLAYING, events, len(events) - 2)  # one event behind: not worth a write
    run_command(fresh.log(PLAYING), ending(fresh.log(PLAYING)))
    assert fresh.snapshot_row(PLAYING) is not None
    assert fresh.snapshot_row(PLAYING)[0] == len(events) - 2  # type: ignore[index]


# --- the log's own commands never read it ------------------------------------------------------


def test_verify_export_log_and_store_copy_ignore_it(fresh: Played, postgres_server: PostgresServer) -> None:
    fresh.forget_snapshots()
    before = {command: invoke(fresh.url, command, ENDED) for command in ("verify", "export-log")}
    assert all(result.exit_code == 0 for result in before.values())
    fresh.sql("INSERT INTO snapshots SELECT game, 0, 'forged', 99, '\\x00'::bytea FROM games")
    for command, result in before.items():
        now = invoke(fresh.url, command, ENDED)
        assert (now.exit_code, now.output) == (result.exit_code, result.output), command
    target = f"{postgres_server.url}?schema=snapcopy_{uuid.uuid4().hex[:12]}"
    copied = CliRunner().invoke(cli, ["store", "copy", "--from", fresh.url, "--to", target])
    assert copied.exit_code == 0, copied.output
    with PostgresStore(target.split("?")[0], schema=target.split("=")[1]) as other:
        assert other.log(ENDED).snapshot_and_events()[0] is None
        assert other.log(ENDED).read_bytes() == fresh.log(ENDED).read_bytes()
    with psycopg.connect(postgres_server.url) as conn:
        schema = target.split("=")[1]
        assert conn.execute(f"SELECT count(*) FROM {schema}.snapshots").fetchone() == (0,)  # noqa: S608


# --- older databases, and a table that cannot be used -------------------------------------------


def test_a_database_made_before_the_table_gets_it_when_the_store_opens(fresh: Played) -> None:
    fresh.sql("DROP TABLE snapshots")
    with PostgresStore(fresh.server.url, schema=fresh.schema) as reopened:
        assert reopened.log(PLAYING).snapshot_and_events()[0] is None
    assert invoke(fresh.url, "state", PLAYING).exit_code == 0
    assert fresh.snapshot_row(PLAYING) is not None


def test_a_snapshot_that_cannot_be_read_or_written_changes_no_outcome(fresh: Played) -> None:
    """With the table gone under an open store, a command reads no snapshot, fails to write one,
    and still succeeds with the same result."""
    log = fresh.log(PLAYING)
    events = log.read()
    fresh.sql("DROP TABLE snapshots")
    assert log.snapshot_and_events()[0] is None
    assert log.write_snapshot(events[-1].seq, events[-1].hash, FORMAT, b"") is False
    outcome = run_command(log, ending(log))
    assert outcome.state == fold(log.read())
    assert outcome.state.ended
