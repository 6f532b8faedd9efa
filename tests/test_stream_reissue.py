"""A stream after its seat's link was replaced (docs/service.md, "Live push").

A stream opened with a seat's token shows that seat's secrets. Once a new link ends the token
(``POST /api/games/{game}/seats/{player}``, ``mortecouille seats GAME --reissue``, in this process
or another one, on files or on PostgreSQL), the stream is closed: it never carries a secret the seat
gives with its new link, and it stops even when nothing more is appended. The new link's stream and
the other viewers' streams go on, each with its own view. Each secret is a marker searched in every
byte each stream received.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mortecouille.web.server import build_app
from tests import web_server
from tests.cli_helpers import ok
from tests.test_web_api import FakeClock, StreamReader, bearer, placed_blockade

pytestmark = pytest.mark.postgres

#: A guard against a hang, not a speed requirement (the machine may be loaded).
PATIENCE_SECONDS = 60.0

#: Anne's secret tokens, given with her new link: no stream but hers may ever carry them.
MARKER = ["L", "R", "L", "R"]


def eventually(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


def ended(reader: StreamReader) -> bool:
    return not reader._thread.is_alive()


def carries_marker(reader: StreamReader) -> bool:
    return any(
        m.data.get("data", {}).get("tokens") == MARKER
        or any(e.get("data", {}).get("tokens") == MARKER for e in m.data.get("events", []))
        for m in reader.messages
    ) or json.dumps(MARKER, separators=(",", ":")) in json.dumps([m.data for m in reader.messages], separators=(",", ":"))


@pytest.fixture
def http(games: Path) -> Iterator[httpx.Client]:
    app = build_app(games, clock=FakeClock(), deadline_seconds=None, poll_seconds=0.05, heartbeat_seconds=0.5)
    with web_server.serving_in_a_thread(app) as client:
        yield client


def streams_of(http: httpx.Client, anne: dict[str, str]) -> dict[str, StreamReader]:
    readers = {"old": StreamReader(http, anne), "spectator": StreamReader(http, {})}
    for reader in readers.values():
        reader.until(lambda ms: len([m for m in ms if m.event == "event"]) == 3)
    return readers


def anne_gives_her_secret_with(http: httpx.Client, token: str, readers: dict[str, StreamReader]) -> None:
    """Anne gives her secret tokens with her new link; her new stream shows them, readable."""
    given = http.post("/api/games/g/tokens", json={"ship": "A1", "tokens": MARKER}, headers=bearer(token))
    assert given.status_code == 200, given.text
    readers["new"] = StreamReader(http, bearer(token))
    readers["new"].until(lambda ms: any(m.id == 3 for m in ms))
    assert carries_marker(readers["new"])
    readers["spectator"].until(lambda ms: any(m.id == 3 for m in ms))


def assert_old_stream_closed_without_the_secret(readers: dict[str, StreamReader]) -> None:
    assert not carries_marker(readers["old"]), "the replaced link's stream was sent the new link's secret"
    eventually(lambda: ended(readers["old"]), "the stream of the replaced link closed")
    assert not carries_marker(readers["old"])
    assert not carries_marker(readers["spectator"])
    assert not ended(readers["spectator"]) and not ended(readers["new"])
    for reader in readers.values():
        reader.close()


def test_a_stream_of_a_link_the_referee_replaced_is_closed_before_any_secret_of_the_new_link(
    http: httpx.Client,
) -> None:
    game = placed_blockade(http)  # type: ignore[arg-type]
    readers = streams_of(http, game.players["Anne"])
    answer = http.post("/api/games/g/seats/Anne", headers=game.referee)
    assert answer.status_code == 200, answer.text
    anne_gives_her_secret_with(http, answer.json()["token"], readers)
    assert_old_stream_closed_without_the_secret(readers)


def test_a_stream_of_a_link_the_cli_replaced_is_closed_even_with_nothing_appended(
    http: httpx.Client, games: Path
) -> None:
    """``seats --reissue`` writes the seats file beside the log; the service learns it from there."""
    game = placed_blockade(http)  # type: ignore[arg-type]
    readers = streams_of(http, game.players["Anne"])
    printed = ok(games, "seats", "g", "--reissue", "Anne")
    token = printed.split("#token=")[1].split()[0]
    eventually(lambda: ended(readers["old"]), "the stream of the replaced link closed with nothing appended")
    anne_gives_her_secret_with(http, token, readers)
    assert_old_stream_closed_without_the_secret(readers)


def test_a_stream_of_a_link_another_process_replaced_on_postgresql_is_closed(store_url: str) -> None:
    """The stream is served by this process; ``seats --reissue`` runs in another one, on the same
    database: no message tells this process, the store's seats do."""
    from mortecouille.app.games import open_games

    app = build_app(open_games(store_url), clock=FakeClock(), deadline_seconds=None, heartbeat_seconds=0.5,
                    close_store=True)  # fmt: skip
    with web_server.serving_in_a_thread(app) as http:
        game = placed_blockade(http)  # type: ignore[arg-type]
        readers = streams_of(http, game.players["Anne"])
        done = subprocess.run(
            [sys.executable, "-m", "mortecouille", "--store", store_url, "seats", "g", "--reissue", "Anne"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        token = done.stdout.split("#token=")[1].split()[0]
        anne_gives_her_secret_with(http, token, readers)
        assert_old_stream_closed_without_the_secret(readers)


@pytest.fixture
def store_url(postgres_server: Any) -> str:
    import uuid

    return f"{postgres_server.url}?schema=t_{uuid.uuid4().hex[:16]}"
