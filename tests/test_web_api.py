"""The game service's API (docs/service.md), through Litestar's test
client and, for the live push, a real server on loopback: every role, every refusal code with the
log left byte-for-byte as it was, idempotent retries (across a restart too), stale seqs, whole games
played through the API and verified, the stream's resume and redaction, and deadlines on a fake
clock."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app.commands import run_command
from mortecouille.app.games import game_log
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.events.codec import check_line
from mortecouille.replays.reading.verify import verify_log
from mortecouille.web.server import build_app
from tests import web_server
from tests.cli_helpers import run
from tests.helpers import file_digests

pytestmark = pytest.mark.service

# ------------------------------------------------------------------------------------------ helpers


class FakeClock:
    """The deadlines' clock, moved by the test."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: int) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class Game:
    """A game created through the API, with its seats' headers."""

    name: str
    referee: dict[str, str]
    players: dict[str, dict[str, str]] = field(default_factory=dict)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create(client: TestClient[Litestar] | httpx.Client, name: str = "g", **body: Any) -> Game:
    body = {
        "name": name,
        "ruleset": "blockade",
        "players": ["Anne", "Bart"],
        "board": {"width": 10, "height": 10},
        **body,
    }
    answer = client.post("/api/games", json=body)
    assert answer.status_code == 201, answer.text
    created = answer.json()
    return Game(
        name=name,
        referee=bearer(created["referee"]["token"]),
        players={player: bearer(seat["token"]) for player, seat in created["players"].items()},
    )


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def client(games: Path, clock: FakeClock) -> Iterator[TestClient[Litestar]]:
    with TestClient(build_app(games, clock=clock, deadline_seconds=None)) as test_client:
        yield test_client


def placed_blockade(client: TestClient[Litestar]) -> Game:
    """A blockade game with one sloop each, placed by their players."""
    game = create(client)
    for body, player in (
        ({"ship": "A1", "square": "B2", "kind": "sloop"}, "Anne"),
        ({"ship": "B1", "square": "H8", "kind": "sloop", "facing": "S"}, "Bart"),
    ):
        answer = client.post("/api/games/g/place", json=body, headers=game.players[player])
        assert answer.status_code == 200, answer.text
    return game


def mortecouille_ready(client: TestClient[Litestar], dice: str = "seeded") -> Game:
    """A mortecouille game whose fleets are bought, sealed and placed by their players."""
    game = create(client, ruleset="mortecouille", budget=100000, dice=dice)
    anne, bart = game.players["Anne"], game.players["Bart"]
    steps = [
        ("buy", {"ship": "Hope", "kind": "red-small"}, anne),
        ("buy", {"ship": "Kraken", "kind": "yellow-big", "options": ["catapult"]}, bart),
        ("seal", {"forfeit": True}, anne),
        ("seal", {"forfeit": True}, bart),
        ("place", {"ship": "Hope", "square": "C3", "facing": "N"}, anne),
        ("place", {"ship": "Kraken", "square": "E6", "facing": "S"}, bart),
    ]
    for path, body, headers in steps:
        answer = client.post(f"/api/games/g/{path}", json=body, headers=headers)
        assert answer.status_code == 200, (path, answer.text)
    return game


def lines(games: Path, name: str = "g") -> list[dict[str, Any]]:
    return [json.loads(line) for line in (games / f"{name}.jsonl").read_bytes().splitlines()]


def error_of(answer: httpx.Response, status: int) -> dict[str, Any]:
    """The refusal's body, checked to have the one error shape and ``status``."""
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert set(body) == {"error"} and body["error"]["status"] == status
    assert (
        {"status", "code", "message", "key", "params"} <= set(body["error"]) <= {"status", "code", "message", "key", "params", "field", "rule"}
    )
    error: dict[str, Any] = body["error"]
    return error


def verified(games: Path, name: str = "g") -> None:
    report = verify_log(game_log(games, name))
    assert report.ok, [f for f in report.findings if not f.ok]


# ---------------------------------------------------------------------------------- games and views


def test_a_game_created_through_the_api_gives_its_seats_once_and_keeps_only_their_hashes(
    client: TestClient[Litestar], games: Path
) -> None:
    answer = client.post(
        "/api/games", json={"name": "harbour", "ruleset": "blockade", "players": ["Anne", "Bart"]}
    )
    assert answer.status_code == 201
    created = answer.json()
    assert created["table"].endswith("/table/harbour")
    assert created["referee"]["link"].endswith("/referee/harbour#token=" + created["referee"]["token"])
    assert set(created["players"]) == {"Anne", "Bart"}
    on_disk = b"".join(path.read_bytes() for path in games.iterdir())
    for token in [created["referee"]["token"], *(seat["token"] for seat in created["players"].values())]:
        assert token.encode() not in on_disk
    listed = client.get("/api/games").json()["games"]
    assert [(g["name"], g["ruleset"], g["turn"]) for g in listed] == [("harbour", "blockade", 1)]


def test_the_view_is_the_viewers_own_and_says_when_everyone_has_submitted(
    client: TestClient[Litestar],
) -> None:
    game = placed_blockade(client)
    client.post(
        "/api/games/g/tokens", json={"ship": "A1", "tokens": ["F", "L", "R"]}, headers=game.players["Anne"]
    )
    spectator = client.get("/api/games/g/view").json()
    anne = client.get("/api/games/g/view", headers=game.players["Anne"]).json()
    assert spectator["viewer"] == {"role": "spectator", "player": None}
    assert anne["viewer"] == {"role": "player", "player": "Anne"}
    sealed = [e for e in spectator["events"] if e["type"] == "tokens-given"]
    assert sealed and sealed[0]["sealed"] and "data" not in sealed[0]
    assert spectator["waiting"] == {"Bart": ["B1"]} and not spectator["all_submitted"]
    client.post("/api/games/g/tokens", json={"ship": "B1", "tokens": ["F"]}, headers=game.players["Bart"])
    assert client.get("/api/games/g/view", headers=game.referee).json()["all_submitted"]
    assert client.get("/api/games/g/view?seq=0").json()["seq"] == 0
    assert error_of(client.get("/api/games/g/view?seq=99"), 400)["field"] == "seq"


