"""``simulate --fleets``: random legal fleets (the default) and fixed fleets from a file."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from mortecouille.core.fleet.catalogue import catalogue_for
from mortecouille.core.game import fold
from mortecouille.events.fleet import FleetSealed, ShipBought
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.cli_helpers import run_cli


def kinds_bought(directory: Path) -> Counter[str]:
    return Counter(
        ship.kind
        for path in sorted(directory.glob("*.jsonl"))
        for fleet in fold(GameLog(path).read()).fleets.values()
        for ship in fleet.ships
    )


def test_random_fleets_by_default_buy_all_eight_kinds_over_twenty_games(tmp_path: Path) -> None:
    """The README's study (20 games) compares every kind: before, each game played the demo's
    four kinds and nothing else."""
    result = run_cli(
        "simulate", "--games", "20", "--seed", "study", "--to", str(tmp_path), "--max-turns", "1"
    )
    assert result.exit_code == 0, result.output
    assert set(kinds_bought(tmp_path)) == set(catalogue_for().ships)


def test_random_fleets_are_legal_within_budget_and_verify(tmp_path: Path) -> None:
    """Bought through the referee's commands (F1-F3): every log verifies, no fleet overspends, and
    a forfeit is only taken when the money left could still buy something (the bots' ship limit)."""
    result = run_cli(
        "simulate", "--games", "4", "--seed", "legal", "--to", str(tmp_path), "--max-turns", "2",
        "--budget", "60000",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    options: Counter[str] = Counter()
    for path in sorted(tmp_path.glob("*.jsonl")):
        log = GameLog(path)
        report = verify_log(log)
        assert report.ok, report.findings
        events = log.read()
        assert sum(isinstance(e, FleetSealed) for e in events) == 2
        for fleet in fold(events).fleets.values():
            assert fleet.sealed and len(fleet.ships) > 0 and fleet.spent <= fleet.budget == 60000
            options.update(o for ship in fleet.ships for o in ship.options)
    assert options  # the money left over goes on options, which the study compares as well


def test_random_fleets_differ_between_games_and_repeat_with_the_seed(tmp_path: Path) -> None:
    for target in ("a", "b"):
        args = (
            "simulate",
            "--games",
            "3",
            "--seed",
            "same",
            "--to",
            str(tmp_path / target),
            "--max-turns",
            "1",
        )
        assert run_cli(*args).exit_code == 0
    fleets = []
    for index in range(3):
        name = f"sim-same-{index}.jsonl"
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        bought = [
            (e.kind, e.options) for e in GameLog(tmp_path / "a" / name).read() if isinstance(e, ShipBought)
        ]
        fleets.append(bought)
    assert len({tuple(f) for f in fleets}) > 1


def test_fixed_fleets_from_a_file_are_bought_as_written(tmp_path: Path) -> None:
    file = tmp_path / "fleets.json"
    file.write_text(
        json.dumps(
            {
                "Ann": [{"kind": "yellow-big", "name": "Hope", "options": ["catapult"]}],
                "Bob": [{"kind": "blue-small", "name": "Eel"}, {"kind": "green-small", "name": "Pike"}],
            }
        )
    )
    result = run_cli(
        "simulate", "--games", "2", "--seed", "f", "--to", str(tmp_path / "s"), "--max-turns", "2",
        "--fleets", str(file),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    for path in sorted((tmp_path / "s").glob("*.jsonl")):
        assert verify_log(GameLog(path)).ok
        state = fold(GameLog(path).read())
        assert state.players == ("Ann", "Bob")
        assert [(s.kind, s.options) for s in state.fleets["Ann"].ships] == [("yellow-big", ("catapult",))]
        assert [s.name for s in state.fleets["Bob"].ships] == ["Eel", "Pike"]


def test_a_bad_fleets_file_is_refused_naming_the_option_and_writes_nothing(tmp_path: Path) -> None:
    file = tmp_path / "fleets.json"
    cases = {
        '{"Ann": [{"kind": "red-small"}], "Bob": []}': "name",  # a field missing
        '{"Ann": [{"kind": "red-small", "name": "A"}]}': "2 players",
        '{"Ann": [{"kind": "galleon", "name": "A"}], "Bob": [{"kind": "red-small", "name": "B"}]}': "galleon",
        '{"Ann": [{"kind": "blue-big", "name": "A"}, {"kind": "blue-big", "name": "B"}], '
        '"Bob": [{"kind": "red-small", "name": "C"}]}': "F3",
    }
    for text, named in cases.items():
        file.write_text(text)
        target = tmp_path / "s"
        result = run_cli(
            "simulate", "--games", "1", "--seed", "x", "--to", str(target), "--fleets", str(file)
        )
        assert result.exit_code == 2, (text, result.output)
        assert named in result.output and "Traceback" not in result.output, (text, result.output)
        assert not list(target.glob("*")) if target.exists() else True


def test_the_demo_fleets_stay_available(tmp_path: Path) -> None:
    result = run_cli(
        "simulate",
        "--games",
        "1",
        "--seed",
        "d",
        "--to",
        str(tmp_path),
        "--max-turns",
        "1",
        "--fleets",
        "demo",
    )
    assert result.exit_code == 0, result.output
    assert kinds_bought(tmp_path) == Counter({"red-small": 4, "blue-small": 2, "green-big": 1, "red-big": 1})
