"""The referee's seat has a path of its own (docs/service.md, "HTTP API"): a player may be called
``referee`` (or ``Referee``), and ``POST /api/games/{game}/seats/{player}`` is always a player's
seat, ``POST /api/games/{game}/referee-seat`` the referee's. The CLI's ``seats --reissue`` tells
them apart as written: ``referee`` is the referee's seat, the player is named another way."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app.games import game_log
from mortecouille.app.seats import REFEREE, UnknownToken, Viewer, identify
from mortecouille.web.server import build_app
from tests.cli_helpers import ok

pytestmark = pytest.mark.service


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def client(games: Path) -> Iterator[TestClient[Litestar]]:
    with TestClient(build_app(games, deadline_seconds=None)) as test_client:
        yield test_client


@pytest.mark.parametrize("named", ["referee", "Referee"])
def test_a_player_named_referee_and_the_referee_each_get_their_own_seat(
    client: TestClient[Litestar], games: Path, named: str
) -> None:
    created = client.post("/api/games", json={"name": "g", "ruleset": "blockade", "players": [named, "Bart"]}).json()
    referee = bearer(created["referee"]["token"])
    player_token = created["players"][named]["token"]
    log = game_log(games, "g")

    as_player = client.post(f"/api/games/g/seats/{named}", headers=referee)
    assert as_player.status_code == 200, as_player.text
    seat = as_player.json()
    assert (seat["role"], seat["player"], seat["seat"]) == ("player", named, named)
    assert "/player/g#token=" in seat["link"] and seat["qr_svg"].startswith("<svg")
    assert identify(log, seat["token"]) == Viewer.of_player(named)
    with pytest.raises(UnknownToken):
        identify(log, player_token)
    assert identify(log, created["referee"]["token"]) == REFEREE  # the referee's link still works

    own = client.post("/api/games/g/referee-seat", headers=referee)
    assert own.status_code == 200, own.text
    assert (own.json()["role"], own.json()["player"]) == ("referee", None)
    assert "/referee/g#token=" in own.json()["link"]
    assert identify(log, own.json()["token"]) == REFEREE
    assert client.get("/api/games/g/view", headers=referee).status_code == 401  # the old one ended
    assert identify(log, seat["token"]) == Viewer.of_player(named)  # the player's is untouched


def test_seats_slash_referee_names_a_player_only(client: TestClient[Litestar], games: Path) -> None:
    created = client.post("/api/games", json={"name": "g", "ruleset": "blockade", "players": ["Anne", "Bart"]}).json()
    referee = bearer(created["referee"]["token"])
    before = (games / "g.seats").read_bytes()
    refused = client.post("/api/games/g/seats/referee", headers=referee)
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "player", refused.text
    assert "/api/games/g/referee-seat" in refused.json()["error"]["message"]
    assert (games / "g.seats").read_bytes() == before
    players_own = bearer(created["players"]["Anne"]["token"])
    assert client.post("/api/games/g/referee-seat", headers=players_own).status_code == 403
    assert client.post("/api/games/g/referee-seat").status_code == 403
    assert (games / "g.seats").read_bytes() == before


@pytest.mark.parametrize("named", ["referee", "Referee"])
def test_the_cli_reissues_the_referee_as_written_and_the_player_named_otherwise(games: Path, named: str) -> None:
    ok(games, "new", "g", "--players", f"{named},Bart", "--ruleset", "blockade")
    log = game_log(games, "g")
    referee = ok(games, "seats", "g", "--reissue", "referee")
    token = re.search(r"^  referee +http://\S+/referee/g#token=(\S+)$", referee, re.M)
    assert token and identify(log, token.group(1)) == REFEREE
    assert "/player/" not in referee
    typed = "Referee" if named == "referee" else named  # the player, named another way than the keyword
    player = ok(games, "seats", "g", "--reissue", typed)
    token = re.search(rf"^  {named} +http://\S+/player/g#token=(\S+)$", player, re.M)
    assert token and identify(log, token.group(1)) == Viewer.of_player(named), player
    assert "/referee/" not in player
