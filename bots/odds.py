"""Odds and values for the built-in bot (:mod:`mortecouille.bots.player`): exact hit chances of cannons and
catapults, what a hit or a ram is worth, the lines and steps of the board, and every move order a
pose allows with its cost.

Everything here is a pure function of its arguments (the slow ones cached); what a whole pose
is worth to one ship, and which orders it tries, is :class:`mortecouille.bots.outlook.Outlook`'s business.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Final, NamedTuple

from mortecouille.core.board.geometry import FACING_VECTORS, VECTOR_FACINGS, Square, eighths_between, rotate
from mortecouille.core.dice import DIE_SIDES
from mortecouille.core.errors import RuleViolation
from mortecouille.core.fleet.stats import ShipStats
from mortecouille.core.mortecouille.collision_damage import (
    CAPSIZE_DIE_LIMIT,
    CONTACT_PART_BY_EIGHTHS,
    CONTACT_PARTS,
    SIREN_OTHER_INCREASE,
    SIREN_OWN_REDUCTION,
)
from mortecouille.core.mortecouille.collision_damage import CONTACT_EXTRA as COLLISION_CONTACT_EXTRA
from mortecouille.core.mortecouille.gunnery import (
    catapult_dice_count,
    catapult_needed,
    dice_count,
    needed_roll,
    probability_at_least,
)
from mortecouille.core.mortecouille.maneuver import (
    SIDE_SIGNS,
    SIDELESS_TURNS,
    TURN_EIGHTHS,
    TURN_NAMES,
    maneuver_cost,
)
from mortecouille.events.orders import Advance, Maneuver

# Scoring weights, in structure points of expected damage.
KILL_BONUS: Final = 12.0  # a sunk ship fires no more
FLAMING_BONUS: Final = 4.0  # X1: a fire check may cost the target 8 or more, or the ship

#: N: manoeuvres as orders write them, their table names and the eighths they turn.
TURNS: Final[tuple[tuple[str, str, int], ...]] = tuple(
    (turn, name, TURN_EIGHTHS[name]) for turn, name in TURN_NAMES.items()
)

#: C2 contact extras (bow ship, other ship) by the part of the other ship struck.
CONTACT_EXTRA: Final[Mapping[str, tuple[int, int]]] = {
    part: (COLLISION_CONTACT_EXTRA.get(("bow", part), 0), COLLISION_CONTACT_EXTRA.get((part, "bow"), 0))
    for part in CONTACT_PARTS
}
CAPSIZE_CHANCE: Final = CAPSIZE_DIE_LIMIT / DIE_SIDES  # C2
SIREN_OWN_RELIEF: Final = SIREN_OWN_REDUCTION  # C4
SIREN_EXTRA: Final = SIREN_OTHER_INCREASE  # C4


class Unit(NamedTuple):
    """What the bot needs of one ship afloat, read once per call."""

    id: str
    owner: str | None
    at: Square
    facing: str
    stats: ShipStats
    wind: int
    countdown: int | None


class Move(NamedTuple):
    """A move order the ship may try, what it costs and where it would leave the ship."""

    order: Advance | Maneuver
    cost: int
    at: Square
    facing: str
    #: the squares it enters in turn (one, or two for a quarter turn while sailing; none at rest)
    path: tuple[Square, ...]


# --- odds and values -----------------------------------------------------------------------


@functools.cache
def _cannon_chance(cannons: int, steps: int, burst: bool, elite: bool, bonus: int) -> float:
    """Exact hit chance of a cannon shot (S2-S4, S6); 0 beyond the tables."""
    try:
        needed = needed_roll(cannons, steps, burst)
    except RuleViolation:
        return 0.0
    return float(probability_at_least(dice_count(cannons, elite), needed, bonus))


@functools.cache
def _catapult_chance(steps: int, elite: bool, bonus: int) -> float:
    """Exact hit chance of a catapult shot (K, S6); 0 out of range."""
    try:
        needed = catapult_needed(steps)
    except RuleViolation:
        return 0.0
    return float(probability_at_least(catapult_dice_count(elite), needed, bonus))


def _hit_value(damage: int, target: Unit, flaming: bool) -> float:
    """A hit's damage as far as the target has structure left, a kill bonus, a fire bonus."""
    left = target.stats.structure
    value = float(min(damage, left)) + (KILL_BONUS if damage >= left else 0.0)
    return value + (FLAMING_BONUS if flaming else 0.0)


