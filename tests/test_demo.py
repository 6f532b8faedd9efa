"""``mortecouille demo``: its closing hint runs as printed, and ``demo --seed S`` plays the same game
whatever name the game's file gets."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from mortecouille.app.botgame import play_demo
from mortecouille.events.game import DieRolled
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.cli_helpers import run, run_cli

pytestmark = pytest.mark.slow


def dice_and_outcome(
    games: Path, seed: str, name: str | None
) -> tuple[list[tuple[object, ...]], str | None, int]:
    """The dice a demo rolled (identity and value), its winner and its last turn."""
    demo = play_demo(games, seed, name, max_turns=4)
    rolls = [
        (e.turn, e.phase, e.ship, e.purpose, e.index, e.value)
        for e in demo.log.read()
        if isinstance(e, DieRolled)
    ]
    return rolls, demo.state.winner, demo.state.turn


def rolls(path: Path) -> list[tuple[object, ...]]:
    return [
        (e.turn, e.purpose, e.ship, e.index, e.value)
        for e in GameLog(path).read()
        if isinstance(e, DieRolled)
    ]


def test_demo_seed_plays_the_same_game_whatever_the_files_name(tmp_path: Path) -> None:
    first = dice_and_outcome(tmp_path / "here", "table-7", None)  # demo-table-7
    again = dice_and_outcome(tmp_path / "here", "table-7", None)  # demo-table-7-2: the name is taken
    elsewhere = dice_and_outcome(tmp_path / "there", "table-7", "friday")
    assert first[0] and first == again == elsewhere


def test_each_demo_game_still_verifies_under_its_own_file_name(tmp_path: Path) -> None:
    for name in (None, None, "friday"):
        demo = play_demo(tmp_path, "table-7", name, max_turns=2)
        assert verify_log(demo.log).ok


def test_a_demo_file_name_is_still_checked_like_any_game_name(tmp_path: Path) -> None:
    result = run(tmp_path / "games", "demo", "--seed", "s 1", "--max-turns", "1")
    assert result.exit_code == 2 and "GAME" in result.output
    assert not (tmp_path / "games").exists() or list((tmp_path / "games").iterdir()) == []


@pytest.mark.parametrize("max_turns", ["60", "3"])
def test_the_closing_hint_runs_as_printed(
    max_turns: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    games = Path("table games")  # relative, with a space: the hint must quote it
    shown = run(games, "demo", "--seed", "hint", "--max-turns", max_turns)
    assert shown.exit_code == 0, shown.output
    commands = [
        line.split(": ", 1)[-1].strip() for line in shown.output.splitlines() if "mortecouille " in line
    ]
    assert len(commands) == 4, shown.output
    assert "|" not in "".join(commands)  # a pipe into a command that reads no input did nothing
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "mortecouille"
        result = run_cli(*words[1:])
        assert result.exit_code == 0, f"{command}\n{result.output}"
        assert result.output.strip()
    assert rolls(games / "demo-hint-2.jsonl") == rolls(games / "demo-hint.jsonl")  # "play it again" did
    assert (tmp_path / "demo-hint.html").exists()
