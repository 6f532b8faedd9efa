"""Table mistakes that cannot be undone: each is refused with exit 2,
its rule ID and its rescue named, and leaves every log byte for byte unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import ok, refused, run, set_up_harbour
from tests.forgery import log_bodies


def _duel(games: Path, *, seal_bart: bool = True, place_kraken: bool = True) -> None:
    """The README's duel, optionally with Bart's fleet unsealed (nothing placed then: F3) or Kraken
    not placed."""
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10",
       "--seed", "s1", "--weak-seed")  # fmt: skip
    ok(games, "buy", "g", "Anne", "Rouge small", "Hope")
    ok(games, "seal", "g", "Anne", "--forfeit")
    ok(games, "buy", "g", "Bart", "yellow-big", "Kraken")
    if not seal_bart:
        return
    ok(games, "seal", "g", "Bart", "--forfeit")
    ok(games, "place", "g", "Hope", "C3")
    if place_kraken:
        ok(games, "place", "g", "Kraken", "E6", "--facing", "S")


# --- item 1: the first resolve needs every fleet sealed and every bought ship placed ---------


@pytest.mark.parametrize("flags", [(), ("--partial",), ("--idle-turn",), ("--partial", "--idle-turn")])
def test_first_resolve_is_refused_while_a_fleet_is_unsealed_even_with_partial(
    games: Path, flags: tuple[str, ...]
) -> None:
    _duel(games, seal_bart=False)
    output = refused(games, "resolve", "g", *flags)
    assert "[F3]" in output and "Bart" in output and "seal g Bart" in output


@pytest.mark.parametrize("flags", [(), ("--partial",), ("--idle-turn",)])
def test_first_resolve_is_refused_while_a_bought_ship_is_unplaced_naming_ship_and_rescue(
    games: Path, flags: tuple[str, ...]
) -> None:
    _duel(games, place_kraken=False)
    ok(games, "order", "g", "Hope", "advance")
    output = refused(games, "resolve", "g", *flags)
    assert "[F3]" in output and "Kraken (Bart)" in output
    assert "--rule F3" in output
    assert "place g 'Kraken' SQUARE" in output
    assert "--adjust 'Kraken' position=SQUARE" in output and "sunk=true" in output


def test_a_ruling_that_withdraws_the_unplaced_ship_lets_the_game_start(games: Path) -> None:
    _duel(games, place_kraken=False)
    withdraw = ("--adjust", "Kraken", "sunk=true")
    ok(games, "ruling", "g", "--rule", "F3", "--text", "no room for Kraken", *withdraw)
    ok(games, "order", "g", "Hope", "advance")
    ok(games, "resolve", "g")
    assert log_bodies(games / "g.jsonl")[-1]["type"] in ("turn-ended", "game-ended")


def test_a_ruling_that_places_the_ship_lets_the_game_start(games: Path) -> None:
    _duel(games, place_kraken=False)
    ok(games, "ruling", "g", "--rule", "F3", "--text", "set by hand", "--adjust", "Kraken", "position=E6")
    ok(games, "order", "g", "Hope", "advance")
    ok(games, "resolve", "g", "--partial")
    assert run(games, "verify", "g").exit_code == 0


# --- item 2: a resolve in which no ship acts needs --idle-turn --------------------------------


def test_repeated_resolve_partial_is_refused_without_idle_turn(games: Path) -> None:
    _duel(games)
    ok(games, "order", "g", "Hope", "advance")
    ok(games, "resolve", "g", "--partial")
    output = refused(games, "resolve", "g", "--partial")  # up-arrow, Enter
    assert "[T1]" in output and "--idle-turn" in output
    ok(games, "resolve", "g", "--idle-turn")
    assert run(games, "verify", "g").exit_code == 0


def test_blockade_resolve_without_any_tokens_is_refused_without_idle_turn(games: Path) -> None:
    set_up_harbour(games)
    output = refused(games, "resolve", "b", "--partial")
    assert "[P1]" in output and "--idle-turn" in output
    ok(games, "resolve", "b", "--idle-turn")
    assert run(games, "verify", "b").exit_code == 0


def test_tokens_again_for_a_ship_are_refused_unless_replace(games: Path) -> None:
    set_up_harbour(games)
    ok(games, "tokens", "b", "Sloopy", "F", "F", "L", "-")
    output = refused(games, "tokens", "b", "Sloopy", "L")  # a typo naming the wrong ship
    assert "[P1]" in output and "--replace" in output and "F,F,L,-" in output
    ok(games, "tokens", "b", "Sloopy", "L", "--replace")
    assert log_bodies(games / "b.jsonl")[-1]["tokens"] == ["L"]
