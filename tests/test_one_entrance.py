"""One entrance: the same input, typed on the command line or sent as JSON, is accepted or refused
alike, naming the same field (each shell in its own words) and the same rule.

Each row of the table is fed to the CLI (on a games directory of its own) and to the service (on
another), on a new game or on a mortecouille game whose fleets are bought, sealed and placed the
same way through each shell; a refusal leaves every file of either as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.core.dice import TableDice
from mortecouille.core.errors import BadInput
from mortecouille.core.game import decide
from mortecouille.core.life_cycle import CreateGame
from mortecouille.core.limits import BUDGET_MAX, NAME_MAX, PLAYERS_MAX
from mortecouille.core.state import EMPTY
from mortecouille.events.board import Board
from mortecouille.web.server import build_app
from tests.cli_helpers import ok, run
from tests.helpers import file_digests

pytestmark = pytest.mark.service

GAME = "g"
PLAYERS = ("Anne", "Bart")


@dataclass(frozen=True)
class Case:
    """One input: the CLI's words (after the command's GAME) and the service's request (path
    after ``/api/games/GAME``, or ``""`` for a creation, the body, the seat sending it); whether
    it is accepted, else the field the service names, the CLI's words for it and the rule."""

    id: str
    cli: tuple[str, ...]
    path: str
    body: dict[str, Any]
    seat: str = "referee"
    ready: bool = False
    accepted: bool = False
    field: str | None = None
    cli_field: str | None = None
    rule: str | None = None


def new(*options: str, **body: Any) -> dict[str, Any]:
    """A creation's two spellings: the CLI's options after ``new GAME`` and the JSON body."""
    return {"cli": ("new", "{game}", *options), "path": "", "body": {"name": "{game}", **body}}


def board(width: int = 10, height: int = 10, **parts: Any) -> dict[str, Any]:
    return {"width": width, "height": height, **parts}


BASE = ("--players", "Anne,Bart", "--board", "10x10")
BASE_BODY: dict[str, Any] = {"players": list(PLAYERS), "board": board()}
MANY = [f"P{n}" for n in range(PLAYERS_MAX + 1)]
LONG = "N" * (NAME_MAX + 1)


def order(ship: str, *words: str, actions: list[dict[str, Any]], seat: str = "Anne") -> dict[str, Any]:
    return {
        "cli": ("order", "{game}", ship, *words),
        "path": "/orders",
        "body": {"ship": ship, "actions": actions},
        "seat": seat,
        "ready": True,
    }


def ruling(*adjust: str, body: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "cli": ("ruling", "{game}", "--rule", "A1", "--text", "agreed", "--adjust", *adjust),
        "path": "/rulings",
        "body": {"rule": "A1", "text": "agreed", "adjust": body},
        "ready": True,
    }


