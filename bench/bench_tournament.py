"""A tournament on two server processes over PostgreSQL against one process over files: submit
and push latency, and each store's appends against the raw rate of its medium.

Run: ``.venv/bin/python bench/bench_tournament.py [--games 32] [--players 8] [--spectators 64]
[--orders 8] [--think 2.0] [--runs 5] [--appends 200]``.

Starts a throw-away PostgreSQL cluster (``tests/postgres_cluster.py``: ``initdb`` in a temporary
directory, a free loopback port of 5500-5599; Debian's ``postgresql`` package) and two set-ups of
``mortecouille serve`` on 127.0.0.1 (ports from ``$MORTECOUILLE_TEST_PORTS`` when set):

* **files, 1 process**: one ``serve`` over a games directory (the default store);
* **PostgreSQL, 2 processes**: two ``serve --store postgresql://...`` processes on one database,
  each with its own LISTEN connection (``events/storage/postgres_feed.py``). The players of each game are
  split between the two processes, and so are its spectators: most pushes cross processes (a
  submit in one, its listener on the other, through NOTIFY).

Each set-up gets ``--games`` mortecouille games of ``--players`` players (created through the API,
each player with one ship bought, sealed and placed), then, per run, ``--spectators`` listeners
hold the games' event streams while every player submits ``--orders`` orders after think times
drawn from 0 to twice ``--think`` seconds (``bench_serve.py``'s load: its players and listeners
are reused here). Runs alternate between the set-ups (the machine is shared: both see its load).

Figures, each the median over the runs with min and max:

* submit latency p50/p95/p99 (send to 2xx, which comes after the append is durable); goal p95 <
  300 ms;
* push latency p95 to each listener of the game receiving the event (every listener must get
  every event: one missing is a MISSED); goal p95 < 500 ms. The messages carry no append time
  and the append happens between the submit's send and its 2xx: judged from the send (an upper
  bound of the time from the append), printed from the 2xx too (a lower bound; negative when
  the push overtakes the answer);
* appends per second of each store, one event per append through the store's contract
  (``GameLog.append``: lock, stamp, write, fsync, head anchor; ``PostgresGameLog.append``: one
  transaction with its locks, insert, head, NOTIFY, commit), against the raw rate of its medium
  measured interleaved in the same run: ``os.write`` + ``os.fsync`` of the same bytes, and a
  pgbench-style single-row ``INSERT`` committed on the same server. Printed with their ratio
  (the store's rate over the medium's); no goal for it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import structlog

from bench.bench_serve import NAMES, Game, Run, finish_run, listen, percentile, play
from bench.bench_serve import set_up as set_up_games
from bench.timing import RUNS, Timing, interleaved, verdict
from mortecouille.core.dice import TableDice
from mortecouille.core.game import decide
from mortecouille.core.life_cycle import CreateGame
from mortecouille.core.state import EMPTY
from mortecouille.events.board import Board
from mortecouille.events.codec import stamp_all
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage.contract import EventStore
from mortecouille.events.storage.file_log import GameLog
from tests.postgres_cluster import MissingServer, PostgresServer, throwaway_cluster
from tests.store_servers import StoreServer
from tests.web_server import ServerProcess, ports_from_environment

SUBMIT_GOAL_P95_MS = 300.0
PUSH_GOAL_P95_MS = 500.0


class SetUp:
    """One set-up: its name, its server processes (clients spread over them) and its games."""

    def __init__(self, name: str, servers: list[ServerProcess]) -> None:
        self.name = name
        self.servers = servers
        self.games: list[Game] = []
        self.runs: list[dict[str, float]] = []

    @property
    def urls(self) -> list[str]:
        return [server.url for server in self.servers]


async def one_run(urls: list[str], games: list[Game], args: argparse.Namespace) -> Run:
    """``bench_serve``'s run, its clients spread over the processes at ``urls``: listener ``i``
    on process ``i % n``, the ``j``-th player of a game on process ``j % n``."""
    run = Run()
    timeout = httpx.Timeout(120.0)
    streams = [
        httpx.AsyncClient(base_url=url, timeout=timeout, limits=httpx.Limits(max_connections=None))
        for url in urls
    ]
    limits = httpx.Limits(max_connections=None, keepalive_expiry=2.0)
    submits = [httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) for url in urls]
    try:
        listening = []
        for listener in range(args.spectators):
            game = games[listener % len(games)]
            run.listeners[listener] = game.name
            ready = asyncio.Event()
            # the listener's process differs from the one its index in the game would give a
            # player, so most pushes cross processes
            client = streams[(listener // len(games) + 1) % len(urls)]
            listening.append((asyncio.create_task(listen(client, listener, game, run, ready)), ready))
        await asyncio.wait_for(asyncio.gather(*(ready.wait() for _, ready in listening)), 300)
        started = time.perf_counter()
        await asyncio.gather(
            *(
                play(submits[index % len(urls)], game, player, args, run)
                for game in games
                for index, player in enumerate(game.ships)
            )
        )
        await finish_run(run, games, listening, started)
    finally:
        for client in [*streams, *submits]:
            await client.aclose()
    return run


def measure(set_up: SetUp, args: argparse.Namespace, number: int) -> None:
    run = asyncio.run(one_run(set_up.urls, set_up.games, args))
    submit = run.submit_latencies()
    from_ack, from_send, missing = run.push_latencies()
    row = {
        "p50": percentile(submit, 50) * 1000,
        "p95": percentile(submit, 95) * 1000,
        "p99": percentile(submit, 99) * 1000,
        "push": percentile(from_send, 95) * 1000,
        "push_ack": percentile(from_ack, 95) * 1000,
        "submits": len(submit),
        "seconds": run.seconds,
    }
    if missing or run.refused:
        row["push"] = math.inf  # an event a listener never got, or a refused submit, misses the goal
    set_up.runs.append(row)
    notes = [
        f"{len(run.refused)} refused, first: {run.refused[0]}" if run.refused else "",
        f"{len(run.reconnects)} stream(s) reopened" if run.reconnects else "",
        f"{len(run.resent)} submit(s) sent again" if run.resent else "",
    ]
    print(
        f"  {set_up.name}, run {number}: {len(submit)} submits in {run.seconds:.1f} s: submit p50 "
        f"{row['p50']:.1f} ms, p95 {row['p95']:.1f} ms, p99 {row['p99']:.1f} ms; push p95 "
        f"{row['push']:.1f} ms from the send ({row['push_ack']:.1f} ms from the 2xx); "
        f"{len(from_ack)} deliveries, {missing} missing"
        + "".join(f"; {note}" for note in notes if note),
        flush=True,
    )


def report(set_up: SetUp) -> None:
    def timing(key: str) -> Timing:
        return Timing([row[key] / 1000 for row in set_up.runs])

    shown = (
        ("p50", "submit p50"),
        ("p95", "submit p95"),
        ("p99", "submit p99"),
        ("push", "push p95 from the send"),
        ("push_ack", "push p95 from the 2xx"),
    )
    for key, label in shown:
        print(f"{set_up.name}: {label} {timing(key).shown('ms')}")
    for key, label, goal in (
        ("p95", "submit p95 (ms)", SUBMIT_GOAL_P95_MS),
        ("push", "push p95 from the submit's send (ms)", PUSH_GOAL_P95_MS),
    ):
        verdict(f"tournament, {set_up.name}: {label}", timing(key).median * 1000, goal, at_least=False)


# --- appends against the raw medium ------------------------------------------------------------


def rulings(index: int) -> list[RulingRecorded]:
    return [RulingRecorded(turn=1, rule="T2", text=f"bench append {index}")]


def created(log: EventStore) -> EventStore:
    command = CreateGame(
        game=log.name, ruleset="blockade", players=("A", "B"), budget=0,
        board=Board(width=8, height=8), dice_mode="table",
    )  # fmt: skip
    log.create(decide(EMPTY, command, TableDice()))
    return log


def store_appends(log: EventStore, count: int) -> Callable[[], None]:
    """``count`` appends of one event each through the store's contract."""
    state = {"index": 0}

    def run() -> None:
        for _ in range(count):
            state["index"] += 1
            log.append(rulings(state["index"]))

    return run


