"""Every secret line carries randomness of its own (docs/service.md, "Nonces and idempotency
keys").

A receipt's ``head`` is a full line hash, and the chain of hashes is a function of the lines'
content: without randomness in another player's secret line, the holder of two receipts could try
each value that line may hold and check the guess against the second head. Every line of a secret
input (the event types the redaction seals, ``events/secrecy.py``: the one definition) carries a
random ``nonce`` of its own, written by the command path for the CLI and the service alike;
deterministic paths (the demo's bots, simulate, the golden logs) write none.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app.commands import run_command
from mortecouille.app.games import game_log, load
from mortecouille.app.receipts import receipt_for
from mortecouille.app.simulate import simulate
from mortecouille.cli.main import cli
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.base import Event
from mortecouille.events.blockade import TokensGiven
from mortecouille.events.codec import NONCE_FIELD, line_hash, stamp
from mortecouille.events.fleet import FleetEquipped, FleetSealed, ShipBought, ShipEquipped, ShipWithdrawn
from mortecouille.events.movement import ShipPlaced
from mortecouille.events.orders import (
    Advance,
    BecomeFireship,
    Idle,
    Maneuver,
    Order,
    OrderGiven,
    OrderWithdrawn,
)
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.schema import event_tag
from mortecouille.events.secrecy import SECRET_TYPES
from mortecouille.replays.analytics.query import query_archive
from mortecouille.replays.reading.receipts import Receipt, log_lines, verify_receipts
from mortecouille.replays.reading.verify import verify_log
from mortecouille.web.server import build_app
from tests.cli_helpers import ok, run, run_cli, set_up_harbour
from tests.forgery import log_bodies, write_rechained
from tests.postgres_server import PostgresServer
from tests.test_web_api import FakeClock, Game, create

pytestmark = pytest.mark.postgres

NONCE = re.compile(r"[0-9a-f]{32}")
SECRET_TAGS = {event_tag(cls) for cls in SECRET_TYPES}


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def appended_by(games: Path, game: str, *command: str) -> list[dict[str, Any]]:
    """The lines one successful CLI command appended to ``game``."""
    path = games / f"{game}.jsonl"
    before = len(lines_of(path))
    ok(games, *command)
    return lines_of(path)[before:]


def assert_nonced_once(batch: list[dict[str, Any]]) -> None:
    """A secret batch: a fresh 32-hex-digit nonce on each secret input's line, on no other."""
    assert batch, "nothing appended"
    assert SECRET_TAGS & {line["type"] for line in batch}, batch
    for line in batch:
        if line["type"] in SECRET_TAGS:
            assert NONCE.fullmatch(line.get(NONCE_FIELD, "")), line
        else:
            assert NONCE_FIELD not in line, line


# --- the attack of the docs, made concrete ------------------------------------------------------

#: What Bart's Kraken may have been told, as a guesser lists it: a small fleet's orders are few.
GUESSES: tuple[tuple[Order, ...], ...] = (
    (Advance(),),
    (Idle(),),
    (BecomeFireship(),),
    (Maneuver(turn="1/8", side="left"),),
    (Maneuver(turn="1/8", side="right"),),
    (Maneuver(turn="1/4", side="left"),),
    (Maneuver(turn="1/4", side="right"),),
)


def ready_duel(games: Path) -> None:
    """Anne's Hope and Bart's Kraken bought, sealed and placed through the CLI: turn 1 awaits orders."""
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10")
    for words in (
        ("buy", "g", "Anne", "red-small", "Hope"),
        ("seal", "g", "Anne", "--forfeit"),
        ("buy", "g", "Bart", "yellow-big", "Kraken"),
        ("seal", "g", "Bart", "--forfeit"),
        ("place", "g", "Hope", "C3", "--facing", "N"),
        ("place", "g", "Kraken", "E6", "--facing", "S"),
    ):
        ok(games, *words)


