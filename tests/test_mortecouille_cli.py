"""A mortecouille game from the command line: buy, seal, place, order, resolve, board, sheet (T1, T2, D1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run, tree_digest
from tests.forgery import log_bodies


def set_up(games: Path, dice: str = "seeded") -> Path:
    options = ["--board", "10x10", "--dice", dice, *(["--seed", "s1", "--weak-seed"] if dice == "seeded" else [])]
    steps = [
        ["new", "g", "--players", "Anne,Bart", "--budget", "100000", *options],
        ["buy", "g", "Anne", "Rouge small", "Hope", "--option", "Super boulet de canon"],
        ["buy", "g", "Anne", "blue-big", "Black Pearl", "--option", "extra-crew"],
        ["seal", "g", "Anne", "--forfeit"],
        ["buy", "g", "Bart", "yellow-big", "Kraken", "--option", "catapult"],
        ["seal", "g", "Bart", "--forfeit"],
        ["place", "g", "Hope", "C3", "--facing", "N"],
        ["place", "g", "Black Pearl", "E3", "--facing", "E"],
        ["place", "g", "Kraken", "E6", "--facing", "S"],
    ]
    for step in steps:
        result = run(games, *step)
        assert result.exit_code == 0, (step, result.output)
    return games


def events(games: Path) -> list[dict[str, object]]:
    return log_bodies(games / "g.jsonl")


def test_T1_orders_from_the_cli_and_a_resolved_turn(games: Path) -> None:
    set_up(games)
    assert (
        run(
            games, "order", "g", "Black Pearl", "attack", "port", "Kraken", "+", "maneuver", "1/8", "left"
        ).exit_code
        == 0
    )
    assert run(games, "order", "g", "Hope", "advance").exit_code == 0
    assert (
        run(games, "order", "g", "Kraken", "attack", "bow", "Black Pearl", "+", "catapult", "Hope").exit_code
        == 0
    )
    result = run(games, "resolve", "g")
    assert result.exit_code == 0, result.output
    types = [e["type"] for e in events(games)]
    assert types.count("shot-fired") == 3 and types[-1] == "turn-ended"
    assert "Kraken (Bart): yellow-big at E6" in run(games, "board", "g", "--no-color").output
    assert run(games, "verify", "g").exit_code == 0


@pytest.mark.parametrize(
    ("args", "cited"),
    [
        (["Hope", "advance", "+", "attack", "port", "Kraken"], "[T1]"),
        (["Black Pearl", "advance", "+", "maneuver", "1/4", "left"], "[T1]"),
        (["Black Pearl", "idle", "+", "advance"], "[T1]"),
        (["Kraken", "attack", "bow", "Black Pearl", "--burst"], "[S4]"),
        (["Kraken", "attack", "port", "Black Pearl"], "[S1]"),
        (["Kraken", "attack", "bow", "Kraken"], "[S1]"),
        (["Hope", "attack", "port", "Nobody"], "target"),
        (["Hope", "fly"], "ACTION[1]"),
        (["Hope", "maneuver", "1/4"], "ACTION[1]"),
        (["Hope", "advance", "--burst"], "ACTION[1]"),
        (["Nobody", "advance"], "Nobody"),
    ],
)
def test_refused_orders_exit_2_cite_the_rule_and_change_nothing(
    games: Path, args: list[str], cited: str
) -> None:
    set_up(games)
    before = tree_digest(games)
    result = run(games, "order", "g", *args)
    assert result.exit_code == 2, result.output
    assert cited in result.output
    assert tree_digest(games) == before


def test_T1_an_order_is_replaced_only_when_asked(games: Path) -> None:
    set_up(games)
    assert run(games, "order", "g", "Hope", "advance").exit_code == 0
    again = run(games, "order", "g", "Hope", "idle")
    assert again.exit_code == 2 and "replace" in again.output
    assert run(games, "order", "g", "Hope", "idle", "--replace").exit_code == 0
    given = [e for e in events(games) if e["type"] == "order-given" and e["ship"] == "Hope"]
    assert [g["actions"] for g in given] == [[{"order": "advance"}], [{"order": "idle"}]]


def test_D1_table_dice_are_taken_from_dice_and_missing_ones_refused(games: Path) -> None:
    set_up(games, dice="table")
    for ship in ("Hope", "Black Pearl", "Kraken"):
        assert run(games, "order", "g", ship, "idle").exit_code == 0
    before = tree_digest(games)
    short = run(games, "resolve", "g", "--dice", "3,4", "--no-prompt")
    assert short.exit_code == 2 and "no value given" in short.output and "wind" in short.output
    assert tree_digest(games) == before
    bad = run(games, "resolve", "g", "--dice", "3,4,9", "--no-prompt")
    assert bad.exit_code == 2 and "1 to 6" in bad.output
    assert tree_digest(games) == before
    done = run(games, "resolve", "g", "--dice", "3,4,5", "--no-prompt", "--yes")
    assert done.exit_code == 0, done.output
    winds = [e for e in events(games) if e["type"] == "die-rolled"]
    assert [(e["ship"], e["value"], e["source"]) for e in winds] == [
        ("Black Pearl", 3, "table"),
        ("Hope", 4, "table"),
        ("Kraken", 5, "table"),
    ]
    assert run(games, "verify", "g").exit_code == 0


def test_D1_table_dice_prompt_says_what_each_die_is_for(games: Path) -> None:
    set_up(games, dice="table")
    for ship in ("Hope", "Black Pearl", "Kraken"):
        assert run(games, "order", "g", ship, "idle").exit_code == 0
    result = run(games, "resolve", "g", "--prompt", input="9\n2\n6\n1\ny\n")
    assert result.exit_code == 0, result.output
    assert "Black Pearl" in result.output and "wind" in result.output and "1d6" in result.output
    assert "9 is not in the range 1<=x<=6" in result.output  # a bad value is asked again
    values = [e["value"] for e in events(games) if e["type"] == "die-rolled"]
    assert values == [2, 6, 1]
