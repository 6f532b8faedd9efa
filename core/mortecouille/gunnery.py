"""Cannon fire and catapult shots (rules S1-S7 and K) as data and pure functions.

Nothing here rolls dice or touches storage: callers pass the dice values in and
record the results as events. Ship figures (cannons, damage) are parameters so
this module stays independent of the ship catalogue.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Final, Literal

import msgspec

from mortecouille.core.board.geometry import FACING_VECTORS, Square, distance, rotate
from mortecouille.core.dice import DIE_SIDES, check_die
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.fleet.catalogue import SHIP_CLASSES

Needed = int | Literal["hit", "miss"]
"""What a shot needs: a minimum dice total, or an automatic hit or miss."""

AUTOMATIC_HIT: Final = "hit"
AUTOMATIC_MISS: Final = "miss"
_H: Final = AUTOMATIC_HIT
_M: Final = AUTOMATIC_MISS


class ShotTable(msgspec.Struct, frozen=True):
    """One to-hit table. ``cannons`` keys the columns (None: the catapult's only column)."""

    rule: str
    title: str
    cannons: tuple[int | None, ...]
    rows: tuple[tuple[int, tuple[Needed, ...]], ...]

    @property
    def max_distance(self) -> int:
        return self.rows[-1][0]

    def cell(self, cannons: int | None, distance: int) -> Needed:
        """The number to reach; refuses (citing this table's rule) beyond the last row.

        Four cannons at distance 4 need 10 on the normal fire table (S3); one cannon at 5 is an
        automatic miss; nothing reaches past the last row:

        >>> NORMAL_FIRE.cell(4, 4), NORMAL_FIRE.cell(1, 5)
        (10, 'miss')
        >>> NORMAL_FIRE.cell(4, 8)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        mortecouille.core.errors.RuleViolation: [S3] normal fire: distance 8 is beyond the table ...
        """
        if distance > self.max_distance:
            raise RuleViolation(
                self.rule,
                "{title}: distance {distance} is beyond the table (out of range past {max_distance})",
                title=self.title, distance=distance, max_distance=self.max_distance,
            )
        return dict(self.rows)[distance][self.cannons.index(cannons)]


# --- the rules' numbers -------------------------------------------------------------------------

NORMAL_FIRE: Final = ShotTable(
    rule="S3",
    title="normal fire",
    cannons=(1, 2, 3, 4, 5),
    rows=(
        (1, (8, _H, _H, _H, _H)),
        (2, (11, 7, _H, _H, _H)),
        (3, (16, 12, 8, 6, _H)),
        (4, (20, 17, 14, 10, 9)),
        (5, (_M, 27, 18, 14, 13)),
        (6, (_M, _M, 24, 20, 19)),
        (7, (_M, _M, _M, _M, 28)),
    ),
)

BURST_FIRE: Final = ShotTable(
    rule="S4",
    title="burst fire",
    cannons=(3, 4, 5),
    rows=(
        (1, (_H, _H, _H)),
        (2, (_H, _H, _H)),
        (3, (_H, _H, _H)),
        (4, (8, _H, _H)),
        (5, (14, 10, 8)),
        (6, (18, 17, 16)),
        (7, (24, 23, 22)),
        (8, (_M, _M, 30)),
    ),
)

CATAPULT_FIRE: Final = ShotTable(
    rule="K",
    title="catapult",
    cannons=(None,),
    rows=(
        (1, (_M,)),
        (2, (9,)),
        (3, (13,)),
        (4, (16,)),
        (5, (19,)),
        (6, (25,)),
    ),
)

SHOT_TABLES: Final = (NORMAL_FIRE, BURST_FIRE, CATAPULT_FIRE)

#: S2: dice thrown for a position firing this many cannons.
DICE_FOR_CANNONS: Final[Mapping[int, int]] = {1: 3, 2: 3, 3: 3, 4: 3, 5: 4}
CATAPULT_DICE: Final = 3  # K
ELITE_GUNNER_EXTRA_DICE: Final = 1  # S2, K
MIN_BURST_CANNONS: Final = 3  # S4

#: Direction of each firing position, in eighths clockwise from the facing (S1).
FIRING_POSITIONS: Final[Mapping[str, int]] = {"bow": 0, "starboard": 2, "stern": 4, "port": 6}

#: S5: a hit at this distance does its damage divided by this, rounded down.
DAMAGE_DIVISOR_BY_DISTANCE: Final[Mapping[int, int]] = {7: 2, 8: 3}

#: S7: most turns in a row a ship may burst before a turn without cannon fire.
BURST_TURNS_IN_A_ROW_ALLOWED: Final[Mapping[bool, int]] = {False: 1, True: 2}

CATAPULT_DAMAGE_ON_BIG: Final = 20  # K
CATAPULT_SUPER_SHOT_BONUS: Final = 5  # K
CATAPULT_COUNTDOWN_START: Final = 3  # K
CATAPULT_HIT_STARTING_BIG_COUNTDOWN: Final = 3  # K: the big ship's third catapult hit



# --- S1: firing line ----------------------------------------------------------------------------


def firing_line(shooter_at: Square, shooter_facing: str, position: str, target_at: Square) -> int:
    """Distance to ``target_at`` if it stands on ``position``'s line (S1), else refuse citing S1.

    Port is 90 degrees left of the facing, starboard 90 right, bow ahead, stern
    behind; the line is straight or diagonal depending on that direction.
    """
    if shooter_facing not in FACING_VECTORS:
        raise BadInput("facing", "{shooter_facing!r} is not a facing", shooter_facing=shooter_facing)
    if position not in FIRING_POSITIONS:
        raise BadInput(
            "position",
            "{position!r} is not one of {firing_positions}",
            position=position,
            firing_positions=", ".join(FIRING_POSITIONS),
        )
    vx, vy = FACING_VECTORS[rotate(shooter_facing, FIRING_POSITIONS[position])]
    dx, dy = target_at[0] - shooter_at[0], target_at[1] - shooter_at[1]
    steps = distance(shooter_at, target_at)
    if steps == 0 or (dx, dy) != (steps * vx, steps * vy):
        raise RuleViolation(
            "S1",
            "the target is not on the {position} line of a ship facing {shooter_facing}",
            position=position,
            shooter_facing=shooter_facing,
        )
    return steps


# --- S2-S4, K: dice and numbers to reach --------------------------------------------------------


def _check_cannons(cannons: int) -> None:
    if cannons == 0:
        raise RuleViolation("S2", "a position with no cannon cannot fire")
    if cannons not in DICE_FOR_CANNONS:
        raise BadInput("cannons", "{cannons} is not a cannon count the tables know (1-5)", cannons=cannons)


def _check_distance(distance: int, rule: str) -> None:
    if distance < 1:
        raise RuleViolation(rule,
            "a shot needs a target at distance 1 or more, not {distance}",
            distance=distance)


def dice_count(cannons: int, elite: bool) -> int:
    """Dice a position firing ``cannons`` cannons throws (S2), +1d6 for an elite gunner."""
    _check_cannons(cannons)
    return DICE_FOR_CANNONS[cannons] + (ELITE_GUNNER_EXTRA_DICE if elite else 0)


def catapult_dice_count(elite: bool) -> int:
    """Dice a catapult shot throws (K), +1d6 for an elite gunner."""
    return CATAPULT_DICE + (ELITE_GUNNER_EXTRA_DICE if elite else 0)


def needed_roll(cannons: int, distance: int, burst: bool) -> Needed:
    """The total a cannon shot must reach (S3 normal, S4 burst); refuses citing S2, S3 or S4.

    >>> needed_roll(cannons=4, distance=4, burst=False), needed_roll(cannons=3, distance=2, burst=True)
    (10, 'hit')
    """
    _check_cannons(cannons)
    table = BURST_FIRE if burst else NORMAL_FIRE
    _check_distance(distance, table.rule)
    if burst and cannons < MIN_BURST_CANNONS:
        raise RuleViolation(
            "S4",
            "a burst needs {min_burst_cannons} cannons or more, this position has {cannons}",
            min_burst_cannons=MIN_BURST_CANNONS,
            cannons=cannons,
        )
    return table.cell(cannons, distance)


def catapult_needed(distance: int) -> Needed:
    """The total a catapult shot must reach (K); out of range past the table refused citing K."""
    _check_distance(distance, CATAPULT_FIRE.rule)
    return CATAPULT_FIRE.cell(None, distance)


def shot_hits(needed: Needed, dice_values: Sequence[int], bonus: int) -> bool:
    """Whether a shot hits: H and - ignore the dice; otherwise sum + S6 bonus >= needed.

    >>> shot_hits(10, [3, 4, 2], bonus=0), shot_hits(10, [3, 4, 2], bonus=1), shot_hits("hit", [1, 1, 1], 0)
    (False, True, True)
    """
    for value in dice_values:
        check_die(value)
    if needed == AUTOMATIC_HIT:
        return True
    if needed == AUTOMATIC_MISS:
        return False
    return sum(dice_values) + bonus >= needed


# --- S5, S6: damage and numerical superiority ---------------------------------------------------


def superiority_bonus(shooters_by_target: Mapping[str, Iterable[str]]) -> dict[str, int]:
    """S6: for each target, the bonus every ship firing at it adds to its rolls.

    ``shooters_by_target`` lists, per target, the ships that fire at it this turn
    (cannons or catapult, whether or not the shot can hit). A ship listed twice,
    say for its cannons and its catapult, counts once: k distinct ships give k-1.
    """
    return {target: max(len(set(shooters)) - 1, 0) for target, shooters in shooters_by_target.items()}


def hit_damage(base_damage: int, distance: int) -> int:
    """S5: damage of one hit; ``base_damage`` already includes super-shot and extra-cannons."""
    return base_damage // DAMAGE_DIVISOR_BY_DISTANCE.get(distance, 1)


# --- S7: burst cooldown -------------------------------------------------------------------------


def can_fire_cannons(bursts_in_a_row: int, continuous_burst: bool) -> bool:
    """S7: whether a ship may fire its cannons (normal or burst) this turn.

    ``bursts_in_a_row`` counts the consecutive turns, ending with the previous
    turn, in which the ship fired a burst (see :func:`bursts_in_a_row_after`).
    The catapult is not a cannon and is never held back by this rule.
    """
    return bursts_in_a_row < BURST_TURNS_IN_A_ROW_ALLOWED[continuous_burst]


def check_cannon_fire(bursts_in_a_row: int, continuous_burst: bool) -> None:
    """Refuse, citing S7, a cannon shot that :func:`can_fire_cannons` forbids."""
    if not can_fire_cannons(bursts_in_a_row, continuous_burst):
        turns = "turn" if bursts_in_a_row == 1 else f"{bursts_in_a_row} turns in a row"
        raise RuleViolation(
            "S7",
            "the ship fired a burst last {turns}; its cannons may not fire this turn", turns=turns)


def bursts_in_a_row_after(bursts_in_a_row: int, burst_this_turn: bool) -> int:
    """The streak to carry into next turn: any turn without a burst resets it (S7)."""
    return bursts_in_a_row + 1 if burst_this_turn else 0


# --- K: catapult hits and the sinking countdown -------------------------------------------------


class CatapultEffect(msgspec.Struct, frozen=True):
    """What catapult hits did to one target (K).

    ``countdown`` is None while no countdown runs; ``countdown_started`` tells
    that these hits started it, which :func:`countdown_end_of_turn` must know.
    """

    structure_damage: int
    hits_total: int
    countdown: int | None
    countdown_started: bool
    rules: tuple[str, ...]


def catapult_hit_effect(
    target_class: str,
    previous_hits_total: int,
    hits_this_turn: int,
    countdown: int | None,
    super_shot: bool,
) -> CatapultEffect:
    """Apply ``hits_this_turn`` catapult hits to a target (K).

    ``previous_hits_total`` counts the target's catapult hits before these ones
    (earlier turns, and earlier calls this turn); ``countdown`` is the running
    countdown or None. Hits from ships with and without super-shot go in separate
    calls, chained; the result does not depend on the order of those calls.

    Small ship: no structure damage; the first hit starts the countdown at 3,
    each further hit (same turn or later) takes 1 off. Big ship: 20 structure
    per hit (+5 with super-shot); its third hit ever also starts the countdown
    at 3, and every later hit takes 1 off. The countdown never goes below 0.
    """
    if target_class not in SHIP_CLASSES:
        raise BadInput(
            "target_class",
            "{target_class!r} is not one of {ship_classes}",
            target_class=target_class,
            ship_classes=SHIP_CLASSES,
        )
    if previous_hits_total < 0 or hits_this_turn < 0:
        raise BadInput("hits", "hit counts cannot be negative")
    per_hit = 0
    if target_class == "big":
        per_hit = CATAPULT_DAMAGE_ON_BIG + (CATAPULT_SUPER_SHOT_BONUS if super_shot else 0)
    started = False
    for ordinal in range(previous_hits_total + 1, previous_hits_total + hits_this_turn + 1):
        if target_class == "big" and ordinal < CATAPULT_HIT_STARTING_BIG_COUNTDOWN:
            continue
        if countdown is None:
            countdown, started = CATAPULT_COUNTDOWN_START, True
        else:
            countdown = max(countdown - 1, 0)
    return CatapultEffect(
        structure_damage=per_hit * hits_this_turn,
        hits_total=previous_hits_total + hits_this_turn,
        countdown=countdown,
        countdown_started=started,
        rules=("K",),
    )


def countdown_end_of_turn(countdown: int | None, started_this_turn: bool) -> tuple[int | None, bool]:
    """End-of-turn tick of the catapult countdown (K): ``(new_countdown, sinks)``.

    The countdown drops by 1 at the end of every turn after the one that
    started it (``started_this_turn``: a hit started it this turn, even if
    further hits this turn already took some off). A ship whose countdown is 0
    at the end of a turn sinks. Hence, first hit in turn t: 3 after t, 2 after
    t+1, 1 after t+2, 0 after t+3 -- the ship acts in t+1, t+2 and t+3 and sinks
    at the end of t+3; four hits in turn t leave 0, and it sinks at the end of t.
    """
    if countdown is None:
        return None, False
    if not started_this_turn:
        countdown = max(countdown - 1, 0)
    return countdown, countdown == 0


# --- exact odds ---------------------------------------------------------------------------------


@functools.cache
def _ways_by_total(dice: int) -> tuple[int, ...]:
    """How many of the DIE_SIDES**dice equally likely throws give each total (index = total)."""
    ways = [0] * (DIE_SIDES * dice + 1)
    for throw in itertools.product(range(1, DIE_SIDES + 1), repeat=dice):
        ways[sum(throw)] += 1
    return tuple(ways)


def probability_at_least(dice: int, needed: Needed, bonus: int = 0) -> Fraction:
    """Exact probability that ``dice`` d6 plus ``bonus`` reach ``needed``.

    >>> probability_at_least(3, 10), probability_at_least(3, 10, bonus=1), probability_at_least(3, "miss")
    (Fraction(5, 8), Fraction(20, 27), Fraction(0, 1))
    """
    if needed == AUTOMATIC_HIT:
        return Fraction(1)
    if needed == AUTOMATIC_MISS:
        return Fraction(0)
    ways = _ways_by_total(dice)
    favourable = sum(ways[max(needed - bonus, 0) :])
    return Fraction(favourable, DIE_SIDES**dice)


def hit_probability(
    cannons: int, distance: int, burst: bool = False, elite: bool = False, bonus: int = 0
) -> Fraction:
    """Exact chance that a cannon shot hits (S2-S4, S6), by enumerating every throw.

    Four cannons at distance 4 throw 3d6 and need 10 (S2, S3): 135 of the 216 throws, 5/8.
    An elite gunner's fourth die (S2) and a bonus of 1 (S6) raise it:

    >>> hit_probability(cannons=4, distance=4)
    Fraction(5, 8)
    >>> hit_probability(cannons=4, distance=4, elite=True), hit_probability(cannons=4, distance=4, bonus=1)
    (Fraction(65, 72), Fraction(20, 27))
    """
    needed = needed_roll(cannons, distance, burst)
    return probability_at_least(dice_count(cannons, elite), needed, bonus)


def catapult_hit_probability(distance: int, elite: bool = False, bonus: int = 0) -> Fraction:
    """Exact chance that a catapult shot hits (K, S6)."""
    return probability_at_least(catapult_dice_count(elite), catapult_needed(distance), bonus)


class OddsCell(msgspec.Struct, frozen=True):
    rule: str
    distance: int
    cannons: int | None
    dice: int
    bonus: int
    needed: Needed
    probability: Fraction
    probability_float: float


class OddsRow(msgspec.Struct, frozen=True):
    distance: int
    cells: tuple[OddsCell, ...]


class OddsTable(msgspec.Struct, frozen=True):
    rule: str
    title: str
    column_labels: tuple[str, ...]
    rows: tuple[OddsRow, ...]


def _odds_cell(table: ShotTable, cannons: int | None, distance: int, elite: bool, bonus: int) -> OddsCell:
    if cannons is None:
        dice = catapult_dice_count(elite)
        needed = catapult_needed(distance)
    else:
        dice = dice_count(cannons, elite)
        needed = needed_roll(cannons, distance, table is BURST_FIRE)
    probability = probability_at_least(dice, needed, bonus)
    return OddsCell(
        rule=table.rule,
        distance=distance,
        cannons=cannons,
        dice=dice,
        bonus=bonus,
        needed=needed,
        probability=probability,
        probability_float=float(probability),
    )


def odds_cell(
    cannons: int, distance: int, burst: bool = False, elite: bool = False, bonus: int = 0
) -> OddsCell:
    """One cannon shot's number to reach and exact chance (``mortecouille odds``)."""
    return _odds_cell(BURST_FIRE if burst else NORMAL_FIRE, cannons, distance, elite, bonus)


def catapult_odds_cell(distance: int, elite: bool = False, bonus: int = 0) -> OddsCell:
    return _odds_cell(CATAPULT_FIRE, None, distance, elite, bonus)


def odds_table(table: ShotTable, elite: bool = False, bonus: int = 0) -> OddsTable:
    """Every cell of one to-hit table (S3, S4 or K) with its exact chance."""
    labels = tuple("catapult" if c is None else f"{c} cannon{'s' if c > 1 else ''}" for c in table.cannons)
    rows = tuple(
        OddsRow(
            distance=row_distance,
            cells=tuple(_odds_cell(table, c, row_distance, elite, bonus) for c in table.cannons),
        )
        for row_distance, _ in table.rows
    )
    return OddsTable(rule=table.rule, title=table.title, column_labels=labels, rows=rows)


def odds_tables(elite: bool = False, bonus: int = 0) -> tuple[OddsTable, ...]:
    """The S3, S4 and K tables with exact chances, in that order."""
    return tuple(odds_table(table, elite, bonus) for table in SHOT_TABLES)


def _cell_text(cell: OddsCell) -> str:
    if cell.needed == AUTOMATIC_HIT:
        return "H 100.0%"
    if cell.needed == AUTOMATIC_MISS:
        return "- 0.0%"
    return f"{cell.needed} {cell.probability_float:.1%}"


def render_odds_table(table: OddsTable) -> str:
    """Plain-text grid of an odds table, one line per distance."""
    width = max(12, *(len(label) + 2 for label in table.column_labels))
    lines = [
        f"{table.rule} {table.title}",
        "distance".ljust(10) + "".join(label.rjust(width) for label in table.column_labels),
    ]
    for row in table.rows:
        lines.append(str(row.distance).ljust(10) + "".join(_cell_text(c).rjust(width) for c in row.cells))
    return "\n".join(lines)
