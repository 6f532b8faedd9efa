"""``Idempotency-Key`` on a game's creation and on a fork (docs/service.md, "Idempotency-Key").

The creation's answer is the only one that carries the seat tokens. A referee who lost it retries
with the same key: while the game holds only its creation, the retry answers as the first did
(same seq, same events) with fresh seats, the lost tokens ending; once anything was appended, the
retry is refused naming the key. The key's digest is on the log's first line, written with the
creation, so a restart forgets nothing; a creation without the key writes what it always did.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app.games import game_log, open_games
from mortecouille.app.idempotency import CREATION, FORK, seat_digest
from mortecouille.events.codec import check_line
from mortecouille.replays.reading.verify import verify_log
from mortecouille.web.server import build_app
from tests.cli_helpers import ok
from tests.helpers import file_digests
from tests.postgres_server import PostgresServer
from tests.web_server import bearer, running_server, serving_in_a_thread

pytestmark = pytest.mark.postgres

KEY = "6f1c2a8e-creation-retry"
BODY: dict[str, Any] = {
    "name": "g",
    "ruleset": "blockade",
    "players": ["Anne", "Bart"],
    "board": {"width": 10, "height": 10},
    "dice": "table",
}
ANNE_PLACES = {"ship": "A1", "square": "B2", "kind": "sloop"}


@pytest.fixture
def client(games: Path) -> Iterator[TestClient[Litestar]]:
    with TestClient(build_app(games, deadline_seconds=None)) as test_client:
        yield test_client


def keyed(key: str = KEY, **headers: str) -> dict[str, str]:
    return {"Idempotency-Key": key, **headers}


def created(client: TestClient[Litestar] | httpx.Client, body: dict[str, Any], key: str | None) -> httpx.Response:
    return client.post("/api/games", json=body, headers=keyed(key) if key is not None else {})


def tokens(answer: httpx.Response) -> dict[str, str]:
    """The seat tokens of a creation's answer: ``referee`` and each player's."""
    body = answer.json()
    return {"referee": body["referee"]["token"], **{p: seat["token"] for p, seat in body["players"].items()}}


def opens(client: TestClient[Litestar] | httpx.Client, game: str, token: str) -> int:
    """The status of the game's view asked for with ``token``: 200 when it opens a seat."""
    return client.get(f"/api/games/{game}/view", headers=bearer(token)).status_code


def first_line(games: Path, name: str = "g") -> dict[str, Any]:
    line = (games / f"{name}.jsonl").read_bytes().splitlines()[0]
    decoded: dict[str, Any] = json.loads(line)
    return decoded