def test_every_answer_carries_the_security_headers(client: TestClient[Litestar]) -> None:
    for answer in (client.get("/api/games"), client.get("/api/games/nope/view")):
        assert answer.headers["content-security-policy"].startswith("default-src 'self'")
        assert answer.headers["referrer-policy"] == "no-referrer"
        assert answer.headers["x-content-type-options"] == "nosniff"


def test_static_files_are_sent_with_the_type_a_browser_runs_under_nosniff(client: TestClient[Litestar]) -> None:
    """With ``nosniff`` a browser runs a script only if it is sent as one: every static file goes
    with its own type, and a kind of file the pages do not use is not served at all."""
    script = client.get("/static/common.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    style = client.get("/static/style.css")
    assert style.status_code == 200 and style.headers["content-type"].startswith("text/css")
    assert client.get("/static/nothing.exe").status_code == 404


def test_static_files_never_leave_the_pages_folder(client: TestClient[Litestar]) -> None:
    for path in ("/static/../server.py", "/static/%2e%2e/server.py", "/static/../../pyproject.toml"):
        assert client.get(path).status_code == 404


# ------------------------------------------------------------------------------------------- roles


def test_a_spectator_commands_nothing_and_a_player_no_referee_endpoint(
    client: TestClient[Litestar], games: Path
) -> None:
    game = placed_blockade(client)
    before = file_digests(games)
    anne = game.players["Anne"]
    refusals = [
        client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}),
        client.post("/api/games/g/place", json={"ship": "A2", "square": "C2", "kind": "sloop"}),
        client.post("/api/games/g/resolve", json={}, headers=anne),
        client.post("/api/games/g/end", json={}, headers=anne),
        client.post("/api/games/g/rulings", json={"rule": "B2", "text": "no"}, headers=anne),
        client.post("/api/games/g/deadline", json={"seconds": 60}, headers=anne),
        client.post("/api/games/g/seats/Bart", headers=anne),
        client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=game.referee),
    ]
    for answer in refusals:
        assert error_of(answer, 403)["code"] == 2
    assert file_digests(games) == before


def test_a_player_acts_only_on_their_own_ships(client: TestClient[Litestar], games: Path) -> None:
    game = placed_blockade(client)
    before = file_digests(games)
    bart = game.players["Bart"]
    refusals = [
        client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=bart),
        client.post("/api/games/g/place", json={"ship": "A1", "square": "C5"}, headers=bart),
        client.post(
            "/api/games/g/place",
            json={"ship": "B2", "square": "C5", "kind": "sloop", "owner": "Anne"},
            headers=bart,
        ),
    ]
    for answer in refusals:
        assert "Anne" in error_of(answer, 403)["message"] or "A1" in answer.json()["error"]["message"]
    assert file_digests(games) == before


def test_a_name_that_is_not_the_players_is_refused_alike_whether_it_exists_or_not(
    client: TestClient[Litestar], games: Path
) -> None:
    """Another player's ship, still secretly bought, and no ship at all get the same refusal: a
    difference, or a "did you mean" over every fleet, would reveal the purchase (F3)."""
    game = create(client, ruleset="mortecouille", budget=100000)
    anne, bart = game.players["Anne"], game.players["Bart"]
    assert (
        client.post(
            "/api/games/g/buy", json={"ship": "Kraken", "kind": "yellow-big"}, headers=bart
        ).status_code
        == 200
    )
    client.post("/api/games/g/buy", json={"ship": "Hope", "kind": "red-small"}, headers=anne)
    before = file_digests(games)
    refusals = [
        client.post("/api/games/g/unbuy", json={"ship": ship}, headers=anne).json()["error"]
        for ship in ("Kraken", "Krakn", "Nowhere")
    ]
    assert {(e["status"], e["field"]) for e in refusals} == {(403, "ship")}
    assert not any("Kraken" in e["message"] for e in refusals[1:]) and "yellow" not in str(refusals)
    assert [e["message"].split("(")[1] for e in refusals] == ["theirs: Hope)"] * 3
    assert file_digests(games) == before
    assert client.post("/api/games/g/unbuy", json={"ship": "  hope "}, headers=anne).status_code == 200


def test_a_player_buys_equips_and_withdraws_only_for_their_own_fleet(
    client: TestClient[Litestar], games: Path
) -> None:
    game = create(client, ruleset="mortecouille", budget=100000)
    anne, bart = game.players["Anne"], game.players["Bart"]
    bought = client.post("/api/games/g/buy", json={"ship": "Hope", "kind": "red-small"}, headers=anne)
    assert bought.status_code == 200 and bought.json()["events"][0]["data"]["player"] == "Anne"
    before = file_digests(games)
    assert error_of(client.post("/api/games/g/unbuy", json={"ship": "Hope"}, headers=bart), 403)
    assert error_of(
        client.post("/api/games/g/equip", json={"ship": "Hope", "option": "catapult"}, headers=bart), 403
    )
    assert error_of(
        client.post("/api/games/g/buy", json={"ship": "X", "kind": "red-small"}, headers=game.referee), 403
    )
    assert file_digests(games) == before
    assert client.post("/api/games/g/unbuy", json={"ship": "Hope"}, headers=anne).status_code == 200


