"""The scenario format as docs/scenario.md gives it: its examples run, one per ruleset;
squares may be named (``"C5"``) as well as given as ``[x, y]``; every problem of a file is listed
at once with its path, exit 2, nothing written; ``scenario --help`` points at the document."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mortecouille.cli.main import cli
from mortecouille.core.rulesets import RULESETS
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.cli_helpers import run_cli

DOC = Path(__file__).resolve().parent.parent / "docs" / "scenario.md"


def examples() -> list[dict[str, Any]]:
    """Every JSON block of the document that is a whole scenario (it names its ruleset)."""
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(), re.S)
    return [json.loads(block) for block in blocks if '"ruleset"' in block]


def run_file(tmp_path: Path, data: dict[str, Any] | str, *extra: str) -> tuple[int, str]:
    path = tmp_path / "turn.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    result = CliRunner().invoke(cli, ["scenario", str(path), *extra])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_the_document_has_one_complete_example_per_ruleset() -> None:
    assert sorted(example["ruleset"] for example in examples()) == sorted(RULESETS)


@pytest.mark.parametrize("example", examples(), ids=lambda e: str(e["ruleset"]))
def test_each_documented_example_runs_and_keeps_a_verified_log(
    example: dict[str, Any], tmp_path: Path
) -> None:
    kept = tmp_path / "kept.jsonl"
    code, output = run_file(tmp_path, example, "--json", "--log", str(kept))
    assert code == 0, output
    assert json.loads(output)["ships"].keys() == {ship["id"] for ship in example["ships"]}
    assert verify_log(GameLog(kept)).ok


def test_square_names_give_the_same_turn_as_coordinates(tmp_path: Path) -> None:
    named = next(e for e in examples() if e["ruleset"] == "mortecouille")
    as_coordinates = json.loads(json.dumps(named))
    as_coordinates["board"]["rocks"] = [[5, 7]]  # F8
    as_coordinates["board"]["winds"][0]["at"] = [3, 5]  # D6
    for ship, square in zip(as_coordinates["ships"], ([3, 4], [6, 4], [1, 4]), strict=True):  # D5, G5, B5
        ship["at"] = square
    assert "F8" in json.dumps(named) and "F8" not in json.dumps(as_coordinates)
    assert run_file(tmp_path, named, "--json") == run_file(tmp_path, as_coordinates, "--json")


def test_a_bad_square_name_is_named_by_its_path(tmp_path: Path) -> None:
    example = next(e for e in examples() if e["ruleset"] == "blockade")
    code, output = run_file(tmp_path, {**example, "board": {**example["board"], "rocks": ["K13", "C0"]}})
    assert code == 2 and "board.rocks[1]" in output and "'C0'" in output, output


BROKEN_BLOCKADE = {
    "ruleset": "blockade",
    "board": {"width": 8, "height": 8},
    "ships": [
        {"id": "A", "kind": "sloop", "at": "C2", "facing": "N"},
        {"id": "B", "kind": "galleon", "at": [2, 3], "facing": "S"},
    ],
    "orders": {"A": ["F", "X"], "B": ["Q"]},
}


def test_every_problem_of_a_file_is_listed_at_once_with_its_path(tmp_path: Path) -> None:
    log = tmp_path / "kept.jsonl"
    code, output = run_file(tmp_path, BROKEN_BLOCKADE, "--log", str(log))
    assert code == 2, output
    for path in ("ships[1].kind:", "orders.A[1]:", "orders.B[0]:"):
        assert path in output, output
    assert "3 problems" in output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["turn.json"]  # nothing written


def test_every_shape_problem_is_listed_at_once(tmp_path: Path) -> None:
    broken = {
        "ruleset": "mortecouille",
        "board": {"width": 8, "height": "eight", "whirlpools": ["Z"]},
        "ships": [
            {"id": "A", "kind": "red-small", "at": "C2", "facing": "N", "colour": "red"},
            {"id": "B", "kind": "red-small", "at": [2], "facing": "S"},
        ],
        "orderz": {},
    }
    code, output = run_file(tmp_path, broken)
    assert code == 2, output
    for path in ("board.height:", "board.whirlpools[0]:", "ships[0]:", "colour", "ships[1].at:", "orderz:"):
        assert path in output, output


def test_the_rules_refusals_of_ships_are_listed_together(tmp_path: Path) -> None:
    broken = {
        "ruleset": "mortecouille",
        "board": {"width": 8, "height": 8},
        "ships": [
            {"id": "A", "kind": "galleon", "owner": "Anne", "at": "C2", "facing": "N"},
            {"id": "B", "kind": "red-small", "owner": "Bart", "at": "H9", "facing": "S"},
        ],
    }
    code, output = run_file(tmp_path, broken)
    assert code == 2 and "ships[0].kind:" in output and "ships[1]:" in output and "B4" in output, output


def test_scenario_help_points_at_the_format_document() -> None:
    result = run_cli("scenario", "--help")
    assert result.exit_code == 0 and "docs/scenario.md" in result.output
    assert DOC.exists()
