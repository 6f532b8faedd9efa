"""A refusal and a story line are data: a template key, its parameters and the command's field
path, said in words only at the edge (CLI, HTTP, explain), through a catalogue.

The catalogue here is a fake one that upper-cases every template's words (never its
placeholders): whatever comes out upper-cased went through the catalogue.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app.games import game_log
from mortecouille.cli.refusals import option_of, refusal_text
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import TableDice
from mortecouille.core.errors import BadInput, MortecouilleError, Phrase, RuleViolation, fill
from mortecouille.core.game import decide, evolve
from mortecouille.core.life_cycle import CreateGame, EndGame
from mortecouille.core.narration import ExplainContext, position_caption
from mortecouille.core.rulings import RecordRuling
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.board import Board
from mortecouille.events.dice import TurnLocked
from mortecouille.events.rulings import Adjustment
from mortecouille.replays.reading.explain import explain_turn, narrate
from mortecouille.web.errors import refusal_body
from mortecouille.web.server import build_app
from tests.cli_helpers import play_blockade_turn, run
from tests.helpers import ROOT

#: a field path of a command: ``players``, ``adjustments[1]``, ``actions[0].target``
FIELD_PATH = re.compile(r"^[a-z_][a-z0-9_]*(\[\d+\])?(\.[a-z_][a-z0-9_]*(\[\d+\])?)*$")


def shouted(key: str) -> str:
    """A fake catalogue's translation of ``key``: its words upper-cased, its placeholders kept."""
    out: list[str] = []
    for literal, name, spec, conversion in string.Formatter().parse(key):
        out.append(literal.upper().replace("{", "{{").replace("}", "}}"))
        if name is not None:
            out.append("{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}")
    return "".join(out)


def placeholders(key: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(key) if name is not None}


def create(ruleset: str = "blockade", **changes: object) -> CreateGame:
    fields: dict[str, object] = dict(game="g", ruleset=ruleset, players=("Anne", "Bart"), budget=0,
                                     board=Board(width=10, height=10, rocks=((4, 4),)), dice_mode="table")  # fmt: skip
    fields.update(changes)
    return CreateGame(**fields)  # type: ignore[arg-type]


def state_after(*commands: object) -> GameState:
    state = EMPTY
    for command in commands:
        for event in decide(state, command, TableDice()):  # type: ignore[arg-type]
            state = evolve(state, event)
    return state


def harbour() -> GameState:
    """A blockade game with one sloop placed on B2."""
    return state_after(create(), PlaceShip(ship="Sloopy", at=(1, 1), facing="N", kind="sloop", owner="Anne"))


#: bad commands, each to a state it is refused in: input out of range, names, rules
BAD_COMMANDS: list[tuple[str, Callable[[], tuple[GameState, object]]]] = [
    ("negative budget", lambda: (EMPTY, create(budget=-1))),
    ("unknown dice mode", lambda: (EMPTY, create(dice_mode="loaded"))),
    ("a player without a name", lambda: (EMPTY, create(players=("Anne", " ")))),
    ("players alike", lambda: (EMPTY, create(players=("Anne", "ANNE")))),
    ("unknown ruleset", lambda: (EMPTY, create(ruleset="chess"))),
    ("unknown facing", lambda: (harbour(), PlaceShip(ship="Frig", at=(3, 3), facing="Q", kind="frigate"))),
    ("unknown kind", lambda: (harbour(), PlaceShip(ship="Frig", at=(3, 3), facing="N", kind="galleon"))),
    ("owner not a player", lambda: (harbour(), PlaceShip(ship="Frig", at=(3, 3), facing="N", kind="frigate",
                                                         owner="Zed"))),  # fmt: skip
    ("on a rock", lambda: (harbour(), PlaceShip(ship="Frig", at=(4, 4), facing="N", kind="frigate"))),
    ("off the board", lambda: (harbour(), PlaceShip(ship="Frig", at=(12, 3), facing="N", kind="frigate"))),
    ("on another ship", lambda: (harbour(), PlaceShip(ship="Frig", at=(1, 1), facing="N", kind="frigate"))),
    ("a name taken", lambda: (harbour(), PlaceShip(ship="SLOOPY", at=(3, 3), facing="N", kind="frigate"))),
    ("unknown rule", lambda: (harbour(), RecordRuling(rule="Z9", text="why"))),
    ("a ruling without words", lambda: (harbour(), RecordRuling(rule="M3", text=" "))),
    ("an adjustment of no ship", lambda: (harbour(), RecordRuling(
        rule="M3", text="t", adjustments=(Adjustment(ship="Sloopy", wind=1), Adjustment(ship="Nobody", damage=1))))),
    ("an adjustment onto a rock", lambda: (harbour(), RecordRuling(
        rule="M3", text="t", adjustments=(Adjustment(ship="Sloopy", at=(4, 4)),)))),
    ("damage below 0", lambda: (harbour(), RecordRuling(
        rule="M3", text="t", adjustments=(Adjustment(ship="Sloopy", damage=-3),)))),
    ("a winner not a player", lambda: (harbour(), EndGame(reason="victory", winner="Zed"))),
]  # fmt: skip


