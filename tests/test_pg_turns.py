"""``replay --turn``, ``explain --turn`` and ``board --turn`` on a PostgreSQL game read only what the
turn needs, and print what they printed from a mirror of the whole game, byte for byte.

They used to mirror the whole game into a temporary file and build the file turn index there, on
every command. Now (``app/stored_turns.py``) the turns are found through a partial index of the
events table (the rows of turn starts and ends, game ends and rulings) and a position is folded
from the store's ``keyframes`` table: derived rows, each standing on the seq and hash of a line,
used only while the log's row there has that hash and its line hashes to it, rebuilt when missing
or stale, never trusted over the rows. On a real PostgreSQL server (the session's cluster), with
keyframes every few dozen events so that a bots' game has many.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner, Result
from psycopg import sql

from mortecouille.app import turn_index as turn_index_module
from mortecouille.app.snapshots import FORMAT, decode_state
from mortecouille.app.store_copy import log_as_file, turns_of
from mortecouille.app.stored_turns import StoredTurnIndex
from mortecouille.cli.main import cli
from mortecouille.core.game import fold
from mortecouille.events.storage.postgres import PostgresGameLog, PostgresStore
from mortecouille.events.storage.postgres_rows import turn_marks_query
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.postgres

GAME = "sim-turns-0"
#: Keyframes this often in these tests (the commands' is 1,024: a bots' game is shorter)
EVERY = 40


def invoke(url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--store", url, *args])


class Stored:
    """A bots' game in a schema of its own, and the same game copied to a file store."""

    def __init__(self, server: PostgresServer, files: Path) -> None:
        self.server = server
        self.schema = f"turns_{uuid.uuid4().hex[:12]}"
        self.url = f"{server.url}?schema={self.schema}"
        done = invoke(
            self.url, "simulate", "--games", "1", "--seed", "turns", "--to", self.url, "--max-turns", "12"
        )
        assert done.exit_code == 0, done.output
        self.files = f"file:{files}"
        copied = invoke(self.url, "store", "copy", "--from", self.url, "--to", self.files)
        assert copied.exit_code == 0, copied.output
        self.store = PostgresStore(server.url, schema=self.schema)
        self.events = self.store.log(GAME).read()
        assert len(self.events) > 4 * EVERY

    def log(self) -> PostgresGameLog:
        return self.store.log(GAME)

    def sql(self, statement: str, *params: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.server.url, autocommit=True) as conn:
            conn.execute(f"SET search_path TO {self.schema}")
            cursor = conn.execute(statement, params)
            return cursor.fetchall() if cursor.description is not None else []

    def keyframes(self) -> list[tuple[int, str, int, bytes]]:
        rows = self.sql(
            "SELECT position, hash, format, state FROM keyframes WHERE game = %s ORDER BY position", GAME
        )
        return [(int(p), str(h), int(f), bytes(s)) for p, h, f, s in rows]

    def resolved(self) -> int:
        with turns_of(self.log()) as index:
            return len(index.resolved_turns())


