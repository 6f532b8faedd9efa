"""The derived files beside a log: a snapshot of the state and a turn index with
keyframes make commands cheap on long logs, and are never trusted over the log. Whatever they
hold, every output is the one the log alone gives; one that is damaged, stale, cut short, another
game's or of another format is not used, and is rebuilt."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mortecouille.app import snapshots
from mortecouille.app import turn_index as turn_index_module
from mortecouille.app.commands import run_command
from mortecouille.app.games import load_state
from mortecouille.app.snapshots import (
    DERIVED_SUFFIXES,
    Anchor,
    decode_state,
    encode_state,
    fold_log,
    read_snapshot,
    snapshot_path,
    write_snapshot,
)
from mortecouille.app.turn_index import turn_index, turns_path
from mortecouille.core.errors import BadInput
from mortecouille.core.game import fold
from mortecouille.core.limits import GAME_FILE_SUFFIXES
from mortecouille.core.rulings import RecordRuling
from mortecouille.core.state import GameState, state_hash
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.game import GameCreated, GameEnded, TurnEnded, TurnStarted
from mortecouille.events.rulings import Adjustment, RulingRecorded
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.explain import story_span
from mortecouille.replays.reading.replay import position_after_turn, resolved_turns
from tests.cli_helpers import ok, play_blockade_turn, run, tree_digest
from tests.helpers import GOLDEN

pytestmark = pytest.mark.slow

#: the golden logs of the current schema (the upcast ones are read as they are, too)
GOLDEN_LOGS = sorted(GOLDEN.glob("*.jsonl"))
NAMES = [path.stem for path in GOLDEN_LOGS]
POISON = GameState(game="poisoned", turn=999)


@pytest.fixture
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Snapshots and keyframes every few events, so the golden logs (tens of events) have many."""
    monkeypatch.setattr(snapshots, "SNAPSHOT_EVERY", 3)
    monkeypatch.setattr(turn_index_module, "KEYFRAME_EVERY", 7)


def golden_copy(directory: Path, name: str) -> GameLog:
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{name}.jsonl"
    shutil.copyfile(GOLDEN / f"{name}.jsonl", target)
    shutil.copyfile(GOLDEN / f"{name}.head", target.with_suffix(".head"))
    return GameLog(target)


def anchor_after(log_: GameLog, seq: int) -> Anchor:
    """The anchor of line ``seq``: its seq, hash and the byte after its newline."""
    data = log_.read_bytes()
    end = 0
    for _ in range(seq + 1):
        end = data.index(b"\n", end) + 1
    event = log_.read()[seq]
    return Anchor(seq, event.hash, end)


def without_derived(log_: GameLog) -> None:
    for suffix in DERIVED_SUFFIXES:
        log_.sibling(suffix).unlink(missing_ok=True)


# --- the state's encoding -------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(NAMES), cut=st.floats(min_value=0, max_value=1))
def test_a_state_encoded_for_a_derived_file_decodes_equal_with_the_same_state_hash(
    name: str, cut: float
) -> None:
    events = GameLog(GOLDEN / f"{name}.jsonl").read()
    state = fold(events[: round(cut * len(events))])
    back = decode_state(encode_state(state))
    assert back == state
    assert state_hash(back) == state_hash(state)


# --- the same outcome with or without them --------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(NAMES),
    snapshot_every=st.integers(min_value=1, max_value=40),
    keyframe_every=st.integers(min_value=1, max_value=40),
)
def test_outputs_with_and_without_the_derived_files_are_the_same(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    snapshot_every: int,
    keyframe_every: int,
) -> None:
    monkeypatch.setattr(snapshots, "SNAPSHOT_EVERY", snapshot_every)
    monkeypatch.setattr(turn_index_module, "KEYFRAME_EVERY", keyframe_every)
    games = tmp_path_factory.mktemp("games")
    log_ = golden_copy(games, name)
    events = log_.read()
    turns = resolved_turns(events)
    commands = [("state", "--json"), ("board",), ("replay",), ("replay", "--json"), ("replay", "--seq", "0")]
    commands += [("replay", "--turn", str(turn)) for turn in range(len(turns) + 1)]
    commands += [("board", "--turn", str(turn)) for turn in range(len(turns) + 1)]
    commands += [("explain", "--turn", str(turn), "--json") for turn in turns]
    commands += [("replay", "--turn", str(len(turns) + 1)), ("explain", "--turn", "0")]  # refused alike
    without = {}
    for command in commands:
        without_derived(log_)
        result = run(games, *command, name)
        without[command] = (result.exit_code, result.output)
    assert load_state(log_) == fold(events)
    for command in commands:  # now with the files the commands before kept
        result = run(games, *command, name)
        assert (result.exit_code, result.output) == without[command], command
    assert load_state(log_) == fold(events)


