"""Messages speak the table's language."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import msgspec
import pytest

from mortecouille.cli.board_commands import prompt_for_die
from mortecouille.core.dice import RollIdentity
from mortecouille.core.errors import RuleViolation
from mortecouille.core.mortecouille.orders import order_text
from mortecouille.core.narration import position_caption
from mortecouille.core.state import GameState
from mortecouille.events.blockade import TokensGiven
from mortecouille.events.orders import Advance, Attack, CatapultShot, Maneuver
from mortecouille.replays.reading.describe import describe_event, describe_state
from tests.cli_helpers import run, tree_digest
from tests.test_mortecouille_turn import game, order, ship


def test_tokens_given_shows_an_empty_round_as_a_dash_not_none() -> None:
    event = TokensGiven(seq=3, prev="0" * 64, hash="0" * 64, ship="Hope", tokens=("F", "F", "L", None))
    line = describe_event(event)
    assert "tokens=F,F,L,-" in line
    assert "None" not in line


def test_orders_read_as_the_referee_types_them() -> None:
    assert order_text(Attack(position="port", target="Kraken")) == "attack port Kraken"
    assert order_text(Attack(position="bow", target="Kraken", mode="burst")) == "attack bow Kraken --burst"
    assert order_text(Maneuver(turn="1/4", side="left", sailing=True)) == "maneuver 1/4 left --sailing"
    assert order_text(CatapultShot(target="Kraken")) == "catapult Kraken"
    assert order_text(Advance()) == "advance"


def test_dice_prompt_names_the_die_once(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def fake_prompt(text: str, **_: Any) -> int:
        asked.append(text)
        return 4

    monkeypatch.setattr(click, "prompt", fake_prompt)
    identity = RollIdentity(game="g", turn=1, phase="wind", ship="Hope2", purpose="wind", index=0)
    assert prompt_for_die(identity, "Hope2, wind, 1d6") == 4
    assert asked == ["Hope2, wind, 1d6"]


def test_a_ship_without_a_catapult_is_told_it_has_none() -> None:
    state = game(ship("A", "blue-big", (5, 5)), ship("B", "red-small", (7, 5), owner="Bart"))
    with pytest.raises(RuleViolation) as caught:
        order(state, "A", CatapultShot(target="B"))
    assert caught.value.rule == "K"
    assert "A has no catapult" in str(caught.value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--rock", "Z99"], "--rock Z99: Z99 is off the 10x10 board (B4)"),
        (["--rock", "C5", "--rock", "C5"], "--rock C5: C5 already holds a rock: one feature per square (B7)"),
        (["--wind", "D4:Q"], "--wind D4:Q: "),
        (["--whirlpool", "J10"], "--whirlpool J10: J11 is off the 10x10 board (B6)"),
    ],
)
def test_a_bad_board_option_is_named_as_typed_with_square_names(
    tmp_path: Path, options: list[str], message: str
) -> None:
    before = tree_digest(tmp_path)
    result = run(tmp_path, "new", "g", "--players", "A,B", "--board", "10x10", *options)
    assert result.exit_code == 2
    assert message in result.output
    assert "board." not in result.output and "(" not in result.output.split(":")[1]
    assert tree_digest(tmp_path) == before


# --- item 8: one turn number, one hash, an ending in words ------------------------------------


def test_demo_board_and_summary_agree_on_the_turns_played(tmp_path: Path) -> None:
    output = run(tmp_path, "demo", "--seed", "s1", "--game", "d", "--max-turns", "3").output
    assert "after turn 3 - game over: turn limit 3" in output
    assert "game d: 3 turns," in output
    assert "turn 4" not in output


def test_replay_of_turn_1_shows_turn_1_and_one_state_hash(tmp_path: Path) -> None:
    run(tmp_path, "demo", "--seed", "s1", "--game", "d", "--max-turns", "2")
    shown = run(tmp_path, "replay", "d", "--turn", "1").output
    first = shown.splitlines()[0]
    assert "after turn 1; turn 2 to order" in first
    assert "state_hash=" not in shown  # the turn-ended event's own hash is a second number
    assert shown.count("state hash") == 1


def test_a_game_ended_with_every_ship_gone_says_so() -> None:
    state = msgspec.structs.replace(
        GameState(game="g", ruleset="mortecouille"), turn=6, ended=True, end_reason="victory", winner=None
    )
    assert position_caption(state).render() == "after turn 5 - game over: all ships lost: no winner"
    assert "all ships lost: no winner" in describe_state(state)
