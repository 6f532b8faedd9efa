"""Manoeuvres (N), advancing (A3) and orders (T1) (mortecouille.core.mortecouille.maneuver)."""

from __future__ import annotations

import pytest

from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.mortecouille.maneuver import check_actions, does_nothing, maneuver_cost
from tests.test_mortecouille_movement import advance, game, moved, run_move, ship

# rules.md N table: (turn, class) -> (at rest, sailing extra over speed)
N_TABLE = {
    ("eighth", "small"): (1, 0),
    ("eighth", "big"): (2, 1),
    ("quarter", "small"): (2, 1),
    ("quarter", "big"): (3, 2),
    ("half", "small"): (4, 2),
    ("half", "big"): (6, 4),
}


def refused(
    actions: list[str],
    *,
    extra_crew: bool = False,
    phase_3: bool = False,
    fireship: bool = False,
    sunk: bool = False,
    catapults: int | None = None,
) -> str:
    with pytest.raises(RuleViolation) as error:
        check_actions(actions, extra_crew, phase_3, fireship, sunk, catapults=catapults)
    return error.value.rule


def test_N_costs_at_rest_fixed_and_sailing_speed_plus_extra() -> None:
    for (turn, ship_class), (at_rest, extra) in N_TABLE.items():
        for speed in (1, 3, 7):
            assert maneuver_cost(turn, ship_class, False, speed) == at_rest
            assert maneuver_cost(turn, ship_class, True, speed) == speed + extra


def test_N_ruling_big_sailing_half_turn_costs_speed_plus_four() -> None:
    assert maneuver_cost("half", "big", True, 5) == 9


def test_N_unknown_turn_class_or_speed_refused() -> None:
    for args in (("full", "small", True, 2), ("half", "huge", True, 2), ("half", "big", True, 0)):
        with pytest.raises(BadInput):
            maneuver_cost(*args)


def test_A3_advance_needs_points_at_least_speed() -> None:
    """Through the movement phase a turn runs (not a helper nothing calls)."""
    for points, advances in ((1, False), (2, True), (3, True)):  # a red-small's speed is 2
        produced = run_move(game(ship("A", "red-small", (2, 2), "N", wind=points)), [advance("A")])
        assert bool(moved(produced)) == advances, points


def test_T1_one_action_per_ship() -> None:
    check_actions(["advance"], False, False, False, False)
    check_actions([], False, False, False, False)
    assert refused(["advance", "attack"]) == "T1"


def test_T1_extra_crew_allows_two_different_actions() -> None:
    check_actions(["attack", "manoeuvre"], True, False, False, False)
    assert refused(["attack", "attack"], extra_crew=True) == "T1"
    assert refused(["attack", "advance", "fireship"], extra_crew=True) == "T1"


def test_T1_ruling_extra_crew_at_most_one_moving_action() -> None:
    assert refused(["advance", "manoeuvre"], extra_crew=True) == "T1"


def test_T1_ruling_idle_with_another_action_refused() -> None:
    assert refused(["idle", "attack"]) == "T1"
    check_actions(["idle"], False, False, False, False)
    check_actions(["idle", "catapult"], False, False, False, False)


def test_T1_catapult_shot_is_not_an_action() -> None:
    check_actions(["advance", "catapult", "catapult"], False, False, False, False, catapults=2)
    assert refused(["catapult", "catapult"], catapults=1) == "K"
    assert does_nothing(["catapult"], False)
    assert not does_nothing(["catapult", "attack"], False)
    assert does_nothing([], False)


def test_T1_unknown_order_is_bad_input() -> None:
    with pytest.raises(BadInput):
        check_actions(["board"], False, False, False, False)


def test_X1_phase_3_ship_can_do_nothing_not_even_catapult() -> None:
    assert refused(["attack"], phase_3=True) == "X1"
    assert refused(["catapult"], phase_3=True) == "X1"
    check_actions(["idle"], False, True, False, False)
    assert does_nothing(["attack"], True)


def test_C6_fireship_gives_no_orders() -> None:
    assert refused(["advance"], fireship=True) == "C6"
    assert refused(["catapult"], fireship=True) == "C6"


def test_T2_ruling_sunk_ship_takes_no_further_part() -> None:
    assert refused(["attack"], sunk=True) == "T2"
