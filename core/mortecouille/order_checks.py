"""Giving orders to mortecouille ships (rule T1) and measuring their shots (S1-S7, K).

``GiveOrder`` records a ship's whole order set for the current turn. It is
checked against the position at order time; combat measures every shot again
from the positions at the start of combat with the same functions
(:func:`measure_attack`, :func:`measure_catapult`). Nothing moves between the
orders and combat, so both agree unless the target left the game at upkeep.

Rulings of this module:

- any other ship afloat may be targeted, one's own fleet included (the rules
  are silent; friendly fire is the players' business); a ship never targets
  itself;
- an order set must hold at least one order (``idle`` to do nothing);
- an order set can be replaced until the turn is resolved, only on request, or withdrawn
  (``WithdrawOrder``: the ship has no orders again, by an event, never an erasure).

How the orders are held and read (and folded) is in :mod:`mortecouille.core.mortecouille.orders`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

from mortecouille.core.board.geometry import distance
from mortecouille.core.dice import DiceSource
from mortecouille.core.errors import BadInput, RuleViolation, phrase
from mortecouille.core.fleet.catalogue import POSITIONS, Position
from mortecouille.core.hints import REPLACE_HINT
from mortecouille.core.life_cycle import ship_named
from mortecouille.core.mortecouille.common import ship_stats
from mortecouille.core.mortecouille.gunnery import (
    Needed,
    catapult_needed,
    check_cannon_fire,
    firing_line,
    needed_roll,
)
from mortecouille.core.mortecouille.maneuver import (
    ADVANCE,
    ATTACK,
    BECOME_FIRESHIP,
    CATAPULT,
    IDLE,
    MANOEUVRE,
    SIDE_SIGNS,
    TURN_NAMES,
    check_actions,
)
from mortecouille.core.mortecouille.orders import fighting_fire, orders_this_turn
from mortecouille.core.state import GameState, ShipState
from mortecouille.core.turn_commands import GiveOrder, WithdrawOrder
from mortecouille.events.base import Event
from mortecouille.events.orders import (
    Advance,
    Attack,
    BecomeFireship,
    CatapultShot,
    Idle,
    Maneuver,
    Order,
    OrderGiven,
    OrderWithdrawn,
)

#: The name mortecouille.core.mortecouille.maneuver's T1 checks use for each kind of order.
ORDER_NAMES: Final[dict[type, str]] = {
    Advance: ADVANCE,
    Maneuver: MANOEUVRE,
    Attack: ATTACK,
    BecomeFireship: BECOME_FIRESHIP,
    Idle: IDLE,
    CatapultShot: CATAPULT,
}

MANEUVER_TURNS: Final = tuple(TURN_NAMES)
SIDES: Final = tuple(SIDE_SIGNS)
FIRE_MODES: Final = ("normal", "burst")


class ShotPlan(msgspec.Struct, frozen=True, kw_only=True):
    """A shot measured from the current positions: what it fires and what it needs."""

    distance: int
    cannons: int
    needed: Needed


def order_names(actions: Sequence[Order]) -> list[str]:
    return [ORDER_NAMES[type(action)] for action in actions]


# --- measuring shots -----------------------------------------------------------------------


def _check_target(state: GameState, ship_id: str, target: str, field: str) -> ShipState:
    other = ship_named(state, target, field)
    if target == ship_id:
        raise RuleViolation("S1", "{ship_id} cannot fire at itself", field=field, ship_id=ship_id)
    if not other.afloat or other.at is None:
        raise RuleViolation(
            "T2", "{target} has left the game and cannot be targeted", field=field, target=target
        )
    return other


def measure_attack(state: GameState, ship_id: str, attack: Attack, field: str = "attack") -> ShotPlan:
    """Check a cannon attack from the current positions and say what it needs (S1-S4, S7).

    Refuses a bad position or mode (naming ``field``), a position without cannons
    (S2), a target off the position's line (S1) or beyond the table (S3, S4), a
    burst from fewer than 3 cannons (S4) and any cannon fire during the cooldown
    that follows a burst (S7).
    """
    ship = state.ships[ship_id]
    target = _check_target(state, ship_id, attack.target, f"{field}.target")
    position = _position(attack.position, f"{field}.position")
    if attack.mode not in FIRE_MODES:
        raise BadInput(
            f"{field}.mode",
            "{mode!r} is not one of {fire_modes}",
            mode=attack.mode,
            fire_modes=", ".join(FIRE_MODES),
        )
    stats = ship_stats(state, ship_id)
    cannons = stats.cannons.on(position)
    if cannons == 0:
        raise RuleViolation(
            "S2",
            "{ship_id} has no cannon on its {position}",
            field=f"{field}.position",
            ship_id=ship_id,
            position=position,
        )
    assert ship.at is not None and target.at is not None  # both afloat
    steps = firing_line(ship.at, ship.facing, position, target.at)
    check_cannon_fire(ship.bursts_in_a_row, stats.continuous_burst)
    needed = needed_roll(cannons, steps, burst=attack.mode == "burst")
    return ShotPlan(distance=steps, cannons=cannons, needed=needed)


def measure_catapult(state: GameState, ship_id: str, shot: CatapultShot, field: str = "catapult") -> ShotPlan:
    """Check a catapult shot (any direction) and say what it needs; beyond the table refused (K)."""
    ship = state.ships[ship_id]
    target = _check_target(state, ship_id, shot.target, f"{field}.target")
    assert ship.at is not None and target.at is not None  # both afloat
    steps = distance(ship.at, target.at)
    return ShotPlan(distance=steps, cannons=0, needed=catapult_needed(steps))


def _position(text: str, field: str) -> Position:
    for position in POSITIONS:
        if text == position:
            return position
    raise BadInput(field, "{text!r} is not one of {positions}", text=text, positions=", ".join(POSITIONS))


# --- the command ---------------------------------------------------------------------------


def decide_give_order(state: GameState, command: GiveOrder, dice: DiceSource) -> list[Event]:
    """Check a ship's order set for this turn (T1, S, K, X1, C6) and record it whole."""
    ship = ship_named(state, command.ship, "ship")
    if not command.actions:
        raise BadInput("actions", "give at least one order (idle to do nothing)")
    for index, action in enumerate(command.actions):
        if type(action) not in ORDER_NAMES:
            raise BadInput(f"actions[{index}]", "{action!r} is not an order", action=action)
    already = bool(orders_this_turn(state, command.ship))
    if already and not command.replace:
        raise RuleViolation(
            "T1",
            "{ship} already has its orders for turn {turn}; {replace_hint}",
            ship=command.ship,
            turn=state.turn,
            replace_hint=REPLACE_HINT,
        )
    if ship.at is None and not (ship.sunk or ship.lost or ship.gone):
        # bought, never placed: not "sunk or departed" (T2), which would send the referee looking
        # for a loss that never happened
        raise RuleViolation(
            "F3",
            "{ship} is bought but not placed yet: `place {game} {ship!r} SQUARE` first, then its orders",
            ship=command.ship,
            game=state.game,
        )
    stats = ship_stats(state, command.ship)
    if stats.catapults == 0 and any(isinstance(action, CatapultShot) for action in command.actions):
        # said plainly, rather than "1 shots for 0" from the per-catapult count below
        raise RuleViolation(
            "K", "{ship} has no catapult: a catapult shot needs the catapult option", ship=command.ship
        )
    check_actions(
        order_names(command.actions),
        extra_crew=stats.extra_crew,
        in_fire_phase_3=fighting_fire(ship),
        is_fireship=ship.fireship,
        sunk=not ship.afloat,
        catapults=stats.catapults,
    )
    for index, action in enumerate(command.actions):
        field = f"actions[{index}]"
        if isinstance(action, BecomeFireship) and not stats.fireship_allowed:
            raise RuleViolation("C6", "{ship} lacks the fireship option", ship=command.ship)
        elif isinstance(action, Maneuver):
            if action.turn not in MANEUVER_TURNS:
                raise BadInput(
                    f"{field}.turn",
                    "{turn!r} is not one of {maneuver_turns}",
                    turn=action.turn,
                    maneuver_turns=", ".join(MANEUVER_TURNS),
                )
            if action.side not in SIDES:
                raise BadInput(
                    f"{field}.side",
                    "{side!r} is not one of {sides}",
                    side=action.side,
                    sides=", ".join(SIDES),
                )
        elif isinstance(action, Attack):
            measure_attack(state, command.ship, action, field)
        elif isinstance(action, CatapultShot):
            measure_catapult(state, command.ship, action, field)
    return [OrderGiven(turn=state.turn, ship=command.ship, actions=command.actions, replaced=already)]


def decide_withdraw_order(state: GameState, command: WithdrawOrder, dice: DiceSource) -> list[Event]:
    """T1: orders are taken back only while their turn is unresolved; a resolved turn's orders
    have been carried out, and the next turn's are not given yet."""
    ship_named(state, command.ship, "ship")
    if not orders_this_turn(state, command.ship):
        given = state.orders.get(command.ship)
        if given is not None and given.turn < state.turn:
            reason = phrase(
                "its orders for turn {turn} were carried out when that turn was resolved", turn=given.turn
            )
        else:
            reason = phrase("it has no orders to withdraw")
        raise RuleViolation(
            "T1",
            "{ship} has no orders for turn {turn}: {reason}",
            ship=command.ship,
            turn=state.turn,
            reason=reason,
        )
    return [OrderWithdrawn(turn=state.turn, ship=command.ship)]
