"""Mortecouille orders as the game holds them (rule T1): a ship's orders this turn, whether the
turn waits for them, how they read, and how a given or withdrawn order set changes the state.

Giving orders, checking them and measuring their shots is in
:mod:`mortecouille.core.mortecouille.order_checks`: folding a game, showing it and knowing whom a
turn waits for need only this module, not the gunnery tables (the CLI's start-up).
"""

from __future__ import annotations

from mortecouille.core.life_cycle import replace
from mortecouille.core.mortecouille.fire import FIRE_TABLE
from mortecouille.core.state import GameState, ShipState
from mortecouille.events.orders import (
    Attack,
    CatapultShot,
    Maneuver,
    Order,
    OrderGiven,
    OrderSet,
    OrderWithdrawn,
)

# --- reading orders ------------------------------------------------------------------------


def orders_this_turn(state: GameState, ship_id: str) -> tuple[Order, ...]:
    """The ship's orders for ``state.turn``; none when it was not ordered (or only earlier)."""
    given = state.orders.get(ship_id)
    return given.actions if given is not None and given.turn == state.turn else ()


def order_text(action: Order) -> str:
    """One action as the referee types it after ``order GAME SHIP``: ``attack port Kraken --burst``.

    Explain and the HTML replay show orders in this grammar so that what is read can be typed back.
    """
    if isinstance(action, Maneuver):
        return f"maneuver {action.turn} {action.side}" + (" --sailing" if action.sailing else "")
    if isinstance(action, Attack):
        return f"attack {action.position} {action.target}" + (" --burst" if action.mode == "burst" else "")
    if isinstance(action, CatapultShot):
        return f"catapult {action.target}"
    return str(type(action).__struct_config__.tag)


def fighting_fire(ship: ShipState) -> bool:
    """Whether this turn's fire check keeps the crew from doing anything, whatever the die (X1)."""
    return any(ship.fire == phase and rule.no_action for phase, rule in FIRE_TABLE.items())


def takes_orders(ship: ShipState) -> bool:
    """Whether the turn waits for this ship's orders: afloat, neither fighting a fire (X1) nor
    sailing as a fireship (C6), which act without orders."""
    return ship.afloat and not ship.fireship and not fighting_fire(ship)


# --- the state -------------------------------------------------------------------------------


def evolve_order_given(state: GameState, event: OrderGiven) -> GameState:
    given = OrderSet(turn=event.turn, actions=event.actions)
    return replace(state, orders={**state.orders, event.ship: given})


def evolve_order_withdrawn(state: GameState, event: OrderWithdrawn) -> GameState:
    return replace(state, orders={k: v for k, v in state.orders.items() if k != event.ship})
