"""Requests no client should send get a 4xx naming what is wrong, never a 500, and write nothing
(docs/service.md, "Errors"): bodies nested deeper than the JSON decoder goes, in every endpoint
that reads one and in every field; numbers out of any range; a NUL byte or a name too long for
the file system in a static file's path; odd game, ship and player names in paths; odd headers."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.web.server import build_app
from tests.helpers import file_digests

pytestmark = pytest.mark.service

DEEP = 3000  # levels: beyond what the decoder's recursion takes (a few levels are the most any body has)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def served(games: Path) -> Iterator[tuple[TestClient[Litestar], dict[str, dict[str, str]]]]:
    with TestClient(build_app(games, deadline_seconds=None)) as client:
        created = client.post(
            "/api/games",
            json={"name": "g", "ruleset": "mortecouille", "players": ["Anne", "Bart"], "budget": 100000},
        ).json()
        seats = {"referee": bearer(created["referee"]["token"]), "Anne": bearer(created["players"]["Anne"]["token"])}
        yield client, seats


#: Every endpoint that reads a body, who may call it, and a body it takes.
BODIES: list[tuple[str, str, str, dict[str, Any]]] = [
    ("POST", "/api/games", "spectator", {"name": "x", "players": ["A", "B"], "board": {"width": 10, "height": 10}}),
    ("POST", "/api/games/g/buy", "Anne", {"ship": "S", "kind": "red-small", "options": []}),
    ("POST", "/api/games/g/equip", "Anne", {"option": "extra-crew", "ship": "S"}),
    ("POST", "/api/games/g/unbuy", "Anne", {"ship": "S"}),
    ("POST", "/api/games/g/seal", "Anne", {"forfeit": True}),
    ("POST", "/api/games/g/place", "referee", {"ship": "S", "square": "C3"}),
    ("POST", "/api/games/g/orders", "Anne", {"ship": "S", "actions": [{"kind": "advance"}]}),
    ("DELETE", "/api/games/g/orders/S", "Anne", {"salt": "a" * 32}),
    ("POST", "/api/games/g/tokens", "Anne", {"ship": "S", "tokens": ["F"]}),
    ("POST", "/api/games/g/commit", "Anne", {"commitment": "a" * 64}),
    ("POST", "/api/games/g/reveal", "Anne", {"contribution": "a" * 32}),
    ("POST", "/api/games/g/resolve", "referee", {"dice": [1], "partial": True}),
    ("POST", "/api/games/g/rulings", "referee", {"rule": "T2", "text": "x", "adjust": []}),
    ("POST", "/api/games/g/end", "referee", {"reason": "x"}),
    ("POST", "/api/games/g/deadline", "referee", {"seconds": 60}),
    ("POST", "/api/games/g/fork", "referee", {"name": "f", "at": 0}),
]


def nested(field: str | None, body: dict[str, Any], opening: str, closing: str) -> bytes:
    """``body`` with ``field`` (None: the whole body) nested DEEP levels deep."""
    deep = opening * DEEP + ("0" if opening.endswith(":") else "") + closing * DEEP  # valid JSON either way
    if field is None:
        return deep.encode()
    rest = json.dumps({key: value for key, value in body.items() if key != field})[1:-1]
    return ("{" + (rest + ", " if rest else "") + json.dumps(field) + ": " + deep + "}").encode()


@pytest.mark.parametrize(("method", "path", "who", "body"), BODIES, ids=[f"{m} {p}" for m, p, _, _ in BODIES])
def test_a_body_nested_too_deeply_is_a_400_in_every_field(
    served: tuple[TestClient[Litestar], dict[str, dict[str, str]]],
    games: Path,
    method: str,
    path: str,
    who: str,
    body: dict[str, Any],
) -> None:
    client, seats = served
    before = file_digests(games)
    headers = {**seats.get(who, {}), "Content-Type": "application/json"}
    for field in [None, *body]:
        for opening, closing in (("[", "]"), ('{"a":', "}")):
            answer = client.request(method, path, content=nested(field, body, opening, closing), headers=headers)
            assert answer.status_code == 400, (field, opening, answer.text)
            assert "nested too deeply" in answer.json()["error"]["message"], answer.text
    assert file_digests(games) == before


@pytest.mark.parametrize(
    "path",
    ["/static/a%00b.js", "/static/%00", "/static/" + "a" * 5000 + ".js", "/static/" + "x/" * 3000 + "a.js",
     "/static/%ff%fe.js", "/static/..%2f..%2fserver.py", "/static/", "/static/."],
)  # fmt: skip
def test_a_static_path_that_names_no_file_is_a_404(
    served: tuple[TestClient[Litestar], dict[str, dict[str, str]]], path: str
) -> None:
    client, _ = served
    answer = client.get(path)
    assert answer.status_code == 404, answer.text
    assert answer.json()["error"]["status"] == 404


def test_numbers_out_of_range_odd_names_and_odd_headers_are_refused_never_a_500(
    served: tuple[TestClient[Litestar], dict[str, dict[str, str]]], games: Path
) -> None:
    client, seats = served
    before = file_digests(games)
    huge = "1" + "0" * 400
    for method, path, who, body in BODIES:
        headers = {**seats.get(who, {}), "Content-Type": "application/json"}
        for field in body:
            for number in (huge, "-" + huge, "1e400", str(2**64)):
                text = json.dumps({**body, field: 0}).replace(f'"{field}": 0', f'"{field}": {number}')
                answer = client.request(method, path, content=text, headers=headers)
                assert 400 <= answer.status_code < 500, (path, field, number, answer.text)
    odd_paths = [
        "/api/games/%00/view", "/api/games/%ff/view", "/api/games/..%2f..%2fetc/view", "/api/games/" + "é" * 300 + "/view",
        "/api/games/g/view?seq=" + "9" * 5000, "/api/games/g/view?seq=abc", "/api/games/g/orders/%00",
        "/api/games/g/orders/" + "x" * 5000, "/api/games/g/seats/%00", "/api/games/g/seats/" + "x" * 5000,
    ]  # fmt: skip
    for path in odd_paths:
        for method in ("GET", "POST", "DELETE"):
            answer = client.request(method, path, headers=seats["referee"])
            assert answer.status_code < 500, (method, path, answer.text)
    for header in ({"If-Match": "9" * 5000}, {"If-Match": "-1"}, {"Idempotency-Key": "x" * 201},
                   {"Authorization": "Bearer " + "x" * 10000}, {"Authorization": "Basic abc"}):  # fmt: skip
        for method, path in (("POST", "/api/games/g/lock"), ("GET", "/api/games/g/view")):
            answer = client.request(method, path, headers={**seats["referee"], **header})
            assert answer.status_code < 500, (header, path, answer.text)
    assert file_digests(games) == before


def test_a_body_nested_too_deeply_is_a_400_whatever_the_interpreters_recursion_limit(
    served: tuple[TestClient[Litestar], dict[str, dict[str, str]]],
    games: Path,
) -> None:
    """The decoder's own depth limit follows ``sys.getrecursionlimit()``, which another library of
    the process may raise: the refusal is the service's own depth check, not the decoder's."""
    client, seats = served
    before = file_digests(games)
    headers = {**seats["referee"], "Content-Type": "application/json"}
    kept = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        for depth in (33, DEEP):
            deep = ("[" * depth + "]" * depth).encode()
            answer = client.post("/api/games/g/rulings", content=deep, headers=headers)
            assert answer.status_code == 400 and "nested too deeply" in answer.json()["error"]["message"], answer.text
    finally:
        sys.setrecursionlimit(kept)
    assert file_digests(games) == before
