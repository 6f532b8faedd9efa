"""A store that cannot be written or reached is a 503 with ``Retry-After`` on every endpoint, told
without the server's paths or the store's address (docs/service.md, "Errors"): a full disk names
the game only; PostgreSQL stopped is "cannot be reached now", never "a bug: please report it"; and
the service recovers once the store is back."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.web.server import build_app
from tests.postgres_cluster import MissingServer, throwaway_cluster
from tests.postgres_server import missing_server

pytestmark = pytest.mark.postgres

#: how many times a request is tried once PostgreSQL is back: a guard against a service that never
#: recovers, not a speed requirement
RECOVERY_ATTEMPTS = 60


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def unavailable(answer: httpx.Response) -> dict[str, Any]:
    """The 503's error, checked to ask the client to come back later."""
    assert answer.status_code == 503, answer.text
    assert int(answer.headers["Retry-After"]) > 0
    error: dict[str, Any] = answer.json()["error"]
    assert "a bug" not in error["message"]
    return error


@pytest.fixture
def client(games: Path) -> Iterator[TestClient[Litestar]]:
    with TestClient(build_app(games, deadline_seconds=None)) as test_client:
        yield test_client


# --- a full disk ---------------------------------------------------------------------------------


def test_a_full_disk_is_a_503_naming_the_game_and_no_path(
    client: TestClient[Litestar], games: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = client.post("/api/games", json={"name": "g", "ruleset": "blockade", "players": ["Anne", "Bart"]})
    anne = bearer(created.json()["players"]["Anne"]["token"])
    before = (games / "g.jsonl").read_bytes()

    def no_space(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as full:
        full.setattr("mortecouille.events.storage.file_log.os.write", no_space)
        placed = client.post("/api/games/g/place", json={"ship": "A1", "square": "B2", "kind": "sloop"}, headers=anne)
        new = client.post("/api/games", json={"name": "other", "ruleset": "blockade", "players": ["Anne", "Bart"]})

    for answer, game in ((placed, "g"), (new, "other")):
        error = unavailable(answer)
        assert f"game {game!r}" in error["message"] and "No space left on device" in error["message"], error
        assert str(games) not in answer.text and ".jsonl" not in answer.text, answer.text
    assert (games / "g.jsonl").read_bytes() == before
    assert not (games / "other.jsonl").exists()


def test_no_refusal_shows_where_the_server_keeps_its_games(client: TestClient[Litestar], games: Path) -> None:
    games.mkdir(parents=True, exist_ok=True)
    (games / "stale.seats").write_text("{}\n")  # seats left behind by a game removed by hand
    refused = client.post("/api/games", json={"name": "stale", "ruleset": "blockade", "players": ["Anne", "Bart"]})
    assert refused.status_code == 409, refused.text
    assert "stale.seats" in refused.json()["error"]["message"]
    assert str(games) not in refused.text and str(games.resolve()) not in refused.text, refused.text


# --- PostgreSQL stopped ------------------------------------------------------------------------


def test_postgresql_stopped_is_a_503_on_every_endpoint_and_the_service_comes_back() -> None:
    pytest.importorskip("psycopg_pool")
    from mortecouille.events.storage.postgres import PostgresStore

    try:
        cluster = throwaway_cluster()
        server = cluster.__enter__()
    except MissingServer as missing:
        missing_server(str(missing))
        return
    try:
        store = PostgresStore(server.url, timeout=2.0)  # the pool waits this long for a connection
        with TestClient(build_app(store, deadline_seconds=None, close_store=True)) as client:
            created = client.post("/api/games", json={"name": "g", "ruleset": "blockade", "players": ["Anne", "Bart"]})
            assert created.status_code == 201, created.text
            referee = bearer(created.json()["referee"]["token"])
            anne = bearer(created.json()["players"]["Anne"]["token"])
            server.stop("immediate")
            try:
                answers = [
                    client.get("/api/games"),
                    client.get("/api/games/g/view"),
                    client.get("/api/games/g/view", headers=anne),
                    client.post("/api/games/g/place", json={"ship": "A1", "square": "B2", "kind": "sloop"}, headers=anne),
                    client.post("/api/games/g/rulings", json={"rule": "T2", "text": "x"}, headers=referee),
                    client.post("/api/games/g/seats/Anne", headers=referee),
                    client.post("/api/games/g/fork", json={"name": "f", "at": 0}, headers=referee),
                    client.post("/api/games", json={"name": "h", "ruleset": "blockade", "players": ["Anne", "Bart"]}),
                ]
                with client.stream("GET", "/api/games/g/stream") as stream:
                    answers.append(httpx.Response(stream.status_code, headers=stream.headers, text="".join(stream.iter_text())))
            finally:
                server.start()
            for answer in answers:
                error = unavailable(answer)
                assert "cannot be reached" in error["message"], error
                assert str(server.port) not in answer.text and "postgresql" not in answer.text.lower(), answer.text
            # back: the pool finds its dead connections and opens new ones (a few tries at most)
            for _attempt in range(RECOVERY_ATTEMPTS):
                placed = client.post("/api/games/g/place", json={"ship": "A1", "square": "B2", "kind": "sloop"}, headers=anne)
                if placed.status_code != 503:
                    break
                time.sleep(0.5)
            assert placed.status_code == 200, placed.text
            assert client.get("/api/games/g/view").json()["ships"][0]["id"] == "A1"
    finally:
        cluster.__exit__(None, None, None)