def fsync_writes(path: Path, count: int) -> Callable[[], None]:
    """``count`` raw writes of a line as long as the store's, each followed by ``fsync``."""
    _, line = stamp_all(rulings(10**6), 10**6, "0" * 64)

    def run() -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            for _ in range(count):
                os.write(fd, line)
                os.fsync(fd)
        finally:
            os.close(fd)

    return run


def insert_commits(url: str, count: int) -> Callable[[], None]:
    """``count`` pgbench-style single-row INSERTs, each committed (autocommit), on one connection."""
    import psycopg

    conn = psycopg.connect(url, autocommit=True)
    conn.execute("CREATE TABLE IF NOT EXISTS bench_raw (id bigserial PRIMARY KEY, line bytea NOT NULL)")
    _, line = stamp_all(rulings(10**6), 10**6, "0" * 64)

    def run() -> None:
        for _ in range(count):
            conn.execute("INSERT INTO bench_raw (line) VALUES (%s)", [line])

    return run


def rate_report(label: str, store: Timing, medium: Timing, count: int, medium_label: str) -> None:
    store_rate = count / store.median
    medium_rate = count / medium.median
    print(f"{label}: {count} appends a run, {store.shown('s')}: {store_rate:.0f} appends/s")
    print(f"{medium_label}: {count} a run, {medium.shown('s')}: {medium_rate:.0f} /s")
    ratios = sorted(m / s for s, m in zip(store.runs, medium.runs, strict=True))
    print(
        f"{label} vs {medium_label}: ratio {store_rate / medium_rate:.2f} "
        f"(per-run {ratios[0]:.2f}..{ratios[-1]:.2f}; no goal set)"
    )


