"""Cannon fire, rules S1-S7 (mortecouille.core.mortecouille.gunnery)."""

from __future__ import annotations

import pytest

from mortecouille.core.board.geometry import FACING_VECTORS, FACINGS
from mortecouille.core.errors import RuleViolation
from mortecouille.core.mortecouille.gunnery import (
    bursts_in_a_row_after,
    can_fire_cannons,
    check_cannon_fire,
    dice_count,
    firing_line,
    hit_damage,
    needed_roll,
    shot_hits,
    superiority_bonus,
)

# The tables of rules.md, typed again here so a slip in either copy shows.
S3_TABLE = """
1 8 H H H H
2 11 7 H H H
3 16 12 8 6 H
4 20 17 14 10 9
5 - 27 18 14 13
6 - - 24 20 19
7 - - - - 28
"""
S4_TABLE = """
1 H H H
2 H H H
3 H H H
4 8 H H
5 14 10 8
6 18 17 16
7 24 23 22
8 - - 30
"""


def parse(text: str, first_cannons: int) -> dict[tuple[int, int], object]:
    cells: dict[tuple[int, int], object] = {}
    for line in text.strip().splitlines():
        distance, *values = line.split()
        for offset, value in enumerate(values):
            cell = {"H": "hit", "-": "miss"}.get(value) or int(value)
            cells[(first_cannons + offset, int(distance))] = cell
    return cells


def test_S1_each_position_fires_along_its_line_for_every_facing() -> None:
    for facing in FACINGS:
        index = FACINGS.index(facing)
        expected = {
            "bow": facing,
            "starboard": FACINGS[(index + 2) % 8],
            "stern": FACINGS[(index + 4) % 8],
            "port": FACINGS[(index + 6) % 8],
        }
        for position, direction in expected.items():
            vx, vy = FACING_VECTORS[direction]
            for steps in range(1, 9):
                target = (10 + steps * vx, 10 + steps * vy)
                assert firing_line((10, 10), facing, position, target) == steps


def test_S1_port_is_left_and_starboard_right_of_a_ship_facing_north() -> None:
    assert firing_line((5, 5), "N", "port", (2, 5)) == 3
    assert firing_line((5, 5), "N", "starboard", (7, 5)) == 2
    assert firing_line((5, 5), "NE", "port", (3, 7)) == 2  # diagonal line to the north-west


def test_S1_ruling_target_off_the_line_is_refused() -> None:
    with pytest.raises(RuleViolation) as refused:
        firing_line((5, 5), "N", "port", (2, 6))
    assert refused.value.rule == "S1"
    with pytest.raises(RuleViolation):
        firing_line((5, 5), "N", "starboard", (2, 5))  # on the port side instead
    with pytest.raises(RuleViolation):
        firing_line((5, 5), "E", "bow", (5, 5))


def test_S2_dice_three_for_one_to_four_cannons_four_for_five_elite_adds_one() -> None:
    assert [dice_count(c, False) for c in range(1, 6)] == [3, 3, 3, 3, 4]
    assert [dice_count(c, True) for c in range(1, 6)] == [4, 4, 4, 4, 5]


def test_S2_position_without_cannon_cannot_fire() -> None:
    with pytest.raises(RuleViolation) as refused:
        needed_roll(0, 1, False)
    assert refused.value.rule == "S2"
    with pytest.raises(RuleViolation):
        dice_count(0, False)


def test_S3_normal_fire_table_matches_rules() -> None:
    for (cannons, distance), cell in parse(S3_TABLE, 1).items():
        assert needed_roll(cannons, distance, False) == cell, (cannons, distance)


def test_S3_ruling_beyond_last_row_is_refused() -> None:
    with pytest.raises(RuleViolation) as refused:
        needed_roll(5, 8, False)
    assert refused.value.rule == "S3"


def test_S4_burst_table_matches_rules() -> None:
    for (cannons, distance), cell in parse(S4_TABLE, 3).items():
        assert needed_roll(cannons, distance, True) == cell, (cannons, distance)


def test_S4_burst_needs_three_cannons_and_refuses_beyond_distance_eight() -> None:
    for cannons in (1, 2):
        with pytest.raises(RuleViolation) as refused:
            needed_roll(cannons, 2, True)
        assert refused.value.rule == "S4"
    with pytest.raises(RuleViolation) as refused:
        needed_roll(5, 9, True)
    assert refused.value.rule == "S4"


def test_S5_damage_halved_at_seven_and_thirded_at_eight_rounding_down() -> None:
    assert [hit_damage(25, d) for d in range(1, 9)] == [25] * 6 + [12, 8]
    assert hit_damage(16 + 5 + 4, 7) == 12  # super-shot and extra-cannons already in the base


def test_S6_k_ships_on_one_target_each_add_k_minus_one() -> None:
    bonus = superiority_bonus({"t1": ["a", "b", "c"], "t2": ["d"], "t3": []})
    assert bonus == {"t1": 2, "t2": 0, "t3": 0}


def test_S6_ship_firing_cannons_and_catapult_counts_once() -> None:
    assert superiority_bonus({"t": ["a", "a", "b"]}) == {"t": 1}


def test_S6_shots_that_cannot_hit_still_count() -> None:
    # 'b' fires a shot needing an automatic miss: it still raises a's bonus.
    bonus = superiority_bonus({"t": ["a", "b"]})["t"]
    assert not shot_hits(needed_roll(1, 5, False), [6, 6, 6], bonus)
    assert shot_hits(needed_roll(4, 4, False), [3, 3, 3], bonus)  # 9 + 1 reaches 10
    assert not shot_hits(needed_roll(4, 4, False), [3, 3, 3], 0)


def test_S6_bonus_cannot_turn_an_automatic_miss_into_a_hit() -> None:
    assert not shot_hits("miss", [6, 6, 6, 6], 20)
    assert shot_hits("hit", [1, 1, 1], 0)


def test_S7_burst_forbids_any_cannon_fire_next_turn() -> None:
    assert can_fire_cannons(0, False)
    assert not can_fire_cannons(1, False)
    with pytest.raises(RuleViolation) as refused:
        check_cannon_fire(1, False)
    assert refused.value.rule == "S7"
    assert bursts_in_a_row_after(1, False) == 0  # the rest turn resets the streak
    assert can_fire_cannons(bursts_in_a_row_after(1, False), False)


def test_S7_continuous_burst_two_turns_in_a_row_then_not_on_the_third() -> None:
    streak = 0
    check_cannon_fire(streak, True)
    streak = bursts_in_a_row_after(streak, True)
    check_cannon_fire(streak, True)  # second burst in a row allowed
    streak = bursts_in_a_row_after(streak, True)
    with pytest.raises(RuleViolation) as refused:
        check_cannon_fire(streak, True)  # third turn: not even normal fire
    assert refused.value.rule == "S7"
    assert can_fire_cannons(bursts_in_a_row_after(streak, False), True)
