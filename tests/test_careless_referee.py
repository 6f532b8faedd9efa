"""What a tired referee types at the table: names in the wrong case, a ship not yet placed.

Each name the CLI reads is matched the way ``place`` and ``buy`` match it (case and spacing
aside) wherever the game has exactly one such name, and the log records the name as the game
spells it; what it cannot take is refused naming its field or rule, exit 2, nothing written.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli_helpers import ok, refused
from tests.forgery import log_bodies


def _duel(games: Path) -> None:
    """Hope (Anne) on E3 facing north, Kraken (Bart) on E6 facing south: each on the other's bow line."""
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10",
       "--seed", "s1", "--weak-seed")  # fmt: skip
    ok(games, "buy", "g", "Anne", "blue-big", "Black Pearl")
    ok(games, "seal", "g", "Anne", "--forfeit")
    ok(games, "buy", "g", "Bart", "yellow-big", "Kraken", "--option", "catapult")
    ok(games, "seal", "g", "Bart", "--forfeit")
    ok(games, "place", "g", "Black Pearl", "E3")
    ok(games, "place", "g", "Kraken", "E6", "--facing", "S")


def test_an_orders_target_is_matched_as_its_ship_is_case_and_spacing_aside(games: Path) -> None:
    _duel(games)
    ok(games, "order", "g", "kraken", "attack", "bow", "black   PEARL", "+", "catapult", "BLACK pearl")
    given = log_bodies(games / "g.jsonl")[-1]
    assert given["type"] == "order-given"
    assert [action.get("target") for action in given["actions"]] == ["Black Pearl", "Black Pearl"]


def test_an_orders_target_naming_no_ship_is_still_refused_naming_the_field(games: Path) -> None:
    _duel(games)
    output = refused(games, "order", "g", "Kraken", "attack", "bow", "Pearl")
    assert "ACTION[1].target" in output and "'Pearl'" in output


def test_orders_for_a_ship_not_placed_yet_are_refused_saying_to_place_it_first(games: Path) -> None:
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "10000", "--seed", "s1", "--weak-seed")
    ok(games, "buy", "g", "Anne", "red-small", "Hope")
    output = refused(games, "order", "g", "Hope", "advance")
    assert "[F3]" in output and "not placed" in output and "place g 'Hope' SQUARE" in output
    assert "sunk" not in output  # it was never in the game to sink


def test_end_takes_the_winner_in_any_case_and_logs_the_players_name(games: Path) -> None:
    ok(games, "new", "g", "--players", "Zoé,Bart", "--seed", "s1", "--weak-seed")
    assert "winner Zoé" in ok(games, "end", "g", "--winner", "ZOÉ")
    assert log_bodies(games / "g.jsonl")[-1]["winner"] == "Zoé"


def test_end_with_a_winner_who_is_no_player_is_refused_listing_the_players(games: Path) -> None:
    ok(games, "new", "g", "--players", "Zoé,Bart", "--seed", "s1", "--weak-seed")
    output = refused(games, "end", "g", "--winner", "Zoe")
    assert "--winner" in output and "'Zoe'" in output and "Zoé, Bart" in output


def test_a_ruling_takes_its_rule_id_and_ships_in_any_case_and_logs_them_as_spelled(games: Path) -> None:
    _duel(games)
    ok(
        games,
        "ruling",
        "g",
        "--rule",
        "s1",
        "--text",
        "the shot was blocked",
        "--adjust",
        "black  pearl",
        "damage=+2",
    )
    ruling = log_bodies(games / "g.jsonl")[-1]
    assert ruling["rule"] == "S1"
    assert [adjustment["ship"] for adjustment in ruling["adjustments"]] == ["Black Pearl"]


def test_a_ruling_on_an_unknown_rule_is_refused_naming_the_rules_file(games: Path) -> None:
    _duel(games)
    output = refused(games, "ruling", "g", "--rule", "S99", "--text", "no such rule")
    assert "--rule" in output and "'S99'" in output and "RULES.md" in output


def test_explain_keeps_the_lines_of_a_ship_named_in_any_case(games: Path) -> None:
    _duel(games)
    ok(games, "order", "g", "Kraken", "attack", "bow", "Black Pearl")
    ok(games, "resolve", "g", "--partial")
    story = ok(games, "explain", "g", "--turn", "1", "--ship", "kraken")
    assert story.startswith("g, turn 1, Kraken only") and "Kraken fires bow" in story


def test_a_name_with_a_control_character_is_refused_showing_it_escaped_once(games: Path) -> None:
    output = refused(games, "new", "g", "--players", "Anne,Bart\x1b[31m")
    assert "'Bart\\x1b[31m': control character \\x1b at position 4" in output
    assert "\\\\x1b" not in output  # not escaped twice (a repr of the escaped name)


def test_table_dice_with_a_value_left_out_between_commas_are_refused_not_shifted(games: Path) -> None:
    from tests.test_table_dice import ready

    ready(games)
    # "3,,5" once meant 3,5: the second die took the value meant for the third, and so on
    output = refused(games, "resolve", "g", "--dice", "3,,5,6", "--yes")
    assert "--dice" in output and "'3,,5,6'" in output and "value 2 is missing" in output


def test_seats_reissue_takes_a_players_name_or_referee_in_any_case(games: Path) -> None:
    ok(games, "new", "g", "--players", "Anne,Bart", "--seed", "s1", "--weak-seed")
    assert "  Anne " in ok(games, "seats", "g", "--reissue", "anne")
    assert "  referee " in ok(games, "seats", "g", "--reissue", "Referee")
    assert "  Bart " in ok(games, "seats", "g", "--reissue", "ALL")


def test_seats_reissue_for_nobody_is_refused_and_changes_no_link(games: Path) -> None:
    ok(games, "new", "g", "--players", "Anne,Bart", "--seed", "s1", "--weak-seed")
    output = refused(games, "seats", "g", "--reissue", "Zed")
    assert "PLAYER" in output and "'Zed'" in output


def test_a_blockade_ship_takes_its_kind_owner_and_name_in_any_case(games: Path) -> None:
    ok(games, "new", "b", "--ruleset", "blockade", "--players", "Anne,Bart", "--board", "8x8")
    ok(games, "place", "b", "Sloopy", "C2", "--kind", "Sloop", "--owner", "anne")
    ok(games, "tokens", "b", "sloopy", "f", "f", "l", "-")
    placed, given = log_bodies(games / "b.jsonl")[-2:]
    assert (placed["kind"], placed["owner"]) == ("sloop", "Anne")
    assert (given["ship"], given["tokens"]) == ("Sloopy", ["F", "F", "L", None])


def test_a_blockade_ship_of_no_kind_or_nobody_is_still_refused_naming_the_option(games: Path) -> None:
    ok(games, "new", "b", "--ruleset", "blockade", "--players", "Anne,Bart", "--board", "8x8")
    assert "--kind" in refused(games, "place", "b", "Sloopy", "C2", "--kind", "sloop-of-war", "--owner", "Anne")
    assert "--owner" in refused(games, "place", "b", "Sloopy", "C2", "--kind", "sloop", "--owner", "Zed")
