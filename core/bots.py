"""A simple built-in player: legal orders for every ship of one player (T1), for ``simulate``
and demos.

The bot is deterministic for a given state, player and seed: its only
randomness is a :class:`random.Random` seeded from those. It never guesses at
legality: every candidate order set goes through the same decider a referee's
order does, and refused ones are skipped, so it only ever gives legal orders.

Per ship, in order of preference: a badly damaged ship with the fireship option
and an enemy dead ahead becomes a fireship (C6); otherwise it fires at the
enemy where its cannons expect the most damage (S), adds one catapult shot per
catapult at the nearest enemy in range (K), and sails toward the nearest enemy
(A3, N) when it does not fire, or as its second action with extra-crew. Now
and then (one time in ten) it idles or skips its attack instead, so that long
runs exercise more of the rules.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Final

from core.catalogue import POSITIONS
from core.dice import TableDice
from core.errors import RuleViolation
from core.game import decide
from core.geometry import FACING_VECTORS, FACINGS, Square, distance, rotate
from core.gunnery import catapult_dice_count, dice_count, firing_line, hit_damage, probability_at_least
from core.mortecouille_common import ship_stats
from core.orders import GiveOrder, fighting_fire, measure_attack, measure_catapult, orders_this_turn
from core.state import GameState
from events.orders import Advance, Attack, BecomeFireship, CatapultShot, Idle, Maneuver, Order

#: How often the bot deliberately plays worse, to vary the games it produces.
WHIM: Final = 0.1
#: A fireship is worth it only for a ship this damaged, with an enemy this close ahead (C6).
FIRESHIP_DAMAGE_LEVEL: Final = "three-quarters"
FIRESHIP_REACH: Final = 4
#: Turning by this many eighths, as a manoeuvre order writes it (N).
TURN_FOR_EIGHTHS: Final = {1: "1/8", 2: "1/4", 3: "1/4", 4: "1/2"}
FIRE_MODES: Final = ("burst", "normal")


def choose_orders(state: GameState, player: str, rng_seed: int | str) -> list[GiveOrder]:
    """One legal ``GiveOrder`` for each afloat ship of ``player`` that still needs orders."""
    rng = random.Random(f"{rng_seed}/{state.game}/{state.turn}/{player}")
    commands: list[GiveOrder] = []
    for ship_id in sorted(state.ships):
        ship = state.ships[ship_id]
        if ship.owner != player or not ship.afloat or ship.fireship or orders_this_turn(state, ship_id):
            continue
        for actions in _candidates(state, ship_id, player, rng):
            command = GiveOrder(ship=ship_id, actions=actions)
            if _legal(state, command):
                commands.append(command)
                break
    return commands


def _legal(state: GameState, command: GiveOrder) -> bool:
    try:
        decide(state, command, TableDice())
    except RuleViolation:
        return False
    return True


def _candidates(
    state: GameState, ship_id: str, player: str, rng: random.Random
) -> Iterator[tuple[Order, ...]]:
    """Order sets for one ship, best first; the caller keeps the first legal one."""
    ship = state.ships[ship_id]
    if fighting_fire(ship):
        yield (Idle(),)
        return
    enemies = _enemies_by_distance(state, ship_id, player)
    if rng.random() < WHIM:
        yield (Idle(),)
    fireship = _fireship(state, ship_id, enemies)
    if fireship is not None:
        yield (fireship,)
    attack = None if rng.random() < WHIM else _best_attack(state, ship_id, enemies)
    catapults = _catapult_shots(state, ship_id, enemies)
    move = _move_toward(state, ship_id, enemies[0] if enemies else None, rng)
    if attack is not None:
        if ship_stats(state, ship_id).extra_crew:
            yield (attack, move, *catapults)
        yield (attack, *catapults)
    yield (move, *catapults)
    yield (move,)
    yield (Idle(),)


def _enemies_by_distance(state: GameState, ship_id: str, player: str) -> list[str]:
    at = state.ships[ship_id].at
    assert at is not None
    enemies = [
        other.id
        for other in state.ships.values()
        if other.afloat and other.owner != player and other.at is not None and other.id != ship_id
    ]
    return sorted(enemies, key=lambda other: (distance(at, _square(state, other)), other))


def _square(state: GameState, ship_id: str) -> Square:
    at = state.ships[ship_id].at
    assert at is not None
    return at


def _fireship(state: GameState, ship_id: str, enemies: list[str]) -> BecomeFireship | None:
    stats = ship_stats(state, ship_id)
    if not stats.fireship_allowed or stats.damage_level != FIRESHIP_DAMAGE_LEVEL:
        return None
    ship = state.ships[ship_id]
    assert ship.at is not None
    for enemy in enemies:
        try:
            if firing_line(ship.at, ship.facing, "bow", _square(state, enemy)) <= FIRESHIP_REACH:
                return BecomeFireship()
        except RuleViolation:
            continue
    return None


def _best_attack(state: GameState, ship_id: str, enemies: list[str]) -> Attack | None:
    """The legal attack with the highest expected damage (S2-S5), if any can hit."""
    stats = ship_stats(state, ship_id)
    best: tuple[float, Attack] | None = None
    for enemy in enemies:
        for position in POSITIONS:
            for mode in FIRE_MODES:
                attack = Attack(position=position, target=enemy, mode=mode)
                try:
                    plan = measure_attack(state, ship_id, attack)
                except RuleViolation:
                    continue
                chance = probability_at_least(dice_count(plan.cannons, stats.elite_gunner), plan.needed)
                base = stats.burst_damage if mode == "burst" else stats.normal_damage
                expected = float(chance) * hit_damage(base, plan.distance)
                if expected > 0 and (best is None or expected > best[0]):
                    best = (expected, attack)
    return best[1] if best is not None else None


def _catapult_shots(state: GameState, ship_id: str, enemies: list[str]) -> tuple[CatapultShot, ...]:
    """One shot per catapult at the nearest enemy it can hit (K)."""
    elite = ship_stats(state, ship_id).elite_gunner
    for enemy in enemies:
        shot = CatapultShot(target=enemy)
        try:
            plan = measure_catapult(state, ship_id, shot)
        except RuleViolation:
            continue
        if probability_at_least(catapult_dice_count(elite), plan.needed) > 0:
            return (shot,) * ship_stats(state, ship_id).catapults
    return ()


def _move_toward(state: GameState, ship_id: str, enemy: str | None, rng: random.Random) -> Order:
    """Advance when the enemy is ahead (or there is none), else turn toward it (A3, N)."""
    ship = state.ships[ship_id]
    if enemy is None or ship.at is None:
        return Advance()
    (x, y), (ex, ey) = ship.at, _square(state, enemy)
    wanted = _facing_toward(ex - x, ey - y)
    clockwise = (FACINGS.index(wanted) - FACINGS.index(ship.facing)) % len(FACINGS)
    if clockwise == 0:
        return Advance()
    side, eighths = ("right", clockwise) if clockwise <= 4 else ("left", len(FACINGS) - clockwise)
    return Maneuver(turn=TURN_FOR_EIGHTHS[eighths], side=side, sailing=rng.random() < 0.5)


def _facing_toward(dx: int, dy: int) -> str:
    """The facing whose direction is closest to the vector (dx, dy) (B2)."""
    sign = (dx > 0) - (dx < 0), (dy > 0) - (dy < 0)
    best = next(f for f, v in FACING_VECTORS.items() if v == sign) if sign != (0, 0) else "N"
    # A mostly straight line is better served by the orthogonal facing next to the diagonal.
    if sign[0] and sign[1] and abs(dx) >= 2 * abs(dy):
        return rotate(best, 1 if (sign[0] > 0) == (sign[1] > 0) else -1)
    if sign[0] and sign[1] and abs(dy) >= 2 * abs(dx):
        return rotate(best, -1 if (sign[0] > 0) == (sign[1] > 0) else 1)
    return best