def guessed_orders(games: Path, with_nonce: bool) -> list[tuple[Order, ...]]:
    """Anne orders, Bart orders (secretly), Anne orders again: the guesses of Bart's orders that
    Anne's two receipt heads confirm. Anne is given every advantage: she knows her own second line
    whole (its nonce too) and, from the sealed view, the seq, type, turn and ship of Bart's line."""
    ready_duel(games)
    log_ = game_log(games, "g")
    first = run_command(log_, lambda s: GiveOrder(ship="Hope", actions=(Advance(),)), nonce=with_nonce)
    run_command(log_, lambda s: GiveOrder(ship="Kraken", actions=(Idle(),)), nonce=with_nonce)
    second = run_command(
        log_, lambda s: GiveOrder(ship="Hope", actions=(Idle(),), replace=True), nonce=with_nonce
    )
    head_before = receipt_for(first, "ab" * 16).head
    head_after = receipt_for(second, "cd" * 16).head
    bart_seq = first.events[-1].seq + 1
    annes_own = lines_of(games / "g.jsonl")[second.events[0].seq]
    found = []
    for actions in GUESSES:
        guessed = OrderGiven(turn=1, ship="Kraken", actions=actions)
        _, guessed_line = stamp(guessed, bart_seq, head_before)
        guessed_hash = json.loads(guessed_line)["hash"]
        mine = {key: value for key, value in annes_own.items() if key != "hash"}
        mine["prev"] = guessed_hash
        if line_hash(mine) == head_after:
            found.append(actions)
    return found


def test_two_receipt_heads_give_away_another_players_order_on_a_line_without_a_nonce(games: Path) -> None:
    assert guessed_orders(games, with_nonce=False) == [(Idle(),)]  # how it was: Bart's order found


def test_two_receipt_heads_give_away_nothing_once_the_secret_line_carries_a_nonce(games: Path) -> None:
    assert guessed_orders(games, with_nonce=True) == []  # each guess would need Bart's 128 random bits too


# --- every secret command writes one: the CLI ---------------------------------------------------

#: For each secret event type, a CLI command appending it (after its set-up): (game, set-up, command).
#: A new secret type fails here until a command appending it is listed.
DUEL_BOUGHT = (("buy", "g", "Anne", "red-small", "Hope"),)
DUEL_SEALED = (
    *DUEL_BOUGHT,
    ("seal", "g", "Anne", "--forfeit"),
    ("buy", "g", "Bart", "yellow-big", "Kraken"),
    ("seal", "g", "Bart", "--forfeit"),
)
DUEL_PLACED = (*DUEL_SEALED, ("place", "g", "Hope", "C3", "--facing", "N"), ("place", "g", "Kraken", "E6"))
CLI_ACTS: dict[type[Event], tuple[str, tuple[tuple[str, ...], ...], tuple[str, ...]]] = {
    ShipBought: ("g", (), ("buy", "g", "Anne", "red-small", "Hope")),
    ShipEquipped: ("g", DUEL_BOUGHT, ("equip", "g", "Hope", "catapult")),
    FleetEquipped: ("g", (), ("equip", "g", "Anne", "fireship-fleet", "--fleet")),
    ShipWithdrawn: ("g", DUEL_BOUGHT, ("unbuy", "g", "Hope")),
    FleetSealed: ("g", DUEL_BOUGHT, ("seal", "g", "Anne", "--forfeit")),
    ShipPlaced: ("g", DUEL_SEALED, ("place", "g", "Hope", "C3", "--facing", "N")),
    OrderGiven: ("g", DUEL_PLACED, ("order", "g", "Hope", "advance")),
    OrderWithdrawn: ("g", (*DUEL_PLACED, ("order", "g", "Hope", "advance")), ("unorder", "g", "Hope")),
    TokensGiven: ("b", (), ("tokens", "b", "Sloopy", "F", "F", "L", "-")),
    RulingRecorded: ("g", DUEL_PLACED, ("ruling", "g", "--rule", "A1", "--text", "agreed", "--adjust", "Hope", "wind=1")),
}  # fmt: skip


def new_game_for(games: Path, game: str) -> None:
    if game == "b":
        set_up_harbour(games, "b")
    else:
        ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10")


@pytest.mark.parametrize("secret", SECRET_TYPES, ids=event_tag)
def test_every_secret_command_of_the_cli_writes_a_nonce_on_its_secret_lines(
    games: Path, secret: type[Event]
) -> None:
    assert secret in CLI_ACTS, f"no CLI command appending {event_tag(secret)} is listed here"
    game, set_up, command = CLI_ACTS[secret]
    new_game_for(games, game)
    for words in set_up:
        assert_nonced_once(appended_by(games, game, *words))  # the set-up's secrets too
    batch = appended_by(games, game, *command)
    assert event_tag(secret) in {line["type"] for line in batch}
    assert_nonced_once(batch)
    assert run(games, "verify", game).exit_code == 0


