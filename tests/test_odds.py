"""Exact hit odds (mortecouille.core.mortecouille.gunnery), checked against an independent computation.

The module enumerates every throw; these tests convolve single-die
distributions instead, and read the to-hit numbers from their own copy of the
tables, so neither the method nor the data is shared.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from mortecouille.core.errors import RuleViolation
from mortecouille.core.mortecouille.gunnery import (
    catapult_hit_probability,
    catapult_odds_cell,
    hit_probability,
    odds_cell,
    odds_tables,
    probability_at_least,
    render_odds_table,
)

H, M = "hit", "miss"
S3 = {  # distance -> needed for 1..5 cannons
    1: (8, H, H, H, H),
    2: (11, 7, H, H, H),
    3: (16, 12, 8, 6, H),
    4: (20, 17, 14, 10, 9),
    5: (M, 27, 18, 14, 13),
    6: (M, M, 24, 20, 19),
    7: (M, M, M, M, 28),
}
S4 = {  # distance -> needed for 3..5 cannons
    1: (H, H, H),
    2: (H, H, H),
    3: (H, H, H),
    4: (8, H, H),
    5: (14, 10, 8),
    6: (18, 17, 16),
    7: (24, 23, 22),
    8: (M, M, 30),
}
K = {1: M, 2: 9, 3: 13, 4: 16, 5: 19, 6: 25}


def convolved(dice: int) -> dict[int, Fraction]:
    """Distribution of the sum of ``dice`` d6, by repeated convolution."""
    distribution = {0: Fraction(1)}
    for _ in range(dice):
        following: dict[int, Fraction] = {}
        for total, chance in distribution.items():
            for face in range(1, 7):
                following[total + face] = following.get(total + face, Fraction(0)) + chance / 6
        distribution = following
    return distribution


def reference(dice: int, needed: object, bonus: int) -> Fraction:
    if needed == H:
        return Fraction(1)
    if needed == M:
        return Fraction(0)
    assert isinstance(needed, int)
    return sum((p for s, p in convolved(dice).items() if s + bonus >= needed), Fraction(0))


@pytest.mark.parametrize("elite", [False, True])
@pytest.mark.parametrize("bonus", [0, 1, 3])
def test_S3_every_cell_matches_convolution(elite: bool, bonus: int) -> None:
    for distance, row in S3.items():
        for cannons, needed in enumerate(row, start=1):
            dice = (4 if cannons == 5 else 3) + elite
            expected = reference(dice, needed, bonus)
            assert hit_probability(cannons, distance, False, elite, bonus) == expected


@pytest.mark.parametrize("elite", [False, True])
@pytest.mark.parametrize("bonus", [0, 2])
def test_S4_every_cell_matches_convolution(elite: bool, bonus: int) -> None:
    for distance, row in S4.items():
        for cannons, needed in enumerate(row, start=3):
            dice = (4 if cannons == 5 else 3) + elite
            expected = reference(dice, needed, bonus)
            assert hit_probability(cannons, distance, True, elite, bonus) == expected


@pytest.mark.parametrize("elite", [False, True])
@pytest.mark.parametrize("bonus", [0, 4])
def test_K_every_cell_matches_convolution(elite: bool, bonus: int) -> None:
    for distance, needed in K.items():
        expected = reference(3 + elite, needed, bonus)
        assert catapult_hit_probability(distance, elite, bonus) == expected


def test_odds_tables_cover_every_cell_with_fraction_and_float() -> None:
    s3, s4, k = odds_tables()
    assert (s3.rule, s4.rule, k.rule) == ("S3", "S4", "K")
    for table, source, first in ((s3, S3, 1), (s4, S4, 3)):
        assert [row.distance for row in table.rows] == list(source)
        for row in table.rows:
            for offset, cell in enumerate(row.cells):
                assert cell.cannons == first + offset
                assert cell.needed == source[row.distance][offset]
                assert cell.probability == reference(cell.dice, cell.needed, 0)
                assert cell.probability_float == float(cell.probability)
    assert [row.cells[0].needed for row in k.rows] == list(K.values())
    assert "S3 normal fire" in render_odds_table(s3)


def test_odds_known_literal_values() -> None:
    assert probability_at_least(3, 10) == Fraction(5, 8)
    assert probability_at_least(3, 11) == Fraction(1, 2)
    assert probability_at_least(3, 18) == Fraction(1, 216)
    assert probability_at_least(3, 19) == 0
    assert probability_at_least(4, 4) == 1
    assert odds_cell(4, 4).probability == Fraction(5, 8)  # needs 10 on 3d6
    assert odds_cell(4, 4, bonus=1).probability == Fraction(20, 27)  # 3d6 >= 9: 160/216
    assert odds_cell(4, 4, elite=True).probability == Fraction(65, 72)  # 4d6 >= 10: 1170/1296
    assert catapult_odds_cell(2).probability == Fraction(160, 216)  # 3d6 >= 9
    assert odds_cell(1, 5).probability == 0 and odds_cell(5, 1).probability == 1


def test_odds_refuse_what_the_rules_refuse() -> None:
    with pytest.raises(RuleViolation):
        hit_probability(2, 3, burst=True)
    with pytest.raises(RuleViolation):
        catapult_hit_probability(7)