def test_the_referee_reissues_a_seat_and_the_old_token_stops_working(client: TestClient[Litestar]) -> None:
    game = create(client)
    answer = client.post("/api/games/g/seats/Anne", headers=game.referee)
    assert answer.status_code == 200
    seat = answer.json()
    assert seat["link"].endswith("#token=" + seat["token"]) and seat["qr_svg"].startswith("<svg")
    assert error_of(client.get("/api/games/g/view", headers=game.players["Anne"]), 401)
    assert client.get("/api/games/g/view", headers=bearer(seat["token"])).json()["viewer"]["player"] == "Anne"
    assert error_of(client.post("/api/games/g/seats/Nobody", headers=game.referee), 400)["field"] == "player"


# -------------------------------------------------------------------------------- every refusal code


def test_a_malformed_body_is_400_naming_the_field_and_writes_nothing(
    client: TestClient[Litestar], games: Path
) -> None:
    game = placed_blockade(client)
    anne = game.players["Anne"]
    before = file_digests(games)
    cases = [
        ({"ship": "A1", "tokens": ["F"], "replce": True}, "tokens", "replce"),
        ({"ship": "A1"}, "tokens", "tokens"),
        ({"ship": "A1", "tokens": "F"}, "tokens", "tokens"),
        ({"ship": "A1", "square": "nowhere"}, "place", "square"),
        ({"ship": "A1", "square": "C5", "facing": "UP"}, "place", "facing"),
    ]
    for body, path, named in cases:
        error = error_of(client.post(f"/api/games/g/{path}", json=body, headers=anne), 400)
        assert error["field"] == named, (body, error)
    malformed = client.post("/api/games/g/tokens", content=b"{not json", headers={**anne, "Content-Type": "application/json"})
    assert error_of(malformed, 400)
    assert file_digests(games) == before


def test_orders_in_a_broken_grammar_are_400_naming_the_action(
    client: TestClient[Litestar], games: Path
) -> None:
    game = mortecouille_ready(client)
    before = file_digests(games)
    answer = client.post(
        "/api/games/g/orders",
        json={"ship": "Hope", "actions": [{"kind": "advance"}, {"kind": "fly"}]},
        headers=game.players["Anne"],
    )
    error = error_of(answer, 400)
    assert error["field"] == "actions[1].kind" and "'fly'" in error["message"]
    assert file_digests(games) == before


def test_a_token_that_opens_no_seat_is_401_and_never_repeated(client: TestClient[Litestar]) -> None:
    create(client)
    for header in ("Bearer not-a-token", "Basic abc", "Bearer "):
        answer = client.get("/api/games/g/view", headers={"Authorization": header})
        assert "not-a-token" not in error_of(answer, 401)["message"]
    other = create(client, name="other")
    assert error_of(client.get("/api/games/g/view", headers=other.players["Anne"]), 401)


def test_an_unknown_game_is_404(client: TestClient[Litestar]) -> None:
    assert error_of(client.get("/api/games/nowhere/view"), 404)["code"] == 2
    assert error_of(client.post("/api/games/nowhere/resolve", json={}), 404)


def test_a_stale_if_match_is_409_and_a_current_one_appends(client: TestClient[Litestar], games: Path) -> None:
    game = placed_blockade(client)
    anne = {**game.players["Anne"], "If-Match": "2"}
    before = file_digests(games)
    error = error_of(
        client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=anne), 409
    )
    assert error["code"] == 3 and "expected seq 2" in error["message"]
    assert file_digests(games) == before
    anne["If-Match"] = "3"
    assert (
        client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=anne).json()["seq"]
        == 3
    )
    assert error_of(client.post("/api/games/g/tokens", json={"ship": "B1", "tokens": ["F"]},
                                headers={**game.players["Bart"], "If-Match": "x"}), 400)["field"] == "If-Match"  # fmt: skip


def test_a_body_over_64_kb_is_413(client: TestClient[Litestar], games: Path) -> None:
    game = placed_blockade(client)
    before = file_digests(games)
    body = json.dumps({"rule": "B2", "text": "x" * 70_000}).encode()
    answer = client.post(
        "/api/games/g/rulings", content=body, headers={**game.referee, "Content-Type": "application/json"}
    )
    assert error_of(answer, 413)
    assert file_digests(games) == before


def test_a_rules_refusal_is_422_with_the_rule_id_and_the_clis_message(
    client: TestClient[Litestar], games: Path
) -> None:
    game = create(client, ruleset="mortecouille", budget=100000)
    anne = game.players["Anne"]
    assert (
        client.post("/api/games/g/buy", json={"ship": "Hope", "kind": "red-small"}, headers=anne).status_code
        == 200
    )
    before = file_digests(games)
    error = error_of(client.post("/api/games/g/resolve", json={}, headers=game.referee), 422)
    assert error["rule"] == "F3" and error["message"].startswith("[F3] the game cannot start")
    assert error["code"] == 2
    # blockade tokens in a mortecouille game: refused citing the rule, as the CLI's tokens is
    tokens = error_of(
        client.post("/api/games/g/tokens", json={"ship": "Hope", "tokens": ["F"]}, headers=anne), 422
    )
    assert tokens["rule"] and tokens["message"].startswith(f"[{tokens['rule']}]")
    assert file_digests(games) == before