def test_the_clis_public_commands_write_no_nonce(games: Path) -> None:
    ready_duel(games)
    created = lines_of(games / "g.jsonl")[:1]
    ok(games, "order", "g", "Hope", "advance")
    ok(games, "order", "g", "Kraken", "idle")
    public = [
        *created,
        *appended_by(games, "g", "resolve", "g"),
        *appended_by(games, "g", "end", "g", "--winner", "Anne"),
    ]
    assert public and all(NONCE_FIELD not in line for line in public)
    assert not SECRET_TAGS & {line["type"] for line in public}
    # and every nonce of the log is on a secret input's line
    for line in lines_of(games / "g.jsonl"):
        if NONCE_FIELD in line:
            assert line["type"] in SECRET_TAGS


# --- every secret submission writes one: the service --------------------------------------------


@pytest.fixture
def client(games: Path) -> Iterator[TestClient[Litestar]]:
    with TestClient(build_app(games, clock=FakeClock(), deadline_seconds=None)) as test_client:
        yield test_client


def post(
    client: TestClient[Litestar], path: str, body: dict[str, Any], headers: dict[str, str]
) -> dict[str, Any]:
    method, _, path = path.rpartition(" ")
    answer = client.request(method or "POST", f"/api/games/g/{path}", json=body, headers=headers)
    assert answer.status_code == 200, (path, answer.text)
    result: dict[str, Any] = answer.json()
    return result


Step = tuple[str, dict[str, Any], str]  # (path, body, who: a player or "referee")
API_BOUGHT: tuple[Step, ...] = (("buy", {"ship": "Hope", "kind": "red-small"}, "Anne"),)
API_SEALED: tuple[Step, ...] = (
    *API_BOUGHT,
    ("seal", {"forfeit": True}, "Anne"),
    ("buy", {"ship": "Kraken", "kind": "yellow-big"}, "Bart"),
    ("seal", {"forfeit": True}, "Bart"),
)
API_PLACED: tuple[Step, ...] = (
    *API_SEALED,
    ("place", {"ship": "Hope", "square": "C3"}, "Anne"),
    ("place", {"ship": "Kraken", "square": "E6", "facing": "S"}, "Bart"),
)
#: For each secret event type, a request appending it (after its set-up): (ruleset, set-up, request).
API_ACTS: dict[type[Event], tuple[str, tuple[Step, ...], Step]] = {
    ShipBought: ("mortecouille", (), ("buy", {"ship": "Hope", "kind": "red-small"}, "Anne")),
    ShipEquipped: ("mortecouille", API_BOUGHT, ("equip", {"ship": "Hope", "option": "catapult"}, "Anne")),
    FleetEquipped: ("mortecouille", (), ("equip", {"option": "fireship-fleet"}, "Anne")),
    ShipWithdrawn: ("mortecouille", API_BOUGHT, ("unbuy", {"ship": "Hope"}, "Anne")),
    FleetSealed: ("mortecouille", API_BOUGHT, ("seal", {"forfeit": True}, "Anne")),
    ShipPlaced: ("mortecouille", API_SEALED, ("place", {"ship": "Hope", "square": "C3"}, "Anne")),
    OrderGiven: ("mortecouille", API_PLACED, ("orders", {"ship": "Hope", "actions": [{"kind": "advance"}]}, "Anne")),
    OrderWithdrawn: (
        "mortecouille",
        (*API_PLACED, ("orders", {"ship": "Hope", "actions": [{"kind": "advance"}]}, "Anne")),
        ("DELETE orders/Hope", {}, "Anne"),
    ),
    TokensGiven: (
        "blockade",
        (("place", {"ship": "A1", "square": "B2", "kind": "sloop"}, "Anne"),),
        ("tokens", {"ship": "A1", "tokens": ["F", "L"]}, "Anne"),
    ),
    RulingRecorded: (
        "mortecouille",
        API_PLACED,
        ("rulings", {"rule": "A1", "text": "agreed", "adjust": [{"ship": "Hope", "wind": 1}]}, "referee"),
    ),
}  # fmt: skip


def headers_of(game: Game, who: str, key: str | None) -> dict[str, str]:
    headers = dict(game.referee if who == "referee" else game.players[who])
    if key is not None:
        headers["Idempotency-Key"] = key
    return headers


def submitted(
    client: TestClient[Litestar], games: Path, game: Game, step: Step, key: str | None
) -> list[dict[str, Any]]:
    """The lines one request appended."""
    path, body, who = step
    before = len(lines_of(games / "g.jsonl"))
    post(client, path, body, headers_of(game, who, key))
    return lines_of(games / "g.jsonl")[before:]


