"""The games list's ``waiting`` and the view's ``all_submitted`` come from the viewer's public fold,
like every other field (docs/service.md, "What each viewer sees"): a secret, here a ship bought
and placed before every fleet is sealed (as a log written before placements waited for every seal
holds one, F3 ruling), changes neither for anyone who may not read it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app.games import game_log
from mortecouille.events.movement import ShipPlaced
from mortecouille.web.server import build_app

pytestmark = pytest.mark.service


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def client(games: Path) -> Iterator[TestClient[Litestar]]:
    with TestClient(build_app(games, deadline_seconds=None)) as test_client:
        yield test_client


def what_anyone_sees(client: TestClient[Litestar], referee: dict[str, str]) -> dict[str, Any]:
    """The list's entry of the game and the view's ``all_submitted``, for the spectator and the
    referee (neither may read a purchase before every fleet is sealed)."""
    listed = client.get("/api/games").json()["games"]
    return {
        "listed": [{key: game[key] for key in ("name", "status", "turn", "position", "waiting")} for game in listed],
        "spectator": client.get("/api/games/g/view").json()["all_submitted"],
        "referee": client.get("/api/games/g/view", headers=referee).json()["all_submitted"],
    }


def test_a_ship_secretly_bought_and_placed_changes_neither_the_list_nor_all_submitted(
    client: TestClient[Litestar], games: Path
) -> None:
    created = client.post(
        "/api/games",
        json={"name": "g", "ruleset": "mortecouille", "players": ["Anne", "Bart"], "budget": 100000},
    ).json()
    referee = bearer(created["referee"]["token"])
    anne = bearer(created["players"]["Anne"]["token"])
    for path, body in (("buy", {"ship": "Hope", "kind": "red-small"}), ("seal", {"forfeit": True})):
        assert client.post(f"/api/games/g/{path}", json=body, headers=anne).status_code == 200
    before = what_anyone_sees(client, referee)

    refused = client.post("/api/games/g/place", json={"ship": "Hope", "square": "C3"}, headers=anne)
    assert refused.status_code == 422 and refused.json()["error"]["rule"] == "F3"
    # an older engine placed it before every fleet was sealed: sealed with the purchases
    early = ShipPlaced(ship="Hope", at=(2, 2), facing="N", kind="red-small", owner="Anne", rules=("F3", "B2"))
    game_log(games, "g").append([early])

    assert what_anyone_sees(client, referee) == before
    assert "Hope" not in client.get("/api/games").text
    # Anne reads her own ship (Bart's fleet is not sealed: nobody may resolve yet anyway)
    own = client.get("/api/games/g/view", headers=anne).json()
    assert own["waiting"] == {"Anne": ["Hope"]} and own["all_submitted"] is False
    assert before["referee"] is False and before["listed"][0]["waiting"] == {}
