"""The envelope members ``nonce`` and ``idem`` sit only where a command writes them
(docs/service.md, "Nonces and idempotency keys").

A forger who rewrites a log re-chains it, then needs some free member to grind until a noted head
code matches again. The command path writes a ``nonce`` on every line of a secret input and an
``idem`` on the first line of a batch sent with an idempotency key, nowhere else; so every chain
check refuses them anywhere else, naming the field: a nonce on a public line, a key on a line no
command's batch starts with, a key of another shape, a key inside another's batch or declaring
lines the log does not hold. Logs written before (the golden logs; a fork whose creation put its
nonce on its ``game-created`` line) still verify.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mortecouille.app import commands
from mortecouille.app.commands import Idempotency, create_game, run_command
from mortecouille.app.games import game_log
from mortecouille.app.idempotency import IdempotencyIndex, key_digest
from mortecouille.app.receipts import receipt_for
from mortecouille.core.fleet.commands import BuyShip
from mortecouille.core.game import decide, fold
from mortecouille.events.base import Event
from mortecouille.events.codec import CorruptLine, check_line, envelope_problem
from mortecouille.events.fleet import ShipEquipped
from mortecouille.events.schema import event_tag
from mortecouille.events.secrecy import SECRET_TYPES
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.receipts import log_lines, verify_receipts
from mortecouille.replays.reading.verify import verify_log
from tests.cli_helpers import ok, run
from tests.forgery import log_bodies, rechain_lines, write_rechained
from tests.test_secret_nonce import ready_duel

pytestmark = pytest.mark.postgres

GOLDEN = Path(__file__).parent / "golden"
SECRET_TAGS = {event_tag(cls) for cls in SECRET_TYPES}
NONCE = "0123456789abcdef" * 2


@pytest.fixture
def played(games: Path) -> Path:
    """A duel played through the CLI, a turn resolved: every secret line carries a nonce."""
    ready_duel(games)
    ok(games, "order", "g", "Hope", "advance")
    ok(games, "order", "g", "Kraken", "idle")
    ok(games, "resolve", "g")
    return games / "g.jsonl"


def seq_of(bodies: list[dict[str, Any]], wanted: str) -> int:
    return next(body["seq"] for body in bodies if body["type"] == wanted)


def refused_everywhere(games: Path, seq: int, field: str) -> None:
    """The chain check refuses the log, naming ``field`` and the line of ``seq``: verify with and
    without re-deriving, and the CLI's (exit 4)."""
    for rederive in (True, False):
        report = verify_log(game_log(games, "g"), rederive_turns=rederive)
        failure = report.first_failure
        assert failure is not None and failure.check == "chain" and failure.seq == seq, report.findings
        assert f"field `{field}`" in failure.detail and f"line {seq + 1}" in failure.detail
    result = run(games, "verify", "g")
    assert result.exit_code == 4 and f"field `{field}`" in result.output, result.output


# --- nonce ----------------------------------------------------------------------------------


@pytest.mark.parametrize("public", ["game-created", "turn-started", "die-rolled", "turn-ended"])
def test_a_nonce_on_a_line_that_is_no_secret_input_is_refused_naming_the_field(
    played: Path, games: Path, public: str
) -> None:
    bodies = log_bodies(played)
    at = seq_of(bodies, public)
    bodies[at]["nonce"] = NONCE  # well formed: only its place is wrong
    write_rechained(played, bodies)  # a careful forger: the chain and the anchor are valid again
    refused_everywhere(games, at, "nonce")


def test_every_secret_line_carries_a_nonce_of_its_own_and_no_other_line_does(played: Path) -> None:
    bodies = log_bodies(played)
    assert {body["type"] for body in bodies} & SECRET_TAGS
    for body in bodies:
        assert ("nonce" in body) == (body["type"] in SECRET_TAGS), body
    nonces = [body["nonce"] for body in bodies if "nonce" in body]
    assert len(set(nonces)) == len(nonces)