@pytest.mark.parametrize("keyed", [False, True], ids=["no-key", "idempotency-key"])
@pytest.mark.parametrize("secret", SECRET_TYPES, ids=event_tag)
def test_every_secret_submission_of_the_service_writes_a_nonce_on_its_secret_lines(
    client: TestClient[Litestar], games: Path, secret: type[Event], keyed: bool
) -> None:
    assert secret in API_ACTS, f"no request appending {event_tag(secret)} is listed here"
    ruleset, set_up, act = API_ACTS[secret]
    game = create(client, ruleset=ruleset, budget=100000)
    for step in set_up:
        assert_nonced_once(submitted(client, games, game, step, None))
    key = uuid.uuid4().hex if keyed else None
    batch = submitted(client, games, game, act, key)
    assert event_tag(secret) in {line["type"] for line in batch}
    assert_nonced_once(batch)
    assert ("idem" in batch[0]) is keyed  # the key on the first line only
    assert all("idem" not in line for line in batch[1:])
    if keyed:  # a retry appends nothing, and its receipt commits to the line with its nonce
        path, body, who = act
        again = post(client, path, body, headers_of(game, who, key))
        assert len(lines_of(games / "g.jsonl")) == batch[-1]["seq"] + 1
        if again.get("receipt") is not None:
            receipt = msgspec.convert(again["receipt"], type=Receipt)
            [check] = verify_receipts(log_lines((games / "g.jsonl").read_bytes()), [receipt])
            assert check.ok, check
    assert run(games, "verify", "g").exit_code == 0


def test_the_services_public_commands_write_no_nonce(client: TestClient[Litestar], games: Path) -> None:
    game = create(client, ruleset="mortecouille", budget=100000)
    for step in API_PLACED:
        submitted(client, games, game, step, None)
    submitted(client, games, game, ("orders", {"ship": "Hope", "actions": [{"kind": "advance"}]}, "Anne"), None)
    submitted(client, games, game, ("orders", {"ship": "Kraken", "actions": [{"kind": "idle"}]}, "Bart"), None)
    public = [
        *lines_of(games / "g.jsonl")[:1],
        *submitted(client, games, game, ("resolve", {}, "referee"), uuid.uuid4().hex),
        *submitted(client, games, game, ("end", {}, "referee"), None),
    ]
    assert public and all(NONCE_FIELD not in line for line in public)


# --- deterministic paths write none -------------------------------------------------------------


