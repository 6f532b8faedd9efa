"""The legal actions of a ship served (``GET /api/games/{game}/ships/{ship}/actions``) and printed
(``mortecouille actions``): who may ask, that every order offered is taken by ``POST /orders``,
that the player's own ships are never targets and that nothing a viewer may not read shows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.web.server import build_app
from tests.cli_helpers import run
from tests.helpers import file_digests

pytestmark = pytest.mark.service


@pytest.fixture
def client(games: Path) -> Iterator[TestClient[Litestar]]:
    with TestClient(build_app(games, deadline_seconds=None)) as test_client:
        yield test_client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create(client: TestClient[Litestar], players: list[str], **body: Any) -> dict[str, dict[str, str]]:
    """A game ``g``: the headers of each seat, by player, and ``referee``."""
    answer = client.post(
        "/api/games", json={"name": "g", "players": players, "board": {"width": 10, "height": 10}, **body}
    )
    assert answer.status_code == 201, answer.text
    created = answer.json()
    seats = {player: bearer(seat["token"]) for player, seat in created["players"].items()}
    return {**seats, "referee": bearer(created["referee"]["token"])}


def steps(client: TestClient[Litestar], *done: tuple[str, dict[str, Any], dict[str, str]]) -> None:
    for path, body, headers in done:
        answer = client.post(f"/api/games/g/{path}", json=body, headers=headers)
        assert answer.status_code == 200, answer.text


def actions_of(client: TestClient[Litestar], ship: str, headers: dict[str, str] | None = None) -> Any:
    return client.get(f"/api/games/g/ships/{ship}/actions", headers=headers or {})


@pytest.fixture
def duel(client: TestClient[Litestar]) -> dict[str, dict[str, str]]:
    """Anne's Hope at C3 facing N; Bart's Black Pearl (with a catapult) at C6 facing E, Hope on its
    starboard line, and his Kraken at F6, on its bow line."""
    seats = create(client, ["Anne", "Bart"], ruleset="mortecouille", budget=100000)
    anne, bart = seats["Anne"], seats["Bart"]
    steps(
        client,
        ("buy", {"ship": "Hope", "kind": "red-small"}, anne),
        ("buy", {"ship": "Black Pearl", "kind": "yellow-big", "options": ["catapult"]}, bart),
        ("buy", {"ship": "Kraken", "kind": "red-small"}, bart),
        ("seal", {"forfeit": True}, anne),
        ("seal", {"forfeit": True}, bart),
        ("place", {"ship": "Hope", "square": "C3"}, anne),
        ("place", {"ship": "Black Pearl", "square": "C6", "facing": "E"}, bart),
        ("place", {"ship": "Kraken", "square": "F6"}, bart),
    )
    return seats


def test_a_player_is_offered_the_orders_of_their_ship_never_at_their_own_fleet(
    client: TestClient[Litestar], duel: dict[str, dict[str, str]]
) -> None:
    answer = actions_of(client, "black%20pearl", duel["Bart"])  # matched as order matches a name
    assert answer.status_code == 200, answer.text
    offered = answer.json()
    assert (offered["ship"], offered["owner"], offered["ordered"]) == ("Black Pearl", "Bart", False)
    targets = {(a["kind"], a.get("position"), a["target"]) for a in offered["actions"] if "target" in a}
    assert ("attack", "starboard", "Hope") in targets and ("catapult", None, "Hope") in targets
    assert all(target != "Kraken" for _, _, target in targets)
    assert offered["combining"]["catapult_shots"] == 1
    # the order form's targets (the view) are the read model's: never the player's own ships
    form = client.get("/api/games/g/view", headers=duel["Bart"]).json()["targets"]["Black Pearl"]
    assert {entry["target"] for entry in form} == {"Hope"}
    maneuvers = [a for a in offered["actions"] if a["kind"] == "maneuver"]
    assert len(maneuvers) == 12 and all(a["cost"] > 0 for a in maneuvers)
    # the referee is offered the same; every order offered is taken as it is written
    assert actions_of(client, "Black%20Pearl", duel["referee"]).json() == offered
    for action in offered["actions"]:
        body = {"ship": "Black Pearl", "actions": [action["request"]], "replace": True}
        taken = client.post("/api/games/g/orders", json=body, headers=duel["Bart"])
        assert taken.status_code == 200, (action["order"], taken.text)
    assert actions_of(client, "Black%20Pearl", duel["Bart"]).json()["ordered"] is True


def test_a_spectator_and_another_player_are_refused_and_nothing_is_written(
    client: TestClient[Litestar], duel: dict[str, dict[str, str]], games: Path
) -> None:
    before = file_digests(games)
    spectator = actions_of(client, "Hope")
    assert spectator.status_code == 403 and spectator.json()["error"]["status"] == 403
    for name in ("Black%20Pearl", "Nobody"):  # another player's ship and no ship, refused alike
        refused = actions_of(client, name, duel["Anne"])
        assert refused.status_code == 403 and refused.json()["error"]["field"] == "ship"
    unknown = actions_of(client, "Nobody", duel["referee"])
    assert unknown.status_code == 400 and unknown.json()["error"]["field"] == "ship"
    assert client.get("/api/games/nosuch/ships/Hope/actions").status_code == 404
    assert actions_of(client, "Hope", {"Authorization": "Bearer nope"}).status_code == 401
    assert file_digests(games) == before


def test_a_purchase_still_secret_is_told_apart_from_no_ship_by_its_owner_alone(
    client: TestClient[Litestar],
) -> None:
    seats = create(client, ["Anne", "Bart"], ruleset="mortecouille", budget=100000)
    steps(client, ("buy", {"ship": "Hope", "kind": "red-small"}, seats["Anne"]))
    own = actions_of(client, "Hope", seats["Anne"]).json()
    assert own["actions"] == [] and own["blocked"]["rule"] == "F3"  # bought, not placed
    # Bart and the referee may not know of Hope yet: asked for it, they hear what no ship gets
    for headers in (seats["Bart"], seats["referee"]):
        hope, nobody = actions_of(client, "Hope", headers), actions_of(client, "Nobody", headers)
        assert hope.status_code == nobody.status_code and hope.status_code in (400, 403)
        assert hope.text.replace("Hope", "Nobody") == nobody.text


def test_a_blockade_ship_is_offered_its_tokens(client: TestClient[Litestar]) -> None:
    seats = create(client, ["Anne", "Bart"], ruleset="blockade")
    steps(client, ("place", {"ship": "A1", "square": "B2", "kind": "sloop"}, seats["Anne"]))
    offered = actions_of(client, "A1", seats["Anne"]).json()
    assert (offered["ruleset"], offered["tokens"], offered["rounds"]) == ("blockade", ["F", "L", "R", "-"], 4)
    assert actions_of(client, "A1", seats["Bart"]).status_code == 403


def test_the_cli_prints_each_order_as_order_takes_it(tmp_path: Path) -> None:
    games = tmp_path / "games"
    for args in (
        ["new", "w", "--players", "Anne,Bart", "--budget", "100000", "--board", "8x8", "--dice", "table"],
        ["buy", "w", "Anne", "red-small", "Hope"],
        ["buy", "w", "Bart", "yellow-big", "Black Pearl"],
        ["buy", "w", "Bart", "red-small", "Mate"],
        ["seal", "w", "Anne", "--forfeit"],
        ["seal", "w", "Bart", "--forfeit"],
        ["place", "w", "Hope", "C3"],
        ["place", "w", "Black Pearl", "C6", "--facing", "E"],
        ["place", "w", "Mate", "F6"],
    ):
        assert run(games, *args).exit_code == 0
    printed = run(games, "actions", "w", "black pearl")
    assert printed.exit_code == 0, printed.output
    lines = printed.output.splitlines()
    assert "order w 'Black Pearl' ACTION" in lines[1]
    orders = [line.split("#")[0].strip() for line in lines if line.startswith("  ")]
    assert "attack starboard Hope" in orders and "maneuver 1/4 left --sailing" in orders
    assert not [order for order in orders if "Mate" in order]
    assert "% to hit" in printed.output and "wind point" in printed.output
    as_json = json.loads(run(games, "actions", "w", "Black Pearl", "--json").output)
    assert [a["order"] for a in as_json["actions"]] == orders
    for order in orders:  # each line is what order takes
        given = run(games, "order", "w", "Black Pearl", *order.split(), "--replace")
        assert given.exit_code == 0, (order, given.output)
    refused = run(games, "actions", "w", "Nobody")
    assert refused.exit_code == 2 and "ship" in refused.output
