"""The game service under a club night's load: submit latency, and push latency to every listener.

Run: ``.venv/bin/python bench/bench_serve.py [--games 32] [--players 8] [--spectators 64]
[--orders 8] [--think 2.0] [--runs 3] [--port P]``.

Starts ``mortecouille serve`` as a subprocess on 127.0.0.1 over a temporary games directory (the
server of the tests, ``tests/web_server.py``; ``--port``, else a free one of
``$MORTECOUILLE_TEST_PORTS``, else one the system picks) and creates ``--games`` mortecouille
games of ``--players`` players through the API, each player with one ship bought, sealed and
placed. Then, per run, ``--spectators`` listeners (spread evenly over the games) hold each game's
server-sent event stream (``GET /api/games/G/stream``) open while every player submits
``--orders`` orders (``POST /api/games/G/orders``, ``replace``, an ``Idempotency-Key`` each), one
at a time, after a think time drawn uniformly from 0 to twice ``--think`` seconds: about
``players x games / think`` submits a second, a table far busier than a real one. One process,
asyncio and httpx (streaming for the events).

Figures, each the median over the runs:

* submit latency p50/p95/p99: from sending the request to its 2xx answer (which the server sends
  only once the events are fsync'd); goal p95 < 300 ms;
* push latency p95: from the submitting client's 2xx to each listener of that game receiving the
  event (every listener must get every event); goal p95 < 500 ms. The messages carry no append
  time, and the append happens between the send and the 2xx: the figure from the 2xx is a lower
  bound of the time from the append, the one from the client's send (printed too) an upper bound;
* baselines measured in the same run: the same submit through the application layer in-process
  (``run_command``: lock, fold, decide, one write, one fsync), without HTTP, and one client alone
  submitting over HTTP to the idle server; the ratio of the loaded p50 and p95 to the in-process.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import structlog

from mortecouille.app.commands import run_command
from mortecouille.app.games import game_log
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.orders import Advance
from tests.web_server import SeatTokens, ServerProcess, bearer, seat_tokens

SUBMIT_GOAL_P95 = 0.300
PUSH_GOAL_P95 = 0.500
NAMES = ("Anne", "Bart", "Cleo", "Dirk", "Emma", "Fred", "Gina", "Hugo", "Ines", "Jules", "Karl", "Lise")
ACTIONS = (
    [{"kind": "advance"}],
    [{"kind": "idle"}],
    [{"kind": "maneuver", "angle": "1/4", "side": "left"}],
    [{"kind": "maneuver", "angle": "1/8", "side": "right"}],
)
#: how long listeners may still take to receive the last events once every submit is answered,
#: before an undelivered event is counted as missing (a guard, not a goal)
DELIVERY_GRACE_SECONDS = 30.0


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100), nearest rank: the smallest value with ``q``% at or below."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system) of process ``pid`` (this one if None) so far, from /proc."""
    if pid is None:
        return time.process_time()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def verdict(ok: bool) -> str:
    return "OK" if ok else "MISSED"


# --- the games -----------------------------------------------------------------------------------


@dataclass
class Game:
    name: str
    seats: SeatTokens
    ships: dict[str, str]  # player -> ship
    #: the seq of the game's last event as far as the benchmark knows (its own answers)
    last_seq: int = -1


async def post(client: httpx.AsyncClient, path: str, body: dict[str, Any], token: str | None = None) -> Any:
    answer = await client.post(path, json=body, headers=bearer(token) if token else {})
    if not 200 <= answer.status_code < 300:
        raise SystemExit(f"set-up refused: POST {path} {body}: {answer.status_code} {answer.text}")
    return answer.json()


async def set_up_game(client: httpx.AsyncClient, name: str, players: Sequence[str]) -> Game:
    """A mortecouille game; each player buys one ship, seals and places it (two rows apart)."""
    created = await post(
        client,
        "/api/games",
        {"name": name, "ruleset": "mortecouille", "players": list(players), "budget": 100000},
    )
    seats = seat_tokens(name, created)
    last_seq = created["seq"]
    ships = {}
    for player in players:
        token = seats.seats[player]
        await post(client, f"/api/games/{name}/buy", {"ship": f"{player}-ship", "kind": "red-small"}, token)
        await post(client, f"/api/games/{name}/seal", {"forfeit": True}, token)
    for index, player in enumerate(players):  # ships are placed once every fleet is sealed (F3)
        token = seats.seats[player]
        ship = f"{player}-ship"
        square = f"{'BDFH'[index % 4]}{2 + 6 * (index // 4 % 2)}"
        placed = await post(
            client, f"/api/games/{name}/place", {"ship": ship, "square": square, "facing": "N"}, token
        )
        last_seq = max(last_seq, placed["seq"])
        ships[player] = ship
    return Game(name, seats, ships, last_seq)


