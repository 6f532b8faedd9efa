"""Idle streams on one long game: the server's memory with them open, and the
tournament's submit latency with them open against without.

Run: ``.venv/bin/python bench/bench_streams.py [--streams 10000] [--events 2048] [--games 32]
[--players 8] [--spectators 64] [--orders 8] [--think 2.0] [--runs 5]``.

Starts ``mortecouille serve`` on 127.0.0.1 over a temporary games directory holding one game of
``--events`` events (``bench_fold``'s blockade battle, cut there) and ``--games`` tournament games
set up through the API (``bench_serve``'s: each player one ship bought, sealed and placed). Its caps
on streams are raised for the bench (``--max-streams``, ``--max-streams-per-game``,
``--max-streams-per-address``: all a little above ``--streams``), since the bench opens them all
from one address.

A crowd process (this script with ``--crowd``) opens ``--streams`` streams of the long game as a
page opening does (no ``Last-Event-ID``: each is sent the whole game first), reads each until the
game's last event came, then keeps them open and idle (reading what comes: heartbeats). Runs
alternate, ``--runs`` of each, on the one server:

* **without**: the tournament's load (``bench_tournament``'s run: ``--spectators`` listeners on the
  tournament games, every player submitting ``--orders`` orders after think times from 0 to twice
  ``--think`` seconds) with no crowd;
* **with**: the crowd opens its streams (the time it takes is printed), the server's RSS is read
  once they are all idle, then the same tournament load runs beside them; then the crowd closes them.

Figures, each the median over the runs with min and max: the server's RSS (``VmRSS``) with the
streams open (goal under 500 MB at 10,000 streams; with fewer, ``bench/run``'s 2,000, the goal is
scaled: the idle server's RSS plus 1/10,000 of the rest per stream), before any and after they
closed, and its peak (``VmHWM``); the submit
p95 (send to 2xx) with the streams open and without, their ratio (goal: within 1.5x of without, or
5 ms more at most); the push p95 of the tournament's listeners and the events they missed (none).

Open files: every stream is a socket in the server and one in the crowd. The bench raises its own
soft limit of open files to the hard limit (``resource.setrlimit``; the server and the crowd inherit
it); when the hard limit is too low for ``--streams``, it opens as many as the limit allows, and
says so.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import structlog

from bench.bench_fold import cached_log
from bench.bench_serve import NAMES, percentile
from bench.bench_serve import set_up as set_up_games
from bench.bench_tournament import one_run
from bench.timing import RUNS, Timing, verdict
from tests.web_server import ServerProcess, ports_from_environment

RSS_GOAL_MB = 500.0
#: ... at this many streams; with fewer (``bench/run``), the goal is scaled: the idle server's RSS
#: (measured in the same run) plus the same share of the rest for each stream
RSS_GOAL_STREAMS = 10_000
#: the submit p95 with the streams open may be this many times that without ...
SUBMIT_RATIO_GOAL = 1.5
#: ... or this many milliseconds more, whichever allows more (a quiet baseline of a few ms)
SUBMIT_EXTRA_MS_GOAL = 5.0
#: open files the server needs besides its streams (its games, the log, the tournament's clients)
SPARE_FILES = 512
LONG_GAME = "long"


class BenchServer(ServerProcess):
    """``serve`` with its caps on streams raised above what the bench opens."""

    def __init__(self, games: Path, streams: int) -> None:
        super().__init__(games, ports=ports_from_environment())
        self.streams = streams

    def command(self) -> list[str]:
        room = str(self.streams + 64)
        return [*super().command(), "--max-streams", room, "--max-streams-per-game", room,
                "--max-streams-per-address", room]  # fmt: skip


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """The resident memory of process ``pid`` (``VmHWM``: its peak so far), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return math.nan