def appends_against_media(work: Path, cluster: PostgresServer, count: int, runs: int) -> None:
    from mortecouille.events.storage.postgres import PostgresStore

    files = work / "appends"
    files.mkdir()
    file_log = created(GameLog(files / "appends.jsonl"))
    store_time, raw_time = interleaved(
        store_appends(file_log, count), fsync_writes(files / "raw.bin", count), runs
    )
    rate_report("file store (GameLog.append)", store_time, raw_time, count, "raw os.write + os.fsync")
    with PostgresStore(cluster.url, schema="bench_appends", max_connections=2) as store:
        pg_log = created(store.log("appends"))
        store_time, raw_time = interleaved(
            store_appends(pg_log, count), insert_commits(cluster.url, count), runs
        )
    rate_report(
        "PostgreSQL store (PostgresGameLog.append)", store_time, raw_time, count, "single-row INSERT commit"
    )


# --- main --------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=32)
    parser.add_argument("--players", type=int, default=8, help=f"per game, at most {len(NAMES)}")
    parser.add_argument("--spectators", type=int, default=64)
    parser.add_argument("--orders", type=int, default=8, help="orders each player submits per run")
    parser.add_argument("--think", type=float, default=2.0, help="mean seconds between a player's orders")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--appends", type=int, default=200, help="appends per run of the store rates")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if not 1 <= args.players <= len(NAMES):
        parser.error(f"--players: 1 to {len(NAMES)}")
    if args.runs < RUNS:
        parser.error(f"--runs: at least {RUNS} (a median of at least five runs)")

    # stopped by a signal, it still stops its servers and its cluster (the finally blocks below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = Path(tempfile.mkdtemp(prefix="bench-tournament-"))
    ports = ports_from_environment()
    set_ups: list[SetUp] = []
    try:
        with throwaway_cluster() as cluster:
            store_url = f"{cluster.url}?schema=tournament"
            set_ups = [
                SetUp("files, 1 process", [StoreServer(f"file:{work / 'games'}", work, "files", ports)]),
                SetUp(
                    "PostgreSQL, 2 processes",
                    [StoreServer(store_url, work, f"postgres-{n}", ports) for n in (1, 2)],
                ),
            ]
            for set_up in set_ups:
                began = time.perf_counter()
                for server in set_up.servers:
                    server.start()
                set_up.games = asyncio.run(set_up_games(set_up.urls[0], args.games, args.players))
                print(
                    f"{set_up.name}: {len(set_up.servers)} process(es) on {', '.join(set_up.urls)}; "
                    f"{args.games} games x {args.players} players set up in "
                    f"{time.perf_counter() - began:.1f} s",
                    flush=True,
                )
            print(f"{args.spectators} spectators, {args.orders} orders a player a run, think {args.think} s")
            for number in range(1, args.runs + 1):
                for set_up in set_ups:
                    measure(set_up, args, number)
            for set_up in set_ups:
                report(set_up)
            appends_against_media(work, cluster, args.appends, args.runs)
            for set_up in set_ups:
                for server in set_up.servers:
                    server.stop()
    except MissingServer as error:
        raise SystemExit(f"bench_tournament: {error}") from None
    except BaseException:
        for set_up in set_ups:
            for server in set_up.servers:
                print(f"{server.output} ends with:\n{server.output_text()[-2000:]}", file=sys.stderr)
        raise
    finally:
        for set_up in set_ups:
            for server in set_up.servers:
                server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