def refusal_of(case: Callable[[], tuple[GameState, object]]) -> MortecouilleError:
    state, command = case()
    with pytest.raises(MortecouilleError) as refused:
        decide(state, command, TableDice())  # type: ignore[arg-type]
    return refused.value


@pytest.mark.parametrize("case", [case for _, case in BAD_COMMANDS], ids=[name for name, _ in BAD_COMMANDS])
def test_a_refusal_carries_a_key_its_params_fill_and_a_domain_field_path(
    case: Callable[[], tuple[GameState, object]],
) -> None:
    error = refusal_of(case)
    assert isinstance(error, BadInput | RuleViolation), error
    assert placeholders(error.key) <= set(error.params), (error.key, error.params)
    assert error.key.format_map(error.params) == error.message  # the key is the English itself
    if isinstance(error, BadInput) or error.field is not None:
        assert error.field is not None and FIELD_PATH.match(error.field), error.field
    said = error.render(shouted)
    assert said != error.render() and said.lower() == error.render().lower()


def test_a_refusal_of_a_ruling_names_the_adjustment_at_fault_by_its_index() -> None:
    _, case = next(item for item in BAD_COMMANDS if item[0] == "an adjustment of no ship")
    error = refusal_of(case)
    assert error.field == "adjustments[1]" and "Nobody" in error.message
    assert refusal_text(error).startswith("--adjust: ")


def test_the_cli_says_a_field_as_the_option_or_argument_that_gives_it() -> None:
    assert [option_of(field) for field in ("players", "ship", "dice_mode", "tokens[0]", "adjustments[2]")] == [
        "--players", "SHIP", "--dice", "TOKENS[1]", "--adjust"
    ]  # fmt: skip
    assert option_of("ships[2].kind") == "ships[2].kind"  # a scenario file's part, as the file has it
    error = BadInput("budget", "must be 0 or more, not {budget}", budget=-1)
    assert refusal_text(error) == "--budget: must be 0 or more, not -1"
    assert refusal_text(error, shouted) == "--budget: MUST BE 0 OR MORE, NOT -1"
    rule = RuleViolation("S7", "{ship} fired a burst last turn", field="actions[0]", ship="Kraken")
    assert refusal_text(rule, shouted) == "[S7] ACTION[1]: Kraken FIRED A BURST LAST TURN"


def test_the_cli_prints_a_core_refusal_with_its_option(games: Path) -> None:
    result = run(games, "new", "g", "--ruleset", "blockade", "--players", "Anne,Bart", "--board", "10x10",
                 "--budget", "-1")  # fmt: skip
    assert result.exit_code == 2 and "error: --budget: must be 0 to 1000000, not -1" in result.output


