"""The mortecouille ruleset's answers to the questions asked of every ruleset
(:class:`~mortecouille.core.questions.Questions`): ships bought and sealed (F1-F4), orders (T1)."""

from __future__ import annotations

from typing import Any

from mortecouille.core.board.geometry import FACING_VECTORS
from mortecouille.core.errors import RuleViolation
from mortecouille.core.mortecouille.orders import orders_this_turn, takes_orders
from mortecouille.core.questions import Questions
from mortecouille.core.state import GameState, ShipState


def has_orders(state: GameState, ship_id: str) -> bool:
    """Whether the ship has its orders for the current turn (T1)."""
    return bool(orders_this_turn(state, ship_id))


def ship_condition(ship: ShipState) -> dict[str, Any]:
    """A ship's fire (X1), wind points (A1) and catapult countdown (K), and whether it was lost or is
    gone (W3, C6) when it was."""
    condition: dict[str, Any] = {"fire": ship.fire, "wind": ship.wind, "countdown": ship.countdown}
    if ship.lost:
        condition["lost"] = True
    if ship.gone:
        condition["gone"] = True
    return condition


def check_some_orders(state: GameState) -> None:
    """Refuse a mortecouille turn in which no ship that can take orders has any (T1)."""
    # Ships fighting a fire and fireships cannot take orders (T2, C6): a turn where only they are
    # afloat is not idle by mistake.
    orderable = [ship.id for ship in state.ships.values() if takes_orders(ship)]
    if orderable and not any(orders_this_turn(state, s) for s in orderable):
        raise RuleViolation(
            "T1",
            "no ship has orders for turn {turn}: every ship would do nothing and lose its wind points; "
            "give orders, or resolve with --idle-turn if that is what the table wants",
            turn=state.turn,
        )


MORTECOUILLE_QUESTIONS = Questions(
    # a ship fighting a fire (X1) or sailing as a fireship (C6) acts without orders
    acts=takes_orders,
    has_input=has_orders,
    inputs="orders",
    check_inputs_given=check_some_orders,
    turn_rule="T2",
    naming_rule="F1",
    buys_fleets=True,
    fewest_players=2,
    facings=tuple(FACING_VECTORS),
    aims_shots=True,
    ship_condition=ship_condition,
)
