"""Rules D1-D2: every die is an event; seeded dice are committed and derived from identity."""

from __future__ import annotations

from collections import Counter

import pytest

from mortecouille.core.dice import (
    DiceCup,
    DicePolicy,
    FixedDice,
    LoggedDice,
    RollIdentity,
    SeededDice,
    TableDice,
    seed_commitment,
    seeded_value,
)
from mortecouille.core.errors import BadInput


def test_D1_every_die_is_an_event_with_purpose_ship_sides_value_and_source() -> None:
    cup = DiceCup(TableDice([4, 2]), "g", 3)
    assert cup.roll("upkeep", "Pearl", "fire", "fire check") == 4
    assert cup.roll("upkeep", "Pearl", "fire", "fire check") == 2
    first, second = cup.events
    assert (first.turn, first.phase, first.ship, first.purpose) == (3, "upkeep", "Pearl", "fire")
    assert (first.index, second.index) == (0, 1)
    assert (first.sides, first.value, first.source) == (6, 4, "table")


def test_D1_unknown_purpose_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        DiceCup(TableDice([1]), "g", 1).roll("x", "A", "luck", "?")


@pytest.mark.parametrize("value", [0, 7, -1, 100])
def test_D1_table_dice_outside_one_to_six_are_refused(value: int) -> None:
    cup = DiceCup(TableDice([value]), "g", 1)
    with pytest.raises(BadInput, match="dice: a d6 shows 1 to 6"):
        cup.roll("wind", "A", "wind", "wind")
    assert cup.events == []


def test_D1_table_dice_ask_the_referee_when_values_run_out() -> None:
    asked: list[str] = []

    def ask(identity: RollIdentity, label: str) -> int:
        asked.append(label)
        return 5

    cup = DiceCup(TableDice([2], ask), "g", 1)
    assert [cup.roll("wind", "A", "wind", "A, wind, 1d6") for _ in range(2)] == [2, 5]
    assert asked == ["A, wind, 1d6"]


def test_D1_table_dice_without_values_or_prompt_name_the_die() -> None:
    with pytest.raises(BadInput, match="no value given for Pearl, wind"):
        DiceCup(TableDice(), "g", 1).roll("wind", "Pearl", "wind", "Pearl, wind")


def test_D2_seeded_dice_are_reproducible_and_depend_only_on_identity() -> None:
    first = DiceCup(SeededDice("s"), "g", 1)
    a = [first.roll("wind", ship, "wind", "") for ship in ("A", "B", "C")]
    second = DiceCup(SeededDice("s"), "g", 1)
    b = [second.roll("wind", ship, "wind", "") for ship in ("C", "B", "A")]
    assert a == list(reversed(b))  # processing order does not change any ship's die


def test_D2_seeded_dice_differ_by_the_seed_and_by_every_part_of_the_identity() -> None:
    """Changing the seed or any one part of a die's identity changes its dice (varying
    only the seed would pass a derivation that ignored the turn or the ship)."""

    def twenty(seed: str, first: RollIdentity) -> tuple[int, ...]:
        return tuple(seeded_value(seed, msgspec_replace(first, index=first.index + i)) for i in range(20))

    base = RollIdentity("g", 1, "wind", "A", "wind", 0)
    dice = twenty("s1", base)
    variants = {
        "seed": twenty("s2", base),
        "game": twenty("s1", msgspec_replace(base, game="h")),
        "turn": twenty("s1", msgspec_replace(base, turn=2)),
        "phase": twenty("s1", msgspec_replace(base, phase="movement")),
        "ship": twenty("s1", msgspec_replace(base, ship="B")),
        "no ship": twenty("s1", msgspec_replace(base, ship=None)),
        "purpose": twenty("s1", msgspec_replace(base, purpose="fire")),
        "index": twenty("s1", msgspec_replace(base, index=20)),
    }
    assert [part for part, other in variants.items() if other == dice] == []


def msgspec_replace(identity: RollIdentity, **changes: object) -> RollIdentity:
    import msgspec

    return msgspec.structs.replace(identity, **changes)


def test_D2_seeded_dice_are_uniform_enough() -> None:
    counts = Counter(
        seeded_value("fair", RollIdentity("g", turn, "wind", "A", "wind", 0)) for turn in range(6000)
    )
    assert set(counts) == {1, 2, 3, 4, 5, 6}
    chi_square = sum((c - 1000) ** 2 / 1000 for c in counts.values())
    assert chi_square < 20.5  # p > 0.001 with 5 degrees of freedom


def test_D2_commitment_is_sha256_of_seed() -> None:
    assert seed_commitment("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_D2_fixed_dice_take_listed_values_then_fall_back_to_seed() -> None:
    cup = DiceCup(FixedDice({("A", "wind"): [1]}, SeededDice("s")), "g", 1)
    cup.roll("wind", "A", "wind", "")
    cup.roll("wind", "A", "wind", "")
    assert cup.events[0].value == 1 and cup.events[0].source == "fixed"
    assert cup.events[1].source == "seeded"
    assert cup.events[1].value == seeded_value("s", RollIdentity("g", 1, "wind", "A", "wind", 1))


def test_D2_logged_dice_replay_recorded_values_by_identity() -> None:
    cup = DiceCup(SeededDice("s"), "g", 1)
    cup.roll("wind", "A", "wind", "")
    replay = DiceCup(LoggedDice(cup.events, DicePolicy(game="g", dice_mode="seeded", seed="s")), "g", 1)
    assert replay.roll("wind", "A", "wind", "") == cup.events[0].value
    assert replay.events[0].source == "seeded"
    with pytest.raises(BadInput, match="log does not hold"):
        replay.roll("wind", "A", "wind", "A again")