def test_orders_are_replaced_only_when_asked_and_withdrawn_by_their_player(
    client: TestClient[Litestar], games: Path
) -> None:
    game = mortecouille_ready(client)
    anne = game.players["Anne"]
    assert (
        client.post(
            "/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "advance"}]}, headers=anne
        ).status_code
        == 200
    )
    before = file_digests(games)
    again = client.post("/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "idle"}]}, headers=anne)
    assert error_of(again, 422)["rule"] == "T1"
    assert file_digests(games) == before
    replaced = client.post(
        "/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "idle"}], "replace": True}, headers=anne
    )
    assert replaced.status_code == 200
    assert error_of(client.delete("/api/games/g/orders/Hope", headers=game.players["Bart"]), 403)
    assert (
        client.delete("/api/games/g/orders/Hope", headers=anne).json()["events"][0]["type"]
        == "order-withdrawn"
    )


# ----------------------------------------------------------------------------------- idempotency


def test_a_retried_submit_answers_the_first_answer_and_appends_nothing(
    client: TestClient[Litestar], games: Path
) -> None:
    game = placed_blockade(client)
    headers = {**game.players["Anne"], "Idempotency-Key": "7f1c-submit-1"}
    first = client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F", "L"]}, headers=headers)
    assert first.status_code == 200
    after_first = (games / "g.jsonl").read_bytes()
    retry = client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F", "L"]}, headers=headers)
    assert retry.json() == first.json()
    assert (games / "g.jsonl").read_bytes() == after_first
    idem = [line["idem"] for line in lines(games) if "idem" in line]
    assert len(idem) == 1 and idem[0]["events"] == 1 and "7f1c" not in json.dumps(idem)
    # the other lines kept their exact bytes: no envelope field where no key was sent
    assert sum(b'"idem"' in line for line in after_first.splitlines()) == 1


def test_concurrent_retries_of_one_submit_append_it_once(client: TestClient[Litestar], games: Path) -> None:
    game = placed_blockade(client)
    headers = {**game.players["Anne"], "Idempotency-Key": "one-submit"}
    answers: list[httpx.Response] = []

    def submit() -> None:
        answers.append(
            client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=headers)
        )

    threads = [threading.Thread(target=submit) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [a.status_code for a in answers] == [200] * 6
    assert len({a.text for a in answers}) == 1
    assert [line["type"] for line in lines(games)].count("tokens-given") == 1


def test_a_key_the_cli_cannot_see_is_found_after_a_repair_cut_the_log(games: Path, clock: FakeClock) -> None:
    """The index is caught up from the log under its lock: a log cut shorter (``repair`` of a torn
    tail) is read again, so a key whose events were cut is a key never used."""
    with TestClient(build_app(games, clock=clock, deadline_seconds=None)) as server:
        game = placed_blockade(server)
        headers = {**game.players["Anne"], "Idempotency-Key": "cut"}
        size = (games / "g.jsonl").stat().st_size
        head = (games / "g.head").read_bytes()
        first = server.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=headers)
        assert first.status_code == 200
        # as if the machine had crashed mid-append: the line torn, the head anchor not yet moved
        data = (games / "g.jsonl").read_bytes()
        (games / "g.jsonl").write_bytes(data[: len(data) - 5])
        (games / "g.head").write_bytes(head)
        assert game_log(games, "g").repair() and (games / "g.jsonl").stat().st_size == size
        again = server.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["L"]}, headers=headers)
        assert again.status_code == 200 and again.json()["events"][0]["data"]["tokens"] == ["L"]
    verified(games)


def test_a_restart_cuts_the_torn_tail_of_an_append_a_crash_cut_short(games: Path, clock: FakeClock) -> None:
    with TestClient(build_app(games, clock=clock, deadline_seconds=None)) as first_server:
        game = placed_blockade(first_server)
    whole = (games / "g.jsonl").read_bytes()
    with open(games / "g.jsonl", "ab") as log_file:  # the first bytes of an append, never fsync'd
        log_file.write(b'{"hash":"0123","prev":')
    with TestClient(build_app(games, clock=clock, deadline_seconds=None)) as restarted:
        assert (games / "g.jsonl").read_bytes() == whole
        assert restarted.get("/api/games/g/view").status_code == 200
        tokens = restarted.post(
            "/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=game.players["Anne"]
        )
        assert tokens.status_code == 200
    verified(games)


def test_a_restart_leaves_a_log_missing_anchored_lines_for_repair_to_report(
    games: Path, clock: FakeClock
) -> None:
    with TestClient(build_app(games, clock=clock, deadline_seconds=None)) as first_server:
        placed_blockade(first_server)
    data = (games / "g.jsonl").read_bytes()
    cut = data[: data.rstrip(b"\n").rfind(b"\n") + 1] + b'{"torn'  # the last anchored line gone
    (games / "g.jsonl").write_bytes(cut)
    with TestClient(build_app(games, clock=clock, deadline_seconds=None)) as restarted:
        assert (games / "g.jsonl").read_bytes() == cut
        refused = error_of(restarted.get("/api/games/g/view"), 503)  # torn: repair tells the loss
        assert refused["code"] == 4 and "mortecouille repair g" in refused["message"], refused


def test_a_retry_after_a_restart_is_still_answered_from_the_log(games: Path, clock: FakeClock) -> None:
    with TestClient(build_app(games, clock=clock, deadline_seconds=None)) as first_server:
        game = placed_blockade(first_server)
        headers = {**game.players["Anne"], "Idempotency-Key": "after-crash"}
        first = first_server.post(
            "/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=headers
        )
    size = (games / "g.jsonl").stat().st_size
    with TestClient(build_app(games, clock=clock, deadline_seconds=None)) as restarted:
        retry = restarted.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=headers)
    assert retry.status_code == 200 and retry.json() == first.json()
    assert (games / "g.jsonl").stat().st_size == size
    verified(games)