@pytest.mark.usefixtures("small_thresholds")
@pytest.mark.parametrize("name", NAMES)
def test_the_turn_index_answers_as_the_whole_list_of_events(tmp_path: Path, name: str) -> None:
    log_ = golden_copy(tmp_path, name)
    events = log_.read()
    for attempt in ("built", "read back"):
        index = turn_index(log_)
        assert index.rebuilt == (attempt == "built")
        index.keep()
        assert index.resolved_turns() == resolved_turns(events)
        for turn in range(len(resolved_turns(events)) + 2):
            assert index.position_after_turn(turn) == position_after_turn(events, turn)
        for turn in resolved_turns(events):
            assert index.story_span(turn) == story_span(events, turn)
        for position in range(len(events) + 1):
            state, event = index.state_at(position)
            assert state == fold(events[:position])
            assert event == (events[position - 1] if position else None)
            assert [r.seq for r in index.rulings_until(position)] == [
                e.seq for e in events[:position] if type(e).__name__ == "RulingRecorded"
            ]


MARKER_EVENTS = st.one_of(
    st.builds(lambda turn: TurnStarted(turn=turn), st.integers(1, 4)),
    st.builds(lambda turn: TurnEnded(turn=turn, state_hash="0" * 64), st.integers(1, 4)),
    st.just(GameEnded(reason="referee", winner=None)),
    st.builds(lambda turn: RulingRecorded(turn=turn, rule="T2", text="noted"), st.integers(1, 4)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.lists(MARKER_EVENTS, max_size=14), keyframe_every=st.integers(1, 6))
def test_turn_lookups_match_the_list_functions_whatever_order_the_turns_come_in(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    body: list[Event],
    keyframe_every: int,
) -> None:
    """Turns restarted, ended twice, out of order or never ended (a log written by hand, or cut):
    the index gives what the functions over the whole list give, by bisection when the turns
    come in order and by a scan otherwise."""
    monkeypatch.setattr(turn_index_module, "KEYFRAME_EVERY", keyframe_every)
    directory = tmp_path_factory.mktemp("odd")
    created = GameCreated(
        game="odd", ruleset="blockade", players=("A", "B"), budget=0, board=Board(width=5, height=5),
        rules_version="t", dice_mode="table",
    )  # fmt: skip
    log_ = GameLog(directory / "odd.jsonl")
    log_.create([created, *body])
    events = log_.read()
    for attempt in ("built", "read back"):
        index = turn_index(log_)
        index.rebuilt = True
        index.keep()
        assert index.resolved_turns() == resolved_turns(events), attempt
        for turn in range(0, 6):
            assert index.position_after_turn(turn) == position_after_turn(events, turn)
            try:
                expected: tuple[int, int] | str = story_span(events, turn)
            except BadInput as error:
                expected = str(error)
            try:
                found: tuple[int, int] | str = index.story_span(turn)
            except BadInput as error:
                found = str(error)
            assert found == expected, (turn, attempt)
        for position in range(len(events) + 1):
            assert index.state_at(position)[0] == fold(events[:position])
            assert index.rulings_until(position) == [
                e for e in events[:position] if isinstance(e, RulingRecorded)
            ]


# --- never trusted over the log --------------------------------------------------------------


def poisoned_snapshot(log_: GameLog) -> Path:
    """A snapshot holding a state no fold gives, standing on the log's last line: usable as far as
    its anchor goes, so each test below spoils one thing and checks it is not used."""
    last = len(log_.read()) - 1
    write_snapshot(log_, anchor_after(log_, last), POISON)
    found = read_snapshot(log_)
    assert found is not None and found[1] == POISON  # the unspoilt one is read: the tests can fail
    return snapshot_path(log_)


def spoil_digest(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x01  # a byte of the state: its digest no longer matches
    path.write_bytes(bytes(data))


def spoil_version(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b"mortecouille-snapshot 1\n", b"mortecouille-snapshot 2\n", 1))


def spoil_length(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-100])  # cut short


SPOILERS = {"digest": spoil_digest, "version": spoil_version, "truncated": spoil_length}