def _bonus(shooters: Mapping[str, set[str]], target: str, shooter: str) -> int:
    """S6: the bonus this ship's shot would get, counting the ships already firing at ``target``."""
    return len(shooters.get(target, set()) | {shooter}) - 1


def _line(origin: Square, target: Square) -> tuple[str, int] | None:
    """The straight or diagonal direction from ``origin`` to ``target`` and the distance (S1, B3)."""
    dx, dy = target[0] - origin[0], target[1] - origin[1]
    if (dx and dy and abs(dx) != abs(dy)) or not (dx or dy):
        return None
    return VECTOR_FACINGS[(dx > 0) - (dx < 0), (dy > 0) - (dy < 0)], max(abs(dx), abs(dy))


def _step(square: Square, facing: str) -> Square:
    vx, vy = FACING_VECTORS[facing]
    return square[0] + vx, square[1] + vy


def _ram_value(unit: Unit, other: Unit, moving: str) -> float:
    """Expected gain of striking ``other`` bow first while moving toward ``moving`` (C1-C4).

    The struck part follows from the other ship's facing (C1). Damage done to an
    enemy counts for us and damage taken against us; striking a friend costs both.
    """
    angle = eighths_between(other.facing, rotate(moving, 4))
    part = CONTACT_PART_BY_EIGHTHS[angle]
    mine, theirs = CONTACT_EXTRA[part]
    ours, their = unit.stats, other.stats
    taken = ours.own_loss_against(their.ship_class) + their.inflicted_on(ours.ship_class) + mine
    given = their.own_loss_against(ours.ship_class) + ours.inflicted_on(their.ship_class) + theirs
    if ours.siren:
        taken, given = max(taken - SIREN_OWN_RELIEF, 0), given + SIREN_EXTRA
    if taken >= ours.structure:
        return -(ours.structure + KILL_BONUS)
    if other.owner == unit.owner:
        return -float(taken + given)
    gain = float(min(given, their.structure)) + (KILL_BONUS if given >= their.structure else 0.0)
    if part == "side" and given < their.structure:
        gain += CAPSIZE_CHANCE * (their.structure - given + KILL_BONUS)
    return gain - taken


@functools.lru_cache(maxsize=8192)
def _moves(at: Square, facing: str, ship_class: str, speed: int) -> tuple[Move, ...]:
    """Every move order a ship could try, its cost and intended result (A3, N, M0).

    A pure function of the pose, class and speed, so cached: ships sit still most turns.
    """
    ahead = _step(at, facing)
    moves = [Move(Advance(), speed, ahead, facing, (ahead,))]
    for turn, name, eighths in TURNS:
        for side, sign in SIDE_SIGNS.items():
            if turn in SIDELESS_TURNS and side == "right":
                continue  # a half turn ends the same either way
            turned = rotate(facing, sign * eighths)
            rest = maneuver_cost(name, ship_class, False, speed)
            moves.append(Move(Maneuver(turn=turn, side=side, sailing=False), rest, at, turned, ()))
            sailing = maneuver_cost(name, ship_class, True, speed)
            # M0: a quarter turn passes the square ahead, then enters the one beside it.
            path = (ahead, _step(ahead, turned)) if eighths == 2 else (ahead,)
            moves.append(Move(Maneuver(turn=turn, side=side, sailing=True), sailing, path[-1], turned, path))
    return tuple(moves)
