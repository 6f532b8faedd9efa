"""Fire on board, rules X1-X3 (mortecouille.core.mortecouille.fire)."""

from __future__ import annotations

import pytest

from mortecouille.core.errors import BadInput
from mortecouille.core.mortecouille.fire import (
    FireOutcome,
    FirePhase,
    fire_check,
    schedule_after_flaming_hits,
)


def phase_after(scheduled: str | None, hitters: int, failed_phase1: bool) -> FirePhase | None:
    """The phase the turn's resolution schedules (``schedule_after_flaming_hits``, the function it
    calls, not a wrapper production never calls)."""
    return schedule_after_flaming_hits(scheduled, hitters, failed_phase1).phase


def outcomes(phase: str) -> list[tuple[bool, int, str | None, bool, bool]]:
    return [
        (o.out, o.damage, o.next_phase, o.abandoned, o.no_action_this_turn)
        for o in (fire_check(phase, die) for die in range(1, 7))
    ]


def test_X1_phase_1_out_on_3_to_6_else_8_damage_and_phase_2a() -> None:
    failed = (False, 8, "2a", False, False)
    out = (True, 0, None, False, False)
    assert outcomes("1") == [failed] * 2 + [out] * 4
    assert fire_check("1", 1) == FireOutcome(
        phase="1",
        die=1,
        out=False,
        damage=8,
        next_phase="2a",
        abandoned=False,
        no_action_this_turn=False,
        rule="X1",
    )


def test_X1_phase_2a_out_on_4_to_6_else_12_damage_and_phase_3() -> None:
    failed = (False, 12, "3", False, False)
    out = (True, 0, None, False, False)
    assert outcomes("2a") == [failed] * 3 + [out] * 3


def test_X1_phase_3_no_action_even_if_out_6_out_else_22_and_abandoned() -> None:
    failed = (False, 22, None, True, True)
    out = (True, 0, None, False, True)
    assert outcomes("3") == [failed] * 5 + [out]


def test_X1_phase_2b_out_on_5_6_else_abandoned_without_damage() -> None:
    failed = (False, 0, None, True, False)
    out = (True, 0, None, False, False)
    assert outcomes("2b") == [failed] * 4 + [out] * 2


def test_X1_one_flaming_hitter_sets_phase_1_next_turn() -> None:
    schedule = schedule_after_flaming_hits(None, 1, False)
    assert (schedule.phase, schedule.rule) == ("1", "X1")
    assert phase_after(None, 0, False) is None


def test_X1_unknown_phase_and_bad_die_are_refused() -> None:
    with pytest.raises(BadInput):
        fire_check("2", 3)
    with pytest.raises(BadInput):
        fire_check("1", 7)


def test_X2_two_flaming_hitters_start_at_2a_three_or_more_at_2b() -> None:
    assert schedule_after_flaming_hits(None, 2, False).phase == "2a"
    assert schedule_after_flaming_hits(None, 2, False).rule == "X2"
    assert [phase_after(None, n, False) for n in (3, 4, 7)] == ["2b"] * 3


def test_X3_failed_phase1_and_hit_again_goes_to_2b() -> None:
    assert fire_check("1", 2).next_phase == "2a"
    schedule = schedule_after_flaming_hits("2a", 1, True)
    assert (schedule.phase, schedule.rule) == ("2b", "X3")
    assert phase_after("2a", 0, True) == "2a"  # not hit again: stays 2a


def test_X3_ruling_other_hits_on_a_burning_ship_do_not_change_its_phase() -> None:
    for scheduled in ("2a", "3", "1", "2b"):
        for hitters in (1, 2, 3):
            assert phase_after(scheduled, hitters, False) == scheduled


def test_X3_failed_phase1_flag_must_match_the_scheduled_phase() -> None:
    with pytest.raises(BadInput):
        phase_after("3", 1, True)
