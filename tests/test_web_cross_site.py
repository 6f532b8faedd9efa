"""Cross-site requests and the Host header (docs/service.md, "Requests"): a page of another site
may not change anything on a service it can reach (a loopback server included), and a name made
to point at it (DNS rebinding) is not answered, nor used to build a link.

- a body must say ``application/json`` (415): a cross-site ``text/plain`` POST is what a page of
  another site can send without asking;
- ``Origin``, when a browser sends it, must be the service's own (403); a client that sends none
  (curl, the CLI's clients) is served;
- ``Host`` must be a name the service answers to (421): the address it listens on, loopback names,
  ``--url``'s host, and, on every interface, any address of the machine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.web.guards import HostPolicy
from mortecouille.web.server import build_app
from tests.helpers import file_digests
from tests.web_server import ServerProcess

pytestmark = pytest.mark.service

HERE = "http://127.0.0.1:8000"
NEW_GAME = {"name": "g", "ruleset": "blockade", "players": ["Anne", "Bart"]}


def serving(games: Path, host: str = "127.0.0.1", url: str | None = None, base: str = HERE) -> TestClient[Litestar]:
    """The service as ``serve --host HOST [--url URL]`` builds it, asked at ``base``."""
    app = build_app(games, base_url=url, deadline_seconds=None, hosts=HostPolicy.serving(host, url))
    return TestClient(app, base_url=base)


@pytest.fixture
def client(games: Path) -> Iterator[TestClient[Litestar]]:
    with serving(games) as test_client:
        yield test_client


def refused(answer: httpx.Response, status: int, field: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    error: dict[str, Any] = answer.json()["error"]
    assert error["field"] == field and error["message"].startswith(f"{field}: "), error
    return error


def test_a_cross_site_form_post_creates_no_game_on_a_loopback_server(
    client: TestClient[Litestar], games: Path
) -> None:
    body = json.dumps(NEW_GAME)
    # what a page of another site can send without asking: a text/plain body, with its Origin
    cross = client.post("/api/games", content=body, headers={"Content-Type": "text/plain", "Origin": "https://evil.example"})
    refused(cross, 403, "Origin")
    # the same as JSON (a browser would have asked first, and got no CORS answer), or a sandboxed page
    for origin in ("https://evil.example", "null", "http://127.0.0.1:8001"):
        answer = client.post("/api/games", json=NEW_GAME, headers={"Origin": origin})
        refused(answer, 403, "Origin")
    # a body that does not say it is JSON, whoever sends it
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None):
        headers = {"Content-Type": content_type} if content_type else {}
        error = refused(client.post("/api/games", content=body, headers=headers), 415, "Content-Type")
        assert "application/json" in error["message"]
    assert not games.exists() or not list(games.glob("*.jsonl"))


def test_the_services_own_pages_and_clients_without_an_origin_are_served(client: TestClient[Litestar]) -> None:
    created = client.post("/api/games", json=NEW_GAME, headers={"Origin": HERE})
    assert created.status_code == 201, created.text
    assert created.json()["referee"]["link"].startswith(f"{HERE}/referee/g#token=")
    referee = {"Authorization": f"Bearer {created.json()['referee']['token']}"}
    # curl or the CLI's clients send no Origin; a charset is fine; a body-less command needs no type
    placed = client.post(
        "/api/games/g/place",
        content=json.dumps({"ship": "A1", "square": "B2", "kind": "sloop", "owner": "Anne"}),
        headers={**referee, "Content-Type": "application/json; charset=utf-8"},
    )
    assert placed.status_code == 200, placed.text
    assert client.post("/api/games/g/seats/Anne", headers={**referee, "Origin": HERE}).status_code == 200


def test_a_name_pointed_at_the_server_is_not_answered_nor_used_in_a_link(games: Path) -> None:
    with serving(games) as client:
        for host in ("evil.example:8000", "evil.example", "127.0.0.1.evil.example", "localhost.evil.example:8000"):
            for method, path, body in (("GET", "/api/games", None), ("GET", "/", None), ("GET", "/table/g", None),
                                       ("POST", "/api/games", NEW_GAME)):  # fmt: skip
                answer = client.request(method, path, json=body, headers={"Host": host})
                refused(answer, 421, "Host")
        before = file_digests(games) if games.exists() else {}
        for host in ("127.0.0.1:8000", "localhost:8000", "LOCALHOST.:8000", "[::1]:8000", "table.localhost:8000", "127.0.0.2"):
            assert client.get("/api/games", headers={"Host": host}).status_code == 200, host
        assert (file_digests(games) if games.exists() else {}) == before
        created = client.post("/api/games", json=NEW_GAME, headers={"Host": "localhost:8000"})
        assert created.json()["table"] == "http://localhost:8000/table/g"


def test_every_interface_answers_the_machines_addresses_and_url_names_the_links(games: Path) -> None:
    with serving(games, host="0.0.0.0", base="http://192.168.1.20:8000") as client:
        assert client.get("/api/games").status_code == 200
        refused(client.get("/api/games", headers={"Host": "evil.example:8000"}), 421, "Host")
        created = client.post("/api/games", json=NEW_GAME, headers={"Origin": "http://192.168.1.20:8000"})
        assert created.json()["table"] == "http://192.168.1.20:8000/table/g", created.text
    # behind a proxy: the pages come from --url, the proxy may pass its own Host or the public one
    url = "https://table.example"
    with serving(games, url=url) as client:
        for host in ("table.example", "127.0.0.1:8000"):
            answer = client.post("/api/games", json={**NEW_GAME, "name": f"p-{host[:3]}"}, headers={"Host": host, "Origin": url})
            assert answer.status_code == 201, answer.text
            assert answer.json()["table"].startswith(f"{url}/table/"), answer.text
        refused(client.get("/api/games", headers={"Host": "evil.example"}), 421, "Host")
        refused(client.post("/api/games", json=NEW_GAME, headers={"Origin": "https://evil.example"}), 403, "Origin")


def test_serve_refuses_a_rebound_name_and_a_cross_site_post(games: Path) -> None:
    with ServerProcess(games) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        port = server.port
        refused(http.get("/api/games", headers={"Host": f"evil.example:{port}"}), 421, "Host")
        cross = http.post(
            "/api/games",
            content=json.dumps(NEW_GAME),
            headers={"Content-Type": "text/plain", "Origin": f"http://evil.example:{port}"},
        )
        assert cross.status_code in (403, 415), cross.text
        assert http.get("/api/games").json()["games"] == []
        created = http.post("/api/games", json=NEW_GAME, headers={"Origin": server.url})
        assert created.status_code == 201 and created.json()["table"] == f"{server.url}/table/g", created.text
