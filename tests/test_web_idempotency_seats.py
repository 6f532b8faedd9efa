"""An ``Idempotency-Key`` is scoped to the seat that sends it (docs/service.md, "Idempotency-Key"):
a key another seat used (a page counting its requests from 1, a key seen elsewhere) is a new key
for this one: its command is decided and appended, and it never gets another seat's answer or
receipt. A seat's own retry still answers its first answer, after a restart too, and so does a
retry of a batch a service wrote before keys were scoped (the key's bare digest) when that batch
is the same seat's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from mortecouille.app.commands import Idempotency, new_game, run_command
from mortecouille.app.games import game_log
from mortecouille.app.idempotency import IdempotencyIndex, key_digest
from mortecouille.app.seats import issue_seats
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.events.board import Board
from mortecouille.web.server import build_app

pytestmark = pytest.mark.service

TOKENS = {"A1": ["F", "L"], "B1": ["R", None]}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def with_key(headers: dict[str, str], key: str) -> dict[str, str]:
    return {**headers, "Idempotency-Key": key}


def placed(client: TestClient[Any], key: str | None = None) -> dict[str, dict[str, str]]:
    """A blockade game (created under ``key``, if given), A1 placed for Anne and B1 for Bart; the
    headers of the referee's and each player's seat."""
    created = client.post(
        "/api/games",
        json={"name": "g", "ruleset": "blockade", "players": ["Anne", "Bart"], "board": {"width": 10, "height": 10}},
        headers={"Idempotency-Key": key} if key else {},
    ).json()
    seats = {"referee": bearer(created["referee"]["token"])}
    seats |= {player: bearer(seat["token"]) for player, seat in created["players"].items()}
    for ship, square, owner in (("A1", "B2", "Anne"), ("B1", "H8", "Bart")):
        body = {"ship": ship, "square": square, "kind": "sloop", "owner": owner}
        assert client.post("/api/games/g/place", json=body, headers=seats["referee"]).status_code == 200
    return seats


def tokens(client: TestClient[Any], seats: dict[str, dict[str, str]], player: str, ship: str, key: str) -> Any:
    body = {"ship": ship, "tokens": TOKENS[ship], "replace": True}
    answer = client.post("/api/games/g/tokens", json=body, headers=with_key(seats[player], key))
    assert answer.status_code == 200, answer.text
    return answer.json()


def length(games: Path) -> int:
    return len((games / "g.jsonl").read_bytes().splitlines())


def test_a_key_another_seat_used_is_a_new_command_never_its_answer(games: Path) -> None:
    with TestClient(build_app(games, deadline_seconds=None)) as client:
        seats = placed(client, key="1")
        annes = tokens(client, seats, "Anne", "A1", "1")  # the creation's key: a new command for her
        assert [(e["type"], e["ship"]) for e in annes["events"]] == [("tokens-given", "A1")]
        bart = tokens(client, seats, "Bart", "B1", "1")  # the same key from another seat
        assert bart["seq"] == annes["seq"] + 1 and bart["next_seq"] == length(games)
        assert [(e["type"], e["ship"], e["sealed"]) for e in bart["events"]] == [("tokens-given", "B1", False)]
        assert bart["receipt"]["subject"] == "B1" and bart["receipt"]["seq"] == bart["seq"]
        # the referee's command under that key: a new command too
        before = length(games)
        ruled = client.post("/api/games/g/rulings", json={"rule": "T2", "text": "noted"}, headers=with_key(seats["referee"], "1"))
        assert ruled.json()["seq"] == before and ruled.json()["events"][0]["type"] == "ruling", ruled.text
        assert length(games) == before + 1
        # each seat's own retry answers its first answer and appends nothing
        size = length(games)
        assert tokens(client, seats, "Anne", "A1", "1") == {**annes, "next_seq": size}
        assert tokens(client, seats, "Bart", "B1", "1") == {**bart, "next_seq": size}
        assert length(games) == size
    with TestClient(build_app(games, deadline_seconds=None)) as restarted:  # and after a restart
        again = tokens(restarted, seats, "Bart", "B1", "1")
        assert (again["seq"], again["receipt"]["head"]) == (bart["seq"], bart["receipt"]["head"])
        assert length(games) == size


def test_a_retry_of_a_batch_written_before_keys_were_scoped_answers_its_own_seat_only(games: Path) -> None:
    log = game_log(games, "g")
    new_game(log, players=["Anne", "Bart"], ruleset="blockade", budget=0, board=Board(width=10, height=10),
             dice_mode="table", seed=None, idempotency_digest=key_digest("made"))  # fmt: skip
    issue_seats(log)
    with TestClient(build_app(games, deadline_seconds=None)) as client:
        # the creation's retry finds the creation written under the bare digest (fresh seats)
        body = {"name": "g", "ruleset": "blockade", "players": ["Anne", "Bart"]}
        retried = client.post("/api/games", json=body, headers={"Idempotency-Key": "made"})
        assert retried.status_code == 201 and retried.json()["seq"] == 0, retried.text
        seats = {"referee": bearer(retried.json()["referee"]["token"])}
        seats |= {player: bearer(seat["token"]) for player, seat in retried.json()["players"].items()}
        for ship, square, owner in (("A1", "B2", "Anne"), ("B1", "H8", "Bart")):
            body = {"ship": ship, "square": square, "kind": "sloop", "owner": owner}
            assert client.post("/api/games/g/place", json=body, headers=seats["referee"]).status_code == 200
    # Anne's tokens, appended by a service that kept the key's bare digest
    first = run_command(
        log,
        lambda state: GiveTokens(ship="A1", tokens=("F", "L")),
        idempotency=Idempotency(key_digest("old"), IdempotencyIndex()),
    ).events
    size = length(games)
    with TestClient(build_app(games, deadline_seconds=None)) as client:
        anne = tokens(client, seats, "Anne", "A1", "old")
        assert anne["seq"] == first[0].seq and length(games) == size  # her retry: her first answer
        bart = tokens(client, seats, "Bart", "B1", "old")
        assert bart["seq"] == size and bart["events"][0]["ship"] == "B1"  # not hers: his own command
        assert length(games) == size + 1
