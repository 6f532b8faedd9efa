"""The service under crashes: ``mortecouille serve`` killed with SIGKILL at
random moments while players submit, restarted on the same games, loses no acknowledged command
and duplicates none.

A real server runs as a subprocess (``tests/web_server.py``) over three games created through the
API: a mortecouille game whose players buy and take back ships (purchases), one whose players give
and replace their ships' orders, and a blockade game whose players give and replace their ships'
tokens. One thread per player submits, every request with an ``Idempotency-Key`` of its own; a
request that gets no answer (the server died under it, or was not there yet) is sent again with
the same key until it is answered. Every request of the workload is one the rules accept whatever
the order they arrive in (orders and tokens are given with ``replace``; each purchase has a new
name), so any answer but a 2xx is a failure, and a retry that appended again would show as one
more event.

The main thread kills the server at moments drawn from a seeded RNG, 50 times: while it answers
(after a random number of answers since the restart, then a random pause), or, three times in ten,
at a random moment of its start (answering by then or not). It launches it again on the same games
directory at once. Every tenth kill a torn append is injected (SIGKILL does not cut a small write
in half; a power cut does), which the next start must cut as ``repair`` would (docs/service.md,
"After a crash"). The test counts, and requires, requests whose events the dead server had appended without
answering: the case idempotency is for (their retry must get the first answer from the log).

Afterwards: every request that got a 2xx is in the log exactly once, where its answer said (the
log keeps the SHA-256 of each key on the first line of the batch it appended, ``idem``), and no
key is there twice; requests sent again with the same key afterwards answer what they first did
and leave the log byte for byte unchanged; ``mortecouille verify`` passes and the log folds.

A second test leaves a torn tail where a kill stopped an append: the next start cuts it (only what
follows the head anchor, as ``repair`` does), says so, and serves the game. A tail torn while the
server runs (a CLI command that crashed) is refused with the CLI's exit code 4 (nothing written,
the other games served) until ``mortecouille repair`` cuts it, the server running meanwhile.
"""

from __future__ import annotations

import json
import random
import statistics
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from mortecouille.app.games import load
from mortecouille.app.idempotency import player_seat, seat_digest
from mortecouille.events.codec import TornTail, stamp
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage.file_log import GameLog
from tests.cli_helpers import run
from tests.web_server import SeatTokens, ServerProcess, bearer, create_game

pytestmark = pytest.mark.slow

KILLS = 50
#: a kill comes after this many answers (at most) since the restart, then a pause up to PAUSE s
ANSWERS_BEFORE_KILL = 6
PAUSE_BEFORE_KILL = 0.03
#: the share of kills at a random moment of the server's start (up to STARTING_WINDOW s after its
#: launch, whether it answers by then or not): a restart interrupted too
KILLED_STARTING = 0.3
STARTING_WINDOW = 1.5
#: every this many kills, a torn append is injected into one game's log while the server is down
TORN_EVERY = 10
#: guards against a hang (a server that never answers), never a speed requirement
HANG_GUARD_SECONDS = 120.0
CLIENT_TIMEOUT = httpx.Timeout(60.0, connect=5.0)
RESENT_AFTERWARDS = 30

PURCHASES, ORDERS, HARBOUR = "fleet", "orders", "harbour"
ORDER_ACTIONS = (
    [{"kind": "advance"}],
    [{"kind": "idle"}],
    [{"kind": "maneuver", "angle": "1/4", "side": "left"}],
    [{"kind": "maneuver", "angle": "1/8", "side": "right"}],
    [{"kind": "maneuver", "angle": "1/4", "side": "right"}],
)
TOKEN_CHOICES = ("F", "L", "R", None)