def raise_open_files(streams: int) -> int:
    """Raise this process's soft limit of open files to its hard limit (the server and the crowd
    inherit it); the number of streams that limit allows, at most ``streams``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        print(f"open files: soft limit raised from {soft} to the hard limit {hard}")
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    allowed = streams if soft == resource.RLIM_INFINITY else min(streams, soft - SPARE_FILES)
    if allowed < streams:
        print(f"open files: the limit ({soft}) allows {allowed} streams, not {streams}: measuring {allowed}")
    return allowed


def long_game(games: Path, events: int) -> int:
    """The long game in ``games``; the seq of its last event."""
    source = cached_log(events)
    games.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, games / f"{LONG_GAME}.jsonl")
    shutil.copyfile(source.with_suffix(".head"), games / f"{LONG_GAME}.head")
    (games / f"{LONG_GAME}.seed").write_text("bench\n")
    return events - 1


# --- the crowd (a process of its own) -------------------------------------------------------------


async def crowd_stream(port: int, last: int, done: list[int], index: int) -> None:
    """One stream of the long game, read until its last event came (noted in ``done``), then kept
    open, its heartbeats read."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /api/games/{LONG_GAME}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    await writer.drain()
    marker = f"id: {last}\n".encode()
    seen = b""  # the end of what was read, where the marker may begin
    first = True
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                raise SystemExit(f"crowd: stream {index} ended")
            if first and not data.startswith(b"HTTP/1.1 200"):
                raise SystemExit(f"crowd: stream {index} refused: {data[:300]!r}")
            first = False
            if seen is not None:
                if marker in seen + data:
                    seen = None
                    done.append(index)
                else:
                    seen = (seen + data)[-len(marker) :]
    finally:
        writer.close()


async def crowd(port: int, count: int, last: int) -> None:
    """Serve the bench's orders on stdin: ``open`` (open ``count`` streams; print ``ready SECONDS``
    once all have the whole game), ``close`` (close them; print ``closed``), anything else: stop."""
    loop = asyncio.get_running_loop()
    tasks: list[asyncio.Task[None]] = []
    while True:
        order = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if order == "open":
            began = time.perf_counter()
            done: list[int] = []
            for index in range(count):
                tasks.append(asyncio.create_task(crowd_stream(port, last, done, index)))
                if index % 100 == 99:
                    await asyncio.sleep(0.02)  # the server's listen backlog is not flooded
            while len(done) < count:
                for task in tasks:
                    if task.done():
                        task.result()  # a stream refused or ended: the bench fails, saying why
                await asyncio.sleep(0.1)
            print(f"ready {time.perf_counter() - began:.1f}", flush=True)
        elif order == "close":
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            tasks.clear()
            print("closed", flush=True)
        else:
            return


