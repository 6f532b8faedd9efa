"""What a referee looks for: the global options after the subcommand, one
spelling of each hint, the games list, the price list, --version, helps that show the grammar,
whose orders are missing, ship names as ``place`` takes them, and shell completion."""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

from click.testing import CliRunner

from mortecouille.cli.main import cli
from mortecouille.core.fleet.catalogue import catalogue_for
from mortecouille.core.hints import PARTIAL_HINT, REPLACE_HINT
from tests.cli_helpers import run, run_cli, tree_digest


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
    # one ship of each game has its orders, the other not: a partial turn, not an idle one
    assert run(games, "order", "g", "Hope", "advance").exit_code == 0
    assert run(games, "tokens", "b", "Sloopy", "F", "-", "-", "-").exit_code == 0
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
        for folder in ("core", "app", "web", "cli", "replays", "bots")
        for path in (root / folder).rglob("*.py")
        if spelt.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


# --- 13.5: what a referee looks for ----------------------------------------------------------------


def test_games_lists_each_game_with_ruleset_turn_status_and_missing_orders(games: Path) -> None:
    set_up(games)
    blockade(games)
    assert run(games, "order", "g", "Hope", "advance").exit_code == 0
    result = run(games, "games")
    assert result.exit_code == 0, result.output
    assert "b: blockade, turn 1, playing; orders missing: Anne (Sloopy); Bart (Frig)" in result.output
    assert "g: mortecouille, turn 1, playing; orders missing: Bart (Kraken)" in result.output
    listed = json.loads(run(games, "games", "--json").output)["games"]
    assert [(g["name"], g["ruleset"], g["turn"], g["status"], g["waiting"]) for g in listed] == [
        ("b", "blockade", 1, "playing", {"Anne": ["Sloopy"], "Bart": ["Frig"]}),
        ("g", "mortecouille", 1, "playing", {"Bart": ["Kraken"]}),
    ]


def test_games_shows_an_ended_game_with_its_winner_and_waits_for_nobody(games: Path) -> None:
    set_up(games)
    assert run(games, "end", "g", "--winner", "Anne").exit_code == 0
    assert "g: mortecouille, before turn 1 - game over: referee, Anne wins\n" in run(games, "games").output


def test_games_lists_an_unreadable_log_by_name_exits_4_and_writes_nothing(games: Path) -> None:
    set_up(games)
    (games / "torn.jsonl").write_bytes(b"not json\n")
    before = tree_digest(games)
    result = run(games, "games")
    assert result.exit_code == 4
    assert "torn: unreadable" in result.output and "g: mortecouille" in result.output
    assert tree_digest(games) == before


def test_version_comes_from_the_package_metadata() -> None:
    result = run_cli("--version")
    assert result.exit_code == 0
    assert result.output.strip() == f"mortecouille {metadata.version('mortecouille')}"


def test_prices_lists_every_ship_and_option_of_the_catalogue_with_both_names() -> None:
    catalogue = catalogue_for()
    text = run_cli("prices")
    assert text.exit_code == 0, text.output
    for kind in catalogue.ships.values():
        assert f"{kind.french_name} / {kind.english_name}, {kind.ship_class}, {kind.price}" in text.output
    for option in catalogue.options.values():
        assert option.id in text.output and option.english_name in text.output
    body = json.loads(run_cli("prices", "--json").output)
    assert {s["id"]: s["price"] for s in body["ships"]} == {k.id: k.price for k in catalogue.ships.values()}
    assert {o["id"]: o["price"] for o in body["options"]} == {
        o.id: o.price for o in catalogue.options.values()
    }
    assert body["rules_version"] == catalogue.version


def test_order_help_shows_the_action_grammar() -> None:
    text = run_cli("order", "--help").output
    for form in ("advance", "idle", "fireship", "maneuver 1/8|1/4|1/2 left|right [--sailing]"):
        assert f"  {form}\n" in text
    assert "attack port|starboard|bow|stern TARGET [--burst]" in text and "catapult TARGET" in text


def test_buy_help_lists_every_kind_and_ship_option_from_the_catalogue() -> None:
    text = run_cli("buy", "--help").output
    catalogue = catalogue_for()
    for kind in catalogue.ships.values():
        assert f"{kind.id} ({kind.french_name}): {kind.price}" in text
    for option in catalogue.options.values():
        if option.scope == "ship":
            assert f"{option.id} ({option.french_name}):" in text


def test_text_state_shows_whose_orders_are_still_missing(games: Path) -> None:
    set_up(games)
    assert "orders missing: Anne (Hope), Bart (Kraken)" in run(games, "state", "g").output
    assert run(games, "order", "g", "Hope", "advance").exit_code == 0
    after = run(games, "state", "g").output
    assert "orders missing: Bart (Kraken)" in after and "Anne (Hope)" not in after


def test_order_takes_a_ship_name_in_any_case_and_suggests_a_near_miss(games: Path) -> None:
    set_up(games)
    assert run(games, "order", "g", "hOPE", "advance").exit_code == 0
    given = [json.loads(line) for line in (games / "g.jsonl").read_text().splitlines()]
    assert any(e.get("type") == "order-given" and e.get("ship") == "Hope" for e in given)
    before = tree_digest(games)
    missed = run(games, "order", "g", "Krakn", "idle")
    assert missed.exit_code == 2 and "did you mean 'Kraken'?" in missed.output
    assert tree_digest(games) == before


def complete(args: str, env: dict[str, str] | None = None) -> list[str]:
    """What ``mortecouille`` offers for the last word of ``args`` in bash."""
    words = f"mortecouille {args}"
    result = CliRunner().invoke(
        cli,
        [],
        prog_name="mortecouille",
        env={
            "_MORTECOUILLE_COMPLETE": "bash_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split(" ")) - 1),
            **(env or {}),
        },
    )
    assert result.exit_code == 0, result.output
    return [line.split(",", 1)[1] for line in result.output.splitlines()]


def test_shell_completion_offers_game_names_and_ship_names(games: Path) -> None:
    set_up(games)
    set_up(games, "other")
    before = tree_digest(games)
    assert complete(f"--games-dir {games} state ") == ["g", "other"]
    assert complete(f"--games-dir {games} order o") == ["other"]
    assert complete(f"--games-dir {games} order g ") == ["Hope", "Kraken"]
    assert complete(f"--games-dir {games} order g k") == ["Kraken"]
    assert complete("state ", {"MORTECOUILLE_GAMES": str(games)}) == ["g", "other"]
    assert complete(f"--games-dir {games} buy g Anne yellow-") == ["yellow-small", "yellow-big"]
    assert tree_digest(games) == before


def test_shell_completion_is_documented_in_the_readme() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    assert "_MORTECOUILLE_COMPLETE=bash_source mortecouille" in readme
    for command in ("mortecouille games", "mortecouille prices", "mortecouille --version"):
        assert command in readme
