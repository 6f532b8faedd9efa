"""The narrators of ``explain`` live in core, one explicit table per ruleset; the phases of a
turn and the purposes of the dice are each defined once.

The golden logs (``tests/golden/``) hold every event type each ruleset produces and every die
purpose (``tests/test_schema_evolution.py`` proves it), so they stand for what a played game logs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mortecouille.core.blockade import narrators as blockade
from mortecouille.core.dice import PURPOSES
from mortecouille.core.errors import BadInput
from mortecouille.core.mortecouille import narrators as mortecouille
from mortecouille.core.narration import SHARED_NARRATORS, SHARED_PHASES, ExplainContext
from mortecouille.core.phases import ALL_PHASES, END, MOVE, PHASES_BY_ID, phase_name
from mortecouille.core.rulesets import RULESETS, ruleset_named
from mortecouille.core.state import EMPTY
from mortecouille.events.game import DieRolled
from mortecouille.events.schema import EVENT_TYPES
from tests.forgery import log_bodies
from tests.helpers import GOLDEN

GOLDEN_LOGS = sorted(GOLDEN.glob("*.jsonl"))


def ruleset_of(lines: list[dict[str, Any]]) -> str:
    ruleset = lines[0]["ruleset"]
    assert lines[0]["type"] == "game-created" and isinstance(ruleset, str)
    return ruleset


@pytest.mark.parametrize("log", GOLDEN_LOGS, ids=lambda path: path.name)
def test_every_event_type_a_ruleset_logs_has_a_narrator_in_its_table(log: Path) -> None:
    lines = log_bodies(log)
    narrators = ruleset_named(ruleset_of(lines)).narrators
    logged = {EVENT_TYPES[line["type"]] for line in lines}
    assert sorted(cls.__name__ for cls in logged - set(narrators)) == []


@pytest.mark.parametrize("log", GOLDEN_LOGS, ids=lambda path: path.name)
def test_every_phase_a_played_game_records_is_in_the_phase_table(log: Path) -> None:
    lines = log_bodies(log)
    event_phases = ruleset_named(ruleset_of(lines)).phases
    dice_phases = {line["phase"] for line in lines if line["type"] == "die-rolled"}
    assert dice_phases <= set(PHASES_BY_ID)
    # A type filed in the ruleset's event phases (a fire check) carries a fire phase (X1) instead.
    turn_phases = {
        line["phase"]
        for line in lines
        if isinstance(line.get("phase"), str) and EVENT_TYPES[line["type"]] not in event_phases
    }
    assert turn_phases <= set(PHASES_BY_ID)


def test_the_mortecouille_golden_game_rolls_dice_in_every_phase_that_has_dice() -> None:
    rolled = {line["phase"] for line in log_bodies(GOLDEN / "mortecouille.jsonl") if line["type"] == "die-rolled"}
    assert rolled == {"upkeep", "wind", "combat", "movement", "wind-phase"}


def test_each_phase_id_is_defined_once_and_names_come_from_the_table() -> None:
    assert len(PHASES_BY_ID) == len(ALL_PHASES)
    assert phase_name(MOVE.id) == "movement" and phase_name(MOVE.id, rounds=4) == "movement"
    assert phase_name(END.id) == "end" and phase_name(END.id, rounds=4) == "end of round"
    assert phase_name("not-a-phase", rounds=4) == "not-a-phase"


@pytest.mark.parametrize("table", [mortecouille, blockade], ids=["mortecouille", "blockade"])
def test_each_ruleset_table_includes_the_shared_narrators_and_phases(table: Any) -> None:
    assert SHARED_NARRATORS.items() <= table.NARRATORS.items()
    assert SHARED_PHASES.items() <= table.PHASES.items()


def test_the_narrators_are_found_by_ruleset_name_and_an_unknown_one_is_refused() -> None:
    assert ruleset_named("mortecouille").narrators is mortecouille.NARRATORS
    assert ruleset_named("blockade").narrators is blockade.NARRATORS
    assert set(RULESETS) == {"mortecouille", "blockade"}
    with pytest.raises(BadInput, match="ruleset"):
        ruleset_named("chess")


@pytest.mark.parametrize("purpose", sorted(PURPOSES))
def test_a_die_line_cites_the_rule_of_its_purpose(purpose: str) -> None:
    die = DieRolled(turn=1, phase="combat", ship="K", purpose=purpose, index=0, sides=6, value=4, source="seeded")
    text = mortecouille.NARRATORS[DieRolled](die, ExplainContext(EMPTY, EMPTY)).render()
    assert text == f"K rolls 1d6 for {purpose} #1 ({PURPOSES[purpose]}): 4 (seeded)"
