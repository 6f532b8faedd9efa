"""``mortecouille scenario`` (architecture.md): a real log, the same decider, clear refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mortecouille.cli.main import cli
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log

EXAMPLE: dict[str, Any] = {
    "ruleset": "blockade",
    "board": {"width": 20, "height": 36, "rocks": [[10, 12]], "winds": [{"at": [10, 10], "dir": "E"}],
              "whirlpools": [[4, 4]]},
    "ships": [
        {"id": "A", "kind": "sloop", "at": [10, 10], "facing": "N"},
        {"id": "B", "kind": "war-frigate", "at": [10, 11], "facing": "E"},
    ],
    "orders": {"A": ["F", "L", None, "R"]},
    "dice": {"seed": 1, "fixed": [{"ship": "A", "purpose": "wind", "values": [5]}]},
}


def run_file(tmp_path: Path, data: dict[str, Any], *extra: str) -> tuple[int, str]:
    path = tmp_path / "turn.json"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["scenario", str(path), *extra])
    return result.exit_code, result.output


def test_architecture_example_resolves_with_bumps_and_wind(tmp_path: Path) -> None:
    code, output = run_file(tmp_path, EXAMPLE, "--json", "--log", str(tmp_path / "kept.jsonl"))
    assert code == 0, output
    answer = json.loads(output)
    # round 1: the sloop bumps the frigate (smaller pusher: nobody moves), wind pushes it east;
    # round 2: its left turn enters L12 then stops against the frigate (M2b), facing W;
    # round 4: its right turn bumps the frigate again (a turner never pushes) and faces N.
    assert answer["ships"]["A"] == {"at": [11, 11], "square": "L12", "facing": "N", "damage": 9.0, "sunk": False}
    assert answer["ships"]["B"]["at"] == [10, 11] and answer["ships"]["B"]["damage"] == 1.5
    assert [(c["round"], c["step"], c["rule"]) for c in answer["collisions"]] == [(1, 1, "M3"), (2, 2, "M2b"), (4, 1, "M3")]
    assert answer["events"][0]["type"] == "turn-started"
    assert answer["events"][-1]["type"] == "turn-ended"
    report = verify_log(GameLog(tmp_path / "kept.jsonl"))
    assert report.ok, report.findings


def test_scenario_plays_only_as_many_rounds_as_the_longest_token_list(tmp_path: Path) -> None:
    data = dict(EXAMPLE, orders={"A": ["F"]})
    code, output = run_file(tmp_path, data, "--json")
    assert code == 0
    assert json.loads(output)["events"][0]["rounds"] == 1


def test_rock_collision_names_one_ship_and_the_rock_square(tmp_path: Path) -> None:
    data = dict(EXAMPLE, ships=[{"id": "A", "kind": "sloop", "at": [10, 11], "facing": "N"}], orders={"A": ["F"]})
    code, output = run_file(tmp_path, data, "--json")
    collision = json.loads(output)["collisions"][0]
    assert collision == {"round": 1, "phase": "move", "step": 1, "ships": ["A"], "rule": "M6", "rock": [10, 12]}
    assert json.loads(output)["ships"]["A"]["damage"] == 0.5  # P3: a sloop's rock damage


@pytest.mark.parametrize(
    ("change", "names"),
    [
        ({"ships": [{"id": "A", "kind": "galleon", "at": [1, 1], "facing": "N"}]}, "ships[0].kind"),
        ({"ships": [{"id": "A", "kind": "sloop", "at": [99, 1], "facing": "N"}]}, "ships[0]"),
        ({"ships": [{"id": "A", "kind": "sloop", "at": [1, 1], "facing": "N"},
                    {"id": "B", "kind": "sloop", "at": [1, 1], "facing": "N"}]}, "ships[1]"),
        ({"orders": {"Z": ["F"]}}, "orders.Z"),
        ({"orders": {"A": ["X"]}}, "orders.A[0]"),
        ({"orders": {"A": ["F", "F", "F", "F", "F"]}}, "orders.A"),
        ({"rounds": 5}, "rounds"),
        ({"ships": [{"id": "A", "kind": "sloop", "at": [1, 1], "facing": "NE"}]}, "facing"),
        ({"ships": [{"id": "A", "kind": "sloop", "at": ["x", 1], "facing": "N"}]}, "ships[0].at"),
        ({"ruleset": "chess"}, "ruleset"),
        ({"board": {"width": 0, "height": 5}}, "board.width"),
        ({"dice": {"seed": 1, "fixed": [{"ship": "Q", "purpose": "wind", "values": [1]}]}}, "dice.fixed[0].ship"),
    ],
)
def test_invalid_scenarios_exit_2_naming_the_field(tmp_path: Path, change: dict[str, Any], names: str) -> None:
    code, output = run_file(tmp_path, {**EXAMPLE, **change}, "--json")
    assert code == 2, output
    assert names in output


def test_kept_log_is_never_overwritten(tmp_path: Path) -> None:
    kept = tmp_path / "kept.jsonl"
    assert run_file(tmp_path, EXAMPLE, "--log", str(kept))[0] == 0
    before = kept.read_bytes()
    code, output = run_file(tmp_path, EXAMPLE, "--log", str(kept))
    assert code == 3 and "already exists" in output
    assert kept.read_bytes() == before


def test_a_scenario_without_log_writes_no_file_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``--log`` the log lives in memory: no temporary folder is left behind per run."""
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.chdir(tmp_path)
    code, output = run_file(tmp_path, EXAMPLE, "--json")
    assert code == 0, output
    answer = json.loads(output)
    assert answer["log"] is None and answer["events"]
    assert list(scratch.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["tmp", "turn.json"]


def test_the_events_printed_are_the_lines_the_kept_log_holds(tmp_path: Path) -> None:
    kept = tmp_path / "kept.jsonl"
    code, output = run_file(tmp_path, EXAMPLE, "--json", "--log", str(kept))
    assert code == 0, output
    lines = [json.loads(line) for line in kept.read_text().splitlines()]
    assert json.loads(output)["events"] == lines[-len(json.loads(output)["events"]) :]
    code, again = run_file(tmp_path, EXAMPLE, "--json")
    assert json.loads(again)["events"] == json.loads(output)["events"]