def error_of(answer: httpx.Response, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    error: dict[str, Any] = answer.json()["error"]
    assert error["status"] == status
    return error


def verified(store: Any, name: str = "g") -> None:
    report = verify_log(game_log(store, name))
    assert report.ok, [finding for finding in report.findings if not finding.ok]


# ---------------------------------------------------------------------------- the log's bytes


def test_a_creation_without_a_key_writes_the_bytes_the_cli_writes(
    client: TestClient[Litestar], games: Path, tmp_path: Path
) -> None:
    assert created(client, BODY, None).status_code == 201
    by_cli = tmp_path / "by-cli"
    ok(by_cli, "new", "g", "--ruleset", "blockade", "--players", "Anne,Bart", "--board", "10x10", "--dice", "table")
    assert (games / "g.jsonl").read_bytes() == (by_cli / "g.jsonl").read_bytes()
    assert "idem" not in first_line(by_cli)


def test_a_keyed_creation_keeps_the_keys_digest_on_its_first_line_covered_by_its_hash(
    client: TestClient[Litestar], games: Path, tmp_path: Path
) -> None:
    assert created(client, BODY, KEY).status_code == 201
    line = (games / "g.jsonl").read_bytes().splitlines()[0]
    first = json.loads(line)
    assert first["idem"] == {"key": seat_digest(CREATION, KEY), "events": 1}
    assert KEY not in line.decode()  # the digest, never the key
    check_line(line, 1, 0, first["prev"])  # the hash covers the field
    tampered = line.replace(b'"events":1', b'"events":2')
    with pytest.raises(Exception, match="hash"):
        check_line(tampered, 1, 0, first["prev"])
    # apart from the field (and so the hash) the line is the one a creation without a key writes
    ok(tmp_path / "plain", "new", "g", "--ruleset", "blockade", "--players", "Anne,Bart", "--board", "10x10",
       "--dice", "table")  # fmt: skip
    plain = first_line(tmp_path / "plain")
    for line_fields in (first, plain):
        line_fields.pop("hash")
    first.pop("idem")
    assert first == plain
    verified(games)


# ------------------------------------------------------------------------------------- retries


def test_a_retried_creation_answers_the_same_seq_with_fresh_seats_that_end_the_lost_ones(
    client: TestClient[Litestar], games: Path
) -> None:
    first = created(client, BODY, KEY)
    assert first.status_code == 201
    log_before = (games / "g.jsonl").read_bytes()
    lost = tokens(first)
    again = created(client, BODY, KEY)
    assert again.status_code == 201, again.text
    assert again.json()["seq"] == first.json()["seq"] and again.json()["events"] == first.json()["events"]
    assert again.json()["game"] == "g" and again.json()["table"] == first.json()["table"]
    fresh = tokens(again)
    assert set(fresh) == set(lost) == {"referee", "Anne", "Bart"}
    assert all(fresh[seat] != lost[seat] for seat in fresh)
    for seat in lost:
        assert opens(client, "g", lost[seat]) == 401  # nobody received them: they open nothing
        assert opens(client, "g", fresh[seat]) == 200
    assert again.json()["referee"]["link"].endswith("#token=" + fresh["referee"])
    placed = client.post("/api/games/g/place", json=ANNE_PLACES, headers=bearer(fresh["Anne"]))
    assert placed.status_code == 200, placed.text
    assert (games / "g.jsonl").read_bytes().startswith(log_before)
    assert len((games / "g.jsonl").read_bytes()) > len(log_before)  # the place, nothing else
    verified(games)


def test_a_retry_appends_nothing(client: TestClient[Litestar], games: Path) -> None:
    assert created(client, BODY, KEY).status_code == 201
    before = (games / "g.jsonl").read_bytes()
    for _ in range(3):
        assert created(client, BODY, KEY).status_code == 201
    assert (games / "g.jsonl").read_bytes() == before


def test_a_retry_with_another_body_answers_the_first_creation(client: TestClient[Litestar]) -> None:
    first = created(client, BODY, KEY)
    other = {**BODY, "players": ["Cleo", "Dan", "Eve"], "ruleset": "mortecouille", "budget": 5000}
    again = created(client, other, KEY)
    assert again.status_code == 201, again.text
    assert again.json()["events"] == first.json()["events"]
    assert set(again.json()["players"]) == {"Anne", "Bart"}


def test_a_retry_with_a_body_the_rules_refuse_still_answers_the_first_creation(
    client: TestClient[Litestar], games: Path
) -> None:
    first = created(client, BODY, KEY)
    before = (games / "g.jsonl").read_bytes()
    alone = {**BODY, "ruleset": "mortecouille", "players": ["Anne"]}  # T3: two players at least
    again = created(client, alone, KEY)
    assert again.status_code == 201, again.text
    assert again.json()["seq"] == first.json()["seq"] and set(again.json()["players"]) == {"Anne", "Bart"}
    assert (games / "g.jsonl").read_bytes() == before


def test_a_keyed_body_the_rules_refuse_with_no_game_is_refused_as_without_a_key(
    client: TestClient[Litestar], games: Path
) -> None:
    alone = {**BODY, "ruleset": "mortecouille", "players": ["Anne"]}
    plain, keyed_ = error_of(created(client, alone, None), 400), error_of(created(client, alone, KEY), 400)
    assert plain == keyed_ and plain["field"] == "players"
    assert not games.exists() or file_digests(games) == {}


@pytest.mark.parametrize("key", [None, "another-key"])
def test_a_retry_with_another_key_or_none_is_refused_as_the_name_is_taken(
    client: TestClient[Litestar], games: Path, key: str | None
) -> None:
    first = created(client, BODY, KEY)
    before = file_digests(games)
    error = error_of(created(client, BODY, key), 409)
    assert "already exists" in error["message"] and "field" not in error
    assert file_digests(games) == before  # the log and the seats as they were
    assert all(opens(client, "g", token) == 200 for token in tokens(first).values())


def test_a_game_created_without_a_key_is_not_answered_to_a_key(client: TestClient[Litestar], games: Path) -> None:
    first = created(client, BODY, None)
    before = file_digests(games)
    assert error_of(created(client, BODY, KEY), 409).get("field") is None
    assert file_digests(games) == before
    assert opens(client, "g", tokens(first)["referee"]) == 200


def test_a_retry_after_the_seats_were_used_is_refused_naming_the_key(
    client: TestClient[Litestar], games: Path
) -> None:
    first = created(client, BODY, KEY)
    placed = client.post("/api/games/g/place", json=ANNE_PLACES, headers=bearer(tokens(first)["Anne"]))
    assert placed.status_code == 200
    before = file_digests(games)
    error = error_of(created(client, BODY, KEY), 409)
    assert error["field"] == "Idempotency-Key" and "appended since" in error["message"]
    assert file_digests(games) == before  # nothing written: the seats in use are kept
    assert all(opens(client, "g", token) == 200 for token in tokens(first).values())


def test_a_malformed_key_is_refused_naming_the_header(client: TestClient[Litestar], games: Path) -> None:
    error = error_of(created(client, BODY, "x" * 201), 400)
    assert error["field"] == "Idempotency-Key"
    assert not (games / "g.jsonl").exists()


def test_a_retry_after_a_restart_is_answered_from_the_log(games: Path) -> None:
    with TestClient(build_app(games, deadline_seconds=None)) as before_restart:
        first = created(before_restart, BODY, KEY)
    with TestClient(build_app(games, deadline_seconds=None)) as restarted:
        again = created(restarted, BODY, KEY)
        assert again.status_code == 201, again.text
        assert again.json()["seq"] == first.json()["seq"]
        assert opens(restarted, "g", tokens(again)["Bart"]) == 200
        assert opens(restarted, "g", tokens(first)["Bart"]) == 401


def two_at_once(urls: tuple[str, str], body: dict[str, Any], key: str) -> list[httpx.Response]:
    """The answers to two creations with one key, sent at once to ``urls`` (one service twice,
    or two services), each on its own connection."""
    answers: list[httpx.Response] = []
    start = threading.Barrier(2)

    def send(url: str) -> None:
        with httpx.Client(base_url=url, timeout=60) as own:
            start.wait()
            answers.append(created(own, body, key))

    racers = [threading.Thread(target=send, args=(url,)) for url in urls]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    return answers


def test_a_retry_after_serve_was_restarted_is_answered_from_the_log(games: Path) -> None:
    with running_server(games) as server:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            first = created(http, BODY, KEY)
            assert first.status_code == 201, first.text
        server.restart()
        with httpx.Client(base_url=server.url, timeout=60) as http:
            again = created(http, BODY, KEY)
            assert again.status_code == 201, f"{again.text}\n{server.output_text()}"
            assert again.json()["seq"] == first.json()["seq"] and again.json()["events"] == first.json()["events"]
            assert opens(http, "g", tokens(first)["referee"]) == 401
            assert all(opens(http, "g", token) == 200 for token in tokens(again).values())


def check_race(answers: list[httpx.Response], opened: Any) -> None:
    """Two creations with one key: both answered 201 or one refused 409 naming the key (never a
    second game, never a 500); the seats of exactly one 201 answer open the game (the last
    issued), all of them."""
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses in ([201, 201], [201, 409]), [answer.text for answer in answers]
    for answer in answers:
        if answer.status_code == 409:
            assert answer.json()["error"]["field"] == "Idempotency-Key"
    working = [a for a in answers if a.status_code == 201 and opened(tokens(a)["referee"]) == 200]
    assert len(working) == 1
    assert all(opened(token) == 200 for token in tokens(working[0]).values())


def test_racing_creations_with_one_key_make_one_game_and_one_working_set_of_seats(games: Path) -> None:
    app = build_app(games, deadline_seconds=None)
    with serving_in_a_thread(app) as http:
        for round_ in range(6):
            name = f"race-{round_}"
            url = str(http.base_url)
            answers = two_at_once((url, url), {**BODY, "name": name}, f"key-{name}")
            check_race(answers, lambda token, name=name: opens(http, name, token))
            assert len((games / f"{name}.jsonl").read_bytes().splitlines()) == 1
            verified(games, name)


# ---------------------------------------------------------------------------------------- fork


def forked(client: TestClient[Litestar], referee: dict[str, str], at: int, key: str | None) -> httpx.Response:
    headers = {**referee, **(keyed(key) if key is not None else {})}
    return client.post("/api/games/g/fork", json={"name": "what-if", "at": at}, headers=headers)


@pytest.fixture
def placed_game(client: TestClient[Litestar]) -> dict[str, str]:
    """Game ``g`` created and Anne's sloop placed: the referee's headers."""
    seats = tokens(created(client, BODY, None))
    assert client.post("/api/games/g/place", json=ANNE_PLACES, headers=bearer(seats["Anne"])).status_code == 200
    return bearer(seats["referee"])


def test_a_retried_fork_answers_the_first_fork_with_fresh_seats(
    client: TestClient[Litestar], games: Path, placed_game: dict[str, str]
) -> None:
    first = forked(client, placed_game, 1, KEY)
    assert first.status_code == 201, first.text
    line = first_line(games, "what-if")
    assert line["idem"] == {"key": seat_digest(FORK, KEY), "events": 2}
    log_before = (games / "what-if.jsonl").read_bytes()
    again = forked(client, placed_game, 0, KEY)  # another body: the first fork's answer
    assert again.status_code == 201, again.text
    assert again.json()["seq"] == first.json()["seq"] == 1
    assert again.json()["forked_from"] == "g" and again.json()["forked_at_seq"] == 1
    assert again.json()["events"] == first.json()["events"]
    beyond = forked(client, placed_game, 99, KEY)  # a fork point not in the log: still the first
    assert beyond.status_code == 201 and beyond.json()["forked_at_seq"] == 1, beyond.text
    assert opens(client, "what-if", tokens(again)["referee"]) == 401  # the last retry's seats hold
    again = beyond
    lost, fresh = tokens(first), tokens(again)
    for seat in lost:
        assert opens(client, "what-if", lost[seat]) == 401
        assert opens(client, "what-if", fresh[seat]) == 200
    assert (games / "what-if.jsonl").read_bytes() == log_before
    verified(games, "what-if")


def test_a_fork_retried_after_its_seats_were_used_is_refused_naming_the_key(
    client: TestClient[Litestar], games: Path, placed_game: dict[str, str]
) -> None:
    first = forked(client, placed_game, 1, KEY)
    bart = {"ship": "B1", "square": "H8", "kind": "sloop", "facing": "S"}
    placed = client.post("/api/games/what-if/place", json=bart, headers=bearer(tokens(first)["Bart"]))
    assert placed.status_code == 200, placed.text
    before = file_digests(games)
    error = error_of(forked(client, placed_game, 1, KEY), 409)
    assert error["field"] == "Idempotency-Key"
    assert file_digests(games) == before


def test_a_keyed_fork_the_rules_refuse_is_refused_as_without_a_key(
    client: TestClient[Litestar], games: Path, placed_game: dict[str, str]
) -> None:
    before = file_digests(games)
    assert error_of(forked(client, placed_game, 99, None), 400) == error_of(forked(client, placed_game, 99, KEY), 400)
    assert file_digests(games) == before


def test_a_fork_without_a_key_and_its_retry_are_as_before(
    client: TestClient[Litestar], games: Path, placed_game: dict[str, str]
) -> None:
    assert forked(client, placed_game, 1, None).status_code == 201
    assert "idem" not in first_line(games, "what-if")
    before = file_digests(games)
    assert "already exists" in error_of(forked(client, placed_game, 1, KEY), 409)["message"]
    assert file_digests(games) == before


def test_a_fork_retry_needs_the_referee_of_the_game_forked(
    client: TestClient[Litestar], placed_game: dict[str, str]
) -> None:
    assert forked(client, placed_game, 1, KEY).status_code == 201
    assert forked(client, {}, 1, KEY).status_code == 403  # a spectator


def test_the_cli_new_writes_no_key(tmp_path: Path) -> None:
    ok(tmp_path, "new", "g", "--ruleset", "blockade", "--players", "Anne,Bart", "--board", "10x10")
    assert "idem" not in first_line(tmp_path)
    verified(tmp_path)


# ---------------------------------------------------------------------------------- PostgreSQL


@pytest.fixture
def store_url(postgres_server: PostgresServer) -> str:
    return f"{postgres_server.url}?schema=t_{uuid.uuid4().hex[:16]}"


def test_a_retried_creation_on_postgresql_survives_a_restart_and_verifies(store_url: str) -> None:
    with TestClient(build_app(open_games(store_url), deadline_seconds=None, close_store=True)) as service:
        first = created(service, BODY, KEY)
        assert first.status_code == 201, first.text
        again = created(service, BODY, KEY)
        assert again.status_code == 201 and again.json()["seq"] == first.json()["seq"]
        assert opens(service, "g", tokens(first)["Anne"]) == 401
    with TestClient(build_app(open_games(store_url), deadline_seconds=None, close_store=True)) as restarted:
        third = created(restarted, BODY, KEY)
        assert third.status_code == 201, third.text
        assert third.json()["seq"] == first.json()["seq"] and third.json()["events"] == first.json()["events"]
        fresh = tokens(third)
        assert opens(restarted, "g", tokens(again)["Anne"]) == 401
        assert all(opens(restarted, "g", token) == 200 for token in fresh.values())
        placed = restarted.post("/api/games/g/place", json=ANNE_PLACES, headers=bearer(fresh["Anne"]))
        assert placed.status_code == 200, placed.text
        error = error_of(created(restarted, BODY, KEY), 409)
        assert error["field"] == "Idempotency-Key"
        assert error_of(created(restarted, BODY, None), 409).get("field") is None
        assert opens(restarted, "g", fresh["referee"]) == 200
    store = open_games(store_url)
    try:
        log_ = game_log(store, "g")
        first_row = next(iter(log_.lines_from(0)))[1]  # type: ignore[attr-defined]
        assert json.loads(first_row)["idem"]["key"] == seat_digest(CREATION, KEY)
        verified(store)
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()


def test_a_creation_without_a_key_on_postgresql_has_no_key(store_url: str) -> None:
    with TestClient(build_app(open_games(store_url), deadline_seconds=None, close_store=True)) as service:
        assert created(service, BODY, None).status_code == 201
    store = open_games(store_url)
    try:
        first_row = next(iter(game_log(store, "g").lines_from(0)))[1]  # type: ignore[attr-defined]
        assert b'"idem"' not in first_row
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()


def test_racing_creations_with_one_key_on_two_services_over_postgresql_make_one_game(store_url: str) -> None:
    first = build_app(open_games(store_url), deadline_seconds=None, close_store=True)
    second = build_app(open_games(store_url), deadline_seconds=None, close_store=True)
    with serving_in_a_thread(first) as one, serving_in_a_thread(second) as other:
        for round_ in range(4):
            name = f"race-{round_}"
            urls = (str(one.base_url), str(other.base_url))
            answers = two_at_once(urls, {**BODY, "name": name}, f"key-{name}")
            check_race(answers, lambda token, name=name: opens(other, name, token))
            assert len(list(game_log(first.state.service.store, name).lines_from(0))) == 1  # type: ignore[attr-defined]