def test_the_service_sends_the_key_the_params_and_the_field_path() -> None:
    error = refusal_of(next(case for name, case in BAD_COMMANDS if name == "on another ship"))
    body = refusal_body(error, 422, shouted)
    assert (body.rule, body.field, body.key) == ("M", "at", "{square} already holds {other}: one ship per square")
    assert body.params == {"square": "B2", "other": "Sloopy"}
    assert body.message == "[M] at: B2 ALREADY HOLDS Sloopy: ONE SHIP PER SQUARE"
    nested = BadInput("log", "seq {seq}: {problem}", seq=3, problem=Phrase("a d{sides}", {"sides": 8}))
    assert refusal_body(nested, 400, shouted).params == {"seq": 3, "problem": "A D8"}


@pytest.fixture
def client(games: Path) -> Iterator[TestClient[Litestar]]:
    with TestClient(build_app(games, deadline_seconds=None)) as test_client:
        yield test_client


def test_an_http_refusal_of_the_rules_carries_its_key_and_params(client: TestClient[Litestar]) -> None:
    body = {"name": "g", "ruleset": "blockade", "players": ["Anne", "Bart"], "board": {"width": 10, "height": 10}}
    created = client.post("/api/games", json=body)
    assert created.status_code == 201, created.text
    anne, bart = ({"Authorization": f"Bearer {created.json()['players'][p]['token']}"} for p in ("Anne", "Bart"))
    placed = client.post("/api/games/g/place", json={"ship": "A1", "square": "B2", "kind": "sloop"}, headers=anne)
    assert placed.status_code == 200, placed.text
    answer = client.post("/api/games/g/place", json={"ship": "B1", "square": "B2", "kind": "sloop"}, headers=bart)
    error = answer.json()["error"]
    assert answer.status_code == 422 and error["rule"] == "M" and error["field"] == "at"
    assert error["key"] == "{square} already holds {other}: one ship per square"
    assert error["params"] == {"square": "B2", "other": "A1"}
    assert error["message"] == fill(error["key"], error["params"]).join(["[M] at: ", ""])


def test_narration_is_said_through_the_catalogue(games: Path) -> None:
    line = narrate(TurnLocked(turn=3), ExplainContext(EMPTY, EMPTY), "blockade", translate=shouted)
    assert line.text == "TURN 3 IS LOCKED: ITS ORDERS AND DICE CONTRIBUTIONS ARE FINAL (D3)"
    play_blockade_turn(games)
    events = list(game_log(games, "b").read())
    english = explain_turn(events, 1)
    shouting = explain_turn(events, 1, translate=shouted)
    assert [line.text.lower() for line in shouting] == [line.text.lower() for line in english]
    assert all(ours.text != theirs.text for ours, theirs in zip(shouting, english, strict=True))
    state = harbour()
    assert position_caption(state).render(shouted) == "BEFORE TURN 1; TURN 1 TO ORDER"


# --- the source: keys are literal templates, fields are domain paths -------------------------

#: the refusal classes and the position of their key among the arguments
KEY_AT: dict[str, int] = {"BadInput": 1, "RuleViolation": 1, "MortecouilleError": 0, "DiceForgery": 1}


def refusal_calls() -> Iterator[tuple[str, ast.Call]]:
    for folder in ("core", "app"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in KEY_AT:
                    yield f"{path.relative_to(ROOT)}:{node.lineno}", node


def test_every_refusal_in_core_and_app_has_a_literal_key_and_names_no_cli_flag() -> None:
    calls = list(refusal_calls())
    assert len(calls) > 200
    wrong: list[str] = []
    for where, call in calls:
        position = KEY_AT[call.func.id]  # type: ignore[attr-defined]
        key = call.args[position] if len(call.args) > position else None
        literal = isinstance(key, ast.Constant) and isinstance(key.value, str)
        passed_on = isinstance(key, ast.Attribute) and key.attr == "key"  # a refusal named anew
        if not (literal or passed_on):
            wrong.append(f"{where}: key {ast.unparse(key) if key else None}")
        if position == 1 and call.func.id == "BadInput":  # type: ignore[attr-defined]
            field = call.args[0]
            text = field.value if isinstance(field, ast.Constant) else ast.unparse(field)
            if isinstance(text, str) and (text.startswith("--") or "f'--" in text or re.match(r"^[A-Z]{3,}", text)):
                wrong.append(f"{where}: field {text}")
    assert wrong == []