def test_a_creation_holding_secret_inputs_nonces_each_of_their_lines(games: Path, played: Path) -> None:
    """A creation batch copying secret inputs (a fork's) writes a nonce on each of their lines and
    none on the others; the batch verifies."""
    events = game_log(games, "g").read()
    copied = [msgspec.structs.replace(event, seq=-1, prev="", hash="") for event in events[:9]]
    created = create_game(GameLog(games / "copy.jsonl"), copied, None, nonce=True)
    lines = [json.loads(line) for line in (games / "copy.jsonl").read_bytes().splitlines()]
    assert len(created) == len(lines) == 9
    assert sum(line["type"] in SECRET_TAGS for line in lines) >= 4
    for line in lines:
        assert ("nonce" in line) == (line["type"] in SECRET_TAGS), line


def test_a_fork_written_with_its_nonce_on_its_game_created_line_still_verifies(games: Path, played: Path) -> None:
    """How a fork's creation batch was written before every secret line had its own nonce: one
    nonce, on its first line, the ``game-created`` of the fork (``forked_from``). Still accepted;
    on a game that is no fork, refused."""
    ok(games, "fork", "g", "w", "--at", "8")
    path = games / "w.jsonl"
    bodies = log_bodies(path)
    assert bodies[0]["forked_from"] == "g"
    for body in bodies[1:]:
        body.pop("nonce", None)
    bodies[0]["nonce"] = NONCE
    write_rechained(path, bodies)
    assert run(games, "verify", "w").exit_code == 0
    assert verify_log(game_log(games, "w"), rederive_turns=False).ok
    # the same on the game-created of a game that was not forked
    bodies = log_bodies(played)
    bodies[0]["nonce"] = NONCE
    write_rechained(played, bodies)
    refused_everywhere(games, 0, "nonce")


def test_the_writer_refuses_a_nonce_on_a_public_line_even_a_forks() -> None:
    body = {"type": "game-created", "forked_from": "g", "nonce": NONCE}
    assert envelope_problem(body) is None  # as logs written before have it
    assert "field `nonce`" in str(envelope_problem(body, written_before=False))


def test_the_golden_logs_written_before_nonces_still_verify() -> None:
    for path in sorted(GOLDEN.glob("*.jsonl")):
        assert verify_log(GameLog(path)).ok, path.name


def test_the_postgres_store_refuses_a_misplaced_nonce_as_it_imports_a_log(
    played: Path, games: Path, postgres: str
) -> None:
    bodies = log_bodies(played)
    bodies[seq_of(bodies, "turn-ended")]["nonce"] = NONCE
    write_rechained(played, bodies)
    result = run(games, "store", "copy", "--from", f"file:{games}", "--to", postgres)
    assert result.exit_code == 4 and "field `nonce`" in result.output, result.output


@pytest.fixture
def postgres(request: pytest.FixtureRequest) -> str:
    import uuid

    server = request.getfixturevalue("postgres_server")
    return f"{server.url}?schema=envelope_{uuid.uuid4().hex[:12]}"


# --- a batch of several secret lines, and its receipt ----------------------------------------


def buying_with_its_option(monkeypatch: pytest.MonkeyPatch) -> None:
    """A purchase with an option appends two secret lines, the ship and its option (as a batch of
    several secret inputs would): the first event the rules give, then its option as an event."""

    def two_lines(state: Any, command: Any, dice: Any) -> list[Event]:
        produced = decide(state, msgspec.structs.replace(command, options=()), dice)
        if isinstance(command, BuyShip) and command.options:
            equipped = ShipEquipped(player="Anne", ship=command.name, option=command.options[0], price=0)
            return [*produced, equipped]
        return produced

    monkeypatch.setattr(commands, "decide", two_lines)


