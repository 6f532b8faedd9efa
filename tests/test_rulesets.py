"""Rulesets as explicit values: one table, no registration by import, and a log
whose events its ruleset does not know is refused as corrupt."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import TableDice
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import CreateGame
from mortecouille.core.mortecouille.common import SetUpShip
from mortecouille.core.questions import asked_named, asked_of
from mortecouille.core.rulesets import RULESETS
from mortecouille.core.scenario import ShipSpec
from mortecouille.core.state import EMPTY, GameState, ShipState, state_hash
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.core.waiting import awaiting_text, ships_awaiting_orders
from mortecouille.events.board import Board
from mortecouille.events.condition import ShipCondition
from mortecouille.events.mortecouille import ShipSetUp
from mortecouille.events.orders import Idle, OrderSet
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
    assert caught.value.field == "ruleset" and all(name in caught.value.message for name in RULESETS)


# --- a ship's condition, declared once ------------------------------------------


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


# --- the questions each ruleset answers (who must act now, placement) ---------------------------


def test_the_answers_each_ruleset_gives_are_those_of_its_value() -> None:
    for name, ruleset in RULESETS.items():
        assert asked_named(name) is ruleset.asked


def with_ships(state: GameState, *ships: ShipState) -> GameState:
    return msgspec.structs.replace(state, ships={ship.id: ship for ship in ships})


def test_mortecouille_waits_for_the_orders_of_ships_that_can_act_only() -> None:
    state = with_ships(
        created("mortecouille"),
        ShipState(id="Hope", kind="red-small", owner="Anne", at=(1, 1)),
        ShipState(id="Torch", kind="red-small", owner="Bart", at=(3, 3), fireship=True),  # C6
        ShipState(id="Wreck", kind="red-small", owner="Bart", at=(5, 5), sunk=True),
        ShipState(id="Zeal", kind="red-small", owner="Bart", at=(6, 6)),
    )
    asked = asked_of(state)
    assert asked.ships_awaited(state) == ("Hope", "Zeal")
    assert asked.acting_players(state) == {"Anne", "Bart"}
    ordered = msgspec.structs.replace(state, orders={"Zeal": OrderSet(turn=1, actions=(Idle(),))})
    assert asked.ships_awaited(ordered) == ("Hope",)
    assert ships_awaiting_orders(ordered) == ("Hope",)
    assert awaiting_text(ordered).render() == "orders missing: Anne (Hope)"
    # orders of an earlier turn count as none (T1)
    earlier = msgspec.structs.replace(ordered, turn=2)
    assert asked.ships_awaited(earlier) == ("Hope", "Zeal")


def test_blockade_waits_for_the_tokens_of_every_ship_afloat() -> None:
    state = with_ships(
        created("blockade"),
        ShipState(id="A", kind="war-brig", owner="Anne", at=(1, 1)),
        ShipState(id="B", kind="war-brig", owner="Bart", at=(3, 3)),
        ShipState(id="C", kind="war-brig", owner="Bart", at=(5, 5), sunk=True),
    )
    given = msgspec.structs.replace(state, tokens={"A": ("F",)})
    asked = asked_of(given)
    assert asked.ships_awaited(given) == ("B",)
    assert asked.acting_players(given) == {"Anne", "Bart"}
    assert awaiting_text(given).render() == "tokens missing: Bart (B)"
    ended = msgspec.structs.replace(given, ended=True)
    assert asked.ships_awaited(ended) == () and ships_awaiting_orders(ended) == ()


def test_blockade_places_a_new_ship_by_kind_facing_north_east_south_or_west() -> None:
    state = created("blockade")
    place = PlaceShip(ship="A", at=(2, 2), facing="E", kind="war-brig", owner="Anne")
    assert fold(decide(state, place, TableDice()), state).ships["A"].facing == "E"
    with pytest.raises(BadInput) as caught:
        decide(state, msgspec.structs.replace(place, facing="NE"), TableDice())
    assert caught.value.message == "'NE': blockade ships face N, E, S or W (B2)"
    assert asked_of(state).facings == ("N", "E", "S", "W") and not asked_of(state).buys_fleets


def test_mortecouille_places_only_once_every_fleet_is_sealed_and_in_any_of_eight_facings() -> None:
    state = created("mortecouille")
    with pytest.raises(RuleViolation) as caught:
        decide(state, PlaceShip(ship="Hope", at=(2, 2), facing="NE"), TableDice())
    assert caught.value.rule == "F3" and "not sealed yet: Anne, Bart" in caught.value.message
    asked = asked_of(state)
    assert asked.buys_fleets and len(asked.facings) == 8 and "NE" in asked.facings


def test_each_ruleset_names_the_rules_its_turn_and_its_ship_names_follow() -> None:
    mortecouille, blockade = asked_named("mortecouille"), asked_named("blockade")
    assert (mortecouille.inputs, mortecouille.turn_rule, mortecouille.naming_rule) == ("orders", "T2", "F1")
    assert (blockade.inputs, blockade.turn_rule, blockade.naming_rule) == ("tokens", "P1", "P1")
    assert mortecouille.fewest_players == 2 and mortecouille.aims_shots and not blockade.aims_shots


#: the folders whose code may speak of one ruleset by name: the rulesets' own
_RULESETS_OWN = ("core/blockade/", "core/mortecouille/")
_COMPARES_A_RULESET = re.compile(r"""ruleset\s*[!=]=|[!=]=\s*\w*\.?ruleset\b|["'](blockade|mortecouille)["']\s*[!=]=""")


def test_no_module_outside_the_rulesets_compares_a_ruleset_by_name() -> None:
    found = []
    for folder in ("core", "app", "cli", "web", "replays", "events", "bots"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            if where.startswith(_RULESETS_OWN):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _COMPARES_A_RULESET.search(line):
                    found.append(f"{where}:{number}: {line.strip()}")
    assert found == [], "ask the ruleset (core/questions.Questions) instead:\n" + "\n".join(found)


def test_one_function_of_the_package_is_named_fold() -> None:
    """The one ``fold`` is core.game's; a ruleset's turn applies its events under a name of its own."""
    folds = []
    for folder in ("core", "app", "cli", "web", "replays", "events", "bots"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            folds += [
                f"{path.relative_to(ROOT)}:{node.lineno}"
                for node in tree.body  # a module's functions (a method may fold its own object)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "fold"
            ]
    assert len(folds) == 1 and folds[0].startswith("core/game.py:"), folds
