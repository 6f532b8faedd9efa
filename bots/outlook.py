"""One ship's decision for the built-in bot (:mod:`mortecouille.bots.player`): the weights it scores with and
:class:`Outlook`, which scores poses, shots and moves and yields the ship's candidate order
sets, best first.

The odds and values it builds on (hit chances, what a hit or a ram is worth, the moves a pose
allows) are in :mod:`mortecouille.bots.odds`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Final, NamedTuple

from mortecouille.bots.odds import (
    Move,
    Unit,
    _bonus,
    _cannon_chance,
    _catapult_chance,
    _hit_value,
    _line,
    _moves,
    _ram_value,
    _step,
)
from mortecouille.core.board.geometry import FACINGS, Square, distance, rotate
from mortecouille.core.board.terrain import board_index
from mortecouille.core.dice import DIE_SIDES
from mortecouille.core.fleet.catalogue import POSITIONS
from mortecouille.core.mortecouille.gunnery import (
    CATAPULT_DAMAGE_ON_BIG,
    CATAPULT_SUPER_SHOT_BONUS,
    FIRING_POSITIONS,
    MIN_BURST_CANNONS,
    can_fire_cannons,
    hit_damage,
)
from mortecouille.core.mortecouille.maneuver import WIND_POINT_FROM
from mortecouille.core.mortecouille.orders import fighting_fire
from mortecouille.core.state import GameState
from mortecouille.events.orders import Advance, Attack, BecomeFireship, CatapultShot, Idle, Maneuver, Order

#: A1: chance that the wind die (3-6) gives a point, and with the slave's reroll.
WIND_POINT_CHANCE: Final = (DIE_SIDES - WIND_POINT_FROM + 1) / DIE_SIDES  # A1
WIND_POINT_CHANCE_WITH_SLAVE: Final = 1 - (1 - WIND_POINT_CHANCE) ** 2  # A1, F2: one reroll

# Scoring weights, in structure points of expected damage.
TURN_IN_PLACE_WEIGHT: Final = 0.4  # attacks one turn at rest away are worth less than ready ones
APPROACH_WEIGHT: Final = 1.5  # per square closer to the nearest enemy
HEADING_WEIGHT: Final = 0.75  # per square the next advance from the pose would close
CLOSE_ENOUGH: Final = 0  # close right in: every line is shorter, and contact brings rams
RAM_READY_WEIGHT: Final = 0.4  # an enemy right at the bow is a ram next turn, if the wind allows
WIND_POINT_VALUE: Final = 0.1  # points only buy moves: this just prefers the cheaper of equal moves
ROCK_PENALTY: Final = 3.0  # a move stopped by a rock or the edge wastes its points (C5)
BURST_FACTOR: Final = 2.0  # S7: a burst silences the cannons next turn
CONTINUOUS_BURST_FACTOR: Final = 1.5  # S7: two bursts in a row, then one quiet turn
CATAPULT_VALUE_SMALL: Final = 25.0  # K: the first hit dooms a small ship within three turns
CATAPULT_VALUE_SMALL_COUNTING: Final = 12.0  # K: each further hit brings its end a turn closer

#: C6: a ship this damaged, with an enemy this close ahead, becomes a fireship ...
FIRESHIP_DAMAGE_LEVELS: Final = ("half", "three-quarters")
FIRESHIP_REACH: Final = 4
#: ... and so does one with an enemy at the bow and at least this many enemies adjacent.
FIRESHIP_CROWD: Final = 2

FACING_INDEX: Final[Mapping[str, int]] = {facing: index for index, facing in enumerate(FACINGS)}
#: Eighths a ship may turn in place to bring another broadside to bear.
TURNS_IN_PLACE: Final = (-2, -1, 1, 2)


class Shot(NamedTuple):
    """A cannon attack and what it is worth."""

    value: float
    attack: Attack


class Plan(NamedTuple):
    """A move order and its score (a hold's order is one the points cannot pay)."""

    score: float
    order: Advance | Maneuver


# --- one ship's decision -------------------------------------------------------------------


class Outlook:
    """One ship's view of the board for one decision, caching what its candidate moves share."""

    def __init__(self, state: GameState, unit: Unit, units: list[Unit], enemies: list[Unit]) -> None:
        self.state = state
        self.board = board_index(state.board)
        self.unit = unit
        self.enemies = enemies
        self.enemy_squares = [enemy.at for enemy in enemies]
        self.others = {other.at: other for other in units if other.id != unit.id}
        self._targets: dict[Square, dict[str, list[tuple[int, Unit]]]] = {}
        self._ready: dict[Square, tuple[float, ...]] = {}
        self._nearest: dict[Square, int] = {}
        self._poses: dict[tuple[Square, str], float] = {}

    # candidates

    def candidates(
        self, shooters: Mapping[str, set[str]], whim: random.Random | None
    ) -> Iterator[tuple[Order, ...]]:
        """Order sets for the ship, best first; the caller keeps the first legal one."""
        unit, state = self.unit, self.state
        if fighting_fire(state.ships[unit.id]):
            yield (Idle(),)  # X1: the crew fights the fire, nothing else is allowed
            return
        catapults = self.catapult_shots(shooters)
        if not self.enemies:
            yield (Idle(), *catapults)
            yield (Idle(),)
            return
        if self.wants_fireship():
            yield (BecomeFireship(), *catapults)
        moves = self.moves()
        if whim is not None:
            yield (whim.choice(moves).order, *catapults)
        shot = None
        if can_fire_cannons(state.ships[unit.id].bursts_in_a_row, unit.stats.continuous_burst):
            shot = self.best_shot(unit.at, unit.facing, shooters)
        plans = self.move_plans(moves)
        if shot is not None:
            best = plans[0] if plans else None
            if unit.stats.extra_crew and best is not None:
                yield (shot.attack, best.order, *catapults)
            # Attacking is an action, so the ship keeps its points (T1) as a hold would.
            stay = self.pose(unit.at, unit.facing)
            if best is None or shot.value + stay >= best.score:
                yield (shot.attack, *catapults)
        for plan in plans:
            yield (plan.order, *catapults)
        if shot is not None:
            yield (shot.attack, *catapults)
        yield (Idle(), *catapults)
        yield (Idle(),)

    # cannons and catapults

    def targets_from(self, at: Square) -> dict[str, list[tuple[int, Unit]]]:
        """Enemies on each of the eight lines from ``at``, with their distance (S1)."""
        found = self._targets.get(at)
        if found is None:
            found = {}
            for enemy in self.enemies:
                line = _line(at, enemy.at)
                if line is not None:
                    found.setdefault(line[0], []).append((line[1], enemy))
            self._targets[at] = found
        return found

    def best_shot(self, at: Square, facing: str, shooters: Mapping[str, set[str]]) -> Shot | None:
        """The cannon attack worth the most this turn, if any can hit (S1-S7).

        A burst is worth its expected damage shared with the silent turn that
        follows it (S7), so it must beat a normal shot by that factor.
        """
        stats = self.unit.stats
        burst_factor = CONTINUOUS_BURST_FACTOR if stats.continuous_burst else BURST_FACTOR
        targets = self.targets_from(at)
        best: Shot | None = None
        for position in POSITIONS:
            cannons = stats.cannons.on(position)
            for steps, enemy in (
                targets.get(rotate(facing, FIRING_POSITIONS[position]), ()) if cannons else ()
            ):
                bonus = _bonus(shooters, enemy.id, self.unit.id)
                normal, burst = self._shot_values(cannons, steps, enemy, bonus)
                value, mode = (
                    (burst / burst_factor, "burst") if burst > burst_factor * normal else (normal, "normal")
                )
                if value > 0 and (best is None or value > best.value):
                    best = Shot(value, Attack(position=position, target=enemy.id, mode=mode))
        return best

    def ready(self, at: Square, facing: str) -> float:
        """The best attack from a pose next turn, taking the better mode at face value."""
        return self.ready_by_facing(at)[FACING_INDEX[facing]]

    def ready_by_facing(self, at: Square) -> tuple[float, ...]:
        """:meth:`ready` for each of the eight facings (in FACINGS order) at once: every pose a
        move can leave shares its square with several others."""
        found = self._ready.get(at)
        if found is None:
            targets = self.targets_from(at)
            by_facing = [0.0] * len(FACINGS)
            for position in POSITIONS:
                cannons = self.unit.stats.cannons.on(position)
                if not cannons:
                    continue
                offset = FIRING_POSITIONS[position]
                for direction, lined_up in targets.items():
                    value = max(max(self._shot_values(cannons, steps, enemy, 0)) for steps, enemy in lined_up)
                    # The facing that puts this position's line on ``direction``.
                    facing_index = (FACING_INDEX[direction] - offset) % len(FACINGS)
                    by_facing[facing_index] = max(by_facing[facing_index], value)
            found = tuple(by_facing)
            self._ready[at] = found
        return found

    def nearest(self, at: Square) -> int:
        """Distance to the nearest enemy (B3)."""
        found = self._nearest.get(at)
        if found is None:
            x, y = at
            found = min(max(abs(x - ex), abs(y - ey)) for ex, ey in self.enemy_squares)
            self._nearest[at] = found
        return found

    def _shot_values(self, cannons: int, steps: int, enemy: Unit, bonus: int) -> tuple[float, float]:
        """Expected value of a normal shot and of a burst (0 when not allowed) (S3-S5)."""
        stats = self.unit.stats
        normal = _cannon_chance(cannons, steps, False, stats.elite_gunner, bonus) * _hit_value(
            hit_damage(stats.normal_damage, steps), enemy, stats.flaming_shot
        )
        burst = 0.0
        if cannons >= MIN_BURST_CANNONS:
            burst = _cannon_chance(cannons, steps, True, stats.elite_gunner, bonus) * _hit_value(
                hit_damage(stats.burst_damage, steps), enemy, stats.flaming_shot
            )
        return normal, burst

    def catapult_shots(self, shooters: Mapping[str, set[str]]) -> tuple[CatapultShot, ...]:
        """One shot per catapult, all at the enemy in range where a hit is worth the most (K)."""
        stats = self.unit.stats
        if not stats.catapults:
            return ()
        best: tuple[float, str] | None = None
        for enemy in self.enemies:
            steps = distance(self.unit.at, enemy.at)
            bonus = _bonus(shooters, enemy.id, self.unit.id)
            value = _catapult_chance(steps, stats.elite_gunner, bonus) * self._catapult_value(enemy)
            if value > 0 and (best is None or value > best[0]):
                best = (value, enemy.id)
        return (CatapultShot(target=best[1]),) * stats.catapults if best is not None else ()

    def _catapult_value(self, target: Unit) -> float:
        """What one catapult hit on ``target`` is worth (K)."""
        if target.stats.ship_class == "small":
            return CATAPULT_VALUE_SMALL if target.countdown is None else CATAPULT_VALUE_SMALL_COUNTING
        damage = CATAPULT_DAMAGE_ON_BIG + (CATAPULT_SUPER_SHOT_BONUS if self.unit.stats.super_shot else 0)
        return _hit_value(damage, target, self.unit.stats.flaming_shot)

    # fireship

    def wants_fireship(self) -> bool:
        """C6: worth it for a damaged ship with an enemy close ahead, or one that is surrounded."""
        unit = self.unit
        if not unit.stats.fireship_allowed:
            return False
        ahead = [steps for steps, _ in self.targets_from(unit.at).get(unit.facing, ())]
        if unit.stats.damage_level in FIRESHIP_DAMAGE_LEVELS and any(s <= FIRESHIP_REACH for s in ahead):
            return True
        adjacent = sum(1 for enemy in self.enemies if distance(unit.at, enemy.at) == 1)
        return adjacent >= FIRESHIP_CROWD and 1 in ahead

    # moves

    def moves(self) -> tuple[Move, ...]:
        """Every move order the ship could try this turn, its cost and intended result (A3, N)."""
        unit = self.unit
        return _moves(unit.at, unit.facing, unit.stats.ship_class, unit.stats.speed)

    def move_plans(self, moves: tuple[Move, ...]) -> list[Plan]:
        """Moves the points may pay, scored, best first, and a hold when some move cannot be paid.

        The wind die comes before movement (T2), so a move one point short is paid
        two times in three. The hold tries the advance when the points cannot pay
        it ("sail on when the wind allows"), else the dearest manoeuvre; unpaid moves
        are not scored, which keeps a bot turn cheap.
        """
        unit = self.unit
        gain = WIND_POINT_CHANCE_WITH_SLAVE if unit.stats.slave else WIND_POINT_CHANCE
        stay = self.pose(unit.at, unit.facing)
        plans: list[tuple[float, int, Plan]] = []
        unpaid: list[Move] = []
        for index, move in enumerate(moves):
            if move.cost > unit.wind + 1:
                unpaid.append(move)
                continue
            score = self.after(move) - WIND_POINT_VALUE * move.cost
            if move.cost == unit.wind + 1:
                score = gain * score + (1 - gain) * stay
            plans.append((-score, index, Plan(score, move.order)))
        if unpaid:
            hold = unpaid[0] if isinstance(unpaid[0].order, Advance) else max(unpaid, key=lambda m: m.cost)
            plans.append((-stay, len(moves), Plan(stay, hold.order)))
        return [plan for _, _, plan in sorted(plans)]

    def pose(self, at: Square, facing: str) -> float:
        """How good a square and facing are for next turn: the attack ready there, those one turn
        in place away, closeness to the nearest enemy, heading and a ram at the bow."""
        key = (at, facing)
        cached = self._poses.get(key)
        if cached is not None:
            return cached
        by_facing, index = self.ready_by_facing(at), FACING_INDEX[facing]
        ready = by_facing[index]
        turned = max(by_facing[(index + eighths) % len(FACINGS)] for eighths in TURNS_IN_PLACE)
        score = ready + TURN_IN_PLACE_WEIGHT * max(turned - ready, 0.0)
        ahead = _step(at, facing)
        gap, gap_after = max(self.nearest(at) - CLOSE_ENOUGH, 0), max(self.nearest(ahead) - CLOSE_ENOUGH, 0)
        score += HEADING_WEIGHT * (gap - gap_after) - APPROACH_WEIGHT * gap
        at_bow = self.others.get(ahead)
        if at_bow is not None and at_bow.owner != self.unit.owner:
            score += RAM_READY_WEIGHT * _ram_value(self.unit, at_bow, facing)
        self._poses[key] = score
        return score

    def after(self, move: Move) -> float:
        """The pose a move leaves, with what its collisions are likely to cost or earn (M, C, C5)."""
        blocks = self.board.blocks
        square, moving = self.unit.at, self.unit.facing
        for entered in move.path:
            if blocks(entered):
                # M6: stopped, though the facing still turns (M2f); rocks do no damage (C5).
                return self.pose(square, move.facing) - ROCK_PENALTY
            occupant = self.others.get(entered)
            if occupant is not None:
                # M1b/M2b/M3: the mover stops (or pushes a smaller ship) and collides bow first.
                return self.pose(square, move.facing) + _ram_value(self.unit, occupant, moving)
            square, moving = entered, move.facing
        return self.pose(move.at, move.facing)