def test_the_demo_and_simulate_write_no_nonce_and_play_the_same_lines_again(tmp_path: Path) -> None:
    for run_number in (1, 2):
        folder = tmp_path / f"demo{run_number}"
        result = run_cli(
            "--games-dir", str(folder), "demo", "--seed", "nonce-free-demo-seed", "--max-turns", "3"
        )
        assert result.exit_code == 0, result.output
    [first], [second] = (list((tmp_path / f"demo{n}").glob("*.jsonl")) for n in (1, 2))
    first_lines, second_lines = lines_of(first), lines_of(second)
    assert all(NONCE_FIELD not in line for line in first_lines)
    assert SECRET_TAGS & {line["type"] for line in first_lines}  # it has secrets, and no nonce

    def without_salt(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # the seed's commitment salt is drawn at random (D2): the one difference between two runs
        drawn = ("hash", "prev", "seed_salt", "seed_hmac", "state_hash")  # the state holds the commitment
        return [{key: value for key, value in line.items() if key not in drawn} for line in lines]

    assert without_salt(first_lines) == without_salt(second_lines)
    simulated = tmp_path / "simulated"
    simulate(simulated, games=2, seed="nonce-free", max_turns=3)
    logs = sorted(simulated.glob("*.jsonl"))
    assert logs and all(NONCE_FIELD not in line for path in logs for line in lines_of(path))


# --- every reader accepts it; a malformed one is refused naming the field (a misplaced one:
# tests/test_envelope_places.py) ---------------------------------------------------------------


@pytest.fixture
def played(games: Path) -> Path:
    """A duel played through the CLI to its end: every secret line nonced."""
    ready_duel(games)
    ok(games, "order", "g", "Hope", "advance")
    ok(games, "order", "g", "Kraken", "idle")
    ok(games, "resolve", "g")
    ok(games, "end", "g", "--winner", "Anne")
    return games / "g.jsonl"


def test_verify_replay_explain_and_export_accept_lines_with_a_nonce(
    played: Path, games: Path, tmp_path: Path
) -> None:
    assert sum(NONCE_FIELD in line for line in lines_of(played)) >= 8
    log_ = game_log(games, "g")
    for rederive in (True, False):
        report = verify_log(log_, rederive_turns=rederive)
        assert report.ok, report.findings
    events, state = load(log_)
    assert state.ended and len(events) == len(lines_of(played))
    for words in (("replay", "g", "--seq", "5"), ("explain", "g", "--turn", "1"), ("log", "g"),
                  ("export", "g", "--html", str(tmp_path / "g.html"))):  # fmt: skip
        ok(games, *words)
    exported = run(games, "export-log", "g")
    assert exported.exit_code == 0 and exported.stdout_bytes == played.read_bytes()


def test_the_archive_keeps_a_nonced_line_in_its_payload(played: Path, games: Path, tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    assert run_cli("--games-dir", str(games), "archive", "--to", str(archive)).exit_code == 0
    result = query_archive(archive, "SELECT payload FROM events WHERE payload LIKE '%\"nonce\":%'")
    payloads = {row[0] for row in result.rows}
    assert payloads == {line.decode() for line in played.read_bytes().splitlines() if b'"nonce":' in line}


@pytest.fixture
def postgres(request: pytest.FixtureRequest) -> str:
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return f"{server.url}?schema=nonce_{uuid.uuid4().hex[:12]}"


def test_postgres_and_store_copy_keep_nonced_lines_byte_for_byte(
    played: Path, games: Path, postgres: str
) -> None:
    copied = CliRunner().invoke(cli, ["store", "copy", "--from", f"file:{games}", "--to", postgres])
    assert copied.exit_code == 0, copied.output
    assert run_cli("--store", postgres, "verify", "g").exit_code == 0
    exported = run_cli("--store", postgres, "export-log", "g")
    assert exported.stdout_bytes == played.read_bytes()


def verify_output(games: Path) -> tuple[int, str]:
    result = run(games, "verify", "g")
    return result.exit_code, result.output


@pytest.mark.parametrize("bad", ["AB" * 16, "ab" * 8, "ab" * 17, "zz" * 16, 12345, None, ["ab" * 16]])
def test_a_malformed_nonce_is_refused_naming_the_field(played: Path, games: Path, bad: object) -> None:
    bodies = log_bodies(played)
    at = next(body["seq"] for body in bodies if NONCE_FIELD in body)
    bodies[at][NONCE_FIELD] = bad
    write_rechained(played, bodies)  # a careful forger: the chain is valid again
    code, output = verify_output(games)
    assert code == 4 and "field `nonce`" in output and f"line {at + 1}" in output, output


def test_a_tampered_nonce_is_caught_by_the_chain_like_any_field(played: Path, games: Path) -> None:
    data = played.read_bytes()
    nonce = re.search(rb'"nonce":"([0-9a-f]{32})"', data)
    assert nonce is not None
    changed = nonce.group(1)[:-1] + (b"0" if nonce.group(1)[-1:] != b"0" else b"1")
    played.write_bytes(data[: nonce.start(1)] + changed + data[nonce.end(1) :])
    code, output = verify_output(games)
    assert code == 4 and "field `hash` does not match" in output, output


def test_the_writer_refuses_a_malformed_nonce_and_any_unlisted_envelope_field() -> None:
    event = OrderGiven(turn=1, ship="Hope", actions=(Idle(),))
    with pytest.raises(ValueError, match="field `nonce`"):
        stamp(event, 0, "0" * 64, {NONCE_FIELD: "AB" * 16})
    with pytest.raises(ValueError, match="not an envelope field"):
        stamp(event, 0, "0" * 64, {"pepper": "ab" * 16})
    _, line = stamp(event, 0, "0" * 64, {NONCE_FIELD: "ab" * 16})
    assert json.loads(line)[NONCE_FIELD] == "ab" * 16


def test_a_cli_receipt_commits_to_its_line_with_the_nonce_and_a_nonce_changed_later_fails_it(
    games: Path, tmp_path: Path
) -> None:
    ready_duel(games)
    receipts = tmp_path / "anne.json"
    ok(games, "order", "g", "Hope", "advance", "--receipts", str(receipts))
    line = lines_of(games / "g.jsonl")[-1]
    assert NONCE_FIELD in line
    result = run(games, "verify", "g", "--receipts", str(receipts))
    assert result.exit_code == 0, result.output
    bodies = log_bodies(games / "g.jsonl")
    bodies[-1][NONCE_FIELD] = "ab" * 16  # well formed, the chain made valid again: only the receipt tells
    write_rechained(games / "g.jsonl", bodies)
    assert run(games, "verify", "g").exit_code == 0
    result = run(games, "verify", "g", "--receipts", str(receipts))
    assert result.exit_code == 4 and "FAIL receipt" in result.output, result.output