def test_a_receipt_of_a_batch_of_several_secret_lines_commits_to_each_lines_nonce(
    games: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10")
    buying_with_its_option(monkeypatch)
    log_ = game_log(games, "g")
    keys = IdempotencyIndex()
    keyed = Idempotency(key_digest("a key"), keys)
    buy: Callable[[Any], BuyShip] = lambda state: BuyShip(  # noqa: E731
        player="Anne", kind="red-small", name="Hope", options=("catapult",)
    )
    outcome = run_command(log_, buy, idempotency=keyed)
    lines = [json.loads(line) for line in (games / "g.jsonl").read_bytes().splitlines()][-2:]
    assert [line["type"] for line in lines] == ["ship-bought", "ship-equipped"]
    assert all("nonce" in line for line in lines) and lines[0]["nonce"] != lines[1]["nonce"]
    assert "idem" in lines[0] and "idem" not in lines[1]
    assert outcome.nonces == (lines[0]["nonce"], lines[1]["nonce"])
    receipt = receipt_for(outcome, "ab" * 16)
    assert receipt.seq + 1 == receipt.last
    # the retry is answered from the log: the nonces of both lines read back, the same receipt
    again = run_command(log_, buy, idempotency=Idempotency(key_digest("a key"), IdempotencyIndex()))
    assert again.nonces == outcome.nonces and receipt_for(again, "ab" * 16) == receipt
    [check] = verify_receipts(log_lines((games / "g.jsonl").read_bytes()), [receipt])
    assert check.ok, check
    assert run(games, "verify", "g").exit_code == 0


# --- idem -----------------------------------------------------------------------------------


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    path = tmp_path / "games" / "g.jsonl"
    path.parent.mkdir()
    shutil.copy(GOLDEN / "mortecouille.jsonl", path)
    shutil.copy(GOLDEN / "mortecouille.head", path.with_suffix(".head"))
    return path


def key(events: int) -> dict[str, Any]:
    return {"key": "a" * 64, "events": events}


def test_a_well_placed_key_verifies(golden: Path) -> None:
    bodies = log_bodies(golden)
    bodies[seq_of(bodies, "order-given")]["idem"] = key(1)
    started = seq_of(bodies, "turn-started")
    ended = next(b["seq"] for b in bodies if b["type"] == "turn-ended" and b["seq"] > started)
    bodies[started]["idem"] = key(ended - started + 1)  # a resolve's batch
    write_rechained(golden, bodies)
    assert verify_log(GameLog(golden)).ok


@pytest.mark.parametrize(
    "idem",
    [{"key": "a" * 64}, {"key": "A" * 64, "events": 1}, {"key": "a" * 64, "events": 0}, "k" * 16,
     {"key": "a" * 64, "events": 1, "extra": 1}, {"key": "a" * 64, "events": True}],
    ids=["no-count", "upper-case", "zero", "text", "extra", "bool"],
)  # fmt: skip
def test_a_key_of_another_shape_is_refused_naming_the_field(golden: Path, idem: object) -> None:
    bodies = log_bodies(golden)
    at = seq_of(bodies, "order-given")
    bodies[at]["idem"] = idem
    write_rechained(golden, bodies)
    refused_everywhere(golden.parent, at, "idem")


@pytest.mark.parametrize("inside", ["die-rolled", "turn-ended", "ship-moved"])
def test_a_key_on_a_line_no_batch_starts_with_is_refused(golden: Path, inside: str) -> None:
    bodies = log_bodies(golden)
    at = seq_of(bodies, inside)
    bodies[at]["idem"] = key(1)
    write_rechained(golden, bodies)
    refused_everywhere(golden.parent, at, "idem")


def test_a_key_inside_the_batch_another_declares_is_refused(golden: Path) -> None:
    bodies = log_bodies(golden)
    orders = [b["seq"] for b in bodies if b["type"] == "order-given"]
    first, second = orders[0], orders[1]
    bodies[first]["idem"] = key(second - first + 1)  # its batch would hold the second order
    bodies[second]["idem"] = key(1)
    write_rechained(golden, bodies)
    refused_everywhere(golden.parent, second, "idem")


def test_a_key_declaring_lines_past_the_logs_end_is_refused(golden: Path) -> None:
    bodies = log_bodies(golden)
    last_order = [b["seq"] for b in bodies if b["type"] == "order-given"][-1]
    bodies[last_order]["idem"] = key(len(bodies) - last_order + 1)  # one line more than the log holds
    write_rechained(golden, bodies)
    refused_everywhere(golden.parent, last_order, "idem")


def test_the_chain_check_alone_refuses_a_misplaced_key_line_by_line(golden: Path) -> None:
    bodies = log_bodies(golden)
    at = seq_of(bodies, "die-rolled")
    bodies[at]["idem"] = key(1)
    lines = rechain_lines(bodies).splitlines()
    with pytest.raises(CorruptLine, match="field `idem`"):
        check_line(lines[at], at + 1, at, bodies[at - 1]["hash"])


# --- every keyed request of the service writes its key where the chain check takes it --------


def test_every_request_the_service_takes_a_key_for_writes_it_where_the_chain_check_accepts_it(
    games: Path,
) -> None:
    """Each endpoint the service takes an ``Idempotency-Key`` for, every kind of batch a resolve
    starts with (the one-step path's commitments, a locked turn, contributions gone without), a
    table-dice resolve, a ruling, a deadline, an end, a creation and a fork: the log verifies, and
    each key sits on a line of a type a batch starts with."""
    import hashlib
    import uuid

    from litestar.testing import TestClient

    from mortecouille.events.codec import BATCH_START_TAGS
    from mortecouille.web.server import build_app
    from tests.test_web_api import FakeClock

    def keyed(headers: dict[str, str]) -> dict[str, str]:
        return {**headers, "Idempotency-Key": uuid.uuid4().hex}

    with TestClient(build_app(games, clock=FakeClock(), deadline_seconds=None)) as client:

        def send(path: str, body: Any, headers: dict[str, str], game: str = "g") -> dict[str, Any]:
            answer = client.post(f"/api/games/{game}/{path}", json=body, headers=keyed(headers))
            assert answer.status_code in (200, 201), (path, answer.text)
            result: dict[str, Any] = answer.json()
            return result

        created = client.post(
            "/api/games",
            json={"name": "g", "ruleset": "mortecouille", "players": ["Anne", "Bart"], "budget": 100000,
                  "board": {"width": 10, "height": 10}},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        ).json()  # fmt: skip
        referee = {"Authorization": f"Bearer {created['referee']['token']}"}
        anne = {"Authorization": f"Bearer {created['players']['Anne']['token']}"}
        bart = {"Authorization": f"Bearer {created['players']['Bart']['token']}"}
        for path, body, who in (
            ("buy", {"ship": "Hope", "kind": "red-small"}, anne),
            ("equip", {"ship": "Hope", "option": "catapult"}, anne),
            ("buy", {"ship": "Kraken", "kind": "yellow-big"}, bart),
            ("seal", {"forfeit": True}, anne),
            ("seal", {"forfeit": True}, bart),
            ("place", {"ship": "Hope", "square": "C3", "facing": "N"}, anne),
            ("place", {"ship": "Kraken", "square": "E6", "facing": "S"}, bart),
            ("deadline", {"seconds": 600}, referee),
            ("orders", {"ship": "Hope", "actions": [{"kind": "advance"}]}, anne),
            ("orders", {"ship": "Kraken", "actions": [{"kind": "idle"}]}, bart),
            ("resolve", {}, referee),  # the one-step path: starts with the commitments it draws
        ):
            send(path, body, who)

        def contribution(player: str, turn: int) -> str:
            return hashlib.sha256(f"{player}{turn}".encode()).hexdigest()[:32]

        def committed(player: str, turn: int) -> dict[str, str]:
            return {"commitment": hashlib.sha256(contribution(player, turn).encode()).hexdigest()}

        # turn 2: Anne commits, the referee locks, Anne reveals, the resolve starts with the turn
        send("commit", committed("Anne", 2), anne)
        send("orders", {"ship": "Hope", "actions": [{"kind": "advance"}]}, anne)
        send("orders", {"ship": "Kraken", "actions": [{"kind": "idle"}]}, bart)
        send("lock", None, referee)
        send("reveal", {"contribution": contribution("Anne", 2)}, anne)
        send("resolve", {}, referee)
        # turn 3: both commit, the turn locks itself, Bart withholds: resolved without him
        send("commit", committed("Anne", 3), anne)
        send("commit", committed("Bart", 3), bart)
        send("orders", {"ship": "Hope", "actions": [{"kind": "idle"}]}, anne)
        send("orders", {"ship": "Kraken", "actions": [{"kind": "idle"}]}, bart)
        send("reveal", {"contribution": contribution("Anne", 3)}, anne)
        send("resolve", {"absent_reason": "Bart's phone died"}, referee)
        send("rulings", {"rule": "A1", "text": "agreed"}, referee)
        send("fork", {"name": "w", "at": 1}, referee)
        send("end", {}, referee)
        # a table-dice game's resolve
        table = client.post(
            "/api/games",
            json={"name": "t", "ruleset": "blockade", "players": ["Anne", "Bart"], "board": {"width": 8, "height": 8},
                  "dice": "table"},
        ).json()  # fmt: skip
        table_referee = {"Authorization": f"Bearer {table['referee']['token']}"}
        send("place", {"ship": "S", "square": "C2", "kind": "sloop", "owner": "Anne"}, table_referee, "t")
        send("resolve", {"idle_turn": True, "dice": []}, table_referee, "t")

    for name in ("g", "w", "t"):
        path = games / f"{name}.jsonl"
        bodies = log_bodies(path)
        starts = {body["type"] for body in bodies if "idem" in body}
        assert starts <= BATCH_START_TAGS, starts
        assert verify_log(GameLog(path)).ok, name
    starts_of_g = [body["type"] for body in log_bodies(games / "g.jsonl") if "idem" in body]
    for start in ("game-created", "dice-contribution-committed", "turn-started", "dice-contribution-absent",
                  "turn-locked", "ruling", "game-ended", "deadline-set"):  # fmt: skip
        assert start in starts_of_g, (start, starts_of_g)


def test_a_keyed_batch_cut_by_a_recorded_loss_still_verifies(games: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``repair --record-loss``: lines the anchor vouched for were gone, the end of a keyed batch
    among them; the loss is on the record, so the batch is held to end before it."""
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10")
    buys = [BuyShip(player="Bart", kind="red-small", name=f"Skiff {n}") for n in range(3)]

    def three_purchases(state: Any, command: Any, dice: Any) -> list[Event]:
        produced: list[Event] = []
        for buy in buys:
            produced += decide(fold(produced, state), buy, dice)
        return produced

    monkeypatch.setattr(commands, "decide", three_purchases)
    run_command(game_log(games, "g"), lambda s: buys[0], idempotency=Idempotency(key_digest("k"), IdempotencyIndex()))
    path = games / "g.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    assert json.loads(lines[-3])["idem"]["events"] == 3  # one keyed batch of three lines
    path.write_bytes(b"".join(lines[:-2]) + lines[-2][:20])  # its last two lines lost, one cut mid-way
    assert run(games, "repair", "g", "--yes", "--record-loss").exit_code == 0
    bodies = log_bodies(path)
    assert [b["type"] for b in bodies[-2:]] == ["ship-bought", "loss-recorded"]
    report = verify_log(GameLog(path))
    assert report.ok, report.findings
