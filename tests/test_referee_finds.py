"""What a referee looks for (issue 13.5, 13.6): the global options after the subcommand, one
spelling of each hint, the games list, the price list, --version, helps that show the grammar,
whose orders are missing, ship names as ``place`` takes them, and shell completion."""

from __future__ import annotations

import re
from pathlib import Path

from mortecouille.cli.main import cli
from mortecouille.core.hints import PARTIAL_HINT, REPLACE_HINT
from tests.cli_helpers import run, run_cli


def set_up(games: Path, game: str = "g") -> Path:
    steps = [
        ["new", game, "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10"],
        ["buy", game, "Anne", "Rouge small", "Hope"],
        ["seal", game, "Anne", "--forfeit"],
        ["buy", game, "Bart", "yellow-big", "Kraken", "--option", "catapult"],
        ["seal", game, "Bart", "--forfeit"],
        ["place", game, "Hope", "C3", "--facing", "N"],
        ["place", game, "Kraken", "E6", "--facing", "S"],
    ]
    for step in steps:
        result = run(games, *step)
        assert result.exit_code == 0, (step, result.output)
    return games


def blockade(games: Path) -> None:
    for step in (
        ["new", "b", "--ruleset", "blockade", "--players", "Anne,Bart"],
        ["place", "b", "Sloopy", "C3", "--kind", "sloop", "--owner", "Anne"],
        ["place", "b", "Frig", "F6", "--kind", "war-frigate", "--owner", "Bart"],
    ):
        result = run(games, *step)
        assert result.exit_code == 0, (step, result.output)


# --- 13.6: the global options after the subcommand ------------------------------------------------


def test_games_dir_after_the_subcommand_means_the_same_as_before(tmp_path: Path) -> None:
    games = tmp_path / "elsewhere"
    made = run_cli("new", "g", "--players", "Anne,Bart", "--games-dir", str(games))
    assert made.exit_code == 0, made.output
    assert (games / "g.jsonl").exists()
    after = run_cli("state", "g", "--games-dir", str(games))
    before = run_cli("--games-dir", str(games), "state", "g")
    assert after.exit_code == 0, after.output
    assert after.output == before.output


def test_verbose_and_log_json_are_accepted_after_the_subcommand(games: Path) -> None:
    set_up(games)
    result = run(games, "state", "g", "-v", "--log-json")
    assert result.exit_code == 0, result.output
    assert run(games, "order", "g", "Hope", "advance", "-vv").exit_code == 0


def test_every_command_takes_the_global_options(games: Path) -> None:
    for name, command in cli.commands.items():  # type: ignore[attr-defined]
        opts = {opt for param in command.params for opt in param.opts}
        assert {"--games-dir", "-v", "--log-json"} <= opts, name


# --- 13.6: one spelling of each hint ---------------------------------------------------------------


def test_a_turn_with_missing_orders_gives_the_same_partial_hint_in_both_rulesets(games: Path) -> None:
    set_up(games)
    blockade(games)
    mortecouille = run(games, "resolve", "g")
    blockade_ = run(games, "resolve", "b")
    assert mortecouille.exit_code == blockade_.exit_code == 2
    assert PARTIAL_HINT in mortecouille.output and PARTIAL_HINT in blockade_.output
    assert "--partial" in PARTIAL_HINT


def test_orders_given_twice_name_the_replace_option(games: Path) -> None:
    set_up(games)
    assert run(games, "order", "g", "Hope", "advance").exit_code == 0
    again = run(games, "order", "g", "Hope", "idle")
    assert again.exit_code == 2 and REPLACE_HINT in again.output
    assert "--replace" in REPLACE_HINT


def test_no_message_spells_a_hint_of_its_own() -> None:
    # Every refusal that points at --partial or --replace takes the hint from core/hints.py.
    root = Path(__file__).resolve().parent.parent
    spelt = re.compile(r"resolve with (--)?partial|replace them explicitly")
    offenders = [
        str(path.relative_to(root))
        for folder in ("core", "app", "cli", "replays", "bots")
        for path in (root / folder).rglob("*.py")
        if spelt.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
