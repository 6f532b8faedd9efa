"""Fair play through the game service (docs/service.md, "Receipts and head codes" and
"Dice nobody can foresee"): a receipt for every kind of submission, which ``verify --receipts``
accepts, and the same receipt for a retry; the head code in the view and the resolve's answer,
which ``verify --head-code`` accepts; a turn of contributed dice played through the API (commit,
lock, reveal, resolve) that ``verify`` re-derives; refusals citing D3 that write nothing; and
deadlines on a fake clock that lock a contributed turn and resolve it once the reveals are in, or
without the missing ones when the grace is over."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app.commands import commit_dice_contribution, run_command
from mortecouille.app.deadlines import pass_deadline_if_due, set_deadline
from mortecouille.app.games import game_log
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.orders import Advance
from mortecouille.replays.reading.receipts import shown_code, stretched_code
from mortecouille.web.server import build_app
from tests import web_server
from tests.cli_helpers import run
from tests.helpers import file_digests
from tests.test_web_api import (
    FakeClock,
    Game,
    StreamReader,
    create,
    error_of,
    lines,
    mortecouille_ready,
    placed_blockade,
    verified,
)

pytestmark = pytest.mark.service

#: What a page sends: its own salt for each receipt (16 random bytes, hex)
SALT = "0a16f6d5" * 4


def salt(n: int) -> str:
    """A distinct valid salt per submission of a test."""
    return f"{n:032x}"


def contribution_of(player: str, turn: int = 1) -> tuple[str, str]:
    """A contribution as a page draws it (32 lowercase hex digits) and its commitment (SHA-256)."""
    contribution = hashlib.sha256(f"{player} {turn}".encode()).hexdigest()[:32]
    return contribution, hashlib.sha256(contribution.encode()).hexdigest()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def client(games: Path, clock: FakeClock) -> Iterator[TestClient[Litestar]]:
    app = build_app(games, clock=clock, deadline_seconds=None, reveal_grace_seconds=30)
    with TestClient(app) as test_client:
        yield test_client


def ok(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def receipts_file(tmp_path: Path, receipts: list[dict[str, Any]], name: str = "receipts.json") -> Path:
    """The file a player page offers: ``{"receipts": [...]}``."""
    path = tmp_path / name
    path.write_text(json.dumps({"receipts": receipts}))
    return path


def verify_receipts(games: Path, path: Path) -> list[str]:
    """``verify g --receipts PATH`` must pass; its receipt lines."""
    result = run(games, "verify", "g", "--receipts", str(path))
    assert result.exit_code == 0, result.output
    return [line for line in result.output.splitlines() if "receipt " in line]


# ------------------------------------------------------------------------------------------ receipts


def test_every_kind_of_submission_is_answered_with_a_receipt_verify_accepts(
    client: TestClient[Litestar], games: Path, tmp_path: Path
) -> None:
    game = create(client, ruleset="mortecouille", budget=100000)
    anne, bart = game.players["Anne"], game.players["Bart"]
    steps: list[tuple[str, str, dict[str, Any], dict[str, str], str, str]] = [
        ("POST", "buy", {"ship": "Hope", "kind": "red-small"}, anne, "purchase", "Hope"),
        ("POST", "buy", {"ship": "Decoy", "kind": "red-small"}, anne, "purchase", "Decoy"),
        ("POST", "equip", {"ship": "Hope", "option": "catapult"}, anne, "purchase", "Hope"),
        ("POST", "unbuy", {"ship": "Decoy"}, anne, "purchase-withdrawn", "Decoy"),
        ("POST", "buy", {"ship": "Kraken", "kind": "yellow-big"}, bart, "purchase", "Kraken"),
        ("POST", "seal", {"forfeit": True}, anne, "seal", "Anne"),
        ("POST", "seal", {"forfeit": True}, bart, "seal", "Bart"),
        ("POST", "place", {"ship": "Hope", "square": "C3"}, anne, "placement", "Hope"),
        ("POST", "place", {"ship": "Kraken", "square": "E6", "facing": "S"}, game.referee, "placement", "Kraken"),
        ("POST", "orders", {"ship": "Hope", "actions": [{"kind": "advance"}]}, anne, "orders", "Hope"),
        ("DELETE", "orders/Hope", {}, anne, "orders-withdrawn", "Hope"),
        ("POST", "orders", {"ship": "Hope", "actions": [{"kind": "idle"}]}, anne, "orders", "Hope"),
        ("POST", "commit", {"commitment": contribution_of("Anne")[1]}, anne, "contribution", "Anne"),
    ]  # fmt: skip
    receipts = []
    for n, (method, path, body, headers, kind, subject) in enumerate(steps):
        answer = ok(
            client.request(method, f"/api/games/g/{path}", json={**body, "salt": salt(n)}, headers=headers)
        )
        receipt = answer["receipt"]
        assert (receipt["kind"], receipt["subject"], receipt["salt"]) == (kind, subject, salt(n)), path
        assert receipt["game"] == "g" and receipt["seq"] == answer["events"][0]["seq"]
        assert receipt["last"] == answer["seq"] and receipt["version"] == 1
        assert receipt["head"] == lines(games)[receipt["last"]]["hash"]
        receipts.append(receipt)
    verified_lines = verify_receipts(games, receipts_file(tmp_path, receipts))
    assert len(verified_lines) == len(steps) and all(line.startswith("ok") for line in verified_lines)


def test_a_blockade_players_tokens_and_a_referees_placement_get_receipts_too(
    client: TestClient[Litestar], games: Path, tmp_path: Path
) -> None:
    game = placed_blockade(client)
    placed = ok(
        client.post(
            "/api/games/g/place",
            json={"ship": "R1", "square": "E5", "kind": "sloop", "owner": "Anne"},
            headers=game.referee,
        )
    )
    tokens = ok(
        client.post(
            "/api/games/g/tokens", json={"ship": "A1", "tokens": ["F", "L"]}, headers=game.players["Anne"]
        )
    )
    assert placed["receipt"]["kind"] == "placement" and tokens["receipt"]["kind"] == "tokens"
    # no salt sent: the service drew one, 16 random bytes
    assert len(tokens["receipt"]["salt"]) == 32 and tokens["receipt"]["salt"] != placed["receipt"]["salt"]
    verify_receipts(games, receipts_file(tmp_path, [placed["receipt"], tokens["receipt"]]))


def test_the_tables_acts_get_no_receipt(client: TestClient[Litestar]) -> None:
    game = placed_blockade(client)
    client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=game.players["Anne"])
    for path, body in (
        ("deadline", {"seconds": 60}),
        ("rulings", {"rule": "B2", "text": "fine"}),
        ("resolve", {"partial": True}),
    ):
        assert "receipt" not in ok(client.post(f"/api/games/g/{path}", json=body, headers=game.referee))


@pytest.mark.parametrize("bad", ["abc", "0A16F6D5" * 4, "g" * 32, "0" * 130, ""])
def test_a_salt_no_receipt_may_hold_is_400_naming_salt_and_writes_nothing(
    client: TestClient[Litestar], games: Path, bad: str
) -> None:
    game = placed_blockade(client)
    before = file_digests(games)
    answer = client.post(
        "/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"], "salt": bad}, headers=game.players["Anne"]
    )
    assert error_of(answer, 400)["field"] == "salt"
    withdraw = client.request(
        "DELETE", "/api/games/g/orders/A1", json={"salt": bad}, headers=game.players["Anne"]
    )
    assert error_of(withdraw, 400)["field"] == "salt"
    assert file_digests(games) == before


def test_a_retry_is_answered_the_receipt_of_the_first_answer(
    client: TestClient[Litestar], games: Path, clock: FakeClock, tmp_path: Path
) -> None:
    game = placed_blockade(client)
    anne = {**game.players["Anne"], "Idempotency-Key": "retry-1"}
    body = {"ship": "A1", "tokens": ["F", "R"], "salt": salt(1)}
    first = ok(client.post("/api/games/g/tokens", json=body, headers=anne))
    after = (games / "g.jsonl").read_bytes()
    again = ok(client.post("/api/games/g/tokens", json=body, headers=anne))
    other_salt = ok(client.post("/api/games/g/tokens", json={**body, "salt": salt(2)}, headers=anne))
    no_salt = ok(
        client.post("/api/games/g/tokens", json={k: v for k, v in body.items() if k != "salt"}, headers=anne)
    )
    assert first["receipt"]["salt"] == salt(1)
    assert again["receipt"] == other_salt["receipt"] == no_salt["receipt"] == first["receipt"]
    assert (games / "g.jsonl").read_bytes() == after
    # after a restart the service no longer remembers the salt: the same salt sent again gives
    # the same receipt, and a key first sent with no salt is answered with the salt it derives
    bart = {**game.players["Bart"], "Idempotency-Key": "retry-2"}
    unsalted = ok(client.post("/api/games/g/tokens", json={"ship": "B1", "tokens": ["L"]}, headers=bart))
    with TestClient(build_app(games, clock=clock, deadline_seconds=None)) as restarted:
        assert (
            ok(restarted.post("/api/games/g/tokens", json=body, headers=anne))["receipt"] == first["receipt"]
        )
        again_unsalted = restarted.post(
            "/api/games/g/tokens", json={"ship": "B1", "tokens": ["L"]}, headers=bart
        )
        assert ok(again_unsalted)["receipt"] == unsalted["receipt"]
    verify_receipts(games, receipts_file(tmp_path, [first["receipt"], unsalted["receipt"]]))


# ------------------------------------------------------------------------------------------ head codes


def test_the_head_code_in_the_view_and_the_resolves_answer_is_one_verify_accepts(
    client: TestClient[Litestar], games: Path
) -> None:
    game = placed_blockade(client)
    assert client.get("/api/games/g/view").json()["head_code"] is None  # no turn has ended
    client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=game.players["Anne"])
    resolved = ok(client.post("/api/games/g/resolve", json={"partial": True}, headers=game.referee))
    head = resolved["head_code"]
    ended = next(line for line in lines(games) if line["type"] == "turn-ended")
    assert head == {"turn": 1, "seq": ended["seq"], "code": shown_code(stretched_code(ended["hash"]))}
    assert re.fullmatch(r"\d{4} \d{4} \d{4}", head["code"])  # read aloud in three groups of four
    for headers in ({}, game.referee, game.players["Bart"]):
        assert client.get("/api/games/g/view", headers=headers).json()["head_code"] == head
    # scrubbing back before the turn ended shows no code; a later event does not move it
    assert client.get(f"/api/games/g/view?seq={head['seq'] - 1}").json()["head_code"] is None
    client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["L"]}, headers=game.players["Anne"])
    assert client.get("/api/games/g/view").json()["head_code"] == head
    checked = run(games, "verify", "g", "--head-code", f"{head['seq']}:{head['code']}")
    assert checked.exit_code == 0, checked.output
    wrong = "0000 0000 0000" if head["code"] != "0000 0000 0000" else "1111 1111 1111"
    assert run(games, "verify", "g", "--head-code", f"{head['seq']}:{wrong}").exit_code == 4


# ------------------------------------------------------------------------------- contributed dice


def test_a_contributed_turn_is_played_through_the_api_and_verify_rederives_its_dice(
    client: TestClient[Litestar], games: Path, tmp_path: Path
) -> None:
    game = mortecouille_ready(client)
    anne, bart = game.players["Anne"], game.players["Bart"]
    (anne_part, anne_commitment), (bart_part, bart_commitment) = (
        contribution_of("Anne"),
        contribution_of("Bart"),
    )
    fresh = client.get("/api/games/g/view", headers=anne).json()
    assert (fresh["dice_scheme"], fresh["locked"], fresh["committed"], fresh["awaiting_reveal"]) == (
        "contributed", False, [], []
    )  # fmt: skip
    assert fresh["own_contribution"] == {"turn": 1, "commitment": None, "revealed": False}
    assert client.get("/api/games/g/view", headers=game.referee).json()["own_contribution"] is None
    receipts = [
        ok(client.post("/api/games/g/commit", json={"commitment": anne_commitment}, headers=anne))["receipt"]
    ]
    ok(client.post("/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "advance"}]}, headers=anne))
    ok(client.post("/api/games/g/orders", json={"ship": "Kraken", "actions": [{"kind": "idle"}]}, headers=bart))
    assert not client.get("/api/games/g/view").json()["locked"]  # Bart has not committed yet
    ok(client.post("/api/games/g/commit", json={"commitment": bart_commitment}, headers=bart))
    # every order and every commitment is in: the service locked the turn
    assert lines(games)[-1]["type"] == "turn-locked"
    locked = client.get("/api/games/g/view", headers=anne).json()
    assert locked["locked"] and locked["committed"] == ["Anne", "Bart"] == locked["awaiting_reveal"]
    assert locked["own_contribution"]["commitment"] == anne_commitment
    late = client.post(
        "/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "idle"}], "replace": True}, headers=anne
    )
    assert error_of(late, 422)["rule"] == "D3"
    assert error_of(client.post("/api/games/g/resolve", json={}, headers=game.referee), 422)["rule"] == "D3"
    receipts.append(
        ok(client.post("/api/games/g/reveal", json={"contribution": anne_part}, headers=anne))["receipt"]
    )
    assert receipts[-1]["kind"] == "contribution-revealed"
    assert client.get("/api/games/g/view").json()["awaiting_reveal"] == ["Bart"]
    ok(client.post("/api/games/g/reveal", json={"contribution": bart_part}, headers=bart))
    ready = client.get("/api/games/g/view", headers=anne).json()
    assert ready["awaiting_reveal"] == [] and ready["own_contribution"]["revealed"]
    resolved = ok(client.post("/api/games/g/resolve", json={}, headers=game.referee))
    assert resolved["head_code"]["turn"] == 1 and client.get("/api/games/g/view").json()["turn"] == 2
    turn_2 = client.get("/api/games/g/view").json()
    assert not turn_2["locked"] and turn_2["committed"] == [] and turn_2["awaiting_reveal"] == []
    verify_receipts(games, receipts_file(tmp_path, receipts))
    ok(client.post("/api/games/g/end", json={}, headers=game.referee))
    verified(games)  # every die re-derived from the revealed seed and both contributions
    revealed = {
        line["player"]: line["contribution"]
        for line in lines(games)
        if line["type"] == "dice-contribution-revealed"
    }
    assert revealed == {"Anne": anne_part, "Bart": bart_part}


def test_a_wrong_or_early_reveal_is_refused_citing_d3_and_writes_nothing(
    client: TestClient[Litestar], games: Path
) -> None:
    game = mortecouille_ready(client)
    anne = game.players["Anne"]
    anne_part, anne_commitment = contribution_of("Anne")
    ok(client.post("/api/games/g/commit", json={"commitment": anne_commitment}, headers=anne))
    before = file_digests(games)
    assert (
        error_of(client.post("/api/games/g/commit", json={"commitment": "AB" * 32}, headers=anne), 400)[
            "field"
        ]
        == "commitment"
    )
    early = client.post("/api/games/g/reveal", json={"contribution": anne_part}, headers=anne)
    assert error_of(early, 422)["rule"] == "D3" and "not locked" in early.json()["error"]["message"]
    assert file_digests(games) == before
    ok(client.post("/api/games/g/lock", headers=game.referee))
    before = file_digests(games)
    wrong = client.post(
        "/api/games/g/reveal", json={"contribution": contribution_of("Bart")[0]}, headers=anne
    )
    assert error_of(wrong, 422)["rule"] == "D3" and "does not match" in wrong.json()["error"]["message"]
    none_committed = client.post(
        "/api/games/g/reveal", json={"contribution": anne_part}, headers=game.players["Bart"]
    )
    assert error_of(none_committed, 422)["rule"] == "D3"
    assert (
        error_of(client.post("/api/games/g/reveal", json={"contribution": "xyz"}, headers=anne), 400)["field"]
        == "contribution"
    )
    after_lock = client.post("/api/games/g/commit", json={"commitment": anne_commitment}, headers=anne)
    assert error_of(after_lock, 422)["rule"] == "D3"
    assert file_digests(games) == before


def test_only_the_referee_locks_and_a_turn_locks_once(client: TestClient[Litestar], games: Path) -> None:
    game = mortecouille_ready(client)
    before = file_digests(games)
    assert error_of(client.post("/api/games/g/lock", headers=game.players["Anne"]), 403)
    assert error_of(client.post("/api/games/g/lock"), 403)
    assert error_of(
        client.post("/api/games/g/reveal", json={"contribution": "0" * 32}, headers=game.referee), 403
    )
    assert file_digests(games) == before
    locked = ok(client.post("/api/games/g/lock", headers=game.referee))
    assert [e["type"] for e in locked["events"]] == ["turn-locked"] and "receipt" not in locked
    assert error_of(client.post("/api/games/g/lock", headers=game.referee), 422)["rule"] == "D3"


def test_a_lock_before_the_game_can_start_is_refused_citing_f3_and_the_fleets_can_still_be_sealed(
    client: TestClient[Litestar], games: Path
) -> None:
    """The page hides *Lock* until the game is played, and the API refuses it too: a turn locked
    while fleets are bought would take no seal or placement again (D3), and nothing unlocks it."""
    game = create(client, ruleset="mortecouille", budget=100000)
    anne = game.players["Anne"]
    ok(client.post("/api/games/g/buy", json={"ship": "Hope", "kind": "red-small"}, headers=anne))
    before = file_digests(games)
    refusal = error_of(client.post("/api/games/g/lock", headers=game.referee), 422)
    assert refusal["rule"] == "F3" and "turn 1 cannot be locked" in refusal["message"]
    assert "fleet not sealed yet for Anne, Bart" in refusal["message"]
    assert file_digests(games) == before
    assert not client.get("/api/games/g/view").json()["locked"]
    ok(client.post("/api/games/g/seal", json={"forfeit": True}, headers=anne))


def test_a_table_dice_game_takes_no_contribution(client: TestClient[Litestar], games: Path) -> None:
    game = mortecouille_ready(client, dice="table")
    assert client.get("/api/games/g/view").json()["dice_scheme"] is None
    before = file_digests(games)
    commit = client.post(
        "/api/games/g/commit", json={"commitment": contribution_of("Anne")[1]}, headers=game.players["Anne"]
    )
    assert error_of(commit, 422)["rule"] == "D3"
    assert error_of(client.post("/api/games/g/lock", headers=game.referee), 422)["rule"] == "D3"
    assert file_digests(games) == before


def test_a_turn_is_not_locked_for_a_player_who_never_commits_and_a_withheld_reveal_is_resolved_without(
    client: TestClient[Litestar], games: Path
) -> None:
    game = mortecouille_ready(client)
    anne, bart = game.players["Anne"], game.players["Bart"]
    ok(client.post("/api/games/g/commit", json={"commitment": contribution_of("Anne")[1]}, headers=anne))
    ok(client.post("/api/games/g/commit", json={"commitment": contribution_of("Bart")[1]}, headers=bart))
    ok(client.post("/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "advance"}]}, headers=anne))
    assert not client.get("/api/games/g/view").json()["locked"]  # Kraken still waits for orders
    ok(client.post("/api/games/g/lock", headers=game.referee))  # the referee does not wait for Bart
    ok(client.post("/api/games/g/reveal", json={"contribution": contribution_of("Anne")[0]}, headers=anne))
    before = file_digests(games)
    refused = error_of(client.post("/api/games/g/resolve", json={"partial": True}, headers=game.referee), 422)
    assert refused["rule"] == "D3" and "Bart" in refused["message"]
    assert file_digests(games) == before
    body = {"partial": True, "absent_reason": "Bart's phone died"}
    ok(client.post("/api/games/g/resolve", json=body, headers=game.referee))
    absent = [line for line in lines(games) if line["type"] == "dice-contribution-absent"]
    assert [(line["player"], line["reason"]) for line in absent] == [("Bart", "Bart's phone died")]
    verified(games)


def test_a_blockade_turn_locks_once_every_token_and_commitment_is_in_and_plays_with_both_contributions(
    client: TestClient[Litestar], games: Path
) -> None:
    game = placed_blockade(client)
    anne, bart = game.players["Anne"], game.players["Bart"]
    ok(client.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=anne))
    ok(client.post("/api/games/g/commit", json={"commitment": contribution_of("Anne")[1]}, headers=anne))
    ok(client.post("/api/games/g/commit", json={"commitment": contribution_of("Bart")[1]}, headers=bart))
    assert not client.get("/api/games/g/view").json()["locked"]  # B1 has no tokens yet
    ok(client.post("/api/games/g/tokens", json={"ship": "B1", "tokens": ["L"]}, headers=bart))
    assert client.get("/api/games/g/view").json()["awaiting_reveal"] == ["Anne", "Bart"]
    for player in ("Anne", "Bart"):
        body = {"contribution": contribution_of(player)[0]}
        ok(client.post("/api/games/g/reveal", json=body, headers=game.players[player]))
    ok(client.post("/api/games/g/resolve", json={}, headers=game.referee))
    ok(client.post("/api/games/g/end", json={}, headers=game.referee))
    verified(games)


def test_the_one_step_path_still_resolves_a_turn_nobody_committed_to(
    client: TestClient[Litestar], games: Path
) -> None:
    game = mortecouille_ready(client)
    ok(
        client.post(
            "/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "advance"}]}, headers=game.players["Anne"]
        )
    )
    ok(
        client.post(
            "/api/games/g/orders", json={"ship": "Kraken", "actions": [{"kind": "idle"}]}, headers=game.players["Bart"]
        )
    )
    assert not client.get("/api/games/g/view").json()["locked"]  # no page committed: nothing to lock for
    ok(client.post("/api/games/g/resolve", json={}, headers=game.referee))
    types = [line["type"] for line in lines(games)]
    assert types.count("dice-contribution-committed") == 2 and types.count("turn-locked") == 1
    verified(games)


def test_the_service_can_be_told_not_to_lock_by_itself(games: Path, clock: FakeClock) -> None:
    with TestClient(build_app(games, clock=clock, deadline_seconds=None, lock_when_all_in=False)) as client:
        game = mortecouille_ready(client)
        for player, ship in (("Anne", "Hope"), ("Bart", "Kraken")):
            headers = game.players[player]
            ok(
                client.post(
                    "/api/games/g/commit", json={"commitment": contribution_of(player)[1]}, headers=headers
                )
            )
            ok(client.post("/api/games/g/orders", json={"ship": ship, "actions": [{"kind": "idle"}]}, headers=headers))
        assert not client.get("/api/games/g/view").json()["locked"]


# ------------------------------------------------------------------------------------------ deadlines


def committed_with_one_order_missing(client: TestClient[Litestar]) -> Game:
    """Both players committed; Anne ordered Hope, Bart's Kraken has no orders."""
    game = mortecouille_ready(client)
    anne, bart = game.players["Anne"], game.players["Bart"]
    ok(client.post("/api/games/g/commit", json={"commitment": contribution_of("Anne")[1]}, headers=anne))
    ok(client.post("/api/games/g/commit", json={"commitment": contribution_of("Bart")[1]}, headers=bart))
    ok(client.post("/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "advance"}]}, headers=anne))
    ok(client.post("/api/games/g/deadline", json={"seconds": 60}, headers=game.referee))
    return game


def test_a_deadline_locks_a_committed_turn_and_resolves_it_without_a_withheld_reveal_after_the_grace(
    client: TestClient[Litestar], games: Path, clock: FakeClock
) -> None:
    game = committed_with_one_order_missing(client)
    service = client.app.state.service
    clock.advance(61)
    assert service.check_deadlines() == ["g"]
    locked, passed = lines(games)[-2:]
    assert locked["type"] == "turn-locked"
    assert passed["type"] == "deadline-passed" and not passed["resolved"] and passed["idle"] == ["Kraken"]
    view = client.get("/api/games/g/view").json()
    assert view["locked"] and view["awaiting_reveal"] == ["Anne", "Bart"] and view["turn"] == 1
    assert view["reveal_deadline"] == "2026-12-01T14:01:31+00:00"  # the grace, from the lock
    ok(
        client.post(
            "/api/games/g/reveal",
            json={"contribution": contribution_of("Anne")[0]},
            headers=game.players["Anne"],
        )
    )
    clock.advance(29)
    assert service.check_deadlines() == []  # Bart may still reveal
    assert client.get("/api/games/g/view").json()["turn"] == 1
    clock.advance(1)
    assert service.check_deadlines() == ["g"]
    absent = [line for line in lines(games) if line["type"] == "dice-contribution-absent"]
    assert [line["player"] for line in absent] == ["Bart"]
    assert "deadline 2026-12-01T14:01:00+00:00 passed" in absent[0]["reason"]
    after = client.get("/api/games/g/view").json()
    assert after["turn"] == 2 and after["reveal_deadline"] is None and after["head_code"]["turn"] == 1
    assert service.check_deadlines() == []
    verified(games)


def test_a_turn_locked_at_its_deadline_resolves_as_soon_as_the_last_reveal_arrives(
    client: TestClient[Litestar], games: Path, clock: FakeClock
) -> None:
    game = committed_with_one_order_missing(client)
    clock.advance(61)
    assert client.app.state.service.check_deadlines() == ["g"]
    for player in ("Bart", "Anne"):
        body = {"contribution": contribution_of(player)[0]}
        ok(client.post("/api/games/g/reveal", json=body, headers=game.players[player]))
    assert client.get("/api/games/g/view").json()["turn"] == 2
    assert not any(line["type"] == "dice-contribution-absent" for line in lines(games))
    ok(client.post("/api/games/g/end", json={}, headers=game.referee))
    verified(games)


def test_a_turn_waiting_for_its_reveals_outlives_a_restart_with_the_grace_given_again(
    games: Path, clock: FakeClock
) -> None:
    with TestClient(build_app(games, clock=clock, deadline_seconds=None)) as first_server:
        committed_with_one_order_missing(first_server)
        clock.advance(61)
        assert first_server.app.state.service.check_deadlines() == ["g"]
    clock.advance(600)  # the service was down far longer than the grace
    with TestClient(
        build_app(games, clock=clock, deadline_seconds=None, reveal_grace_seconds=30)
    ) as restarted:
        service = restarted.app.state.service
        assert service.check_deadlines() == []
        assert restarted.get("/api/games/g/view").json()["reveal_deadline"] == "2026-12-01T14:11:31+00:00"
        clock.advance(30)
        assert service.check_deadlines() == ["g"]
    verified(games)


def test_a_deadline_resolves_at_once_a_turn_the_referee_locked_whose_reveals_are_all_in(
    client: TestClient[Litestar], games: Path, clock: FakeClock
) -> None:
    game = committed_with_one_order_missing(client)
    ok(client.post("/api/games/g/lock", headers=game.referee))
    for player in ("Anne", "Bart"):
        body = {"contribution": contribution_of(player)[0]}
        ok(client.post("/api/games/g/reveal", json=body, headers=game.players[player]))
    assert client.get("/api/games/g/view").json()["turn"] == 1  # no deadline passed yet: the referee's turn
    clock.advance(61)
    assert client.app.state.service.check_deadlines() == ["g"]
    passed = next(line for line in lines(games) if line["type"] == "deadline-passed")
    assert passed["resolved"] and client.get("/api/games/g/view").json()["turn"] == 2
    verified(games)


def test_passing_a_deadline_never_raises_when_pages_committed(games: Path) -> None:
    """The app's deadline step on its own (the service's clock calls it): it used to raise D3."""
    with TestClient(build_app(games, deadline_seconds=None)) as client:
        mortecouille_ready(client)
    log_ = game_log(games, "g")
    commit_dice_contribution(log_, "Anne", contribution_of("Anne")[1])
    run_command(log_, lambda state: GiveOrder(ship="Hope", actions=(Advance(),)))
    start = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)
    set_deadline(log_, 10, start)
    passed = pass_deadline_if_due(log_, start.replace(minute=1))
    assert passed is not None and [type(e).__name__ for e in passed.events] == [
        "TurnLocked",
        "DeadlinePassed",
    ]
    assert pass_deadline_if_due(log_, start.replace(minute=2)) is None


# ------------------------------------------------------------------------------------------ the stream


@pytest.fixture
def server(games: Path, clock: FakeClock) -> Iterator[httpx.Client]:
    """The service on a real loopback socket (uvicorn in a thread): a stream needs one."""
    app = build_app(games, clock=clock, deadline_seconds=None, poll_seconds=0.05, heartbeat_seconds=0.5)
    with web_server.serving_in_a_thread(app) as http:
        yield http


def test_the_contribution_events_reach_every_listener_readable(server: httpx.Client, games: Path) -> None:
    """All four are public (a commitment is a SHA-256 of 128 random bits): a spectator and the
    other player read them whole, while the orders beside them stay sealed."""
    game = mortecouille_ready(server)  # type: ignore[arg-type]
    anne, bart = game.players["Anne"], game.players["Bart"]
    spectator, other = StreamReader(server, {}), StreamReader(server, bart)
    server.post("/api/games/g/commit", json={"commitment": contribution_of("Anne")[1]}, headers=anne)
    server.post("/api/games/g/commit", json={"commitment": contribution_of("Bart")[1]}, headers=bart)
    server.post("/api/games/g/orders", json={"ship": "Hope", "actions": [{"kind": "advance"}]}, headers=anne)
    server.post("/api/games/g/lock", headers=game.referee)
    server.post("/api/games/g/reveal", json={"contribution": contribution_of("Anne")[0]}, headers=anne)
    server.post("/api/games/g/resolve", json={"partial": True, "absent_reason": "gone"}, headers=game.referee)
    last = len(lines(games)) - 1
    kinds = (
        "dice-contribution-committed",
        "turn-locked",
        "dice-contribution-revealed",
        "dice-contribution-absent",
    )
    for reader in (spectator, other):
        messages = reader.until(lambda ms: any(m.id == last and m.event == "event" for m in ms))
        reader.close()
        shown = [m.data for m in messages if m.event == "event" and m.data["type"] in kinds]
        assert [e["type"] for e in shown] == [kinds[0], kinds[0], kinds[1], kinds[2], kinds[3]]
        assert not any(e["sealed"] for e in shown) and all(e["data"]["turn"] == 1 for e in shown)
        assert shown[0]["data"]["commitment"] == contribution_of("Anne")[1]
        assert shown[3]["data"]["contribution"] == contribution_of("Anne")[0]
        order = next(m for m in messages if m.event == "event" and m.data["type"] == "order-given")
        assert order.data["sealed"]