@pytest.mark.usefixtures("small_thresholds")
@pytest.mark.parametrize("spoil", sorted(SPOILERS))
def test_a_damaged_truncated_or_future_snapshot_is_not_used_and_is_rebuilt(
    tmp_path: Path, spoil: str
) -> None:
    log_ = golden_copy(tmp_path, "mortecouille")
    expected = fold(log_.read())
    path = poisoned_snapshot(log_)
    SPOILERS[spoil](path)
    assert read_snapshot(log_) is None
    assert fold_log(log_).state == expected
    snapshots.keep_snapshot(log_, fold_log(log_))  # the whole log folded: a new one is kept
    found = read_snapshot(log_)
    assert found is not None and found[1] == expected


def test_another_games_snapshot_is_not_used(tmp_path: Path) -> None:
    log_ = golden_copy(tmp_path / "a", "mortecouille")
    twin = golden_copy(tmp_path / "b", "mortecouille")  # the same lines: only the name tells
    shutil.copyfile(poisoned_snapshot(log_), snapshot_path(twin).with_name("twin.state"))
    renamed = GameLog(twin.path.with_name("twin.jsonl"))
    twin.path.rename(renamed.path)
    assert read_snapshot(renamed) is None
    other = golden_copy(tmp_path / "c", "blockade")  # another game's file under this one's name
    shutil.copyfile(snapshot_path(log_), snapshot_path(other).with_name("blockade.state"))
    assert read_snapshot(other) is None
    assert fold_log(other).state == fold(other.read())


def test_a_snapshot_whose_line_the_log_no_longer_holds_is_not_used(tmp_path: Path) -> None:
    log_ = golden_copy(tmp_path, "mortecouille")
    poisoned_snapshot(log_)
    lines = log_.read_bytes().split(b"\n")
    lines[-2] = lines[-2].replace(b'"seq":', b'"seq": ', 1)  # the anchored line edited: not its hash
    log_.path.write_bytes(b"\n".join(lines))
    assert read_snapshot(log_) is None


def test_a_snapshot_behind_the_log_is_used_and_the_events_after_it_folded(tmp_path: Path) -> None:
    log_ = golden_copy(tmp_path, "mortecouille")
    events = log_.read()
    write_snapshot(log_, anchor_after(log_, 40), fold(events[:41]))
    folded = fold_log(log_)
    assert folded.state == fold(events)
    assert folded.folded == len(events) - 41
    assert folded.anchor == anchor_after(log_, len(events) - 1)


def test_a_repair_that_cuts_the_tail_invalidates_what_stood_beyond_the_cut(tmp_path: Path) -> None:
    log_ = golden_copy(tmp_path, "mortecouille")
    poisoned_snapshot(log_)
    index = turn_index(log_)
    index.rebuilt = True
    turn_index_module.KEYFRAME_EVERY, saved = 1, turn_index_module.KEYFRAME_EVERY
    try:
        index.keep()
    finally:
        turn_index_module.KEYFRAME_EVERY = saved
    assert turns_path(log_).exists()
    data = log_.read_bytes()
    log_.path.write_bytes(data[:-20])  # a crash tore the last line (after the head anchor's seq?)
    log_.repair(record_loss=True)  # the anchored last line is gone: the loss is recorded
    after = log_.read()
    assert read_snapshot(log_) is None
    assert fold_log(log_).state == fold(after)
    index = turn_index(log_)
    assert index.rebuilt and index.final == fold(after)


def test_a_damaged_or_foreign_turn_index_is_not_used_and_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(turn_index_module, "KEYFRAME_EVERY", 5)
    log_ = golden_copy(tmp_path, "mortecouille")
    events = log_.read()
    expected = [fold(events[:position]) for position in range(len(events) + 1)]
    turn_index(log_).keep()
    kept = turns_path(log_).read_bytes()
    assert not turn_index(log_).rebuilt
    middle = len(kept) // 2  # in a keyframe's state: found when that keyframe is needed
    for spoilt in (
        kept[:-50],
        kept[:40] + bytes([kept[40] ^ 1]) + kept[41:],
        kept[:middle] + bytes([kept[middle] ^ 1]) + kept[middle + 1 :],
        kept.replace(b"mortecouille-turns 1\n", b"mortecouille-turns 9\n", 1),
        b"",
    ):
        turns_path(log_).write_bytes(spoilt)
        index = turn_index(log_)
        assert [index.state_at(position)[0] for position in range(len(events) + 1)] == expected
        assert index.final == expected[-1]
        assert index.rebuilt  # so the next keep writes it anew
        index.keep()
        assert turns_path(log_).read_bytes() == kept
    other = golden_copy(tmp_path / "other", "blockade")
    turns_path(other).write_bytes(kept)
    assert turn_index(other).rebuilt