@pytest.fixture
def every(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(turn_index_module, "KEYFRAME_EVERY", EVERY)
    return EVERY


@pytest.fixture
def stored(postgres_server: PostgresServer, tmp_path: Path, every: int) -> Iterator[Stored]:
    setup = Stored(postgres_server, tmp_path / "files")
    try:
        yield setup
    finally:
        setup.store.close()


def outputs(url: str, turns: int) -> dict[tuple[str, ...], tuple[int, str]]:
    """What every turn command prints at every turn (and some seqs) of the game in ``url``."""
    commands: list[tuple[str, ...]] = [
        ("replay", GAME),
        ("replay", GAME, "--json"),
        ("replay", GAME, "--seq", "0"),
    ]
    for turn in range(turns + 2):  # one past the last resolved: refused alike
        commands += [
            ("replay", GAME, "--turn", str(turn)),
            ("replay", GAME, "--turn", str(turn), "--json"),
            ("board", GAME, "--turn", str(turn), "--no-color"),
            ("explain", GAME, "--turn", str(turn)),
            ("explain", GAME, "--turn", str(turn), "--json"),
        ]
    commands += [("explain", GAME, "--turn", "1", "--ship", "nobody"), ("replay", GAME, "--seq", "99999")]
    printed = {}
    for command in commands:
        result = invoke(url, *command)
        printed[command] = (result.exit_code, result.output)
    return printed


def test_every_turn_prints_what_the_whole_game_mirrored_to_a_file_prints(stored: Stored) -> None:
    """From no keyframe, from the keyframes the first pass wrote, and from spoilt ones: the
    outputs are the file store's, byte for byte, at every turn."""
    turns = stored.resolved()
    expected = outputs(stored.files, turns)
    assert sum(1 for code, _ in expected.values() if code == 0) > 4 * turns  # the game's turns, told
    assert outputs(stored.url, turns) == expected  # no keyframe yet: folded from the first event
    kept = stored.keyframes()
    assert [position for position, *_ in kept] == list(range(EVERY, len(stored.events) + 1, EVERY))
    assert outputs(stored.url, turns) == expected  # from the keyframes
    stored.sql("UPDATE keyframes SET state = %s WHERE position = %s", b"\x00spoilt", 2 * EVERY)
    stored.sql("UPDATE keyframes SET format = format + 1 WHERE position = %s", 3 * EVERY)
    stored.sql("UPDATE keyframes SET hash = repeat('0', 64) WHERE position = %s", EVERY)
    assert outputs(stored.url, turns) == expected


def test_the_lookups_are_the_mirrors_turn_index_ones(stored: Stored) -> None:
    """The stored index answers every lookup as the file index built on a mirror of the game."""
    log_ = stored.log()
    with log_as_file(log_) as mirrored:
        reference = turn_index_module.turn_index(mirrored)
        index = StoredTurnIndex(log_)
        assert index.end == reference.end == len(stored.events)
        assert index.resolved_turns() == reference.resolved_turns()
        assert index.final == reference.final == fold(stored.events)
        for turn in range(len(reference.resolved_turns()) + 2):
            position = reference.position_after_turn(turn)
            assert index.position_after_turn(turn) == position
            assert index.state_at(position) == reference.state_at(position)
            assert index.rulings_until(position) == reference.rulings_until(position)
            if turn in reference.resolved_turns():
                first, last = reference.story_span(turn)
                assert index.story_span(turn) == (first, last)
                assert index.span(first, last) == reference.span(first, last)
        for position in (0, 1, EVERY - 1, EVERY, EVERY + 1, len(stored.events) - 1, len(stored.events)):
            assert index.state_at(position) == reference.state_at(position)


def test_keyframes_hold_the_fold_of_the_log_up_to_their_line(stored: Stored) -> None:
    assert invoke(stored.url, "replay", GAME, "--seq", str(len(stored.events) - 1)).exit_code == 0
    kept = stored.keyframes()
    assert kept
    for position, digest, format_, state in kept:
        assert digest == stored.events[position - 1].hash and format_ == FORMAT
        assert decode_state(state) == fold(stored.events[:position])


class ReadRanges:
    """The ranges of rows the turn commands read (``checked_range``'s first and end seqs)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ranges: list[tuple[int, int]] = []
        original = PostgresGameLog.checked_range

        def counted(
            log_: PostgresGameLog, first_seq: int, end_seq: int, prev: str
        ) -> Iterator[tuple[int, bytes]]:
            self.ranges.append((first_seq, end_seq))
            return original(log_, first_seq, end_seq, prev)

        monkeypatch.setattr(PostgresGameLog, "checked_range", counted)

    def rows(self) -> int:
        return sum(end - first for first, end in self.ranges)


def test_a_turn_reads_only_the_rows_from_the_keyframe_before_it(
    stored: Stored, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = stored.resolved()
    assert invoke(stored.url, "explain", GAME, "--turn", str(turns)).exit_code == 0  # keyframes written
    read = ReadRanges(monkeypatch)
    with turns_of(stored.log()) as index:
        first, last = index.story_span(turns)
        index.span(first, last)
    assert read.ranges == [(first - first % EVERY, last)]
    assert read.rows() < EVERY + (last - first)
    # the whole game was never read
    assert read.rows() < len(stored.events) // 2


def test_a_stale_or_missing_keyframe_is_rebuilt_from_the_rows(stored: Stored) -> None:
    assert invoke(stored.url, "replay", GAME, "--seq", str(len(stored.events) - 1)).exit_code == 0
    kept = stored.keyframes()
    stored.sql("UPDATE keyframes SET hash = repeat('0', 64), state = %s WHERE position = %s", b"x", EVERY)
    stored.sql("DELETE FROM keyframes WHERE position = %s", 2 * EVERY)
    stored.sql("UPDATE keyframes SET format = format + 1 WHERE position = %s", 3 * EVERY)
    assert invoke(stored.url, "replay", GAME, "--seq", str(4 * EVERY - 2)).exit_code == 0
    assert stored.keyframes() == kept


def test_an_edited_row_in_the_turns_range_is_named_by_its_line(stored: Stored) -> None:
    turns = stored.resolved()
    with turns_of(stored.log()) as index:
        first, last = index.story_span(turns)
    seq = (first + last) // 2
    stored.sql(
        "UPDATE events SET line = convert_to(replace(convert_from(line, 'UTF8'), '\"seq\":', '\"seq\": '), 'UTF8')"
        " WHERE game = %s AND seq = %s",
        GAME,
        seq,
    )
    told = invoke(stored.url, "explain", GAME, "--turn", str(turns))
    assert told.exit_code == 4, told.output
    assert f"line {seq + 1}:" in told.output  # the store's LogError: the line of seq ``seq``


def test_the_turns_are_found_through_the_partial_index(stored: Stored) -> None:
    """The marks' statement reads the index of their rows, not the game's rows."""
    stored.sql("ANALYZE events")
    with psycopg.connect(stored.server.url, autocommit=True) as conn:
        query = turn_marks_query(stored.store)
        plan = conn.execute(sql.SQL("EXPLAIN ") + query, [GAME]).fetchall()
    assert any("events_turn_marks" in str(row[0]) for row in plan), plan


def test_a_database_made_before_the_keyframes_gets_them_when_the_store_opens(stored: Stored) -> None:
    stored.sql("DROP TABLE keyframes")
    stored.sql("DROP INDEX events_turn_marks")
    with PostgresStore(stored.server.url, schema=stored.schema) as again, turns_of(again.log(GAME)) as index:
        assert index.final == fold(stored.events)  # folded from the first event, past every keyframe's place
        index.keep()
    assert stored.keyframes()
    assert stored.sql("SELECT to_regclass('events_turn_marks')") != [(None,)]


GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize(
    "golden", sorted(str(path.relative_to(GOLDEN)) for path in GOLDEN.glob("**/*.jsonl"))
)
def test_every_golden_log_has_the_turns_the_file_index_finds(
    postgres_server: PostgresServer, every: int, golden: str
) -> None:
    """Every golden log, of every generation (version-1 turn lines included), imported as its lines:
    the turns found through the store's index of their rows, and every position, are the file
    index's (built on a mirror of it)."""
    with PostgresStore(postgres_server.url, schema=f"turns_{uuid.uuid4().hex[:12]}") as store:
        log_ = store.log("golden")
        log_.import_lines((GOLDEN / golden).read_bytes())
        with log_as_file(log_) as mirrored:
            reference = turn_index_module.turn_index(mirrored)
            index = StoredTurnIndex(log_)
            assert index.resolved_turns() == reference.resolved_turns()
            assert index.marks.ordered == reference.marks.ordered
            assert index.final == reference.final
            for turn in range(len(reference.resolved_turns()) + 2):
                assert index.position_after_turn(turn) == reference.position_after_turn(turn)
            for position in range(reference.end + 1):
                assert index.state_at(position) == reference.state_at(position)
                assert index.rulings_until(position) == reference.rulings_until(position)


def test_a_game_created_again_under_its_name_never_picks_up_the_old_keyframes(stored: Stored) -> None:
    assert invoke(stored.url, "replay", GAME, "--seq", str(len(stored.events) - 1)).exit_code == 0
    old = stored.keyframes()
    assert old
    for table in ("secrets", "events", "games"):  # dropped by hand: its keyframes go with it
        stored.sql(f"DELETE FROM {table} WHERE game = %s", GAME)  # noqa: S608 - the tests' own names
    assert stored.keyframes() == []
    # another game under the name, long enough to reach the old keyframes' positions, and the old
    # rows put back (a backup of the table restored): none is the new game's
    again = invoke(
        stored.url, "simulate", "--games", "1", "--seed", "other", "--to", stored.url, "--max-turns", "14"
    )
    assert again.exit_code == 0, again.output
    stored.log().import_lines(stored.store.log("sim-other-0").read_bytes())  # its lines under the name
    events = stored.log().read()
    assert len(events) >= old[-1][0]
    for position, digest, format_, state in old:
        stored.sql(
            "INSERT INTO keyframes (game, position, hash, format, state) VALUES (%s, %s, %s, %s, %s)",
            GAME,
            position,
            digest,
            format_,
            state,
        )
    assert stored.log().keyframe_at_or_before(len(events)) is None
    index = StoredTurnIndex(stored.log())
    assert index.final == fold(events)