async def set_up(url: str, games: int, players: int) -> list[Game]:
    limits = httpx.Limits(max_connections=16)
    async with httpx.AsyncClient(base_url=url, timeout=120.0, limits=limits) as client:
        gate = asyncio.Semaphore(8)

        async def one(index: int) -> Game:
            async with gate:
                return await set_up_game(client, f"club{index:02d}", NAMES[:players])

        return await asyncio.gather(*(one(index) for index in range(games)))


# --- one run -----------------------------------------------------------------------------------


@dataclass
class Run:
    """What one run measured."""

    sends: dict[tuple[str, int], tuple[float, float]] = field(
        default_factory=dict
    )  # (game, seq) -> send, 2xx
    received: dict[tuple[int, str, int], float] = field(default_factory=dict)  # (listener, game, seq) -> time
    listeners: dict[int, str] = field(default_factory=dict)  # listener -> game
    refused: list[str] = field(default_factory=list)
    reconnects: list[str] = field(default_factory=list)
    resent: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def submit_latencies(self) -> list[float]:
        return [acked - sent for sent, acked in self.sends.values()]

    def by_game(self) -> dict[str, list[tuple[int, float, float]]]:
        """Each game's answered submits: (seq, send time, 2xx time)."""
        games: dict[str, list[tuple[int, float, float]]] = {}
        for (game, seq), (sent, acked) in self.sends.items():
            games.setdefault(game, []).append((seq, sent, acked))
        return games

    def push_latencies(self) -> tuple[list[float], list[float], int]:
        """From the 2xx and from the send to each listener's receipt; how many never arrived."""
        from_ack, from_send, missing = [], [], 0
        submits = self.by_game()
        for listener, game in self.listeners.items():
            for seq, sent, acked in submits.get(game, []):
                received = self.received.get((listener, game, seq))
                if received is None:
                    missing += 1
                    continue
                from_ack.append(received - acked)
                from_send.append(received - sent)
        return from_ack, from_send, missing

    def delivered(self) -> bool:
        submits = self.by_game()
        return all(
            (listener, game, seq) in self.received
            for listener, game in self.listeners.items()
            for seq, _, _ in submits.get(game, [])
        )


async def listen(
    client: httpx.AsyncClient, listener: int, game: Game, run: Run, ready: asyncio.Event
) -> None:
    """Read ``game``'s event stream as a spectator already watching (``Last-Event-ID``: the game's
    last event, so no backlog: the table's screen stays open all evening), noting when each event
    (``event: event``, one per log event; not ``revealed`` or the heartbeat) arrives. A stream cut
    off is opened again from the last id received, as a browser does (counted in ``run.reconnects``)."""
    last_id = str(game.last_seq)
    while True:
        headers = {"Last-Event-ID": last_id}
        try:
            async with client.stream("GET", f"/api/games/{game.name}/stream", headers=headers) as response:
                if response.status_code != 200:
                    raise SystemExit(f"stream of {game.name}: {response.status_code}")
                ready.set()
                kind = "message"
                async for line in response.aiter_lines():
                    if line.startswith("event:"):
                        kind = line[6:].strip()
                    elif line.startswith("id:"):
                        last_id = line[3:].strip()
                    elif line.startswith("data:") and kind == "event":
                        # the message's id is its event's seq: no need to decode the data
                        run.received.setdefault((listener, game.name, int(last_id)), time.perf_counter())
                    elif not line:  # a message ends
                        kind = "message"
        except httpx.TransportError as error:
            run.reconnects.append(f"{game.name}: {type(error).__name__} {error}")
            await asyncio.sleep(0.1)


