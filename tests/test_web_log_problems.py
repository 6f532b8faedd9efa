"""A log the service cannot read is told by its seq, never by its bytes (docs/service.md,
"Errors"): a torn last line, which may be a secret (an order cut short by a crash), is a 503 with
``Retry-After`` reading "torn last line at seq N" on every channel (views, stream, games list,
commands, fork, creation) for every viewer; a forged line is a 500 "cannot be trusted at seq N".
Marker strings in the bad line are searched in every answer, body and headers, and so is every
run of 12 bytes of it: none may reach a client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.events.codec import canonical, line_hash, stamp
from mortecouille.events.orders import CatapultShot, OrderGiven
from mortecouille.web.server import build_app

pytestmark = pytest.mark.service

MARKER = "Zq7-torn-secret"
WINDOW = 12


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def client(games: Path) -> Iterator[TestClient[Litestar]]:
    with TestClient(build_app(games, deadline_seconds=None)) as test_client:
        yield test_client


def playing_game(client: TestClient[Litestar]) -> dict[str, dict[str, str]]:
    """A mortecouille game in turn 1, Anne's secret orders given; the headers of every viewer."""
    created = client.post(
        "/api/games",
        json={"name": "g", "ruleset": "mortecouille", "players": ["Anne", "Bart"], "budget": 100000},
    ).json()
    viewers = {
        "spectator": {},
        "referee": bearer(created["referee"]["token"]),
        **{player: bearer(seat["token"]) for player, seat in created["players"].items()},
    }
    steps = [
        ("buy", {"ship": "Hope", "kind": "red-small"}, "Anne"),
        ("buy", {"ship": "Kraken", "kind": "yellow-big", "options": ["catapult"]}, "Bart"),
        ("seal", {"forfeit": True}, "Anne"),
        ("seal", {"forfeit": True}, "Bart"),
        ("place", {"ship": "Hope", "square": "C3", "facing": "N"}, "Anne"),
        ("place", {"ship": "Kraken", "square": "E6", "facing": "S"}, "Bart"),
        ("orders", {"ship": "Hope", "actions": [{"kind": "advance"}]}, "Anne"),
    ]
    for path, body, player in steps:
        answer = client.post(f"/api/games/g/{path}", json=body, headers=viewers[player])
        assert answer.status_code == 200, (path, answer.text)
    return viewers


def every_channel(client: TestClient[Litestar], viewers: dict[str, dict[str, str]]) -> list[tuple[str, httpx.Response]]:
    """What each viewer is answered on every channel: the views, the list, every command of
    every role (a role's refusal included), a fork, a creation and its retry, and the stream."""
    requests: list[tuple[str, str, Any]] = [
        ("GET", "/api/games/g/view", None),
        ("GET", "/api/games/g/view?seq=0", None),
        ("GET", "/api/games", None),
        ("POST", "/api/games/g/orders", {"ship": "Kraken", "actions": [{"kind": "idle"}]}),
        ("DELETE", "/api/games/g/orders/Hope", None),
        ("POST", "/api/games/g/commit", {"commitment": "a" * 64}),
        ("POST", "/api/games/g/buy", {"ship": "Other", "kind": "red-small"}),
        ("POST", "/api/games/g/place", {"ship": "Kraken", "square": "E7"}),
        ("POST", "/api/games/g/resolve", {"partial": True}),
        ("POST", "/api/games/g/lock", None),
        ("POST", "/api/games/g/rulings", {"rule": "T2", "text": "a ruling"}),
        ("POST", "/api/games/g/deadline", {"seconds": 60}),
        ("POST", "/api/games/g/end", None),
        ("POST", "/api/games/g/seats/Anne", None),
        ("POST", "/api/games/g/fork", {"name": "what-if", "at": 2}),
    ]
    answers: list[tuple[str, httpx.Response]] = []
    for viewer, headers in viewers.items():
        for method, path, body in requests:
            sent = {**headers, "Idempotency-Key": f"{viewer}-{path}"}
            answers.append((f"{viewer} {method} {path}", client.request(method, path, json=body, headers=sent)))
        with client.stream("GET", "/api/games/g/stream", headers=headers) as stream:
            text = "".join(stream.iter_text())  # the stream tells its problem and ends
        answers.append((f"{viewer} stream", httpx.Response(200, text=text)))
    creation = {"name": "g", "ruleset": "mortecouille", "players": ["Anne", "Bart"]}
    for key in (None, "creation-retry"):
        headers = {"Idempotency-Key": key} if key else {}
        answers.append((f"creation {key}", client.post("/api/games", json=creation, headers=headers)))
    return answers


