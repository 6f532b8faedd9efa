"""The blockade ruleset's answers to the questions asked of every ruleset
(:class:`~mortecouille.core.questions.Questions`): ships placed by kind, four tokens a turn (P1)."""

from __future__ import annotations

from typing import Any

from mortecouille.core.board.geometry import ORTHOGONAL_FACINGS
from mortecouille.core.errors import RuleViolation
from mortecouille.core.questions import Questions
from mortecouille.core.state import GameState, ShipState


def afloat(ship: ShipState) -> bool:
    """Every ship afloat takes tokens (P1)."""
    return ship.afloat


def has_tokens(state: GameState, ship_id: str) -> bool:
    """Whether the ship has its tokens for the current turn (P1)."""
    return ship_id in state.tokens


def no_condition(ship: ShipState) -> dict[str, Any]:
    """A blockade ship is its square, facing and damage only (P3)."""
    return {}


def check_some_tokens(state: GameState) -> None:
    """Refuse a blockade turn in which no ship afloat has tokens (P1)."""
    afloat = [ship.id for ship in state.ships.values() if ship.afloat]
    if afloat and not any(s in state.tokens for s in afloat):
        raise RuleViolation(
            "P1",
            "no ship has tokens for turn {turn}: every ship would do nothing; give tokens, or resolve "
            "with --idle-turn if that is what the table wants",
            turn=state.turn,
        )


BLOCKADE_QUESTIONS = Questions(
    acts=afloat,
    has_input=has_tokens,
    inputs="tokens",
    check_inputs_given=check_some_tokens,
    turn_rule="P1",
    naming_rule="P1",
    buys_fleets=False,
    fewest_players=1,
    facings=ORTHOGONAL_FACINGS,
    aims_shots=False,
    ship_condition=no_condition,
)
