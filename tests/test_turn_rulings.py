"""The rulings of a position, as the turn index gives them (app/turn_index.py ``Rulings``): the
same rulings the whole list of events gives, in the same order, however they are read, but
decoded only when read, so that ``replay --turn N`` late in a long game, which shows the latest
few, does not decode the thousands before them."""

from __future__ import annotations

from pathlib import Path

import pytest

from mortecouille.app import turn_index as turn_index_module
from mortecouille.app.turn_index import turn_index
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.game import GameCreated, TurnEnded, TurnStarted
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage.file_log import GameLog


def game_with_rulings(directory: Path, turns: int, per_turn: int) -> GameLog:
    """A game whose every turn records ``per_turn`` rulings."""
    created = GameCreated(
        game="ruled", ruleset="blockade", players=("A", "B"), budget=0, board=Board(width=5, height=5),
        rules_version="t", dice_mode="table",
    )  # fmt: skip
    body: list[Event] = []
    for turn in range(1, turns + 1):
        body.append(TurnStarted(turn=turn))
        body += [RulingRecorded(turn=turn, rule="T2", text=f"ruling {turn}.{n}") for n in range(per_turn)]
        body.append(TurnEnded(turn=turn, state_hash="0" * 64))
    log_ = GameLog(directory / "ruled.jsonl")
    log_.create([created, *body])
    return log_


def listed_rulings(events: list[Event], position: int) -> list[RulingRecorded]:
    return [event for event in events[:position] if isinstance(event, RulingRecorded)]


@pytest.mark.parametrize("kept", [False, True], ids=["built", "read back"])
def test_the_rulings_of_a_position_read_every_way_are_those_of_the_list_of_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: bool
) -> None:
    monkeypatch.setattr(turn_index_module, "KEYFRAME_EVERY", 4)  # a short game's index is kept
    log_ = game_with_rulings(tmp_path, turns=6, per_turn=5)
    events = log_.read()
    index = turn_index(log_)
    if kept:
        index.rebuilt = True
        index.keep()
        index = turn_index(log_)
        assert not index.rebuilt
    for position in range(len(events) + 1):
        rulings = index.rulings_until(position)
        expected = listed_rulings(events, position)
        assert len(rulings) == len(expected)
        assert rulings == expected and expected == rulings
        assert list(rulings) == expected
        for at in range(-len(expected), len(expected)):
            assert rulings[at] == expected[at]
        for piece in (slice(-20, None), slice(2, 7), slice(None, None, 2), slice(5, 2), slice(-3, 99)):
            assert rulings[piece] == expected[piece]
        with pytest.raises(IndexError):
            rulings[len(expected)]


def test_only_the_rulings_read_are_decoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The latest three of thirty rulings: three lines decoded, not thirty."""
    log_ = game_with_rulings(tmp_path, turns=6, per_turn=5)
    events = log_.read()
    rulings = turn_index(log_).rulings_until(len(events))
    decoded: list[int] = []
    decode_lines = turn_index_module.decode_lines

    def counting(data: bytes) -> list[Event]:
        found = decode_lines(data)
        decoded.append(len(found))
        return found

    monkeypatch.setattr(turn_index_module, "decode_lines", counting)
    assert len(rulings) == 30 and decoded == []
    assert [ruling.text for ruling in rulings[-3:]] == ["ruling 6.2", "ruling 6.3", "ruling 6.4"]
    assert decoded == [3]
