"""Mortecouille scenarios (architecture.md): ship state fields, orders, fixed dice, refusals by rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mortecouille.cli.main import cli


def scenario(ships: list[dict[str, Any]], orders: dict[str, Any], fixed: list[dict[str, Any]] | None = None,
             **board: Any) -> dict[str, Any]:
    return {
        "ruleset": "mortecouille",
        "board": {"width": 12, "height": 12, **board},
        "ships": ships,
        "orders": orders,
        "dice": {"seed": 7, "fixed": fixed or []},
    }


def run_file(tmp_path: Path, data: dict[str, Any]) -> tuple[int, str]:
    path = tmp_path / "turn.json"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["scenario", str(path), "--json"])
    return result.exit_code, result.output


def test_C3_worked_example_red_small_bow_into_yellow_big_side(tmp_path: Path) -> None:
    data = scenario(
        [
            {"id": "Red", "kind": "red-small", "owner": "Anne", "at": [5, 5], "facing": "E", "wind": 2},
            {"id": "Yellow", "kind": "yellow-big", "owner": "Bart", "at": [6, 5], "facing": "N"},
        ],
        {"Red": ["advance"], "Yellow": ["idle"]},
        [{"ship": "Yellow", "purpose": "capsize", "values": [5]}],
    )
    code, output = run_file(tmp_path, data)
    assert code == 0, output
    answer = json.loads(output)
    assert answer["ships"]["Red"]["damage"] == 44 and answer["ships"]["Red"]["sunk"] is True
    assert answer["ships"]["Yellow"]["damage"] == 8 and answer["ships"]["Yellow"]["sunk"] is False
    assert answer["collisions"] == [{"round": 1, "phase": "move", "step": 1, "ships": ["Red", "Yellow"], "rule": "M3"}]
    capsize = [e for e in answer["events"] if e["type"] == "die-rolled" and e["purpose"] == "capsize"]
    assert [(e["ship"], e["value"], e["source"]) for e in capsize] == [("Yellow", 5, "fixed")]
    assert answer["events"][-1]["type"] == "game-ended" and answer["events"][-1]["winner"] == "Bart"


def test_scenario_reports_fire_wind_and_countdown_after_the_turn(tmp_path: Path) -> None:
    data = scenario(
        [
            {"id": "A", "kind": "green-small", "owner": "Anne", "at": [2, 2], "facing": "N", "fire": "1", "wind": 3},
            {"id": "B", "kind": "yellow-big", "owner": "Bart", "at": [2, 5], "facing": "S",
             "options": ["catapult"]},
            {"id": "C", "kind": "red-small", "owner": "Anne", "at": [8, 8], "facing": "S", "countdown": 2},
        ],
        {"A": ["idle"], "B": [{"catapult": "C"}, "idle"], "C": ["idle"]},
        [
            {"ship": "A", "purpose": "fire", "values": [1]},
            {"ship": "B", "purpose": "catapult", "values": [1, 1, 1]},
        ],
    )
    code, output = run_file(tmp_path, data)
    assert code == 0, output
    ships = json.loads(output)["ships"]
    # X1: phase 1 failed on a 1 -> 8 structure lost, phase 2(1) next turn; T1: idle loses the wind
    assert ships["A"]["damage"] == 8 and ships["A"]["fire"] == "2a" and ships["A"]["wind"] == 0
    # K: the countdown drops by one at the end of the turn
    assert ships["C"]["countdown"] == 1
    assert ships["B"]["fire"] is None and ships["B"]["countdown"] is None


@pytest.mark.parametrize(
    ("ship_fields", "order", "rule"),
    [
        ({"bursts_in_a_row": 1}, {"attack": "port", "target": "T"}, "S7"),
        ({}, {"attack": "port", "target": "T", "mode": "burst"}, "S4"),
        ({}, {"attack": "starboard", "target": "T"}, "S1"),
        ({}, {"attack": "bow", "target": "T"}, "S2"),
        ({"fire": "3"}, {"attack": "port", "target": "T"}, "X1"),
        ({}, {"catapult": "T"}, "K"),
    ],
)
def test_an_order_the_rules_refuse_exits_2_citing_the_rule(
    tmp_path: Path, ship_fields: dict[str, Any], order: dict[str, Any], rule: str
) -> None:
    data = scenario(
        [
            {"id": "S", "kind": "red-small", "owner": "Anne", "at": [2, 2], "facing": "N", **ship_fields},
            {"id": "T", "kind": "red-small", "owner": "Bart", "at": [0, 2], "facing": "N"},
        ],
        {"S": [order]},
    )
    code, output = run_file(tmp_path, data)
    assert code == 2, output
    assert f"[{rule}]" in output and "orders.S" in output


@pytest.mark.parametrize(
    ("change", "names"),
    [
        ({"ships": [{"id": "S", "kind": "rouge-enorme", "at": [1, 1], "facing": "N"}]}, "kind"),
        ({"ships": [{"id": "S", "kind": "red-small", "at": [1, 1], "facing": "N", "fire": "9"}]}, "fire"),
        ({"ships": [{"id": "S", "kind": "red-small", "at": [1, 1], "facing": "N", "options": ["laser"]}]},
         "options[0]"),
        ({"orders": {"S": ["sail"]}}, "orders.S[0]"),
        ({"orders": {"S": [{"attack": "port"}]}}, "orders.S[0].target"),
    ],
)
def test_invalid_mortecouille_scenarios_name_the_field(tmp_path: Path, change: dict[str, Any], names: str) -> None:
    base = scenario([{"id": "S", "kind": "red-small", "owner": "Anne", "at": [1, 1], "facing": "N"}], {})
    code, output = run_file(tmp_path, {**base, **change})
    assert code == 2, output
    assert names in output
