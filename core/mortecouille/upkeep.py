"""The first two phases of a mortecouille turn (T2): upkeep (fire X1, wear W1/W2, sinking W3)
and the wind dice (A1); plus the sinking check every later phase repeats.

Each function takes the state as it stands at that moment and returns events;
ships are always visited in id order, and every die is rolled through the
turn's :class:`~mortecouille.core.dice.DiceCup`, so its DieRolled lands right before the
outcome that used it.
"""

from __future__ import annotations

from typing import Final

import msgspec

from mortecouille.core.dice import DiceCup
from mortecouille.core.fleet.catalogue import catalogue_for
from mortecouille.core.mortecouille.common import ship_stats
from mortecouille.core.mortecouille.evolution import apply_turn_events
from mortecouille.core.mortecouille.fire import FIRE_PHASE_NAMES, START_PHASE_BY_FLAMING_HITTERS, fire_check
from mortecouille.core.mortecouille.maneuver import WIND_POINT_FROM, WIND_POINTS_PER_SUCCESS
from mortecouille.core.phases import UPKEEP, WIND
from mortecouille.core.state import GameState, ShipState
from mortecouille.events.base import Event
from mortecouille.events.combat import FireChecked
from mortecouille.events.mortecouille import WindPointsChanged
from mortecouille.events.movement import DamageTaken, ShipSunk

#: The phase a single flaming hit starts; failing it and being hit again is X3's case.
FIRST_FIRE_PHASE: Final = START_PHASE_BY_FLAMING_HITTERS[1]


class UpkeepOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """Upkeep's events, and the ships that failed a phase-1 fire check this turn (for X3)."""

    events: list[Event]
    failed_phase_1: frozenset[str]


def afloat_ids(state: GameState) -> list[str]:
    return sorted(ship_id for ship_id, ship in state.ships.items() if ship.afloat)


def upkeep_phase(state: GameState, cup: DiceCup) -> UpkeepOutcome:
    """Fire checks (X1), then wear computed after the fire damage (W1, W2), then sinking (W3)."""
    produced, failed_phase_1 = fire_checks(state, cup)
    after_fire = apply_turn_events(produced, state)
    worn = wear(after_fire)
    produced += worn
    produced += sinking_checks(apply_turn_events(worn, after_fire), UPKEEP.id)
    return UpkeepOutcome(events=produced, failed_phase_1=failed_phase_1)


def fire_checks(state: GameState, cup: DiceCup) -> tuple[list[Event], frozenset[str]]:
    """Every burning ship afloat rolls 1d6 for its fire phase (X1): damage, next phase, abandon."""
    produced: list[Event] = []
    failed_phase_1: set[str] = set()
    for ship_id in afloat_ids(state):
        ship = state.ships[ship_id]
        if ship.fire is None:
            continue
        label = f"{ship_id}, fire check phase {FIRE_PHASE_NAMES.get(ship.fire, ship.fire)}, 1d6"
        die = cup.roll(UPKEEP.id, ship_id, "fire", label)
        outcome = fire_check(ship.fire, die)
        produced += cup.take_events()
        produced.append(
            FireChecked(
                turn=state.turn, ship=ship_id, phase=outcome.phase, die=die, out=outcome.out,
                damage=outcome.damage, next_phase=outcome.next_phase, abandoned=outcome.abandoned,
                rules=(outcome.rule,),
            )
        )  # fmt: skip
        if outcome.damage:
            produced.append(
                damage_event(state.turn, UPKEEP.id, ship_id, outcome.damage, "fire", outcome.rule)
            )
        if outcome.abandoned:
            produced.append(left_game(state.turn, UPKEEP.id, ship, "lost", (outcome.rule,)))
        elif not outcome.out and outcome.next_phase is not None and outcome.phase == FIRST_FIRE_PHASE:
            failed_phase_1.add(ship_id)
    return produced, frozenset(failed_phase_1)


def wear(state: GameState) -> list[Event]:
    """Ships that lost half (W1) or three quarters (W2) of their structure lose more each turn."""
    thresholds = catalogue_for(state.rules_version).damage_thresholds
    produced: list[Event] = []
    for ship_id in afloat_ids(state):
        stats = ship_stats(state, ship_id)
        if stats.wear_per_turn:
            rule = next(t.rule for t in thresholds if t.level == stats.damage_level)
            produced.append(
                damage_event(state.turn, UPKEEP.id, ship_id, stats.wear_per_turn, "wear", rule)
            )
    return produced


def sinking_checks(state: GameState, phase: str, cause: tuple[str, ...] = ()) -> list[Event]:
    """Every ship afloat with no structure left sinks at once (W3); ``cause`` adds rule IDs."""
    return [
        left_game(state.turn, phase, state.ships[ship_id], "sunk", (*cause, "W3"))
        for ship_id in afloat_ids(state)
        if ship_stats(state, ship_id).structure <= 0
    ]


def wind_phase(state: GameState, cup: DiceCup) -> list[Event]:
    """Every ship afloat rolls 1d6 for a wind point (A1); slave rerolls a failure once.

    Ruling: a fireship sails without wind points (C6) and rolls no wind die.
    """
    produced: list[Event] = []
    for ship_id in afloat_ids(state):
        ship = state.ships[ship_id]
        if ship.fireship:
            continue
        die = cup.roll(WIND.id, ship_id, "wind", f"{ship_id}, wind, 1d6")
        rules: tuple[str, ...] = ("A1",)
        if die < WIND_POINT_FROM and ship_stats(state, ship_id).slave:
            die = cup.roll(
                WIND.id, ship_id, "wind-reroll", f"{ship_id}, slave reroll of the wind die, 1d6"
            )
            rules = ("A1", "F2")
        produced += cup.take_events()
        if die >= WIND_POINT_FROM:
            produced.append(
                WindPointsChanged(
                    turn=state.turn, phase=WIND.id, ship=ship_id, delta=WIND_POINTS_PER_SUCCESS,
                    points=ship.wind + WIND_POINTS_PER_SUCCESS, reason="wind", rules=rules,
                )
            )  # fmt: skip
    return produced


def damage_event(
    turn: int, phase: str, ship_id: str, amount: int, cause: str, rule: str, other: str | None = None
) -> DamageTaken:
    """Structure lost, as the float the event declares: an int would read back from the log
    as a float and change the state's hash on replay."""
    return DamageTaken(
        turn=turn, round=1, phase=phase, step=0, ship=ship_id, amount=float(amount), cause=cause, other=other,
        rules=(rule,),
    )  # fmt: skip


def left_game(turn: int, phase: str, ship: ShipState, how: str, rules: tuple[str, ...]) -> ShipSunk:
    """A ShipSunk for ``ship``: ``how`` is sunk, lost (abandoned) or gone."""
    assert ship.at is not None  # only ships afloat leave the game
    return ShipSunk(turn=turn, round=1, phase=phase, ship=ship.id, at=ship.at, how=how, rules=rules)