CASES = [
    Case("a valid game", **new(*BASE, **BASE_BODY), accepted=True),
    Case(
        "blockade, one player",
        **new("--players", "Anne", "--ruleset", "blockade", players=["Anne"], ruleset="blockade"),
        accepted=True,
    ),
    Case(
        "17 players",
        **new("--players", ",".join(MANY), "--board", "10x10", players=MANY, board=board()),
        field="players",
        cli_field="--players",
    ),
    Case(
        "a budget of 2,000,000",
        **new(*BASE, "--budget", str(2 * BUDGET_MAX), **BASE_BODY, budget=2 * BUDGET_MAX),
        field="budget",
        cli_field="--budget",
    ),
    Case(
        "a 65-character player name",
        **new("--players", f"{LONG},Bart", players=[LONG, "Bart"]),
        field="players[0]",
        cli_field="--players",
    ),
    Case(
        "a one-player mortecouille game",
        **new("--players", "Anne", players=["Anne"]),
        field="players",
        cli_field="--players",
        rule="T3",
    ),
    Case(
        "an unknown dice mode",
        **new(*BASE, "--dice", "loaded", **BASE_BODY, dice="loaded"),
        field="dice",
        cli_field="--dice",
    ),
    Case(
        "a square off the board",
        **new(*BASE, "--rock", "Z99", **{**BASE_BODY, "board": board(rocks=["Z99"])}),
        field="board.rocks[0]",
        cli_field="--rock Z99",
        rule="B4",
    ),
    Case(
        "a square that is no square",
        **new(*BASE, "--rock", "C0", **{**BASE_BODY, "board": board(rocks=["C0"])}),
        field="board.rocks[0]",
        cli_field="--rock C0",
    ),
    Case(
        "a wind blowing nowhere",
        **new(*BASE, "--wind", "D4:Q", **{**BASE_BODY, "board": board(winds=[{"square": "D4", "direction": "Q"}])}),
        field="board.winds[0].direction",
        cli_field="--wind D4:Q",
    ),
    Case("an order", **order("Hope", "advance", actions=[{"kind": "advance"}]), accepted=True),
    Case("a ship named in another case", **order("hOPE", "advance", actions=[{"kind": "advance"}]), accepted=True),
    Case(
        "a target named in another case",
        **order("Kraken", "catapult", "hope", actions=[{"kind": "catapult", "target": "hope"}], seat="Bart"),
        accepted=True,
    ),
    Case(
        "an order at the player's own ship",
        **order(
            "Hope", "attack", "port", "Hope", actions=[{"kind": "attack", "position": "port", "target": "Hope"}]
        ),
        field="actions[0].target",
        cli_field="ACTION[1].target",
        rule="S1",
    ),
    Case(
        "an unknown action kind",
        **order("Hope", "advance", "+", "fly", actions=[{"kind": "advance"}, {"kind": "fly"}]),
        field="actions[1].kind",
        cli_field="ACTION[2]",
    ),
    Case(
        "a catapult the ship does not carry",
        **order("Hope", "catapult", "Kraken", actions=[{"kind": "catapult", "target": "Kraken"}]),
        rule="K",
    ),
    Case("a ruling", **ruling("hope", "damage=+1", body=[{"ship": "hope", "damage": 1}]), accepted=True),
    Case(
        "a ruling moving a ship off the board",
        **ruling("Hope", "position=Z99", body=[{"ship": "Hope", "position": "Z99"}]),
        field="adjustments[0]",
        cli_field="--adjust",
        rule="B4",
    ),
    Case(
        "a die past its faces",
        cli=("resolve", "{game}", "--dice", "25", "--yes"),
        path="/resolve",
        body={"dice": [25]},
        ready=True,
        field="dice[0]",
        cli_field="--dice",
    ),
]


@pytest.fixture
def shells(tmp_path: Path) -> Iterator[tuple[Path, Path, TestClient[Litestar]]]:
    cli_games, web_games = tmp_path / "cli", tmp_path / "web"
    cli_games.mkdir()
    web_games.mkdir()
    with TestClient(build_app(web_games, deadline_seconds=None, lock_when_all_in=False)) as client:
        yield cli_games, web_games, client


def ready_by_cli(games: Path) -> None:
    ok(games, "new", GAME, "--players", ",".join(PLAYERS), "--budget", "100000", "--board", "10x10")
    ok(games, "buy", GAME, "Anne", "red-small", "Hope")
    ok(games, "buy", GAME, "Bart", "yellow-big", "Kraken", "--option", "catapult")
    ok(games, "seal", GAME, "Anne", "--forfeit")
    ok(games, "seal", GAME, "Bart", "--forfeit")
    ok(games, "place", GAME, "Hope", "C3", "--facing", "N")
    ok(games, "place", GAME, "Kraken", "C6", "--facing", "S")