class Crowd:
    """The crowd process, driven line by line."""

    def __init__(self, port: int, count: int, last: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--crowd", str(port), str(count), str(last)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip

    def ask(self, order: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(order + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        if not answer:
            raise SystemExit(f"the crowd stopped (exit {self.process.wait()})")
        return answer

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


# --- the runs ------------------------------------------------------------------------------------


def tournament_p95(
    url: str, games: list[object], args: argparse.Namespace, rows: list[dict[str, float]]
) -> None:
    run = asyncio.run(one_run([url], games, args))  # type: ignore[arg-type]
    submit = run.submit_latencies()
    _from_ack, from_send, missing = run.push_latencies()
    rows.append({
        "p95": percentile(submit, 95) * 1000,
        "p50": percentile(submit, 50) * 1000,
        "push": percentile(from_send, 95) * 1000 if not missing and not run.refused else math.inf,
        "missing": float(missing),
        "refused": float(len(run.refused)),
        "submits": float(len(submit)),
    })  # fmt: skip


def shown(label: str, values: list[float], unit: str) -> str:
    timing = Timing([value / 1000 for value in values])
    return f"{label} {timing.shown(unit)}" if unit == "ms" else (
        f"{label} median {sorted(values)[len(values) // 2]:.0f} {unit} (min {min(values):.0f}, "
        f"max {max(values):.0f}, {len(values)} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=10_000, help="idle streams of the long game")
    parser.add_argument("--events", type=int, default=2048, help="events of the long game")
    parser.add_argument("--games", type=int, default=32, help="tournament games")
    parser.add_argument("--players", type=int, default=8, help=f"per game, at most {len(NAMES)}")
    parser.add_argument("--spectators", type=int, default=64, help="listeners of the tournament games")
    parser.add_argument("--orders", type=int, default=8, help="orders each player submits per run")
    parser.add_argument("--think", type=float, default=2.0, help="mean seconds between a player's orders")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--crowd", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.crowd:
        asyncio.run(crowd(*args.crowd))
        return
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if not 1 <= args.players <= len(NAMES):
        parser.error(f"--players: 1 to {len(NAMES)}")
    if args.runs < RUNS:
        parser.error(f"--runs: at least {RUNS} (a median of at least five runs)")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    streams = raise_open_files(args.streams)
    work = Path(tempfile.mkdtemp(prefix="bench-streams-"))
    server = BenchServer(work / "games", streams)
    crowd_process: Crowd | None = None
    try:
        last = long_game(server.games, args.events)
        server.start()
        assert server.process is not None
        pid = server.process.pid
        games = asyncio.run(set_up_games(server.url, args.games, args.players))
        idle = rss_mb(pid)
        print(f"server: pid {pid} on {server.url}; a game of {args.events} events and {args.games} games x "
              f"{args.players} players; RSS {idle:.0f} MB")  # fmt: skip
        print(f"{streams} idle streams of the {args.events}-event game; {args.spectators} listeners, "
              f"{args.orders} orders a player a run, think {args.think} s")  # fmt: skip
        crowd_process = Crowd(server.port, streams, last)
        without: list[dict[str, float]] = []
        beside: list[dict[str, float]] = []
        rss_open: list[float] = []
        rss_after: list[float] = []
        rss_closed: list[float] = []
        opening: list[float] = []
        for number in range(1, args.runs + 1):
            tournament_p95(server.url, games, args, without)
            answer = crowd_process.ask("open")
            opening.append(float(answer.split()[1]))
            time.sleep(2.0)  # the streams idle: what the server keeps for them, not what it sends
            rss_open.append(rss_mb(pid))
            tournament_p95(server.url, games, args, beside)
            rss_after.append(rss_mb(pid))
            crowd_process.ask("close")
            time.sleep(2.0)
            rss_closed.append(rss_mb(pid))
            print(
                f"  run {number}: {streams} streams open in {opening[-1]:.1f} s; RSS {rss_open[-1]:.0f} MB "
                f"open, {rss_after[-1]:.0f} MB after the load, {rss_closed[-1]:.0f} MB closed; submit p95 "
                f"{without[-1]['p95']:.1f} ms without, {beside[-1]['p95']:.1f} ms with the streams; "
                f"{int(without[-1]['missing'] + beside[-1]['missing'])} pushes missing, "
                f"{int(without[-1]['refused'] + beside[-1]['refused'])} submits refused",
                flush=True,
            )
        print(shown("time to open the streams (each sent the whole game)", [s * 1000 for s in opening], "ms"))
        print(shown("server RSS with the streams open:", rss_open, "MB"))
        print(shown("server RSS after the tournament's load beside them:", rss_after, "MB"))
        print(shown("server RSS once they closed:", rss_closed, "MB") + f"; {idle:.0f} MB before any; "
              f"peak {rss_mb(pid, 'VmHWM'):.0f} MB")  # fmt: skip
        for rows, label in ((without, "without the streams"), (beside, "with the streams open")):
            print(shown(f"submit p95 {label}:", [row["p95"] for row in rows], "ms"))
            print(shown(f"push p95 {label}:", [row["push"] for row in rows], "ms"))
        open_mb = sorted(rss_open)[len(rss_open) // 2]
        goal = RSS_GOAL_MB
        scaled = ""
        if streams < RSS_GOAL_STREAMS:
            goal = idle + (RSS_GOAL_MB - idle) * streams / RSS_GOAL_STREAMS
            scaled = f"scaled from {RSS_GOAL_MB:.0f} MB at {RSS_GOAL_STREAMS} streams, {idle:.0f} MB idle"
        verdict(f"streams: server RSS with {streams} idle streams of a {args.events}-event game (MB)",
                open_mb, goal, at_least=False, detail=scaled)  # fmt: skip
        base = Timing([row["p95"] / 1000 for row in without]).median * 1000
        loaded = Timing([row["p95"] / 1000 for row in beside]).median * 1000
        allowed = max(base * SUBMIT_RATIO_GOAL, base + SUBMIT_EXTRA_MS_GOAL)
        per_run = sorted(b["p95"] / w["p95"] for w, b in zip(without, beside, strict=True))
        print(f"submit p95 with/without the streams: ratio {loaded / base:.2f} (per run {per_run[0]:.2f}.."
              f"{per_run[-1]:.2f}); allowed {allowed:.1f} ms (1.5x or +5 ms)")  # fmt: skip
        verdict("streams: submit p95 with the streams open (ms)", loaded, allowed, at_least=False,
                detail=f"without: {base:.1f} ms")  # fmt: skip
        missing = sum(row["missing"] + row["refused"] for row in [*without, *beside])
        verdict("streams: pushes missed or submits refused", missing, 0, at_least=False)
    except BaseException:
        print(f"the server's output ends with:\n{server.output_text()[-3000:]}", file=sys.stderr)
        raise
    finally:
        if crowd_process is not None:
            crowd_process.stop()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