def test_a_log_with_idempotency_keys_still_chains_line_by_line(
    client: TestClient[Litestar], games: Path
) -> None:
    game = placed_blockade(client)
    for number, (ship, player) in enumerate((("A1", "Anne"), ("B1", "Bart"))):
        headers = {**game.players[player], "Idempotency-Key": f"k{number}"}
        assert (
            client.post(
                "/api/games/g/tokens", json={"ship": ship, "tokens": ["F"]}, headers=headers
            ).status_code
            == 200
        )
    resolved = client.post("/api/games/g/resolve", json={}, headers={**game.referee, "Idempotency-Key": "r1"})
    assert resolved.status_code == 200
    prev = "0" * 64
    for number, line in enumerate((games / "g.jsonl").read_bytes().splitlines()):
        prev = check_line(line, number + 1, number, prev)
    batch = [line for line in lines(games) if "idem" in line][-1]
    # a seeded game's resolve starts with the players' dice contributions the referee drew (D3)
    assert batch["type"] == "dice-contribution-committed"
    assert batch["idem"]["events"] == len(resolved.json()["events"])
    verified(games)


def test_an_idempotency_key_too_long_is_400(client: TestClient[Litestar]) -> None:
    game = placed_blockade(client)
    headers = {**game.players["Anne"], "Idempotency-Key": "k" * 201}
    answer = client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=headers)
    assert (
        error_of(answer, 400)["field"] == "Idempotency_Key"
        or answer.json()["error"]["field"] == "Idempotency-Key"
    )


# ------------------------------------------------------------------------------ whole games, verified


def test_a_whole_blockade_game_through_the_api_verifies(client: TestClient[Litestar], games: Path) -> None:
    game = placed_blockade(client)
    anne, bart = game.players["Anne"], game.players["Bart"]
    for turn in range(1, 4):
        assert (
            client.post(
                "/api/games/g/tokens", json={"ship": "A1", "tokens": ["F", "F", "R", None]}, headers=anne
            ).status_code
            == 200
        )
        assert (
            client.post(
                "/api/games/g/tokens", json={"ship": "B1", "tokens": ["F", "L", "-", "F"]}, headers=bart
            ).status_code
            == 200
        )
        resolved = client.post("/api/games/g/resolve", json={}, headers=game.referee)
        assert resolved.status_code == 200, resolved.text
        if client.get("/api/games/g/view").json()["status"] == "ended":
            break
        assert client.get("/api/games/g/view").json()["turn"] == turn + 1
    ruling = client.post("/api/games/g/rulings", headers=game.referee, json={
        "rule": "P3", "text": "the sloop scraped the rock", "adjust": [{"ship": "A1", "damage": 1}]})  # fmt: skip
    assert ruling.status_code == 200, ruling.text
    ended = client.post("/api/games/g/end", json={"winner": "Bart"}, headers=game.referee)
    assert ended.status_code == 200 and ended.json()["events"][-1]["data"]["seed"]
    view = client.get("/api/games/g/view").json()
    assert view["status"] == "ended" and view["seed"] and view["winner"] == "Bart"
    verified(games)


def test_a_mortecouille_turn_through_the_api_verifies(client: TestClient[Litestar], games: Path) -> None:
    game = mortecouille_ready(client)
    anne, bart = game.players["Anne"], game.players["Bart"]
    assert (
        client.post(
            "/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "advance"}]}, headers=anne
        ).status_code
        == 200
    )
    given = client.post(
        "/api/games/g/orders", json={"ship": "Kraken", "actions": [{"kind": "maneuver", "angle": "1/4", "side": "left"}]}, headers=bart
    )
    assert given.status_code == 200, given.text
    # before the turn is resolved the spectator and Anne see Bart's orders sealed
    for viewer in ({}, anne):
        shown = [
            e
            for e in client.get("/api/games/g/view", headers=viewer).json()["events"]
            if e["type"] == "order-given"
        ]
        kraken = [e for e in shown if e["ship"] == "Kraken"]
        assert kraken and all(e["sealed"] and "data" not in e for e in kraken)
    resolved = client.post("/api/games/g/resolve", json={}, headers=game.referee)
    assert resolved.status_code == 200, resolved.text
    assert client.get("/api/games/g/view").json()["turn"] == 2
    shown = client.get("/api/games/g/view", headers=anne).json()["events"]
    assert any(e["type"] == "order-given" and e["ship"] == "Kraken" and not e["sealed"] for e in shown)
    verified(games)


def resolved_blockade_turn(client: TestClient[Litestar]) -> Game:
    """A blockade game after one turn resolved (a command boundary at its last seq)."""
    game = placed_blockade(client)
    for ship, tokens, player in (("A1", ["F", "F", "R", None], "Anne"), ("B1", ["F", "L", "-", "F"], "Bart")):
        body = {"ship": ship, "tokens": tokens}
        given = client.post("/api/games/g/tokens", json=body, headers=game.players[player])
        assert given.status_code == 200, given.text
    resolved = client.post("/api/games/g/resolve", json={}, headers=game.referee)
    assert resolved.status_code == 200, resolved.text
    return game


def test_the_referee_forks_a_game_into_a_new_one_with_its_own_seats_that_verifies(
    client: TestClient[Litestar], games: Path
) -> None:
    game = resolved_blockade_turn(client)
    last = lines(games)[-1]["seq"]
    before = (games / "g.jsonl").read_bytes()
    answer = client.post("/api/games/g/fork", json={"name": "what-if", "at": last}, headers=game.referee)
    assert answer.status_code == 201, answer.text
    forked = answer.json()
    assert forked["game"] == "what-if" and forked["forked_from"] == "g" and forked["seq"] == last
    assert forked["referee"]["link"].endswith("/referee/what-if#token=" + forked["referee"]["token"])
    assert set(forked["players"]) == {"Anne", "Bart"}
    assert (games / "g.jsonl").read_bytes() == before  # the original is only read
    created = lines(games, "what-if")[0]
    assert created["forked_from"] == "g" and created["forked_at_seq"] == last
    verified(games, "what-if")
    # the new game's seats are its own: its referee commands there, the original's does not
    new_referee = bearer(forked["referee"]["token"])
    error_of(client.post("/api/games/what-if/deadline", json={"seconds": 60}, headers=game.referee), 401)
    set_there = client.post("/api/games/what-if/deadline", json={"seconds": 60}, headers=new_referee)
    assert set_there.status_code == 200, set_there.text