async def play(
    client: httpx.AsyncClient, game: Game, player: str, args: argparse.Namespace, run: Run
) -> None:
    rng = random.Random(f"{game.name}-{player}")
    token = game.seats.seats[player]
    for _ in range(args.orders):
        await asyncio.sleep(rng.uniform(0, 2 * args.think))
        body = {"ship": game.ships[player], "actions": rng.choice(ACTIONS), "replace": True}
        headers = {**bearer(token), "Idempotency-Key": str(uuid.uuid4())}
        sent = time.perf_counter()
        for attempt in range(1, 4):
            try:
                answer = await client.post(f"/api/games/{game.name}/orders", json=body, headers=headers)
                break
            except httpx.TransportError as error:
                # a kept-alive connection the server closed as it was reused: sent again with the
                # same key, which appends nothing if the first one was taken (and it counts in the
                # latency, measured from the first send)
                run.resent.append(f"{type(error).__name__} {error}")
                if attempt == 3:
                    raise
        acked = time.perf_counter()
        if answer.status_code != 200:
            run.refused.append(f"{game.name} {body}: {answer.status_code} {answer.text[:200]}")
            continue
        run.sends[(game.name, answer.json()["seq"])] = (sent, acked)


async def one_run(url: str, games: list[Game], args: argparse.Namespace) -> Run:
    run = Run()
    timeout = httpx.Timeout(120.0)
    streams = httpx.AsyncClient(base_url=url, timeout=timeout, limits=httpx.Limits(max_connections=None))
    # idle connections dropped before uvicorn's keep-alive timeout (5 s) closes them under a request
    limits = httpx.Limits(max_connections=None, keepalive_expiry=2.0)
    submits = httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits)
    async with streams, submits:
        listening = []
        for listener in range(args.spectators):
            game = games[listener % len(games)]
            run.listeners[listener] = game.name
            ready = asyncio.Event()
            listening.append((asyncio.create_task(listen(streams, listener, game, run, ready)), ready))
        # every listener on its stream before the first submit (a guard against a hang, not a goal)
        await asyncio.wait_for(asyncio.gather(*(ready.wait() for _, ready in listening)), 300)
        started = time.perf_counter()
        await asyncio.gather(
            *(play(submits, game, player, args, run) for game in games for player in game.ships)
        )
        await finish_run(run, games, listening, started)
    return run


async def finish_run(
    run: Run, games: list[Game], listening: Sequence[tuple[asyncio.Task[None], asyncio.Event]], started: float
) -> None:
    """The submits are done: note the run's time and each game's last seq, wait (a grace period
    at most) for every listener to receive every event sent, then stop the listeners."""
    run.seconds = time.perf_counter() - started
    for game in games:
        game.last_seq = max([game.last_seq, *(seq for name, seq in run.sends if name == game.name)])
    deadline = time.perf_counter() + DELIVERY_GRACE_SECONDS
    while not run.delivered() and time.perf_counter() < deadline:
        await asyncio.sleep(0.05)
    for task, _ in listening:
        task.cancel()
    await asyncio.gather(*(task for task, _ in listening), return_exceptions=True)


# --- the baselines -----------------------------------------------------------------------------


def in_process_submits(games_dir: Path, game: Game, count: int) -> list[float]:
    """The same submit through the application layer, in this process, on a copy of a game."""
    copy = Path(tempfile.mkdtemp(prefix="bench-serve-app-"))
    try:
        for path in games_dir.glob(f"{game.name}.*"):
            shutil.copy2(path, copy / path.name)
        log = game_log(copy, game.name)
        ship = next(iter(game.ships.values()))
        timings = []
        for _ in range(count):
            started = time.perf_counter()
            run_command(log, lambda state: GiveOrder(ship=ship, actions=(Advance(),), replace=True))
            timings.append(time.perf_counter() - started)
        return timings
    finally:
        shutil.rmtree(copy, ignore_errors=True)


async def lone_submits(url: str, game: Game, count: int) -> list[float]:
    """One client alone submitting over HTTP to the idle server, one request at a time."""
    player, ship = next(iter(game.ships.items()))
    timings = []
    async with httpx.AsyncClient(base_url=url, timeout=120.0) as client:
        for _ in range(count):
            headers = {**bearer(game.seats.seats[player]), "Idempotency-Key": str(uuid.uuid4())}
            body = {"ship": ship, "actions": [{"kind": "idle"}], "replace": True}
            started = time.perf_counter()
            answer = await client.post(f"/api/games/{game.name}/orders", json=body, headers=headers)
            timings.append(time.perf_counter() - started)
            if answer.status_code != 200:
                raise SystemExit(f"baseline submit refused: {answer.status_code} {answer.text}")
            game.last_seq = answer.json()["seq"]
    return timings


