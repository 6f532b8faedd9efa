"""Rulesets as explicit values (issue 11.2): one table, no registration by import, and a log
whose events its ruleset does not know is refused as corrupt."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from mortecouille.core.dice import TableDice
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import CreateGame
from mortecouille.core.mortecouille.common import SetUpShip
from mortecouille.core.rulesets import RULESETS
from mortecouille.core.scenario import ShipSpec
from mortecouille.core.state import EMPTY, GameState, ShipState, state_hash
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.events.board import Board
from mortecouille.events.condition import ShipCondition
from mortecouille.events.mortecouille import ShipSetUp
from mortecouille.events.schema import EVENT_TYPES
from mortecouille.events.storage.file_log import GameLog
from tests.cli_helpers import run
from tests.forgery import log_bodies, write_rechained
from tests.helpers import GOLDEN, ROOT

EXPECTED = json.loads((GOLDEN / "expected.json").read_text())
GOLDEN_RULESETS = {"blockade.jsonl": "blockade", "mortecouille.jsonl": "mortecouille"}


def test_the_golden_mortecouille_log_folds_whole_with_only_core_game_imported() -> None:
    # In a fresh interpreter, so that no test has imported a ruleset module already.
    script = """
import json, sys
from pathlib import Path
from mortecouille.core.game import fold
from mortecouille.core.state import state_hash
from mortecouille.events.storage.file_log import GameLog
loaded = sorted(m for m in sys.modules if m.startswith(("mortecouille.app", "mortecouille.replays",
                                                       "mortecouille.cli", "mortecouille.bots")))
state = fold(GameLog(Path(sys.argv[1])).read())
print(json.dumps({"ships": len(state.ships), "turn": state.turn, "hash": state_hash(state), "loaded": loaded}))
"""
    result = subprocess.run(
        [sys.executable, "-c", script, str(GOLDEN / "mortecouille.jsonl")],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["loaded"] == []
    assert answer["hash"] == EXPECTED["mortecouille.jsonl"]["state_hash"]
    assert answer["ships"] == 6 and answer["turn"] > 1


@pytest.mark.parametrize("command", ["verify", "state"])
def test_an_unknown_event_type_in_a_rechained_log_exits_4_naming_seq_and_type(
    tmp_path: Path, command: str
) -> None:
    # A mortecouille wind-points event forged into a blockade game, the chain and head made valid.
    games = tmp_path / "games"
    games.mkdir()
    path = games / "b.jsonl"
    bodies = log_bodies(GOLDEN / "blockade.jsonl")
    forged = {"type": "wind-points", "turn": 1, "phase": "wind", "ship": bodies[1].get("ship", "A"),
              "delta": 1, "points": 1, "reason": "forged", "rules": [], "seq": 3, "v": 1}  # fmt: skip
    bodies.insert(3, forged)
    for seq, body in enumerate(bodies):
        body["seq"] = seq
    write_rechained(path, bodies)
    before = path.read_bytes(), path.with_suffix(".head").read_bytes()
    result = run(games, command, "b")
    assert result.exit_code == 4, result.output
    assert "seq 3" in result.output and "'wind-points'" in result.output and "blockade" in result.output
    assert (path.read_bytes(), path.with_suffix(".head").read_bytes()) == before


def test_every_event_type_of_the_schema_is_evolved_or_ignored_by_some_ruleset() -> None:
    handled = set().union(*(set(r.evolvers) | r.ignored for r in RULESETS.values()))
    assert sorted(t for t, cls in EVENT_TYPES.items() if cls not in handled) == []


def test_no_ruleset_both_evolves_and_ignores_an_event_type() -> None:
    for ruleset in RULESETS.values():
        assert set(ruleset.evolvers) & ruleset.ignored == set(), ruleset.name


@pytest.mark.parametrize("name", sorted(GOLDEN_RULESETS))
def test_each_ruleset_folds_every_event_type_its_golden_game_logged(name: str) -> None:
    # The golden logs were made by the deciders: every type they write is in the ruleset's tables.
    ruleset = RULESETS[GOLDEN_RULESETS[name]]
    known = {cls.__struct_config__.tag for cls in (*ruleset.evolvers, *ruleset.ignored)}
    assert set(EXPECTED[name]["types"]) - known == set()
    state = fold(GameLog(GOLDEN / name).read())
    assert state.ruleset == ruleset.name and state_hash(state) == EXPECTED[name]["state_hash"]


def test_each_ruleset_is_listed_under_its_own_name_and_takes_the_life_cycle() -> None:
    assert list(RULESETS) == ["mortecouille", "blockade"]
    for name, ruleset in RULESETS.items():
        assert ruleset.name == name
        assert CreateGame in ruleset.deciders and ruleset.initial_state == GameState()
        assert set(ruleset.refusals) & set(ruleset.deciders) == set()


def created(ruleset: str) -> GameState:
    create = CreateGame(game="g", ruleset=ruleset, players=("Anne", "Bart"), budget=0,
                        board=Board(width=8, height=8), dice_mode="table")  # fmt: skip
    return fold(decide(EMPTY, create, TableDice()))


def test_blockade_tokens_in_a_mortecouille_game_are_refused_citing_P1() -> None:
    with pytest.raises(RuleViolation) as caught:
        decide(created("mortecouille"), GiveTokens(ship="A", tokens=("F",)), TableDice())
    assert caught.value.rule == "P1" and "blockade" in caught.value.message


def test_a_command_of_the_other_ruleset_without_a_rule_is_refused_naming_the_ruleset_field() -> None:
    setup = ShipSetUp(ship="A", kind="red-small", owner="Anne", at=(1, 1), facing="N")
    with pytest.raises(BadInput) as caught:
        decide(created("blockade"), SetUpShip(proposed=setup), TableDice())
    assert caught.value.field == "ruleset" and "mortecouille" in caught.value.message


def test_an_unknown_ruleset_is_refused_naming_every_ruleset_of_the_table() -> None:
    create = CreateGame(game="g", ruleset="chess", players=("A",), budget=0, board=Board(width=4, height=4))
    with pytest.raises(BadInput) as caught:
        decide(EMPTY, create, TableDice())
    assert caught.value.field == "--ruleset" and all(name in caught.value.message for name in RULESETS)


# --- a ship's condition, declared once (issue 11.6) ------------------------------------------


def test_a_ships_condition_is_one_declaration_shared_by_the_state_the_event_and_the_scenario() -> None:
    condition = {f.name: f.default for f in msgspec.structs.fields(ShipCondition)}
    for holder in (ShipState, ShipSetUp, ShipSpec):
        fields = {f.name: f.default for f in msgspec.structs.fields(holder)}
        # equal defaults (ShipState keeps its damage a float: 0.0 == 0)
        assert {name: fields[name] for name in condition} == condition, holder.__name__
    assert issubclass(ShipState, ShipCondition) and issubclass(ShipSpec, ShipCondition)


def test_the_ship_set_up_event_keeps_its_log_fields_in_their_order() -> None:
    lines = [json.loads(line) for line in (GOLDEN / "mortecouille_scenario.jsonl").read_bytes().splitlines()]
    logged = [line for line in lines if line["type"] == "ship-set-up"]
    assert logged and all(set(line) == {"type", *ShipSetUp.__struct_fields__} for line in logged)
    assert ShipSetUp.__struct_fields__ == (
        "ship", "kind", "owner", "at", "facing", *ShipCondition.__struct_fields__, "rules", "seq", "prev", "hash", "v",
    )  # fmt: skip
    assert EVENT_TYPES["ship-set-up"] is ShipSetUp and ShipSetUp.__struct_config__.frozen