def ready_by_http(client: TestClient[Litestar]) -> dict[str, dict[str, str]]:
    """The same game through the service; each seat's headers."""
    body = {"name": GAME, "players": list(PLAYERS), "budget": 100000, "board": board()}
    created = client.post("/api/games", json=body)
    assert created.status_code == 201, created.text
    answer = created.json()
    seats = {"referee": answer["referee"]["token"], **{p: s["token"] for p, s in answer["players"].items()}}
    headers = {seat: {"Authorization": f"Bearer {token}"} for seat, token in seats.items()}
    steps = [
        ("buy", {"ship": "Hope", "kind": "red-small"}, "Anne"),
        ("buy", {"ship": "Kraken", "kind": "yellow-big", "options": ["catapult"]}, "Bart"),
        ("seal", {"forfeit": True}, "Anne"),
        ("seal", {"forfeit": True}, "Bart"),
        ("place", {"ship": "Hope", "square": "C3", "facing": "N"}, "Anne"),
        ("place", {"ship": "Kraken", "square": "C6", "facing": "S"}, "Bart"),
    ]
    for path, step, seat in steps:
        given = client.post(f"/api/games/{GAME}/{path}", json=step, headers=headers[seat])
        assert given.status_code == 200, (path, given.text)
    return headers


def filled(value: Any, game: str) -> Any:
    return json.loads(json.dumps(value).replace("{game}", game))


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_cli_and_the_service_accept_and_refuse_alike(
    case: Case, shells: tuple[Path, Path, TestClient[Litestar]]
) -> None:
    cli_games, web_games, client = shells
    headers: dict[str, dict[str, str]] = {}
    if case.ready:
        ready_by_cli(cli_games)
        headers = ready_by_http(client)
    cli_before, web_before = file_digests(cli_games), file_digests(web_games)

    typed = run(cli_games, *filled(case.cli, GAME))
    path = f"/api/games{case.path}" if not case.path else f"/api/games/{GAME}{case.path}"
    sent = client.post(path, json=filled(case.body, GAME), headers=headers.get(case.seat, {}))

    cli_said = f"exit {typed.exit_code}: {typed.output}"
    assert "Traceback" not in typed.output and sent.status_code < 500, (cli_said, sent.text)
    assert (typed.exit_code == 0) == sent.is_success == case.accepted, (cli_said, sent.text)
    if case.accepted:
        return
    assert typed.exit_code == 2 and sent.status_code in (400, 403, 422), (cli_said, sent.text)
    error = sent.json()["error"]
    assert error.get("field") == case.field, (case.field, sent.text)
    if case.cli_field is not None:
        assert case.cli_field in typed.output, (case.cli_field, cli_said)
    if case.rule is not None:
        assert case.rule in (error.get("rule"), *_rules_in(error["message"])), sent.text
        assert case.rule in _rules_in(typed.output), cli_said
    assert file_digests(cli_games) == cli_before and file_digests(web_games) == web_before


@pytest.mark.parametrize(
    ("changes", "field", "rule"),
    [
        ({"players": ("Anne",)}, "players", "T3"),
        ({"players": tuple(MANY)}, "players", None),
        ({"budget": BUDGET_MAX + 1}, "budget", None),
        ({"budget": -1}, "budget", None),
        ({"dice_mode": "loaded"}, "dice", None),
    ],
)
def test_the_rules_refuse_a_game_past_a_limit_whichever_shell_asks(
    changes: dict[str, Any], field: str, rule: str | None
) -> None:
    """The limits are the rules' own (``decide``), not only a shell's: a one-player mortecouille
    game, 17 players, a budget past the cap, an unknown dice mode."""
    create = CreateGame(game="g", ruleset="mortecouille", players=PLAYERS, budget=0, board=Board(8, 8),
                        dice_mode="table")  # fmt: skip
    assert decide(EMPTY, create, TableDice())  # the game without the change is one the rules accept
    with pytest.raises(BadInput) as caught:
        decide(EMPTY, msgspec.structs.replace(create, **changes), TableDice())
    assert (caught.value.field, caught.value.rule) == (field, rule)


def _rules_in(text: str) -> set[str]:
    """The rule IDs a message cites: ``[S7] ...`` or ``... (T3)``."""
    return set(re.findall(r"[\[(]([A-Z][0-9]?[a-z]?)[\])]", text))
