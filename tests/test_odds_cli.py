"""``mortecouille odds``: the exact to-hit chances of S3, S4 and K from the command line."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from click.testing import CliRunner

from mortecouille.cli.main import cli


def odds(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["odds", *args])
    return result.exit_code, result.output


def test_S3_four_cannons_at_distance_four_need_ten_on_3d6() -> None:
    code, output = odds("--cannons", "4", "--distance", "4", "--json")
    cell = json.loads(output)
    assert code == 0 and cell["needed"] == 10 and cell["dice"] == 3
    assert Fraction(cell["probability"]) == Fraction(5, 8)  # 108 of the 216 throws of 3d6 reach 10


def test_S4_S6_burst_with_elite_gunner_and_bonus_enumerates_4d6() -> None:
    code, output = odds("--cannons", "4", "--distance", "5", "--burst", "--elite", "--bonus", "1", "--json")
    cell = json.loads(output)
    hits = sum(1 for a in range(1, 7) for b in range(1, 7) for c in range(1, 7) for d in range(1, 7)
               if a + b + c + d + 1 >= 10)
    assert code == 0 and Fraction(cell["probability"]) == Fraction(hits, 6**4)


def test_K_catapult_distance_one_is_a_miss_and_beyond_six_refused() -> None:
    assert "automatic miss" in odds("--catapult", "--distance", "1")[1]
    code, output = odds("--catapult", "--distance", "7")
    assert code == 2 and "[K]" in output


def test_whole_tables_list_every_cell() -> None:
    code, output = odds()
    assert code == 0
    assert "S3 normal fire" in output and "S4 burst fire" in output and "K catapult" in output


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--cannons", "6", "--distance", "2"], "--cannons"),
        (["--distance", "2"], "--cannons"),
        (["--cannons", "2"], "--distance"),
        (["--cannons", "2", "--distance", "2", "--burst"], "S4"),
        (["--cannons", "4", "--distance", "9", "--burst"], "S4"),
        (["--cannons", "4", "--distance", "0"], "S3"),
        (["--catapult", "--cannons", "2", "--distance", "3"], "--catapult"),
        (["--cannons", "x", "--distance", "3"], "--cannons"),
    ],
)
def test_bad_odds_questions_exit_2_naming_the_field_or_rule(args: list[str], names: str) -> None:
    code, output = odds(*args)
    assert code == 2 and names in output