# --- the report ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=32)
    parser.add_argument("--players", type=int, default=8, help=f"per game, at most {len(NAMES)}")
    parser.add_argument("--spectators", type=int, default=64, help="stream listeners, spread over the games")
    parser.add_argument("--orders", type=int, default=8, help="orders each player submits per run")
    parser.add_argument("--think", type=float, default=2.0, help="mean seconds between a player's orders")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=int, default=200, help="submits of each baseline")
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args()
    # the in-process baseline's command path logs each append at info: not this report's business
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if not 1 <= args.players <= len(NAMES):
        parser.error(f"--players: 1 to {len(NAMES)}")

    work = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    server = ServerProcess(work / "games", ports=[args.port] if args.port else None)
    try:
        started = time.perf_counter()
        server.start()
        games = asyncio.run(set_up(server.url, args.games, args.players))
        assert server.process is not None
        server_pid = server.process.pid
        print(
            f"server: pid {server_pid} on {server.url}; "
            f"{args.games} games x {args.players} players set up in {time.perf_counter() - started:.1f} s"
        )
        app = in_process_submits(server.games, games[0], args.baseline)
        lone = asyncio.run(lone_submits(server.url, games[-1], args.baseline))
        print(f"baseline, in-process submit (app layer, no HTTP): p50 {ms(percentile(app, 50))}, "
              f"p95 {ms(percentile(app, 95))}")  # fmt: skip
        print(f"baseline, one client alone over HTTP:              p50 {ms(percentile(lone, 50))}, "
              f"p95 {ms(percentile(lone, 95))}")  # fmt: skip

        rows = []
        for number in range(1, args.runs + 1):
            load = os.getloadavg()[0]
            server_cpu, own_cpu = cpu_seconds(server_pid), cpu_seconds()
            run = asyncio.run(one_run(server.url, games, args))
            server_cpu, own_cpu = cpu_seconds(server_pid) - server_cpu, cpu_seconds() - own_cpu
            submit = run.submit_latencies()
            from_ack, from_send, missing = run.push_latencies()
            row = {
                "p50": percentile(submit, 50),
                "p95": percentile(submit, 95),
                "p99": percentile(submit, 99),
                "push": percentile(from_ack, 95),
                "push_send": percentile(from_send, 95),
            }
            rows.append(row)
            notes = [
                f"{len(run.refused)} refused, first: {run.refused[0]}" if run.refused else "",
                f"{len(run.reconnects)} stream(s) reopened, first: {run.reconnects[0]}"
                if run.reconnects
                else "",
                f"{len(run.resent)} submit(s) sent again, first: {run.resent[0]}" if run.resent else "",
            ]
            rate = len(submit) / run.seconds
            print(
                f"run {number}: {len(submit)} submits in {run.seconds:.1f} s ({rate:.0f}/s): "
                f"submit p50 {ms(row['p50'])}, p95 {ms(row['p95'])}, p99 {ms(row['p99'])}; "
                f"push p95 {ms(row['push'])} from the 2xx, {ms(row['push_send'])} from the send"
            )
            per_submit = server_cpu / max(len(submit), 1) * 1000
            print(
                f"       {len(from_ack)} deliveries to {args.spectators} listeners, {missing} missing; "
                f"CPU: server {server_cpu:.1f} s ({per_submit:.1f} ms a submit), load generator "
                f"{own_cpu:.1f} s; load average {load:.1f} on {os.cpu_count()} cores at the start"
                + "".join(f"; {note}" for note in notes if note)
            )
            if missing or run.refused:
                rows[-1]["push"] = math.inf  # an event a listener never got misses the goal
        med = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
        print(
            f"submit latency, median of {args.runs} runs: p50 {ms(med['p50'])}, p95 {ms(med['p95'])}, "
            f"p99 {ms(med['p99'])} (target p95 < {SUBMIT_GOAL_P95 * 1000:.0f} ms) "
            f"{verdict(med['p95'] < SUBMIT_GOAL_P95)}"
        )
        print(
            f"push latency, median of {args.runs} runs: p95 {ms(med['push'])} from the 2xx, "
            f"{ms(med['push_send'])} from the send (target p95 < {PUSH_GOAL_P95 * 1000:.0f} ms) "
            f"{verdict(med['push'] < PUSH_GOAL_P95)}"
        )
        print(
            f"ratio loaded/in-process submit: p50 {med['p50'] / percentile(app, 50):.1f}, "
            f"p95 {med['p95'] / percentile(app, 95):.1f}; loaded/alone over HTTP: "
            f"p50 {med['p50'] / percentile(lone, 50):.1f}, p95 {med['p95'] / percentile(lone, 95):.1f}"
        )
    except BaseException:
        print(f"the server's output ends with:\n{server.output_text()[-3000:]}", file=sys.stderr)
        raise
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