@dataclass
class Request:
    """One command as a client sends it, and what it is expected to append."""

    game: str
    path: str
    body: dict[str, Any]
    token: str
    kind: str  # the type of the event it appends
    ship: str
    player: str  # whose seat sends it
    key: str = field(default_factory=lambda: str(uuid.uuid4()))
    answer: dict[str, Any] | None = None
    attempts: int = 0

    @property
    def digest(self) -> str:
        """The key's digest as the log keeps it: scoped to the player's seat."""
        return seat_digest(player_seat(self.player), self.key)

    def headers(self) -> dict[str, str]:
        return {**bearer(self.token), "Idempotency-Key": self.key}


@dataclass
class Tally:
    """What the clients saw, shared with the main thread."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    answers: int = 0
    answered: list[Request] = field(default_factory=list)
    #: requests sent and not answered yet, by key digest
    pending: dict[str, Request] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    stats: Counter[str] = field(default_factory=Counter)

    def count(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.stats[key] += n


def same_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """What a retry must answer as the first attempt did: the command's events (``seq``, ``events``,
    ``lines``); ``next_seq`` is where the log is now, which moves on between the two."""
    return {key: value for key, value in answer.items() if key != "next_seq"}


def send(client: httpx.Client, server: ServerProcess, request: Request, tally: Tally) -> httpx.Response:
    """Send ``request`` until the server answers (any status): a connection refused or cut (the
    server killed, or not back yet) is retried with the same key."""
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    pause = 0.005
    while True:
        request.attempts += 1
        try:
            return client.post(f"{server.url}{request.path}", json=request.body, headers=request.headers())
        except httpx.TransportError:
            tally.count("retries after no answer")
            if time.monotonic() > deadline:
                raise
            time.sleep(pause)  # backing off: clients knocking at a dead port would slow its restart
            pause = min(2 * pause, 0.1)


def submit(
    client: httpx.Client, server: ServerProcess, request: Request, tally: Tally, rng: random.Random
) -> bool:
    """Send ``request`` until answered; record the answer (or the failure). Sometimes send it again
    with the same key at once: the answer must be the first one."""
    with tally.lock:
        tally.pending[request.digest] = request
    response = send(client, server, request, tally)
    with tally.lock:
        del tally.pending[request.digest]
    if not 200 <= response.status_code < 300:
        with tally.lock:
            tally.failures.append(f"{request.path} {request.body}: {response.status_code} {response.text}")
        return False
    request.answer = response.json()
    with tally.lock:
        tally.answers += 1
        tally.answered.append(request)
    if request.attempts > 1:
        tally.count("answered after a retry")
    if rng.random() < 0.1:
        again = send(client, server, request, tally)
        tally.count("sent again at once with the same key")
        if again.status_code != response.status_code or same_answer(again.json()) != same_answer(
            request.answer
        ):
            with tally.lock:
                tally.failures.append(
                    f"{request.path} {request.body} sent again with its key: {again.status_code} {again.text}, "
                    f"first {response.status_code} {request.answer}"
                )
    return True


# --- the players ---------------------------------------------------------------------------------


def buyer(game: str, player: str, token: str) -> Iterator[Request]:
    """Buy a ship under a new name, and take the oldest back once three are bought (F3): a fleet
    that never fills, so purchases go on as long as the test does."""
    bought: list[str] = []
    for number in range(1, 1_000_000):
        if len(bought) == 3:
            ship = bought.pop(0)
            yield Request(game, f"/api/games/{game}/unbuy", {"ship": ship}, token, "ship-withdrawn", ship, player)
        ship = f"{player}-{number}"
        bought.append(ship)
        body = {"ship": ship, "kind": "red-small"}
        yield Request(game, f"/api/games/{game}/buy", body, token, "ship-bought", ship, player)


def orderer(game: str, player: str, ships: list[str], token: str, rng: random.Random) -> Iterator[Request]:
    """Give and replace orders for the player's ships, in turn (T1: replaced until resolved)."""
    while True:
        for ship in ships:
            body = {"ship": ship, "actions": rng.choice(ORDER_ACTIONS), "replace": True}
            yield Request(game, f"/api/games/{game}/orders", body, token, "order-given", ship, player)