def test_only_the_referee_forks(client: TestClient[Litestar], games: Path) -> None:
    game = resolved_blockade_turn(client)
    before = file_digests(games)
    for headers in ({}, game.players["Anne"]):
        answer = client.post("/api/games/g/fork", json={"name": "mine", "at": 0}, headers=headers)
        error_of(answer, 403)
    assert file_digests(games) == before


def test_a_fork_point_that_is_no_command_boundary_is_refused_naming_at_and_writes_nothing(
    client: TestClient[Litestar], games: Path
) -> None:
    game = resolved_blockade_turn(client)
    started = next(line["seq"] for line in lines(games) if line["type"] == "turn-started")
    before = file_digests(games)
    refusals = [
        ({"at": started}, "at", "inside the resolution of turn 1"),
        ({"at": 10_000}, "at", "is not in the log"),
        ({"at": -1}, "at", "is not in the log"),
        ({"at": "first"}, "at", ""),
        ({"at": 0, "dice": "loaded"}, "dice", "is not one of seeded, table"),
        ({"at": 0, "name": "a/b"}, "name", "use letters, digits"),
        ({"at": 0, "seed": "x"}, "seed", ""),  # no chosen seed: the fork's is fresh and random
    ]
    for body, field_named, said in refusals:
        sent = {"name": "w", **body}
        error = error_of(client.post("/api/games/g/fork", json=sent, headers=game.referee), 400)
        assert error["field"] == field_named and said in error["message"], (body, error)
        # named as the client sent it, never as the CLI's option (`--at`)
        assert error["message"].startswith(f"{field_named}: ") and "--" not in error["message"], error
    assert file_digests(games) == before


def test_a_fork_to_a_name_taken_is_refused_as_a_creation_is(
    client: TestClient[Litestar], games: Path
) -> None:
    game = resolved_blockade_turn(client)
    create(client, "taken")
    before = file_digests(games)
    error_of(client.post("/api/games/g/fork", json={"name": "taken", "at": 0}, headers=game.referee), 409)
    assert file_digests(games) == before


def test_a_fork_takes_the_dice_asked_for(client: TestClient[Litestar], games: Path) -> None:
    game = resolved_blockade_turn(client)
    body = {"name": "by-hand", "at": 0, "dice": "table"}
    answer = client.post("/api/games/g/fork", json=body, headers=game.referee)
    assert answer.status_code == 201, answer.text
    assert lines(games, "by-hand")[0]["dice_mode"] == "table"
    verified(games, "by-hand")


def test_table_dice_are_typed_on_resolve(client: TestClient[Litestar], games: Path) -> None:
    game = create(client, dice="table")
    client.post(
        "/api/games/g/place",
        json={"ship": "A1", "square": "B2", "kind": "sloop"},
        headers=game.players["Anne"],
    )
    client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=game.players["Anne"])
    before = file_digests(games)
    too_many = client.post(
        "/api/games/g/resolve", json={"dice": [3, 3, 3, 3, 3, 3, 3, 3, 3]}, headers=game.referee
    )
    assert error_of(too_many, 400)["field"] in ("dice", "resolve")
    assert file_digests(games) == before
    assert client.post("/api/games/g/resolve", json={}, headers=game.referee).status_code == 200
    verified(games)


def test_a_player_is_offered_the_targets_in_range_with_their_odds(client: TestClient[Litestar]) -> None:
    game = create(client, ruleset="mortecouille", budget=100000)
    anne, bart = game.players["Anne"], game.players["Bart"]
    for path, body, headers in [
        ("buy", {"ship": "Hope", "kind": "red-small"}, anne),
        ("buy", {"ship": "Black Pearl", "kind": "yellow-big", "options": ["catapult"]}, bart),
        ("seal", {"forfeit": True}, anne),
        ("seal", {"forfeit": True}, bart),
        ("place", {"ship": "Hope", "square": "C3"}, anne),
        ("place", {"ship": "Black Pearl", "square": "C6", "facing": "E"}, bart),
    ]:
        assert client.post(f"/api/games/g/{path}", json=body, headers=headers).status_code == 200
    offered = client.get("/api/games/g/view", headers=bart).json()["targets"]
    assert list(offered) == ["Black Pearl"]
    by_position = {entry["position"]: entry for entry in offered["Black Pearl"]}
    assert by_position["starboard"]["target"] == "Hope" and by_position["starboard"]["distance"] == 3
    assert 0 < by_position["catapult"]["odds"] < by_position["starboard"]["odds"] <= 1
    assert client.get("/api/games/g/view").json()["targets"] == {}
    # a name with spaces is a JSON string as any other
    attack = {"kind": "attack", "position": "starboard", "target": "Hope"}
    given = client.post(
        "/api/games/g/orders",
        json={"ship": "Black Pearl", "actions": [attack, {"kind": "catapult", "target": "Hope"}]},
        headers=bart,
    )
    assert given.status_code == 200, given.text
    unnamed = client.post(
        "/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "attack", "position": "bow"}]}, headers=anne
    )
    assert error_of(unnamed, 400)["field"] == "actions[0].target"


def test_the_price_list_is_served_as_prices_json_prints_it(client: TestClient[Litestar], games: Path) -> None:
    printed = json.loads(run(games, "prices", "--json").output)
    assert client.get("/api/prices").json() == printed


# --------------------------------------------------------------------------------------- deadlines