# --- where they are written, and where not -----------------------------------------------------


def test_the_derived_files_are_game_files_no_game_is_named_after(tmp_path: Path) -> None:
    assert set(DERIVED_SUFFIXES) <= GAME_FILE_SUFFIXES
    assert run(tmp_path, "new", "x.state", "--players", "A,B").exit_code != 0


@pytest.mark.usefixtures("small_thresholds")
def test_a_refused_command_writes_no_derived_file(tmp_path: Path) -> None:
    log_ = golden_copy(tmp_path, "blockade")
    before = tree_digest(tmp_path)
    result = run(tmp_path, "tokens", "blockade", "NoSuchShip", "F", "F", "F", "F")
    assert result.exit_code != 0
    assert run(tmp_path, "replay", "blockade", "--turn", "99").exit_code != 0
    assert run(tmp_path, "explain", "blockade", "--turn", "99").exit_code != 0
    assert run(tmp_path, "board", "blockade", "--turn", "99").exit_code != 0
    assert tree_digest(tmp_path) == before
    assert not snapshot_path(log_).exists()


@pytest.mark.usefixtures("small_thresholds")
def test_commands_keep_the_files_and_deleting_them_changes_nothing_but_speed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_ = GameLog(play_blockade_turn(tmp_path))
    monkeypatch.setattr(turn_index_module, "KEYFRAME_EVERY", 10_000)
    shown = ok(tmp_path, "state", "b", "--json")
    assert snapshot_path(log_).exists()
    ok(tmp_path, "replay", "b", "--turn", "1")
    assert not turns_path(log_).exists()  # a log shorter than KEYFRAME_EVERY keeps no index
    monkeypatch.setattr(turn_index_module, "KEYFRAME_EVERY", 2)
    ok(tmp_path, "replay", "b", "--turn", "1")
    assert turns_path(log_).exists()
    outcome = run_command(
        log_,
        lambda state: RecordRuling(rule="T2", text="hit", adjustments=(Adjustment(ship="Frig", damage=1),)),
    )
    assert read_snapshot(log_) is not None
    after = ok(tmp_path, "state", "b", "--json")
    assert msgspec.json.decode(after)["state_hash"] == state_hash(outcome.state)
    without_derived(log_)
    assert ok(tmp_path, "state", "b", "--json") == after != shown  # the ruling is in it


def test_verify_ignores_the_derived_files(tmp_path: Path) -> None:
    log_ = golden_copy(tmp_path, "mortecouille")
    clean = run(tmp_path, "verify", "mortecouille")
    poisoned_snapshot(log_)
    turns_path(log_).write_bytes(b"not an index")
    again = run(tmp_path, "verify", "mortecouille")
    assert (again.exit_code, again.output) == (clean.exit_code, clean.output)


@pytest.mark.usefixtures("small_thresholds")
def test_a_derived_file_that_cannot_be_written_changes_no_output(tmp_path: Path) -> None:
    log_ = golden_copy(tmp_path, "blockade")
    expected = ok(tmp_path, "state", "blockade", "--json")
    without_derived(log_)
    snapshot_path(log_).mkdir()  # in the way of the rename: the write fails
    result = run(tmp_path, "state", "blockade", "--json")
    assert (result.exit_code, result.output) == (0, expected)
    assert snapshot_path(log_).is_dir() and not any(snapshot_path(log_).iterdir())
    assert [path.name for path in tmp_path.iterdir() if path.name.endswith(".tmp")] == []


@pytest.mark.usefixtures("small_thresholds")
def test_a_repair_that_cuts_an_unfinished_append_invalidates_what_stood_on_it(tmp_path: Path) -> None:
    log_ = golden_copy(tmp_path, "mortecouille")
    events = log_.read()
    turn_index(log_).keep()
    assert turns_path(log_).exists()
    poisoned_snapshot(log_)  # stands on the last line
    kept = events[-4]
    log_.write_head(kept.seq, kept.hash)  # a crash before the anchor moved past the last 3 lines
    with log_.path.open("ab") as handle:
        handle.write(b'{"type":"torn')  # and the next append torn
    assert log_.repair() != b""  # the torn line and the 3 unanchored lines go
    assert log_.read() == events[:-3]
    assert read_snapshot(log_) is None
    assert fold_log(log_).state == fold(events[:-3])
    index = turn_index(log_)
    assert index.rebuilt and index.final == fold(events[:-3])