def leaked(answer: httpx.Response, line: bytes) -> list[str]:
    """The marker, or any run of WINDOW bytes of ``line``, found in ``answer``'s headers or body."""
    seen = json.dumps(dict(answer.headers)) + answer.text + json.dumps(answer.text)
    text = line.decode()
    runs = {text[at : at + WINDOW] for at in range(len(text) - WINDOW + 1)}
    return [run for run in [MARKER, *sorted(runs)] if run in seen or json.dumps(run)[1:-1] in seen]


def test_a_torn_secret_line_is_a_503_naming_its_seq_on_every_channel_for_every_viewer(
    client: TestClient[Litestar], games: Path
) -> None:
    viewers = playing_game(client)
    path = games / "g.jsonl"
    lines = path.read_bytes().splitlines()
    last = json.loads(lines[-1])
    # Bart's orders, cut short by a crash: a secret of his, its target the marker
    order = OrderGiven(turn=1, ship="Kraken", actions=(CatapultShot(target=MARKER),))
    _, whole = stamp(order, len(lines), last["hash"])
    torn = whole[: len(whole) * 2 // 3]
    assert MARKER.encode() in torn[:60]
    with path.open("ab") as log:
        log.write(torn)
    before = path.read_bytes()

    answers = every_channel(client, viewers)

    assert path.read_bytes() == before
    told = f"torn last line at seq {len(lines)}"
    for what, answer in answers:
        assert not leaked(answer, torn), (what, leaked(answer, torn), answer.text)
        if answer.status_code == 503:
            assert answer.headers["Retry-After"].isdigit(), what
            assert told in answer.json()["error"]["message"], (what, answer.text)
    by_name = dict(answers)
    for viewer in viewers:
        view = by_name[f"{viewer} GET /api/games/g/view"]
        assert view.status_code == 503 and view.json()["error"]["code"] == 4, (viewer, view.text)
        assert "mortecouille repair g" in view.json()["error"]["message"]
        assert told in by_name[f"{viewer} stream"].text, by_name[f"{viewer} stream"].text
        listed = by_name[f"{viewer} GET /api/games"].json()["games"]
        assert listed[0]["status"] == "unreadable" and told in listed[0]["problem"], listed
    for who, command in (("Bart", "POST /api/games/g/orders"), ("referee", "POST /api/games/g/resolve"),
                         ("referee", "POST /api/games/g/fork"), ("referee", "POST /api/games/g/seats/Anne")):  # fmt: skip
        assert by_name[f"{who} {command}"].status_code == 503, (who, command, by_name[f"{who} {command}"].text)


def test_a_forged_secret_line_is_a_500_naming_its_seq_and_never_quoted(
    client: TestClient[Litestar], games: Path
) -> None:
    viewers = playing_game(client)
    path = games / "g.jsonl"
    lines = path.read_bytes().splitlines()
    # Anne's secret orders, rewritten with an event type nobody knows (rehashed: a forger's work)
    body = json.loads(lines[-1])
    body["type"] = MARKER
    del body["hash"]
    body["hash"] = line_hash(body)
    forged = canonical(body)
    path.write_bytes(b"\n".join([*lines[:-1], forged]) + b"\n")
    before = path.read_bytes()

    answers = every_channel(client, viewers)

    assert path.read_bytes() == before
    for what, answer in answers:
        assert not leaked(answer, forged), (what, leaked(answer, forged), answer.text)
    view = dict(answers)["Anne GET /api/games/g/view"]
    error = view.json()["error"]
    assert view.status_code == 500 and error["code"] == 4, view.text
    assert f"cannot be trusted at seq {len(lines) - 1}" in error["message"] and "verify g" in error["message"]