def token_giver(game: str, player: str, ships: list[str], token: str, rng: random.Random) -> Iterator[Request]:
    """Give and replace the tokens of the player's blockade ships."""
    while True:
        for ship in ships:
            tokens = [rng.choice(TOKEN_CHOICES) for _ in range(4)]
            body = {"ship": ship, "tokens": tokens, "replace": True}
            yield Request(game, f"/api/games/{game}/tokens", body, token, "tokens-given", ship, player)


def player_thread(
    server: ServerProcess, requests: Iterator[Request], tally: Tally, stop: threading.Event, seed: int
) -> threading.Thread:
    rng = random.Random(seed)

    def play() -> None:
        with httpx.Client(timeout=CLIENT_TIMEOUT) as client:
            for request in requests:
                if stop.is_set():
                    return
                try:
                    submit(client, server, request, tally, rng)
                except Exception as error:  # the test fails with it: reported, not lost in a thread
                    with tally.lock:
                        tally.failures.append(
                            f"{request.path} {request.body}: {type(error).__name__}: {error}"
                        )
                    return

    return threading.Thread(target=play, name=f"player-{seed}", daemon=True)


# --- setting the games up ------------------------------------------------------------------------


def command(client: httpx.Client, game: str, verb: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    """One set-up command; it must succeed."""
    answer = client.post(f"/api/games/{game}/{verb}", json=body, headers=bearer(token))
    assert 200 <= answer.status_code < 300, f"{game} {verb} {body}: {answer.status_code} {answer.text}"
    result: dict[str, Any] = answer.json()
    return result


@dataclass(frozen=True)
class Table:
    """The games of the test, their tokens, and each player's ships."""

    seats: dict[str, SeatTokens]
    ships: dict[tuple[str, str], list[str]]  # (game, player) -> ships


def set_up(server: ServerProcess) -> Table:
    """Three games through the API: purchases open; fleets bought, sealed and placed for orders;
    a blockade harbour with its ships placed by the referee."""
    ships: dict[tuple[str, str], list[str]] = {}
    with httpx.Client(base_url=server.url, timeout=CLIENT_TIMEOUT) as client:
        fleet = create_game(
            client, PURCHASES, ruleset="mortecouille", players=["Anne", "Bart", "Cleo"], budget=100000
        )
        orders = create_game(client, ORDERS, ruleset="mortecouille", players=["Anne", "Bart"], budget=100000)
        for player in ("Anne", "Bart"):
            token = orders.seats[player]
            for name in (f"{player[0]}{n}" for n in (1, 2, 3)):
                command(client, ORDERS, "buy", token, {"ship": name, "kind": "red-small"})
            command(client, ORDERS, "seal", token, {"forfeit": True})
        for row, player in ((2, "Anne"), (8, "Bart")):  # ships are placed once every fleet is sealed (F3)
            token = orders.seats[player]
            names = [f"{player[0]}{n}" for n in (1, 2, 3)]
            for column, name in zip("BEH", names, strict=True):
                command(
                    client, ORDERS, "place", token, {"ship": name, "square": f"{column}{row}", "facing": "N"}
                )
            ships[(ORDERS, player)] = names
        harbour = create_game(client, HARBOUR, ruleset="blockade", players=["Anne", "Bart", "Cleo"])
        for row, player in ((2, "Anne"), (5, "Bart"), (8, "Cleo")):
            names = [f"{player[0]}-sloop", f"{player[0]}-cutter"]
            for column, name, kind in zip("CG", names, ("sloop", "cutter"), strict=True):
                body = {
                    "ship": name,
                    "square": f"{column}{row}",
                    "facing": "N",
                    "kind": kind,
                    "owner": player,
                }
                command(client, HARBOUR, "place", harbour.referee, body)
            ships[(HARBOUR, player)] = names
    return Table({PURCHASES: fleet, ORDERS: orders, HARBOUR: harbour}, ships)


def players(table: Table) -> list[Iterator[Request]]:
    rng = random.Random(1414)
    drivers: list[Iterator[Request]] = []
    for player, token in table.seats[PURCHASES].seats.items():
        drivers.append(buyer(PURCHASES, player, token))
    for (game, player), ships in sorted(table.ships.items()):
        token = table.seats[game].seats[player]
        make = orderer if game == ORDERS else token_giver
        drivers.append(make(game, player, ships, token, random.Random(rng.random())))
    return drivers


# --- what the logs must show ----------------------------------------------------------------------


def keyed_batches(log: GameLog) -> list[tuple[str, int, int]]:
    """Every batch appended under an idempotency key: (key digest, first seq, event count), read
    from the log's lines (the ``idem`` envelope field of a batch's first line)."""
    batches = []
    data = log.path.read_bytes()
    if data and not data.endswith(b"\n"):
        # a kill tore an append (a SIGKILL can cut a write of several pages short): the next start
        # cuts the whole unfinished append, as repair would (docs/service.md), so none of it counts
        data = data[: len(data) - len(log.repair_plan().removed)]
    for line in data.splitlines():
        body = json.loads(line)
        if "idem" in body:
            batches.append((body["idem"]["key"], body["seq"], body["idem"]["events"]))
    return batches


def check_exactly_once(games: Path, answered: list[Request]) -> Counter[str]:
    """Every answered request is in its game's log exactly once, where and as its answer said, and
    nothing else was appended under a key."""
    found: Counter[str] = Counter()
    by_game: dict[str, list[Request]] = {}
    for request in answered:
        by_game.setdefault(request.game, []).append(request)
    for game, requests in by_game.items():
        log = GameLog(games / f"{game}.jsonl")
        log.read()  # whole: no torn tail
        events = [json.loads(line) for line in log.path.read_bytes().splitlines()]
        batches = keyed_batches(log)
        digests = Counter(digest for digest, _, _ in batches)
        twice = [digest for digest, n in digests.items() if n > 1]
        assert not twice, f"{game}: {len(twice)} key(s) appended more than once"
        where = {digest: (seq, count) for digest, seq, count in batches}
        for request in requests:
            assert request.answer is not None
            assert request.digest in where, f"{game}: answered {request.body} is not in the log"
            seq, count = where[request.digest]
            answered_seqs = [event["seq"] for event in request.answer["events"]]
            assert answered_seqs == list(range(seq, seq + count)), (request.body, request.answer, seq, count)
            assert request.answer["seq"] == seq + count - 1, (request.body, request.answer)
            appended = events[seq : seq + count]
            assert [(e["type"], e.get("ship")) for e in appended] == [(request.kind, request.ship)], (
                request.body,
                appended,
            )
            found[request.kind] += 1
        sent = {request.digest for request in requests}
        assert set(where) <= sent, f"{game}: {len(set(where) - sent)} batch(es) under keys nobody sent"
        # no command slipped in without a key: each ship's events of the workload are its requests
        for kind in {request.kind for request in requests}:
            logged = Counter(e.get("ship") for e in events if e["type"] == kind)
            asked = Counter(request.ship for request in requests if request.kind == kind)
            assert logged == asked, (game, kind, logged - asked, asked - logged)
    return found


def inject_torn_append(log: GameLog, rng: random.Random) -> bytes:
    """Append a prefix of a stamped batch (one to three lines), as a crash mid-write leaves it."""
    data = log.path.read_bytes()
    last = json.loads(data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
    seq, prev = last["seq"] + 1, last["hash"]
    lines = []
    for index in range(rng.randint(1, 3)):
        event, line = stamp(
            RulingRecorded(turn=last.get("turn", 0), rule="T2", text=f"torn {index}"), seq, prev
        )
        seq, prev = seq + 1, event.hash
        lines.append(line)
    payload = b"\n".join(lines) + b"\n"
    cut = rng.randrange(1, len(payload) - 1)
    while payload[cut - 1 : cut] == b"\n":  # a cut just after a newline leaves no torn line
        cut += 1
    with log.path.open("ab") as handle:
        handle.write(payload[:cut])
    return payload[:cut]


def torn_logs(games: Path) -> list[str]:
    """The games whose log ends in a torn line."""
    torn = []
    for path in sorted(games.glob("*.jsonl")):
        try:
            GameLog(path).read()
        except TornTail:
            torn.append(path.stem)
    return torn


def applied_unanswered(games: Path, tally: Tally) -> set[str]:
    """The requests (key digests) the dead server appended but did not answer: their retry must
    find the first answer in the log. (One answered just before the kill may be among them.)"""
    with tally.lock:
        pending = set(tally.pending)
    logged = {digest for path in games.glob("*.jsonl") for digest, _, _ in keyed_batches(GameLog(path))}
    return pending & logged


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.002)


# --- the tests -------------------------------------------------------------------------------------


def test_sigkill_during_concurrent_submits_loses_no_acknowledged_command_and_duplicates_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    games = tmp_path / "games"
    rng = random.Random(14)
    tally = Tally()
    stop = threading.Event()
    started = time.monotonic()
    lost_answers: set[str] = set()
    server = ServerProcess(games).start()
    try:
        table = set_up(server)
        threads = [
            player_thread(server, driver, tally, stop, seed) for seed, driver in enumerate(players(table))
        ]
        for thread in threads:
            thread.start()
        for cycle in range(KILLS):
            if rng.random() < KILLED_STARTING:  # at a moment of its start, answering or not yet
                answers = tally.answers
                time.sleep(rng.uniform(0, STARTING_WINDOW))
            else:  # while it answers, in the middle of some requests
                server.answering()
                answers = tally.answers
                target = answers + rng.randint(0, ANSWERS_BEFORE_KILL)
                wait_for(
                    lambda target=target: tally.answers >= target or bool(tally.failures),
                    "answers before a kill",
                )
                time.sleep(rng.uniform(0, PAUSE_BEFORE_KILL))
            server.kill()
            tally.count("kills")
            if tally.answers == answers:
                tally.count("kills before the server answered anything")
            tally.count("logs torn by a kill", len(torn_logs(games)))
            lost_answers |= applied_unanswered(games, tally)
            if cycle % TORN_EVERY == TORN_EVERY - 1:
                # a torn append, which the server's next start cuts as repair would (docs/service.md)
                log = GameLog(games / f"{rng.choice((PURCHASES, ORDERS, HARBOUR))}.jsonl")
                inject_torn_append(log, rng)
                kept = log.path.read_bytes()
                kept = kept[: len(kept) - len(log.repair_plan().removed)]
                server.launch()
                server.answering()
                assert not torn_logs(games) and log.path.read_bytes().startswith(kept)
                tally.count("torn appends injected, cut by the next start")
            else:
                server.launch()
            assert not tally.failures, tally.failures[:5]
        server.answering()
        stop.set()
        for thread in threads:
            thread.join(HANG_GUARD_SECONDS)
        assert not any(thread.is_alive() for thread in threads), "a client hung"
        assert not tally.failures, tally.failures[:5]

        # requests sent again with their keys, long after (across restarts): the first answers,
        # and not one byte appended
        before = {path.name: path.read_bytes() for path in games.glob("*.jsonl")}
        with httpx.Client(timeout=CLIENT_TIMEOUT) as client:
            for request in random.Random(7).sample(tally.answered, RESENT_AFTERWARDS):
                again = client.post(
                    f"{server.url}{request.path}", json=request.body, headers=request.headers()
                )
                assert again.status_code == 200 and same_answer(again.json()) == same_answer(
                    request.answer
                ), (
                    request.body,
                    again.text,
                )
        assert {path.name: path.read_bytes() for path in games.glob("*.jsonl")} == before
    finally:
        stop.set()
        server.stop()

    found = check_exactly_once(games, tally.answered)
    for game in (PURCHASES, ORDERS, HARBOUR):
        verified = run(games, "verify", game)
        assert verified.exit_code == 0, verified.output
        load(GameLog(games / f"{game}.jsonl"))  # folds
    stats = tally.stats
    stats["requests applied, their answer lost in a kill"] = len(lost_answers)
    text = ", ".join(f"{key}: {value}" for key, value in sorted({**stats, **found}.items()))
    with capsys.disabled():
        print(f"\nservice faults: {len(tally.answered)} answered, {text}, {server.starts} starts "
              f"(median {statistics.median(server.start_seconds):.2f} s to answer) in "
              f"{time.monotonic() - started:.1f} s")  # fmt: skip
    assert stats["kills"] == KILLS
    assert stats["torn appends injected, cut by the next start"] == KILLS // TORN_EVERY
    # the kills did cut requests off (not only idle moments), and their retries were answered
    assert stats["answered after a retry"] >= KILLS // 5, text
    # and some had been appended before the kill: their retry got the first answer from the log
    assert stats["requests applied, their answer lost in a kill"] >= 1, text
    assert all(
        found[kind] > 0 for kind in ("ship-bought", "ship-withdrawn", "order-given", "tokens-given")
    ), found
    assert not any(b'"text":"torn ' in path.read_bytes() for path in games.glob("*.jsonl"))


def test_a_torn_tail_is_cut_as_the_server_starts_and_refused_while_it_runs_until_repair(
    tmp_path: Path,
) -> None:
    games = tmp_path / "games"
    tokens = {"ship": "Sloopy", "tokens": ["F", "L", None, "R"], "replace": True}
    with ServerProcess(games) as server, httpx.Client(timeout=CLIENT_TIMEOUT) as client:
        client.base_url = httpx.URL(server.url)
        harbour = create_game(client, "torn", ruleset="blockade", players=["Anne", "Bart"])
        other = create_game(client, "whole", ruleset="blockade", players=["Anne", "Bart"])
        for seats in (harbour, other):
            body = {"ship": "Sloopy", "square": "C2", "facing": "N", "kind": "sloop", "owner": "Anne"}
            command(client, seats.game, "place", seats.referee, body)
        anne = bearer(harbour.seats["Anne"])
        log = GameLog(games / "torn.jsonl")

        # a kill in the middle of an append: the next start cuts the torn tail, as repair would
        server.kill()
        data = log.path.read_bytes()
        inject_torn_append(log, random.Random(3))
        with pytest.raises(TornTail):
            log.read()
        server.start()
        client.base_url = httpx.URL(server.url)
        assert log.path.read_bytes() == data
        started = server.output_text().rsplit("--- start", 1)[-1]
        assert "cut a torn tail" in started and "torn" in started.split("cut a torn tail", 1)[1], started
        assert client.post("/api/games/torn/tokens", json=tokens, headers=anne).status_code == 200

        # a tail torn while the server runs (a CLI command that crashed mid-append): appending after
        # it is refused with the CLI's exit code 4 and its advice, and nothing is written
        data = log.path.read_bytes()
        torn = inject_torn_append(log, random.Random(4))
        key = {**anne, "Idempotency-Key": "after-the-tear"}
        refused = client.post("/api/games/torn/tokens", json=tokens, headers=key)
        assert refused.status_code >= 400, refused.text
        error = refused.json()["error"]
        assert error["code"] == 4 and "repair" in error["message"], error
        assert log.path.read_bytes() == data + torn
        listed = {game["name"]: game for game in client.get("/api/games").json()["games"]}
        assert "repair" in listed["torn"]["problem"], listed["torn"]

        # the other games are served meanwhile
        whole = client.post("/api/games/whole/tokens", json=tokens, headers=bearer(other.seats["Anne"]))
        assert whole.status_code == 200, whole.text

        repaired = run(games, "repair", "torn", "--yes")  # while the server runs: the same lock
        assert repaired.exit_code == 0, repaired.output
        assert log.path.read_bytes() == data

        answered = client.post("/api/games/torn/tokens", json=tokens, headers=key)
        assert answered.status_code == 200, answered.text
        assert client.get("/api/games/torn/view").status_code == 200
        again = client.post("/api/games/torn/tokens", json=tokens, headers=key)
        assert same_answer(again.json()) == same_answer(answered.json())
    for game in ("torn", "whole"):
        verified = run(games, "verify", game)
        assert verified.exit_code == 0, verified.output


def test_an_append_first_answered_on_a_retry_survives_the_next_crash(tmp_path: Path) -> None:
    """The crash came between the append's fsync and the head anchor's rename, so its client got no
    answer; the retry with the same key is answered from the log (2xx). That batch is acknowledged
    now: a torn append left by the next crash, cut as the service starts, must not take it along."""
    games = tmp_path / "games"
    buy = {"ship": "Bart-1", "kind": "red-small"}
    with ServerProcess(games) as server, httpx.Client(timeout=CLIENT_TIMEOUT) as client:
        client.base_url = httpx.URL(server.url)
        seats = create_game(client, "fleet", ruleset="mortecouille", players=["Anne", "Bart"], budget=100000)
        log = GameLog(games / "fleet.jsonl")
        anchor = log.head_path.read_bytes()
        key = {**bearer(seats.seats["Bart"]), "Idempotency-Key": "bought-once"}
        first = client.post("/api/games/fleet/buy", json=buy, headers=key)
        assert first.status_code == 200, first.text
        server.kill()
        log.head_path.write_bytes(anchor)  # as if killed before the anchor's rename: no answer sent
        server.start()
        client.base_url = httpx.URL(server.url)
        retried = client.post("/api/games/fleet/buy", json=buy, headers=key)
        assert retried.status_code == 200 and same_answer(retried.json()) == same_answer(first.json())

        server.kill()
        inject_torn_append(log, random.Random(5))  # the next crash tears an append
        server.start()  # and the start cuts it
        client.base_url = httpx.URL(server.url)
        digest = seat_digest(player_seat("Bart"), "bought-once")
        assert [batch for batch in keyed_batches(log) if batch[0] == digest], (
            "an acknowledged purchase is gone"
        )
        again = client.post("/api/games/fleet/buy", json=buy, headers=key)
        assert again.status_code == 200 and same_answer(again.json()) == same_answer(first.json()), again.text
    verified = run(games, "verify", "fleet")
    assert verified.exit_code == 0, verified.output


def test_a_log_torn_by_a_kill_counts_no_batch_of_its_unfinished_append(tmp_path: Path) -> None:
    # A SIGKILL can cut a write of several pages short: the batches read after a kill are those
    # the next start keeps (it cuts the unfinished append whole), never a torn line's
    golden = Path(__file__).parent / "golden"
    log = GameLog(tmp_path / "blockade.jsonl")
    log.path.write_bytes((golden / "blockade.jsonl").read_bytes())
    log.head_path.write_bytes((golden / "blockade.head").read_bytes())
    whole = log.path.read_bytes()
    event, line = stamp(
        RulingRecorded(turn=1, rule="T2", text="keyed, then torn"),
        len(whole.splitlines()),
        json.loads(whole.splitlines()[-1])["hash"],
        {"idem": {"key": "a" * 64, "events": 2}},
    )
    with log.path.open("ab") as handle:
        handle.write(line + b"\n" + b'{"seq": 99, "type": "rul')
    assert keyed_batches(log) == []
