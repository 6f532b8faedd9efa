"""A small tournament on two ``serve`` processes sharing one PostgreSQL.

Two ``mortecouille --store postgresql://... serve`` processes on one throw-away cluster
(``tests/postgres_server.py``), four mortecouille games of four players played through the HTTP
API: each player's requests go to one process or the other (alternating turn by turn), the
referee's too, and every game has listeners on **both** processes: a spectator on each, and Bart's
seat on each. Promises checked:

* every listener receives every event of its game once, in order (SSE ids 0, 1, 2, ... to the
  end), whichever process appended it: the other process's appends arrive through LISTEN/NOTIFY;
* the same per-viewer redaction in every process: a spectator receives every order sealed, Bart
  receives his own orders readable and every other player's sealed until the turn is revealed;
* an ``Idempotency-Key`` retried on the *other* process answers the first answer and appends
  nothing;
* every game then verifies (``verify`` on the store); ``store copy`` to files and ``export-log``
  give byte for byte the lines the database holds, and the copies verify too.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.postgres_server import PostgresServer
from tests.sse_listener import Listener
from tests.store_servers import StoreServer
from tests.web_server import SeatTokens, bearer, create_game, ports_from_environment

pytestmark = pytest.mark.postgres

PLAYERS = ("Anne", "Bart", "Cleo", "Dirk")
GAMES = 4
TURNS = 2
#: How long to wait for the listeners to connect: a guard against a hang, not a speed requirement.
PATIENCE_SECONDS = 120.0


def answer(response: httpx.Response) -> dict[str, Any]:
    assert 200 <= response.status_code < 300, f"{response.request.url}: {response.status_code} {response.text}"
    result: dict[str, Any] = response.json()
    return result


def play(game: SeatTokens, clients: list[httpx.Client]) -> int:
    """Fleets, then :data:`TURNS` turns of orders and a resolve, each request on one process or the
    other; returns the seq of the game's last event. Anne's first order of each turn is retried
    with its ``Idempotency-Key`` on the other process: the same answer, nothing appended."""
    name = game.game
    for index, player in enumerate(PLAYERS):
        client, token = clients[index % 2], bearer(game.seats[player])
        ship = f"{player}-1"
        answer(client.post(f"/api/games/{name}/buy", json={"ship": ship, "kind": "red-small"}, headers=token))
        answer(client.post(f"/api/games/{name}/seal", json={"forfeit": True}, headers=token))
    for index, player in enumerate(PLAYERS):  # ships are placed once every fleet is sealed (F3)
        client, token = clients[index % 2], bearer(game.seats[player])
        ship = f"{player}-1"
        square = f"{'BDFH'[index]}6"
        answer(
            client.post(
                f"/api/games/{name}/place", json={"ship": ship, "square": square, "facing": "N"}, headers=token
            )
        )
    last = -1
    for turn in range(1, TURNS + 1):
        for index, player in enumerate(PLAYERS):
            client = clients[(index + turn) % 2]
            headers = {**bearer(game.seats[player]), "Idempotency-Key": str(uuid.uuid4())}
            body = {"ship": f"{player}-1", "actions": [{"kind": "idle"}], "replace": True}
            first = answer(client.post(f"/api/games/{name}/orders", json=body, headers=headers))
            if player == "Anne":
                other = clients[(index + turn + 1) % 2]
                again = answer(other.post(f"/api/games/{name}/orders", json=body, headers=headers))
                assert again["seq"] == first["seq"] and again["events"] == first["events"]
        resolved = answer(
            clients[turn % 2].post(f"/api/games/{name}/resolve", json={}, headers=bearer(game.referee))
        )
        last = resolved["seq"]
    return last


def cli(store: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mortecouille", "--store", store, *arguments],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def store_url(postgres_server: PostgresServer) -> str:
    return f"{postgres_server.url}?schema=t_{uuid.uuid4().hex[:16]}"


@contextlib.contextmanager
def two_processes(store_url: str, work: Path) -> Iterator[list[StoreServer]]:
    servers = [StoreServer(store_url, work, f"serve-{number}", ports_from_environment()) for number in (1, 2)]
    with contextlib.ExitStack() as stack:
        for server in servers:
            stack.enter_context(server)
        yield servers


def test_a_tournament_on_two_serve_processes_sharing_one_postgres(
    store_url: str, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    with two_processes(store_url, tmp_path) as servers:
        clients = [httpx.Client(base_url=server.url, timeout=60.0) for server in servers]
        try:
            games = [
                create_game(
                    clients[number % 2], f"cup{number}", ruleset="mortecouille", players=list(PLAYERS),
                    budget=100000,
                )  # fmt: skip
                for number in range(GAMES)
            ]
            listeners = [
                Listener(server.url, game.game, who, token)
                for game in games
                for server in servers
                for who, token in (("spectator", None), ("Bart", game.seats["Bart"]))
            ]
            for listener in listeners:
                listener.start()
            for listener in listeners:
                assert listener.connected.wait(PATIENCE_SECONDS) and listener.broken is None, listener.broken
            with ThreadPoolExecutor(GAMES) as pool:  # the games are played at the same time
                last = dict(zip((g.game for g in games), pool.map(lambda g: play(g, clients), games), strict=True))
            for listener in listeners:
                listener.wait_for(last[listener.game])
        finally:
            for client in clients:
                client.close()

        for listener in listeners:
            assert listener.broken is None, (listener, listener.broken)
            seqs = [seq for seq, _ in listener.messages]
            assert seqs == list(range(last[listener.game] + 1)), listener  # every event, once, in order
            assert listener.revealed, listener  # each resolved turn revealed its orders
            for _seq, shown in listener.messages:
                if shown["type"] == "order-given":
                    mine = listener.who == shown.get("player")
                    assert shown["sealed"] is not mine, (listener, shown)

    for game in games:
        verified = cli(store_url, "verify", game.game)
        assert verified.returncode == 0, verified.stdout + verified.stderr

    from mortecouille.events.storage.contract import open_store

    files = tmp_path / "exported"
    copied = cli(store_url, "store", "copy", "--from", store_url, "--to", f"file:{files}")
    assert copied.returncode == 0, copied.stdout + copied.stderr
    database = open_store(store_url)
    try:
        for game in games:
            lines = database.log(game.game).read_bytes()
            assert (files / f"{game.game}.jsonl").read_bytes() == lines  # byte for byte, same hashes
            exported = cli(store_url, "export-log", game.game)
            assert exported.returncode == 0 and exported.stdout.encode() == lines, exported.stderr
            verified = cli(f"file:{files}", "verify", game.game)
            assert verified.returncode == 0, verified.stdout + verified.stderr
    finally:
        database.close()
