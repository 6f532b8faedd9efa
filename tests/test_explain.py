"""``explain``: every event told with its rule IDs; one narrator per event type."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from mortecouille.core.narration import ExplainContext
from mortecouille.core.rulesets import RULESETS
from mortecouille.core.state import EMPTY, ShipState
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.combat import FireChecked, ShotFired
from mortecouille.events.movement import CollisionOccurred
from mortecouille.events.schema import EVENT_TYPES
from mortecouille.replays.reading.explain import explain_text, explain_turn, narrate
from tests.cli_helpers import play_blockade_turn, run


def test_explain_tells_the_turn_by_phase_with_cases_and_rules(games: Path) -> None:
    play_blockade_turn(games)
    result = run(games, "explain", "b", "--turn", "1")
    assert result.exit_code == 0, result.output
    text = result.output
    assert "-- round 1, movement" in text and "-- round 2, wind" in text and "-- round 1, damage" in text
    assert "Frig and Sloopy collide over C3 (step 1, case M1e" in text and "[P1, M1e]" in text
    assert "Frig moves C4-C3, ends on C3 facing S" in text
    assert "Sloopy takes 3 damage (collision with Frig in the movement phase, step 1); 3 of 10 taken" in text
    assert "Frig and Sloopy collide over D3 (step 1, case M3" in text
    assert text.index("round 1, movement") < text.index("round 2, wind")


def test_explain_json_and_ship_filter(games: Path) -> None:
    play_blockade_turn(games)
    everything = json.loads(run(games, "explain", "b", "--turn", "1", "--json").output)
    assert {"seq", "phase", "ships", "text", "rules"} <= set(everything[0])
    frig = json.loads(run(games, "explain", "b", "--turn", "1", "--ship", "Frig", "--json").output)
    assert frig and all("Frig" in line["ships"] for line in frig)
    assert len(frig) < len(everything)
    assert not any("Sloopy gets its tokens" in line["text"] for line in frig)
    damage = next(line for line in everything if "takes 0.5" in line["text"])
    assert damage["rules"] == ["P2", "M1e"] and damage["phase"] == "round 1, damage"


def test_explain_refuses_a_turn_not_resolved_or_an_unknown_ship(games: Path) -> None:
    play_blockade_turn(games)
    missing = run(games, "explain", "b", "--turn", "2")
    assert missing.exit_code == 2 and "--turn" in missing.output and "resolved turns: 1..1" in missing.output
    nobody = run(games, "explain", "b", "--turn", "1", "--ship", "Nobody")
    assert nobody.exit_code == 2 and "--ship" in nobody.output


def test_every_event_type_has_a_narrator() -> None:
    # A new event type fails this until it is told in words, in the narrators of the ruleset
    # that logs it (core/<ruleset>/narrators.py, or core/narration.py when both do).
    told = {cls for ruleset in RULESETS.values() for cls in ruleset.narrators}
    missing = sorted(tag for tag, cls in EVENT_TYPES.items() if cls not in told)
    assert missing == []


def test_a_ship_stopped_by_the_edge_or_a_rock_is_told_which() -> None:
    # The edge acts as rocks (B4): the log records the square off the board as the "rock".
    board = Board(4, 4, rocks=((1, 2),))
    ship = ShipState(id="A", kind="sloop", at=(1, 3), facing="N")
    state = msgspec.structs.replace(EMPTY, ruleset="blockade", board=board, ships={"A": ship})
    told = []
    for rock in [(1, 4), (1, 2), (-1, 0)]:
        event = CollisionOccurred(
            turn=1, round=1, phase="move", step=1, rule="M6", ships=("A",), square=rock, rock=rock, contacts=()
        )
        told.append(narrate(event, ExplainContext(state, state), "blockade").text)
    case = "(step 1, case M6: the claimed square is a rock or off the board: it stops)"
    assert told == [
        f"A runs into the edge of the board at B4 {case}",
        f"A hits the rock at B3 {case}",
        f"A runs into the edge of the board at B4 {case}",
    ]


class Unnarrated(Event, tag="unnarrated-test", frozen=True):
    """Not registered: stands for an event type added without a narrator."""

    ship: str
    at: tuple[int, int]
    rules: tuple[str, ...] = ("Z9",)


def test_the_fallback_prints_fields_with_squares_and_rules() -> None:
    line = narrate(Unnarrated(ship="Frig", at=(2, 4), seq=12), ExplainContext(EMPTY, EMPTY), "blockade")
    assert line.text == "unnarrated-test: ship=Frig at=C5" and line.rules == ("Z9",)
    assert line.ships == ("Frig",) and "[Z9]" in explain_text([line])


def test_mortecouille_shot_and_fire_narrators_show_the_numbers() -> None:
    shot = ShotFired(
        turn=3,
        ship="Kraken",
        weapon="port",
        target="Hope",
        distance=4,
        cannons=3,
        mode="normal",
        dice=(4, 6, 3),
        bonus=1,
        needed=14,
        hit=True,
        damage=17,
        flaming=True,
        rules=("S2", "S3", "S6"),
        seq=40,
    )
    line = narrate(shot, ExplainContext(EMPTY, EMPTY), "mortecouille")
    assert line.text == (
        "Kraken fires port (normal) at Hope, distance 4: 3 cannon(s), dice 4+6+3 + 1 = 14, "
        "needs 14: hit, 17 damage, flaming"
    )
    assert line.phase == "combat" and line.ships == ("Kraken", "Hope")
    automatic = narrate(
        ShotFired(
            turn=3,
            ship="K",
            weapon="bow",
            target="H",
            distance=1,
            cannons=2,
            mode="normal",
            dice=(),
            bonus=0,
            needed="hit",
            hit=True,
            damage=12,
        ),
        ExplainContext(EMPTY, EMPTY),
        "mortecouille",
    )
    assert "automatic hit: hit, 12 damage" in automatic.text
    fire = narrate(
        FireChecked(
            turn=4, ship="Hope", phase="1", die=2, out=False, damage=8, next_phase="2a", abandoned=False
        ),
        ExplainContext(EMPTY, EMPTY),
        "mortecouille",
    )
    assert fire.text == "Hope fire check, phase 1: die 2, the fire burns on (-8); next turn phase 2a"
    assert fire.phase == "upkeep" and fire.rules == ("X1",)


def test_a_whole_mortecouille_game_is_told_with_dice_and_shots(games: Path) -> None:
    result = run(games, "demo", "--seed", "demo", "--game", "d", "--max-turns", "25")
    assert result.exit_code == 0, result.output
    from mortecouille.events.storage.file_log import GameLog

    events = GameLog(games / "d.jsonl").read()
    turns = sorted({e.turn for e in events if type(e).__name__ == "TurnEnded"})  # type: ignore[attr-defined]
    told = [line for turn in turns for line in explain_turn(events, turn)]
    assert any("rolls 1d6 for wind #1 (A1)" in line.text for line in told)
    shots = [line for line in told if " fires " in line.text]
    assert shots and all(
        "distance" in line.text and ("needs" in line.text or "automatic" in line.text) for line in shots
    )
    assert not any(line.text.startswith(("ship-", "shot-", "fire-")) for line in told)  # no fallback used
