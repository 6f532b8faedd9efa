"""``verify`` reads a log as a stream: it never reads the whole file at once nor holds the
decoded log, and it reports what checking the decoded log as a whole reports; a resolved turn is
cut from the stream as re-derivation always cut it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.game import GameCreated, GameEnded, TurnEnded, TurnStarted
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.rederive import turn_segments, turn_spans
from mortecouille.replays.reading.verify import verify_log
from tests.helpers import GOLDEN


@pytest.mark.parametrize("name", sorted(path.name for path in GOLDEN.glob("*.jsonl")))
def test_every_golden_log_verifies_as_a_stream_as_it_does_whole(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for path in GOLDEN.glob(f"{Path(name).stem}.*"):
        shutil.copy(path, tmp_path / path.name)
    log = GameLog(tmp_path / name)
    whole = verify_log(log, events=log.read())

    def refused(self: GameLog, *args: object, **kwargs: object) -> object:
        raise AssertionError("verify read the whole log")

    monkeypatch.setattr(GameLog, "read", refused)
    monkeypatch.setattr(GameLog, "read_bytes", refused)
    streamed = verify_log(log)
    assert streamed.ok, streamed.findings
    assert streamed == whole


def created() -> GameCreated:
    return GameCreated(
        game="g", ruleset="blockade", players=("A",), budget=0, board=Board(8, 8), dice_mode="table", rules_version="test"
    )


def ruling(text: str) -> RulingRecorded:
    return RulingRecorded(turn=1, rule="T2", text=text)


def test_a_resolved_turn_takes_the_victory_that_follows_it_and_a_turn_started_again_is_no_turn() -> None:
    events: list[Event] = [
        created(),
        TurnStarted(turn=1),
        ruling("abandoned"),
        TurnStarted(turn=1),
        ruling("resolved"),
        TurnEnded(turn=1, state_hash="h"),
        GameEnded(reason="victory", winner="A"),
        ruling("after"),
    ]
    assert list(turn_segments(events)) == [
        (False, events[:3]),
        (True, events[3:7]),
        (False, events[7:]),
    ]
    assert turn_spans(events) == [(3, 6)]


def test_a_referees_end_after_a_turn_is_not_part_of_it_and_a_turn_never_ended_is_no_turn() -> None:
    events: list[Event] = [
        created(),
        TurnStarted(turn=1),
        TurnEnded(turn=1, state_hash="h"),
        GameEnded(reason="referee"),
        TurnStarted(turn=2),
        ruling("cut short"),
    ]
    assert list(turn_segments(events)) == [
        (False, events[:1]),
        (True, events[1:3]),
        (False, events[3:]),
    ]


def test_the_runs_between_turns_are_handed_on_in_bounded_pieces() -> None:
    events: list[Event] = [created(), *(ruling(str(n)) for n in range(10))]
    pieces = list(turn_segments(events, flush_every=4))
    assert [len(piece) for _, piece in pieces] == [4, 4, 3]
    assert [event for _, piece in pieces for event in piece] == events
