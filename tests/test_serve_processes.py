"""Several service processes on one PostgreSQL store: what one process keeps
in memory stays right when another one appends.

Two services (``build_app``, each with its own store connections and its own change feed, as two
``serve`` processes have) on one store in the session's throw-away cluster, driven with Litestar's
test client; then ``serve --workers 2`` as a real command. Promises:

* a deadline set through one process is known to the other (its change feed tells it), which
  passes it on its own clock: the deadlines of a game survive the process that set them;
* a turn locked by one process's deadline (contributed dice) is a reveal wait the other one sees;
* an ``Idempotency-Key`` used on one process is recognised by the other (the key is in the log);
* ``serve --workers 2`` runs two worker processes on one port, each serving and pushing.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.web.server import build_app
from tests.postgres_server import PostgresServer
from tests.sse_listener import Listener
from tests.store_servers import StoreServer
from tests.test_web_api import FakeClock
from tests.web_server import bearer, create_game, ports_from_environment

pytestmark = pytest.mark.postgres

#: A guard against a hang while waiting for the other process to learn something: not a speed
#: requirement (the machine may be loaded).
PATIENCE_SECONDS = 60.0


def eventually(condition: Callable[[], bool], what: str) -> None:
    """Wait (polling the condition, not a clock's promise) until ``condition`` holds."""
    deadline = time.monotonic() + PATIENCE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


@pytest.fixture
def store_url(postgres_server: PostgresServer) -> str:
    return f"{postgres_server.url}?schema=t_{uuid.uuid4().hex[:16]}"


@pytest.fixture
def two_services(store_url: str) -> Iterator[tuple[TestClient[Litestar], TestClient[Litestar], FakeClock]]:
    """Two services on one store, as two processes (each its own pool and feed), one clock."""
    from mortecouille.app.games import open_games

    clock = FakeClock()
    first = build_app(open_games(store_url), clock=clock, deadline_seconds=None, close_store=True)
    second = build_app(open_games(store_url), clock=clock, deadline_seconds=None, close_store=True)
    with TestClient(first) as one, TestClient(second) as other:
        yield one, other, clock


def ready_game(client: TestClient[Litestar]) -> dict[str, dict[str, str]]:
    """A mortecouille game of seeded (contributed) dice, fleets bought, sealed and placed."""
    created = create_game(client, "g", ruleset="mortecouille", players=["Anne", "Bart"], budget=100000)
    anne, bart = bearer(created.seats["Anne"]), bearer(created.seats["Bart"])
    for path, body, headers in (
        ("buy", {"ship": "Hope", "kind": "red-small"}, anne),
        ("buy", {"ship": "Kraken", "kind": "yellow-big"}, bart),
        ("seal", {"forfeit": True}, anne),
        ("seal", {"forfeit": True}, bart),
        ("place", {"ship": "Hope", "square": "C3", "facing": "N"}, anne),
        ("place", {"ship": "Kraken", "square": "E6", "facing": "S"}, bart),
    ):
        answer = client.post(f"/api/games/g/{path}", json=body, headers=headers)
        assert answer.status_code == 200, (path, answer.text)
    return {"referee": bearer(created.referee), "Anne": anne, "Bart": bart}


def test_a_deadline_set_through_one_process_is_passed_by_the_other(
    two_services: tuple[TestClient[Litestar], TestClient[Litestar], FakeClock],
) -> None:
    one, other, clock = two_services
    seats = ready_game(one)
    other_service = other.app.state.service
    assert "g" not in other_service.pending
    one.post("/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "advance"}]}, headers=seats["Anne"])
    set_ = one.post("/api/games/g/deadline", json={"seconds": 120}, headers=seats["referee"])
    assert set_.status_code == 200, set_.text
    eventually(lambda: "g" in other_service.pending, "the other process noting the deadline")
    assert other_service.pending["g"] == clock() + timedelta(seconds=120)
    # extended through the first process: the other one follows
    one.post("/api/games/g/deadline", json={"seconds": 300}, headers=seats["referee"])
    eventually(
        lambda: other_service.pending.get("g") == clock() + timedelta(seconds=300),
        "the other process noting the extended deadline",
    )
    clock.advance(301)
    assert other_service.check_deadlines() == ["g"]  # passed by the process that did not set it
    view = one.get("/api/games/g/view").json()
    assert view["turn"] == 2 and view["deadline"] is None
    eventually(lambda: "g" not in one.app.state.service.pending, "the first process forgetting it")
    assert one.app.state.service.check_deadlines() == []  # passed once, not twice


def test_a_turn_locked_at_its_deadline_by_one_process_waits_for_reveals_in_the_other(
    two_services: tuple[TestClient[Litestar], TestClient[Litestar], FakeClock],
) -> None:
    one, other, clock = two_services
    seats = ready_game(one)
    for player, ship in (("Anne", "Hope"), ("Bart", "Kraken")):
        given = one.post("/api/games/g/orders", json={"ship": ship, "actions": [{"kind": "idle"}]}, headers=seats[player])
        assert given.status_code == 200, given.text
    commitment = "ab" * 32
    committed = one.post("/api/games/g/commit", json={"commitment": commitment}, headers=seats["Anne"])
    assert committed.status_code == 200, committed.text
    one.post("/api/games/g/deadline", json={"seconds": 60}, headers=seats["referee"])
    clock.advance(61)
    assert one.app.state.service.check_deadlines() == ["g"]  # locked: Anne committed, so no resolve
    other_service = other.app.state.service
    eventually(lambda: "g" in other_service.waits, "the other process seeing the turn wait for reveals")


def test_an_idempotency_key_used_on_one_process_is_known_to_the_other(
    two_services: tuple[TestClient[Litestar], TestClient[Litestar], FakeClock],
) -> None:
    one, other, _clock = two_services
    seats = ready_game(one)
    headers = {**seats["Anne"], "Idempotency-Key": "retry-me"}
    body = {"ship": "Hope", "actions": [{"kind": "advance"}], "salt": "5" * 32}
    first = one.post("/api/games/g/orders", json=body, headers=headers)
    again = other.post("/api/games/g/orders", json=body, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.json()["seq"] == first.json()["seq"] and again.json()["events"] == first.json()["events"]
    assert again.json()["receipt"] == first.json()["receipt"]  # the same salt sent: the same receipt
    assert one.get("/api/games/g/view").json()["seq"] == first.json()["seq"]  # nothing appended


def test_a_command_after_another_process_appended_is_decided_on_the_log_as_it_is(
    two_services: tuple[TestClient[Litestar], TestClient[Litestar], FakeClock], store_url: str
) -> None:
    """Each service remembers the log it last answered from (to skip reading it again): an append
    by the other process in between is seen by its chain, and the game read again."""
    one, other, _clock = two_services
    seats = ready_game(one)
    order = {"ship": "Hope", "actions": [{"kind": "advance"}], "replace": True}
    first = one.post("/api/games/g/orders", json=order, headers=seats["Anne"]).json()
    second = other.post(
        "/api/games/g/orders", json={**order, "actions": [{"kind": "idle"}]}, headers=seats["Anne"]
    ).json()
    third = one.post("/api/games/g/orders", json=order, headers=seats["Anne"]).json()
    assert [first["seq"] + 1, second["seq"] + 1] == [second["seq"], third["seq"]]
    assert third["next_seq"] == third["seq"] + 1
    # Kraken's order given through the first process: both orders are in, as the other one knows
    one.post("/api/games/g/orders", json={"ship": "Kraken", "actions": [{"kind": "idle"}]}, headers=seats["Bart"])
    assert other.get("/api/games/g/view").json()["all_submitted"] is True
    resolved = other.post("/api/games/g/resolve", json={}, headers=seats["referee"])
    assert resolved.status_code == 200, resolved.text
    done = subprocess.run(
        [sys.executable, "-m", "mortecouille", "--store", store_url, "verify", "g"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


# ----------------------------------------------------------------------------- serve --workers


def test_serve_with_two_workers_serves_and_pushes_from_both(store_url: str, tmp_path: Path) -> None:
    server = StoreServer(store_url, tmp_path, "workers", ports_from_environment(), workers=2)
    with server, httpx.Client(base_url=server.url, timeout=30.0) as client:
        assert server.process is not None
        workers = subprocess.run(
            ["pgrep", "-P", str(server.process.pid), "-f", "multiprocessing.spawn"],
            capture_output=True, text=True, check=False,
        ).stdout.split()  # fmt: skip
        assert len(workers) == 2, server.output_text()
        created = create_game(
            client, "g", ruleset="blockade", players=["Anne", "Bart"], board={"width": 10, "height": 10}
        )
        # connections spread over the workers by the kernel: each stream on one or the other
        listeners = [Listener(server.url, "g", f"spectator {n}", None) for n in range(6)]
        for listener in listeners:
            listener.start()
        for listener in listeners:
            assert listener.connected.wait(PATIENCE_SECONDS) and listener.broken is None, listener.broken
        for player, body in (
            ("Anne", {"ship": "A1", "square": "B2", "kind": "sloop"}),
            ("Bart", {"ship": "B1", "square": "H8", "kind": "sloop", "facing": "S"}),
            ("Anne", {"ship": "A2", "square": "C2", "kind": "sloop"}),
        ):
            placed = client.post("/api/games/g/place", json=body, headers=bearer(created.seats[player]))
            assert placed.status_code == 200, placed.text
        last = client.get("/api/games/g/view").json()["seq"]
        for listener in listeners:
            listener.wait_for(last)
    for listener in listeners:
        assert [seq for seq, _ in listener.messages] == list(range(last + 1)), listener


def test_the_readme_starts_a_tournament_with_the_commands_it_shows(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's "Running a tournament" commands, its database URL replaced by the throw-away
    cluster's: ``serve`` opens the store and hands uvicorn two workers on the one port."""
    import re
    import shlex

    import uvicorn
    from click.testing import CliRunner

    from mortecouille.cli.main import cli
    from tests.helpers import ROOT

    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Running a tournament", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    lines = [shlex.split(line, comments=True) for line in block.group(1).splitlines()]
    assert lines[0][0] == "createdb"
    words = lines[1]
    assert words[0] == "mortecouille"
    url = f"{postgres_server.url}?schema=t_{uuid.uuid4().hex[:16]}"
    written = next(word for word in words if word.startswith("postgresql://"))
    started: list[dict[str, object]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: started.append({"app": app, **options}))
    for variable in ("MORTECOUILLE_SERVE_STORE", "MORTECOUILLE_SERVE_BASE_URL", "MORTECOUILLE_SERVE_HOST",
                     "MORTECOUILLE_SERVE_ACCESS_LOG"):  # fmt: skip
        monkeypatch.setenv(variable, "")  # serve sets them for its workers: put back after the test
    result = CliRunner().invoke(cli, [url if word == written else word for word in words[1:]])
    assert result.exit_code == 0, result.output
    assert started and started[0]["workers"] == 2 and started[0]["factory"] is True
    assert started[0]["app"] == "mortecouille.web.server:worker_app" and started[0]["host"] == "0.0.0.0"
    assert "(2 processes)" in result.output