def test_a_passed_deadline_resolves_a_seeded_turn_with_ships_without_orders_idle(
    client: TestClient[Litestar], games: Path, clock: FakeClock
) -> None:
    game = mortecouille_ready(client)
    service = client.app.state.service
    client.post(
        "/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "advance"}]}, headers=game.players["Anne"]
    )
    answer = client.post("/api/games/g/deadline", json={"seconds": 120}, headers=game.referee)
    assert answer.status_code == 200 and answer.json()["events"][0]["type"] == "deadline-set"
    assert client.get("/api/games/g/view").json()["deadline"] == "2026-12-01T14:02:00+00:00"
    clock.advance(60)
    assert service.check_deadlines() == []
    extended = client.post("/api/games/g/deadline", json={"seconds": 300}, headers=game.referee)  # 14:06
    assert extended.status_code == 200
    clock.advance(120)  # 14:03: the first deadline would have passed, the extended one has not
    assert service.check_deadlines() == []
    clock.advance(180)
    assert service.check_deadlines() == ["g"]
    passed = [line for line in lines(games) if line["type"] == "deadline-passed"]
    assert passed == [passed[0]] and passed[0]["idle"] == ["Kraken"] and passed[0]["resolved"]
    following = lines(games)[passed[0]["seq"] + 1]
    # the turn is locked (D3: its dice contributions final), then resolved, in the same append
    assert following["type"] == "turn-locked" and "idem" not in following
    assert lines(games)[passed[0]["seq"] + 2]["type"] == "turn-started"
    wind = [line for line in lines(games) if line["type"] == "wind-points" and line.get("ship") == "Kraken"]
    assert client.get("/api/games/g/view").json()["turn"] == 2 and wind is not None
    assert client.get("/api/games/g/view").json()["deadline"] is None
    assert service.check_deadlines() == []
    verified(games)


def test_a_passed_deadline_of_a_table_dice_turn_is_recorded_and_the_referee_resolves(
    client: TestClient[Litestar], games: Path, clock: FakeClock
) -> None:
    game = create(client, dice="table")
    client.post(
        "/api/games/g/place",
        json={"ship": "A1", "square": "B2", "kind": "sloop"},
        headers=game.players["Anne"],
    )
    client.post(
        "/api/games/g/place",
        json={"ship": "B1", "square": "H8", "kind": "sloop"},
        headers=game.players["Bart"],
    )
    client.post("/api/games/g/deadline", json={"seconds": 10}, headers=game.referee)
    clock.advance(11)
    assert client.app.state.service.check_deadlines() == ["g"]
    passed = lines(games)[-1]
    assert passed["type"] == "deadline-passed" and not passed["resolved"] and passed["idle"] == ["A1", "B1"]
    view = client.get("/api/games/g/view").json()
    assert view["turn"] == 1 and view["deadline"] is None and view["deadline_passed"] == passed["at"]
    assert (
        client.post("/api/games/g/resolve", json={"idle_turn": True}, headers=game.referee).status_code == 200
    )
    verified(games)


def test_a_deadline_outlives_a_restart(games: Path, clock: FakeClock) -> None:
    with TestClient(build_app(games, clock=clock, deadline_seconds=None)) as first_server:
        game = placed_blockade(first_server)
        first_server.post("/api/games/g/deadline", json={"seconds": 30}, headers=game.referee)
    clock.advance(31)
    with TestClient(build_app(games, clock=clock, deadline_seconds=None)) as restarted:
        assert restarted.app.state.service.check_deadlines() == ["g"]
    verified(games)


def test_a_deadline_needs_the_referee_and_a_sensible_duration(
    client: TestClient[Litestar], games: Path
) -> None:
    game = placed_blockade(client)
    before = file_digests(games)
    assert (
        error_of(client.post("/api/games/g/deadline", json={"seconds": 0}, headers=game.referee), 400)[
            "field"
        ]
        == "seconds"
    )
    assert error_of(client.post("/api/games/g/deadline", json={"seconds": 60}), 403)
    assert file_digests(games) == before


# ------------------------------------------------------------------------------------ live push


@pytest.fixture
def server(games: Path, clock: FakeClock) -> Iterator[httpx.Client]:
    """The service on a real loopback socket (uvicorn in a thread): a stream needs one."""
    app = build_app(games, clock=clock, deadline_seconds=None, poll_seconds=0.05, heartbeat_seconds=0.5)
    with web_server.serving_in_a_thread(app) as http:
        yield http


@dataclass
class Message:
    id: int | None
    event: str
    data: dict[str, Any]


class StreamReader:
    """Reads one SSE stream in a thread, message by message."""

    def __init__(self, http: httpx.Client, headers: dict[str, str], game: str = "g") -> None:
        self.messages: list[Message] = []
        self.comments = 0
        self._lock = threading.Condition()
        self._stop = threading.Event()
        self._response = http.stream("GET", f"/api/games/{game}/stream", headers=headers)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with self._response as response:
            fields: dict[str, str] = {}
            try:
                for line in response.iter_lines():
                    if self._stop.is_set():  # the server's heartbeats wake this loop up
                        return
                    if line.startswith(":"):
                        self.comments += 1
                    elif line:
                        name, _, value = line.partition(": ")
                        fields[name] = value
                    elif fields:
                        message = Message(
                            int(fields["id"]) if "id" in fields else None, fields.get("event", "message"),
                            json.loads(fields["data"]),
                        )  # fmt: skip
                        with self._lock:
                            self.messages.append(message)
                            self._lock.notify_all()
                        fields = {}
            except httpx.HTTPError:
                return

    def until(self, condition: Any, timeout: float = 30) -> list[Message]:
        """Wait (at most ``timeout`` s: a failure, not a timing check) until ``condition(messages)``."""
        with self._lock:
            assert self._lock.wait_for(lambda: condition(self.messages), timeout), self.messages
            return list(self.messages)

    def events(self) -> list[Message]:
        return [m for m in self.messages if m.event == "event"]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


