"""The movement's quicker paths (issue 16, ``verify`` plays every turn again) give what the
general ones give.

* :func:`~mortecouille.core.board.movement.play_two_steps` with the plain
  :func:`~mortecouille.core.board.movement.take_positions` after each step takes a path of
  fewer passes; any other hook takes the general order. Both are asked here for the same
  movements, the general one through a hook that is ``take_positions`` under another name.
* A ruleset's ``play_turn`` settles on the state its events lead to before its TurnEnded: the
  one re-derivation goes on from (``replays.reading.rederive.play_again``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import msgspec
from hypothesis import given, settings

from mortecouille.core.board.movement import Move, play_two_steps, take_positions
from mortecouille.core.board.movement_step import Claim, Piece, StepResult
from mortecouille.core.dice import DicePolicy, LoggedDice, revealed_contributions
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import ResolveTurn
from mortecouille.core.state import EMPTY
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.game import DieRolled, GameCreated, GameEnded, TurnEnded, TurnStarted
from mortecouille.events.store import GameLog
from mortecouille.replays.reading.rederive import play_again, revealed_seed, turn_segments
from tests.helpers import GOLDEN
from tests.test_movement_properties import scenarios


def positions_taken(
    result: StepResult, step_pieces: Mapping[str, Piece], claims: Mapping[str, Claim]
) -> tuple[Mapping[str, Piece], Collection[str]]:
    """:func:`take_positions` under another name: the general order of the two steps."""
    return take_positions(result, step_pieces, claims)


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_M2f_the_two_steps_with_every_ship_in_play_are_those_of_the_general_order(
    scenario: tuple[Board, dict[str, Piece], dict[str, Move]],
) -> None:
    board, pieces, moves = scenario
    quick = play_two_steps(board, pieces, moves)
    general = play_two_steps(board, pieces, moves, positions_taken)
    assert quick == general
    assert msgspec.json.encode(quick) == msgspec.json.encode(general)
    assert list(quick.pieces) == list(general.pieces)  # the same order of ships too


def test_T2_P1_every_golden_turn_settles_on_the_state_its_events_lead_to() -> None:
    rulesets_played: set[str] = set()
    for path in sorted(GOLDEN.glob("*.jsonl")):
        events = GameLog(path).read()
        state = EMPTY
        for resolved, segment in turn_segments(events):
            if resolved and state.created and not state.ended:
                started, ending = segment[0], segment[-1]
                assert isinstance(started, TurnStarted)
                command = ResolveTurn(
                    partial=True,
                    rounds=started.rounds,
                    reveal_seed=ending.seed if isinstance(ending, GameEnded) else None,
                )
                expected = decide(state, command, logged_dice(events))
                produced, settled = play_again(state, command, logged_dice(events))
                assert produced == expected
                if settled is not None:
                    end = next(i for i, e in enumerate(produced) if isinstance(e, TurnEnded))
                    assert settled == fold(produced[:end], state)
                    rulesets_played.add(state.ruleset)
            state = fold(segment, state)
    assert rulesets_played == {"blockade", "mortecouille"}


def logged_dice(events: list[Event]) -> LoggedDice:
    """The dice a log recorded, as re-derivation reads them."""
    created = events[0]
    assert isinstance(created, GameCreated)
    rolls = [e for e in events if isinstance(e, DieRolled)]
    return LoggedDice(rolls, DicePolicy.of(created, revealed_seed(events), revealed_contributions(events)))
