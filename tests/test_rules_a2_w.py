"""Rules A2 (speed) and W1-W2 (wear) as computed by ``derive_stats``.

Expected numbers come from rules.md: table speeds (F1), hull-1 +2, hull-2 +1,
extra-sail -1, +1 from half lost, +2 instead from three quarters lost, never below 1;
wear 1 per turn (W1) and 3 per turn (W2).
"""

from __future__ import annotations

import msgspec
import pytest

from mortecouille.core.errors import BadInput
from mortecouille.core.fleet.catalogue import CATALOGUES, RULES_VERSION, catalogue_for
from mortecouille.core.fleet.stats import derive_stats


@pytest.mark.parametrize(
    ("kind", "speed"),
    [
        ("red-small", 2),
        ("red-big", 5),
        ("blue-small", 4),
        ("blue-big", 7),
        ("green-small", 3),
        ("green-big", 6),
        ("yellow-small", 3),
        ("yellow-big", 5),
    ],
)
def test_A2_table_speed(kind: str, speed: int) -> None:
    stats = derive_stats(kind)
    assert (stats.table_speed, stats.speed, stats.damage_level, stats.wear_per_turn) == (
        speed,
        speed,
        "intact",
        0,
    )


@pytest.mark.parametrize(
    ("options", "speed"),
    [
        (("hull-1",), 2 + 2),
        (("hull-2",), 2 + 1),
        (("hull-3",), 2),
        (("extra-sail",), 1),
        (("hull-1", "extra-sail"), 2 + 2 - 1),
        (("hull-2", "extra-sail"), 2 + 1 - 1),
    ],
)
def test_A2_option_speed_modifiers_on_red_small(options: tuple[str, ...], speed: int) -> None:
    assert derive_stats("red-small", options).speed == speed


def test_A2_hull_4_does_not_change_speed() -> None:
    assert derive_stats("blue-big", ("hull-4",)).speed == 7


def test_A2_speed_never_below_one(monkeypatch: pytest.MonkeyPatch) -> None:
    current = catalogue_for(RULES_VERSION)
    swift = msgspec.structs.replace(current.ships["red-small"], speed=1)
    variant = msgspec.structs.replace(current, ships={**current.ships, "red-small": swift})
    monkeypatch.setitem(CATALOGUES, "test-swift", variant)
    assert derive_stats("red-small", ("extra-sail",), rules_version="test-swift").speed == 1


def test_A2_W1_exactly_half_lost_slows_by_one_and_wears_one() -> None:
    # red-small 38: half is 19.
    below = derive_stats("red-small", structure_lost=18)
    at_half = derive_stats("red-small", structure_lost=19)
    assert (below.speed, below.wear_per_turn, below.damage_level) == (2, 0, "intact")
    assert (at_half.speed, at_half.wear_per_turn, at_half.damage_level) == (3, 1, "half")
    assert at_half.structure == 19


def test_A2_W1_odd_structure_half_rounds_up() -> None:
    # red-big 121: half is 60.5, so 60 lost is not yet half and 61 is.
    assert derive_stats("red-big", structure_lost=60).speed == 5
    assert derive_stats("red-big", structure_lost=61).speed == 6
    assert derive_stats("red-big", structure_lost=61).wear_per_turn == 1


def test_A2_W2_exactly_three_quarters_lost_slows_by_two_instead() -> None:
    # yellow-big 140: three quarters is 105.
    before = derive_stats("yellow-big", structure_lost=104)
    at_three_quarters = derive_stats("yellow-big", structure_lost=105)
    assert (before.speed, before.wear_per_turn, before.damage_level) == (6, 1, "half")
    assert (at_three_quarters.speed, at_three_quarters.wear_per_turn) == (7, 3)
    assert at_three_quarters.damage_level == "three-quarters"


def test_A2_thresholds_use_max_structure_with_hull() -> None:
    # red-small + hull-1: 48 structure, speed 4; half is 24, three quarters 36.
    assert derive_stats("red-small", ("hull-1",), structure_lost=23).speed == 4
    assert derive_stats("red-small", ("hull-1",), structure_lost=24).speed == 5
    assert derive_stats("red-small", ("hull-1",), structure_lost=35).speed == 5
    assert derive_stats("red-small", ("hull-1",), structure_lost=36).speed == 6


def test_A2_damage_penalty_adds_to_extra_sail() -> None:
    # red-small + extra-sail: 1, +2 at three quarters (29 of 38) gives 3.
    stats = derive_stats("red-small", ("extra-sail",), structure_lost=29)
    assert (stats.fitted_speed, stats.speed) == (1, 3)


def test_W1_wear_is_one_per_turn_from_half() -> None:
    assert derive_stats("green-small", structure_lost=19).wear_per_turn == 1  # 37 / 2 = 18.5


def test_W2_wear_is_three_per_turn_from_three_quarters() -> None:
    stats = derive_stats("blue-small", structure_lost=27)  # 35 * 3 / 4 = 26.25
    assert stats.wear_per_turn == 3
    assert derive_stats("blue-small", structure_lost=26).wear_per_turn == 1


def test_W3_structure_may_go_below_zero_for_a_sunk_ship() -> None:
    stats = derive_stats("red-small", structure_lost=50)
    assert stats.structure == 38 - 50
    assert stats.wear_per_turn == 3


def test_A2_negative_loss_is_bad_input() -> None:
    with pytest.raises(BadInput):
        derive_stats("red-small", structure_lost=-1)