def test_the_stream_resumes_after_last_event_id_with_no_gap_and_no_duplicate(server: httpx.Client) -> None:
    game = placed_blockade(server)  # type: ignore[arg-type]
    first = StreamReader(server, {})
    first.until(lambda ms: len([m for m in ms if m.event == "event"]) == 3)
    first.close()
    assert [m.id for m in first.events()] == [0, 1, 2]
    server.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=game.players["Anne"])
    server.post("/api/games/g/tokens", json={"ship": "B1", "tokens": ["F"]}, headers=game.players["Bart"])
    resumed = StreamReader(server, {"Last-Event-ID": "1"})
    resumed.until(lambda ms: len([m for m in ms if m.event == "event"]) == 3)
    server.post("/api/games/g/resolve", json={}, headers=game.referee)
    view = server.get("/api/games/g/view").json()
    last = view["next_seq"] - 1
    resumed.until(lambda ms: any(m.id == last and m.event == "event" for m in ms))
    resumed.close()
    seqs = [m.id for m in resumed.events()]
    assert seqs == list(range(2, last + 1))


def test_an_append_of_the_service_reaches_a_listener_without_waiting_for_the_watchers_tick(
    games: Path, clock: FakeClock
) -> None:
    """The watcher's own tick is for appends made by others; what the service appends wakes it at
    once. Here the tick never comes (an hour), so only the wake-up can deliver the tokens."""
    app = build_app(games, clock=clock, deadline_seconds=None, poll_seconds=3600, heartbeat_seconds=0.5)
    with web_server.serving_in_a_thread(app) as http:
        game = placed_blockade(http)  # type: ignore[arg-type]
        reader = StreamReader(http, {})
        reader.until(lambda ms: len([m for m in ms if m.event == "event"]) == 3)
        answer = http.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=game.players["Anne"])
        assert answer.status_code == 200, answer.text
        messages = reader.until(lambda ms: any(m.id == 3 for m in ms))
        reader.close()
        assert [m.data["type"] for m in messages if m.id == 3] == ["tokens-given"]


def test_an_event_the_cli_appends_reaches_a_listener(server: httpx.Client, games: Path) -> None:
    placed_blockade(server)  # type: ignore[arg-type]
    reader = StreamReader(server, {})
    reader.until(lambda ms: len(ms) >= 3)
    run_command(game_log(games, "g"), lambda state: GiveTokens(ship="A1", tokens=("F",)))
    messages = reader.until(lambda ms: any(m.id == 3 for m in ms))
    reader.close()
    assert [m.data["type"] for m in messages if m.id == 3] == ["tokens-given"]


def test_a_spectators_stream_never_carries_a_players_orders_before_they_are_revealed(
    server: httpx.Client,
) -> None:
    game = placed_blockade(server)  # type: ignore[arg-type]
    spectator = StreamReader(server, {})
    bart = StreamReader(server, game.players["Bart"])
    anne = StreamReader(server, game.players["Anne"])
    server.post(
        "/api/games/g/tokens", json={"ship": "A1", "tokens": ["L", "L", "R"]}, headers=game.players["Anne"]
    )
    for reader in (spectator, bart, anne):
        reader.until(lambda ms: any(m.id == 3 for m in ms))
    secret = '"L","L","R"'
    for reader in (spectator, bart):
        sent = json.dumps([m.data for m in reader.messages], separators=(",", ":"))
        assert secret not in sent and "tokens" not in [
            k for m in reader.messages for k in m.data.get("data", {})
        ]
        assert [m.data["sealed"] for m in reader.messages if m.id == 3] == [True]
    assert [m.data["sealed"] for m in anne.messages if m.id == 3] == [False]
    server.post("/api/games/g/tokens", json={"ship": "B1", "tokens": ["F"]}, headers=game.players["Bart"])
    server.post("/api/games/g/resolve", json={}, headers=game.referee)
    revealed = spectator.until(lambda ms: any(m.event == "revealed" for m in ms))
    shown = next(m for m in revealed if m.event == "revealed")
    assert [e["seq"] for e in shown.data["events"]] == [3, 4]
    assert shown.data["events"][0]["data"]["tokens"] == ["L", "L", "R"]
    for reader in (spectator, bart, anne):
        reader.close()


def test_purchases_are_revealed_on_the_stream_when_the_last_fleet_is_sealed(server: httpx.Client) -> None:
    game = create(server, ruleset="mortecouille", budget=100000)  # type: ignore[arg-type]
    anne, bart = game.players["Anne"], game.players["Bart"]
    spectator = StreamReader(server, {})
    server.post("/api/games/g/buy", json={"ship": "Hope", "kind": "red-small"}, headers=anne)
    assert server.post("/api/games/g/seal", json={"forfeit": True}, headers=anne).status_code == 200
    spectator.until(lambda ms: any(m.id == 2 for m in ms))
    assert "red-small" not in json.dumps([m.data for m in spectator.messages])
    assert not any(m.event == "revealed" for m in spectator.messages)
    server.post("/api/games/g/seal", json={"forfeit": True}, headers=bart)
    messages = spectator.until(lambda ms: any(m.event == "revealed" for m in ms))
    spectator.close()
    revealed = next(m for m in messages if m.event == "revealed")
    assert revealed.id == 3 and [e["type"] for e in revealed.data["events"]] == [
        "ship-bought",
        "fleet-sealed",
    ]
    assert revealed.data["events"][0]["data"]["kind"] == "red-small"


def test_an_idle_stream_sends_heartbeats(server: httpx.Client) -> None:
    create(server)  # type: ignore[arg-type]
    reader = StreamReader(server, {})
    reader.until(lambda ms: len(ms) == 1)
    deadline = time.monotonic() + 30
    while reader.comments == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    reader.close()
    assert reader.comments >= 1
