"""Fire on board (rules X1-X3): the phase table and pure functions over it.

A burning ship checks at the start of a turn (T2 upkeep) with 1d6, the die
passed in. Phase names: ``"1"``, ``"2a"`` (the source's 2(1)), ``"2b"`` (2(2))
and ``"3"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

import msgspec

from mortecouille.core.dice import check_die
from mortecouille.core.errors import BadInput

FirePhase = Literal["1", "2a", "2b", "3"]
FIRE_PHASES: Final[tuple[FirePhase, ...]] = ("1", "2a", "2b", "3")
#: How the rules print each fire phase (X1-X2), for dice labels.
FIRE_PHASE_NAMES: Final[Mapping[str, str]] = {"1": "1", "2a": "2(1)", "2b": "2(2)", "3": "3"}


class FirePhaseRule(msgspec.Struct, frozen=True):
    """One row of the X1 table: the die puts the fire out from ``out_from`` up;
    below that the ship loses ``damage_on_failure``, and either burns on in
    ``next_phase`` or, with ``abandoned_on_failure``, is lost. With
    ``no_action`` the ship does nothing this turn whatever the die shows."""

    out_from: int
    damage_on_failure: int
    next_phase: FirePhase | None
    abandoned_on_failure: bool
    no_action: bool


FIRE_TABLE: Final[Mapping[FirePhase, FirePhaseRule]] = {
    "1": FirePhaseRule(
        out_from=3,
        damage_on_failure=8,
        next_phase="2a",
        abandoned_on_failure=False,
        no_action=False,
    ),
    "2a": FirePhaseRule(
        out_from=4,
        damage_on_failure=12,
        next_phase="3",
        abandoned_on_failure=False,
        no_action=False,
    ),
    "3": FirePhaseRule(
        out_from=6, damage_on_failure=22, next_phase=None, abandoned_on_failure=True, no_action=True
    ),
    "2b": FirePhaseRule(
        out_from=5, damage_on_failure=0, next_phase=None, abandoned_on_failure=True, no_action=False
    ),
}

#: X1/X2: the phase a ship starts at next turn, by how many flaming ships hit it this turn.
START_PHASE_BY_FLAMING_HITTERS: Final[Mapping[int, FirePhase]] = {1: "1", 2: "2a", 3: "2b"}
#: X3: a ship that failed phase 1 this turn and is hit again by a flaming ship.
PHASE_AFTER_FAILED_PHASE_1_AND_HIT_AGAIN: Final[FirePhase] = "2b"


class FireOutcome(msgspec.Struct, frozen=True):
    """Result of one fire check (X1)."""

    phase: FirePhase
    die: int
    out: bool
    damage: int
    next_phase: FirePhase | None
    abandoned: bool
    no_action_this_turn: bool
    rule: str


class FireSchedule(msgspec.Struct, frozen=True):
    """The phase of next turn's fire check (None: no fire) and the rule that set it."""

    phase: FirePhase | None
    rule: str | None


def _check_phase(phase: str) -> FirePhase:
    for known in FIRE_PHASES:
        if phase == known:
            return known
    raise BadInput(
        "phase", "{phase!r} is not one of {fire_phases}", phase=phase, fire_phases=", ".join(FIRE_PHASES)
    )


def fire_check(phase: str, die: int) -> FireOutcome:
    """Resolve a fire check in ``phase`` with a d6 showing ``die`` (X1)."""
    checked = _check_phase(phase)
    check_die(die, "die")
    row = FIRE_TABLE[checked]
    out = die >= row.out_from
    return FireOutcome(
        phase=checked,
        die=die,
        out=out,
        damage=0 if out else row.damage_on_failure,
        next_phase=None if out else row.next_phase,
        abandoned=not out and row.abandoned_on_failure,
        no_action_this_turn=row.no_action,
        rule="X1",
    )


def schedule_after_flaming_hits(
    current_phase_next_turn: str | None,
    flaming_hitters_this_turn: int,
    failed_phase1_this_turn: bool,
) -> FireSchedule:
    """Next turn's fire phase once this turn's flaming hits are counted (X1-X3).

    ``current_phase_next_turn`` is what this turn's own fire check left for next
    turn (None: not burning); ``flaming_hitters_this_turn`` counts the distinct
    flaming-shot ships that hit the ship this turn (cannon or catapult).

    - not burning: 1 hitter -> phase 1 (X1), 2 -> 2a, 3 or more -> 2b (X2);
    - failed its phase-1 check this turn and hit again -> 2b instead of 2a (X3);
    - otherwise, ruling X3: hits on a burning ship leave its phase unchanged.
    """
    current = None if current_phase_next_turn is None else _check_phase(current_phase_next_turn)
    if flaming_hitters_this_turn < 0:
        raise BadInput("flaming_hitters_this_turn", "cannot be negative")
    if failed_phase1_this_turn and current != FIRE_TABLE["1"].next_phase:
        raise BadInput(
            "failed_phase1_this_turn",
            "a failed phase-1 check leaves phase {next_phase}, not {current}",
            next_phase=FIRE_TABLE["1"].next_phase,
            current=current,
        )
    if flaming_hitters_this_turn == 0:
        return FireSchedule(phase=current, rule=None)
    if failed_phase1_this_turn:
        return FireSchedule(phase=PHASE_AFTER_FAILED_PHASE_1_AND_HIT_AGAIN, rule="X3")
    if current is not None:
        return FireSchedule(phase=current, rule="X3")
    worst = max(START_PHASE_BY_FLAMING_HITTERS)
    start = START_PHASE_BY_FLAMING_HITTERS[min(flaming_hitters_this_turn, worst)]
    return FireSchedule(phase=start, rule="X1" if flaming_hitters_this_turn == 1 else "X2")
