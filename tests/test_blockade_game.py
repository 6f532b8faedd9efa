"""A blockade game from the command line (P1-P3): place, tokens, resolve, board, verify."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from tests.cli_helpers import run, set_up_harbour
from tests.forgery import forge, log_bodies


@pytest.fixture
def game(games: Path) -> Path:
    return set_up_harbour(games, "b")


def lines(games: Path) -> list[dict[str, object]]:
    return log_bodies(games / "b.jsonl")


def test_P1_resolve_waits_for_every_ship_unless_partial(game: Path) -> None:
    assert run(game, "tokens", "b", "Sloopy", "F").exit_code == 0
    before = (game / "b.jsonl").read_bytes()
    refused = run(game, "resolve", "b")
    assert refused.exit_code == 2 and "[P1]" in refused.output and "Frig" in refused.output
    assert (game / "b.jsonl").read_bytes() == before
    assert run(game, "resolve", "b", "--partial").exit_code == 0


def test_P1_full_turn_of_four_rounds_from_the_cli(game: Path) -> None:
    assert run(game, "tokens", "b", "Sloopy", "F", "F", "L", "-").exit_code == 0
    assert run(game, "tokens", "b", "Frig", "F", "-", "R", "F").exit_code == 0
    result = run(game, "resolve", "b")
    assert result.exit_code == 0, result.output
    events = lines(game)
    collisions = [e for e in events if e["type"] == "collision"]
    # round 1: both claim C3, the larger frigate wins (M1e); round 2: the wind pushes the sloop
    # into the frigate standing on D3, a smaller pusher moves nobody (M3).
    assert [(c["round"], c["rule"]) for c in collisions] == [(1, "M1e"), (2, "M3")]
    state = json.loads(run(game, "state", "b", "--json").output)
    assert state["ships"]["Frig"]["at"] == [1, 1] and state["ships"]["Frig"]["facing"] == "W"
    assert state["ships"]["Sloopy"]["at"] == [1, 3] and state["ships"]["Sloopy"]["damage"] == 6
    assert state["turn"] == 2 and state["tokens"] == {}
    board = run(game, "board", "b", "--no-color").output
    assert "B←" in board and "###" in board and "@@@" in board and "~→~" in board
    before = run(game, "board", "b", "--turn", "0", "--no-color").output
    assert "Frig (Bart): war-frigate at C4 facing S" in before
    assert run(game, "verify", "b").exit_code == 0


def test_P3_a_ship_sinks_at_the_end_of_the_round_and_leaves_the_board(game: Path) -> None:
    assert run(game, "place", "b", "Tiny", "A1", "--kind", "sloop").exit_code == 0
    assert run(game, "place", "b", "Wall", "A2", "--kind", "war-frigate", "--facing", "E").exit_code == 0
    # each round the sloop bumps the frigate (nobody moves) and takes the frigate's ram, 3 (P2);
    # after the fourth bump its damage 12 reaches its maximum 10 (P3)
    assert run(game, "tokens", "b", "Tiny", "F", "F", "F", "F").exit_code == 0
    assert run(game, "resolve", "b", "--partial").exit_code == 0
    state = json.loads(run(game, "state", "b", "--json").output)
    tiny = state["ships"]["Tiny"]
    assert tiny["damage"] == 12 and tiny["sunk"] and tiny["at"] == [0, 0]
    sunk = [e for e in lines(game) if e["type"] == "ship-sunk"]
    assert [(e["ship"], e["round"], e["rules"]) for e in sunk] == [("Tiny", 4, ["P3"])]
    refused = run(game, "tokens", "b", "Tiny", "F")
    assert refused.exit_code == 2 and "P3" in refused.output
    assert run(game, "place", "b", "Other", "A1", "--kind", "sloop").exit_code == 0  # a wreck blocks nothing


def test_verify_rederives_outcomes_and_catches_a_rechained_edit(game: Path) -> None:
    run(game, "tokens", "b", "Sloopy", "F", "F", "L", "-")
    run(game, "tokens", "b", "Frig", "F", "-", "R", "F")
    run(game, "resolve", "b")
    damage = next(e for e in lines(game) if e["type"] == "damage" and e["ship"] == "Sloopy")
    forge(game / "b.jsonl", {int(msgspec.convert(damage["seq"], int)): {"amount": 0.5}})
    result = run(game, "verify", "b")
    assert result.exit_code == 4
    assert "ok   chain" in result.output and "FAIL rederive" in result.output
    assert f"seq {damage['seq']}" in result.output


def test_B4_an_edge_collision_is_printed_with_the_off_board_square(game: Path) -> None:
    assert run(game, "place", "b", "Edge", "H8", "--kind", "cutter", "--facing", "E").exit_code == 0
    assert run(game, "tokens", "b", "Edge", "F").exit_code == 0
    result = run(game, "resolve", "b", "--partial")
    assert result.exit_code == 0, result.output
    assert "rock=I8" in result.output and "M6" in result.output  # the claimed square past the edge
    assert run(game, "log", "b").exit_code == 0


def test_B4_a_collision_past_the_south_west_edge_names_its_coordinates(game: Path) -> None:
    assert run(game, "place", "b", "Edge", "A1", "--kind", "cutter", "--facing", "S").exit_code == 0
    assert run(game, "tokens", "b", "Edge", "F").exit_code == 0
    result = run(game, "resolve", "b", "--partial")
    assert result.exit_code == 0, result.output
    assert "rock=(0,-1)" in result.output
