"""Manoeuvre costs (N), advancing (A3) and the legality of a ship's orders (T1).

Pure functions: wind points, speeds and ship state are passed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import msgspec

from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.fleet.catalogue import SHIP_CLASSES

#: A1: a wind die at or above this gives wind points; below it, slave rerolls once (F2).
WIND_POINT_FROM: Final = 3
WIND_POINTS_PER_SUCCESS: Final = 1

#: Eighths of a turn each manoeuvre rotates the ship by.
TURN_EIGHTHS: Final[Mapping[str, int]] = {"eighth": 1, "quarter": 2, "half": 4}
TURNS: Final = tuple(TURN_EIGHTHS)

#: The manoeuvres as orders write them, and their names in the manoeuvre table.
TURN_NAMES: Final[Mapping[str, str]] = {"1/8": "eighth", "1/4": "quarter", "1/2": "half"}
#: Turning right is clockwise (positive eighths), left anticlockwise.
SIDE_SIGNS: Final[Mapping[str, int]] = {"left": -1, "right": 1}
#: Manoeuvres whose direction changes nothing, so an order may leave the side out.
SIDELESS_TURNS: Final = ("1/2",)


class ManeuverCost(msgspec.Struct, frozen=True):
    """Points for one manoeuvre: ``at_rest`` fixed, or speed + ``sailing_extra`` while sailing."""

    at_rest: int
    sailing_extra: int


#: N table; the big sailing half turn is 4 by ruling (the source also says "2 points").
MANEUVER_COSTS: Final[Mapping[str, Mapping[str, ManeuverCost]]] = {
    "eighth": {"small": ManeuverCost(1, 0), "big": ManeuverCost(2, 1)},
    "quarter": {"small": ManeuverCost(2, 1), "big": ManeuverCost(3, 2)},
    "half": {"small": ManeuverCost(4, 2), "big": ManeuverCost(6, 4)},
}

ADVANCE: Final = "advance"
MANOEUVRE: Final = "manoeuvre"
ATTACK: Final = "attack"
BECOME_FIRESHIP: Final = "fireship"
IDLE: Final = "idle"
CATAPULT: Final = "catapult"

#: T1: the orders that are actions; a catapult shot and idling are not.
ACTIONS: Final = (ADVANCE, MANOEUVRE, ATTACK, BECOME_FIRESHIP)
MOVING_ACTIONS: Final = (ADVANCE, MANOEUVRE)
ORDERS: Final = (*ACTIONS, IDLE, CATAPULT)

#: T1: actions a ship may take in one turn, without and with extra-crew.
MAX_ACTIONS: Final[Mapping[bool, int]] = {False: 1, True: 2}
MAX_MOVING_ACTIONS: Final = 1  # T1 ruling: extra-crew gives at most one move


def maneuver_cost(turn: str, ship_class: str, sailing: bool, speed: int) -> int:
    """Wind points a manoeuvre costs (N): fixed at rest, ``speed`` + extra while sailing."""
    if turn not in MANEUVER_COSTS:
        raise BadInput("turn", "{turn!r} is not one of {turns}", turn=turn, turns=", ".join(TURNS))
    if ship_class not in SHIP_CLASSES:
        raise BadInput(
            "ship_class",
            "{ship_class!r} is not one of {ship_classes}",
            ship_class=ship_class,
            ship_classes=", ".join(SHIP_CLASSES),
        )
    if speed < 1:
        raise BadInput("speed", "a speed is at least 1, not {speed}", speed=speed)
    cost = MANEUVER_COSTS[turn][ship_class]
    return speed + cost.sailing_extra if sailing else cost.at_rest


def can_afford(points: int, cost: int) -> bool:
    """Whether a ship holding ``points`` wind points can pay ``cost`` (A3, N)."""
    return points >= cost


def check_actions(
    actions: Sequence[str],
    extra_crew: bool,
    in_fire_phase_3: bool,
    is_fireship: bool,
    sunk: bool,
    *,
    catapults: int | None = None,
) -> None:
    """Refuse an illegal set of orders for one ship this turn; return None when legal.

    ``actions`` lists the orders: advance, manoeuvre, attack, fireship (become
    one, C6), idle, catapult (one per catapult shot). No orders at all is legal
    (the ship does nothing, T1). Refusals cite:

    - T2: a sunk, abandoned or departed ship takes no further part;
    - C6: a fireship gives no orders;
    - X1: a ship in fire phase 3 can do nothing this turn, catapult included;
    - T1: one action, or with extra-crew two different ones of which at most one
      moves; ``idle`` with another order that is an action;
    - K: more catapult shots than ``catapults`` (when given).
    """
    for order in actions:
        if order not in ORDERS:
            raise BadInput(
                "actions", "{order!r} is not one of {orders}", order=order, orders=", ".join(ORDERS)
            )
    if not actions:
        return
    if sunk:
        raise RuleViolation("T2", "a sunk, abandoned or departed ship takes no further part")
    if is_fireship:
        raise RuleViolation("C6", "a fireship sails straight on by itself and takes no orders")
    real_actions = [order for order in actions if order in ACTIONS]
    if in_fire_phase_3 and any(order != IDLE for order in actions):
        raise RuleViolation("X1", "the crew fights the fire (phase 3): the ship can do nothing")
    if IDLE in actions and (real_actions or actions.count(IDLE) > 1):
        raise RuleViolation("T1", "idle cannot be combined with another action")
    if len(set(real_actions)) != len(real_actions):
        raise RuleViolation("T1", "a ship cannot take the same action twice in a turn")
    allowed = MAX_ACTIONS[extra_crew]
    if len(real_actions) > allowed:
        crew = "with extra-crew" if extra_crew else "without extra-crew"
        raise RuleViolation(
            "T1", "{crew} a ship takes at most {allowed} action(s) per turn", crew=crew, allowed=allowed
        )
    if sum(order in MOVING_ACTIONS for order in real_actions) > MAX_MOVING_ACTIONS:
        raise RuleViolation("T1", "at most one of a ship's actions may move it (advance or manoeuvre)")
    if catapults is not None and actions.count(CATAPULT) > catapults:
        raise RuleViolation(
            "K",
            "one shot per catapult: {shots} shots for {catapults}",
            shots=actions.count(CATAPULT),
            catapults=catapults,
        )


def does_nothing(actions: Sequence[str], in_fire_phase_3: bool) -> bool:
    """T1: whether the ship counts as doing nothing (and so loses its wind points).

    A catapult shot alone is not an action; a ship in fire phase 3 always does
    nothing (X1).
    """
    return in_fire_phase_3 or not any(order in ACTIONS for order in actions)
