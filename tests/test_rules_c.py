"""Collision damage, rules C1-C4 and C6 (mortecouille.core.mortecouille.collision_damage)."""

from __future__ import annotations

import pytest

from mortecouille.core.board.geometry import FACINGS, rotate
from mortecouille.core.errors import BadInput
from mortecouille.core.mortecouille.collision_damage import (
    FIRESHIP_EXPLOSION,
    CollisionSide,
    ContactPart,
    capsizes,
    collision_losses,
    contact_part,
    crossing_damage_roll_needed,
    crossing_extra,
    side_contact_applies,
)

# F1 collision columns, copied here so this test does not depend on the catalogue:
# class, own vs small, own vs big, inflicted on small, inflicted on big
F1 = {
    "red-small": ("small", 5, 15, 3, 1),
    "red-big": ("big", 2, 10, 20, 5),
    "blue-big": ("big", 0, 8, 30, 15),
    "yellow-big": ("big", 1, 5, 27, 11),
    "green-small": ("small", 4, 13, 4, 1),
}


def side(ship: str, part: ContactPart, *, siren: bool = False, fireship: bool = False) -> CollisionSide:
    ship_class, own_s, own_b, inf_s, inf_b = F1[ship]
    return CollisionSide(ship_class, own_s, own_b, inf_s, inf_b, part, siren, fireship)


def test_C1_contact_part_by_angle_between_facing_and_contact() -> None:
    expected = {0: "bow", 1: "bow", 2: "side", 3: "stern", 4: "stern"}
    for facing in FACINGS:
        for eighths in range(8):
            part = contact_part(facing, rotate(facing, eighths))
            assert part == expected[min(eighths, 8 - eighths)], (facing, eighths)
    assert contact_part("N", "E") == "side"
    assert contact_part("N", "SW") == "stern"
    with pytest.raises(BadInput):
        contact_part("N", "UP")


def test_C2_bow_bow_three_each() -> None:
    a, b = collision_losses(side("red-small", "bow"), side("green-small", "bow"))
    assert (a.total, b.total) == (5 + 4 + 3, 4 + 3 + 3)
    assert "C2" in a.rules and "C1" in a.rules and "F1" in a.rules
    assert not (a.rolls_capsize or b.rolls_capsize)


def test_C2_bow_stern_two_to_the_bow_ship_only() -> None:
    a, b = collision_losses(side("red-big", "bow"), side("blue-big", "stern"))
    assert (a.contact_extra, b.contact_extra) == (2, 0)
    assert (a.total, b.total) == (10 + 15 + 2, 8 + 5)


def test_C2_bow_side_two_and_six_side_ship_rolls_capsize_bow_ship_may_cross() -> None:
    a, b = collision_losses(side("red-big", "side"), side("blue-big", "bow"))
    assert (a.contact_extra, b.contact_extra) == (6, 2)
    assert a.rolls_capsize and not b.rolls_capsize
    assert b.crosses_if_other_sinks and not a.crosses_if_other_sinks


def test_C2_other_pairs_cost_no_extra() -> None:
    pairs: tuple[tuple[ContactPart, ContactPart], ...] = (
        ("side", "stern"),
        ("stern", "stern"),
        ("stern", "side"),
    )
    for part_a, part_b in pairs:
        a, b = collision_losses(side("red-small", part_a), side("green-small", part_b))
        assert (a.contact_extra, b.contact_extra) == (0, 0)
        assert (a.total, b.total) == (5 + 4, 4 + 3)
        assert not (a.side_contact_die_needed or a.rolls_capsize or a.crosses_if_other_sinks)


def test_C2_ruling_side_side_needs_dice_and_costs_two_each_on_a_1_to_3() -> None:
    a, b = collision_losses(side("red-small", "side"), side("green-small", "side"))
    assert a.side_contact_die_needed and b.side_contact_die_needed
    assert (a.total, b.total) == (9, 7)
    a, b = collision_losses(side("red-small", "side"), side("green-small", "side"), (6, 3))
    assert (a.total, b.total, a.side_contact_die_needed) == (11, 9, False)
    a, b = collision_losses(side("red-small", "side"), side("green-small", "side"), (4, 6))
    assert (a.total, b.total, a.own, a.inflicted, a.contact_extra) == (0, 0, 0, 0, 0)  # nothing at all
    assert side_contact_applies(1, 6) and side_contact_applies(5, 3)
    assert not side_contact_applies(4, 4)


def test_C2_capsize_on_1_or_2() -> None:
    assert [capsizes(d) for d in range(1, 7)] == [True, True] + [False] * 4


def test_C2_crossing_costs_five_and_three_d6_more_on_1_or_2() -> None:
    assert crossing_extra(3, None) == 5
    assert crossing_extra(6, None) == 5
    assert crossing_damage_roll_needed(2)
    assert crossing_extra(2, (6, 5, 4)) == 20
    assert crossing_extra(1, [1, 1, 1]) == 8
    with pytest.raises(BadInput):
        crossing_extra(1, None)


def test_C3_worked_example_red_small_into_yellow_big_side() -> None:
    red, yellow = collision_losses(side("red-small", "bow"), side("yellow-big", "side"))
    assert (red.own, red.inflicted, red.contact_extra, red.total) == (15, 27, 2, 44)
    assert (yellow.own, yellow.inflicted, yellow.contact_extra, yellow.total) == (1, 1, 6, 8)
    assert yellow.rolls_capsize and red.crosses_if_other_sinks


def test_C4_siren_bow_minus_six_for_itself_plus_eight_for_the_other() -> None:
    red, yellow = collision_losses(side("red-small", "bow", siren=True), side("yellow-big", "side"))
    assert (red.siren_adjustment, red.total) == (-6, 38)
    assert (yellow.siren_adjustment, yellow.total) == (8, 16)
    assert "C4" in red.rules and "C4" in yellow.rules
    assert yellow.rolls_capsize  # the capsize roll comes after the siren


def test_C4_siren_loss_not_below_zero() -> None:
    siren, other = collision_losses(side("blue-big", "bow", siren=True), side("red-small", "stern"))
    assert (siren.total, siren.siren_adjustment) == (0, -(0 + 1 + 2))
    assert other.total == 15 + 30 + 8


def test_C4_siren_does_nothing_unless_its_bow_is_in_the_contact() -> None:
    a, b = collision_losses(side("red-small", "side", siren=True), side("yellow-big", "bow"))
    assert (a.siren_adjustment, b.siren_adjustment) == (0, 0)
    assert "C4" not in a.rules


def test_C4_ruling_two_sirens_bow_to_bow_each_avoids_six_after_the_other_eight() -> None:
    a, b = collision_losses(side("red-small", "bow", siren=True), side("green-small", "bow", siren=True))
    assert (a.total, b.total) == (12 + 8 - 6, 10 + 8 - 6)


def test_C6_fireship_explosion_costs_both_thirty_other_catches_fire() -> None:
    assert FIRESHIP_EXPLOSION == 30
    fire, target = collision_losses(side("red-small", "bow", fireship=True), side("yellow-big", "side"))
    assert (fire.explosion, target.explosion) == (30, 30)
    assert (fire.total, target.total) == (44 + 30, 8 + 30)
    assert target.catches_fire and not fire.catches_fire
    assert fire.explodes_as_fireship and not target.explodes_as_fireship
    assert "C6" in fire.rules and "C6" in target.rules
