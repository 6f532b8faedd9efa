"""One command's durable append against a raw write + fsync of the same bytes.

Run: ``.venv/bin/python bench/bench_append.py [--appends N] [--runs 5] [--dir DIR]``.

Each run appends N commands' worth of events (three lines each, as a small command writes) to a game
through ``GameLog.append`` (the log's descriptor, kept open by the process since its first append,
locked and checked to be the file its path names, with the log's size, by one ``lstat``; the head
anchor's, checked so too, its slots read again from the process's mapping of it, whose seq, hash and
END give the tail while the log ends at END; stamp, the anchor's slot readied, one write, one fsync,
the anchor's slot written in place with one pwrite, unlock), and writes the same bytes to a plain
file (opened once) with one ``os.write`` and one ``os.fsync`` each, interleaved, in the same
directory. Prints each side's median per append over ``--runs`` runs with min and max, the ratio raw
/ append, and OK or MISSED against the goal (at least 0.8: appends at disk speed). Besides, the
command's own work: the append's time outside its own write and fsync (timed around the store's
``_append_or_take_back``, in a second pass of as many appends, since those clock reads would slow
the appends they time), which the ratio depends on but a busy disk's slow fsync hides, in wall clock
and in this thread's CPU time (which time taken by other processes on a shared machine does not
inflate), and split into its part before the write (lock, path checks, head read, stamping, the
anchor's update readied) and its part after the fsync (the anchor's slot written, unlock), which
runs as the thread wakes from the fsync's sleep, with cold caches. And the store's own write and
fsync, timed around the same call, against the raw ones: the rest of the split (append = own work +
its write and fsync). Last, for information, an append that opens its files as a one-shot command
does (the process's kept descriptors closed before each).
``--dir``: where to write (default: a fresh temporary directory under bench/out, on the
repository's file system).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.timing import Timing, verdict  # noqa: E402
from mortecouille.core.dice import TableDice  # noqa: E402
from mortecouille.core.game import decide  # noqa: E402
from mortecouille.core.life_cycle import CreateGame  # noqa: E402
from mortecouille.core.state import EMPTY  # noqa: E402
from mortecouille.events.base import Event  # noqa: E402
from mortecouille.events.board import Board  # noqa: E402
from mortecouille.events.codec import stamp_all  # noqa: E402
from mortecouille.events.rulings import RulingRecorded  # noqa: E402
from mortecouille.events.storage import file_writing as store_module  # noqa: E402
from mortecouille.events.storage.file_handles import close_idle_descriptors  # noqa: E402
from mortecouille.events.storage.file_head import HeadSlots  # noqa: E402
from mortecouille.events.storage.file_log import GameLog  # noqa: E402

LINES_PER_APPEND = 3


def one_run(
    directory: Path, appends: int, run: int
) -> tuple[float, float, float, float, float, float, float, float]:
    """Seconds per append through the store, per raw write + fsync of the same bytes, of the
    store's work outside its own write and fsync, in wall clock and in CPU time, of the store's
    own write and fsync, per append opening its files (as a one-shot command does), and of the
    store's own work before its write and after its fsync (wall clock: the two parts of the own
    work, the second run right after the fsync's sleep, with cold caches).

    Two passes over the same game, each interleaving the raw write + fsync: the first times
    ``GameLog.append`` and the raw side with nothing else inside either interval (the ratio); the
    second times the store's write and fsync inside the append (the split), which puts four clock
    reads inside the append's interval (two of them system calls, ``thread_time``), so its appends
    are not used for the ratio. A third pass, of a quarter as many appends, closes the process's
    kept descriptors before each (outside the interval)."""
    log = GameLog(directory / f"append-{run}.jsonl")
    create = CreateGame(game="bench", ruleset="blockade", players=("A", "B"), budget=0,
                        board=Board(width=8, height=8), dice_mode="table")  # fmt: skip
    log.create(decide(EMPTY, create, TableDice()))
    assert log.head_path.read_bytes().startswith(HeadSlots.MAGIC)
    raw = os.open(directory / f"raw-{run}.bin", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    store = plain = split_store = split_store_cpu = fresh = 0.0
    fresh_appends = max(1, appends // 4)
    in_write = [0.0, 0.0]  # wall clock, CPU time
    bounds = [0.0, 0.0]  # when the last append's write began and its fsync ended (wall clock)
    before_write = after_fsync = 0.0
    real_write = store_module._append_or_take_back

    def timed_write(fd: int, payload: bytes, size: int, path: Path) -> None:
        start, start_cpu = time.perf_counter(), time.thread_time()
        try:
            real_write(fd, payload, size, path)
        finally:
            bounds[:] = start, time.perf_counter()
            in_write[0] += bounds[1] - start
            in_write[1] += time.thread_time() - start_cpu

    def raw_write(stamped: list[Event], batch: list[RulingRecorded]) -> float:
        _, payload = stamp_all(batch, stamped[0].seq, stamped[0].prev)  # the very bytes appended
        start = time.perf_counter()
        os.write(raw, payload)
        os.fsync(raw)
        return time.perf_counter() - start

    try:
        for index in range(appends):  # the ratio: nothing but the append inside its interval
            batch = bench_batch(index)
            start = time.perf_counter()
            stamped = log.append(batch)
            store += time.perf_counter() - start
            plain += raw_write(stamped, batch)
        store_module._append_or_take_back = timed_write
        for index in range(appends, 2 * appends):  # the split: the store's write and fsync timed
            batch = bench_batch(index)
            start_cpu = time.thread_time()  # read before the wall clock starts: not inside it
            start = time.perf_counter()
            stamped = log.append(batch)
            end = time.perf_counter()
            split_store += end - start
            split_store_cpu += time.thread_time() - start_cpu
            before_write += bounds[0] - start
            after_fsync += end - bounds[1]
            raw_write(stamped, batch)
        store_module._append_or_take_back = real_write
        for index in range(2 * appends, 2 * appends + fresh_appends):  # as one-shot commands
            batch = bench_batch(index)
            close_idle_descriptors()
            start = time.perf_counter()
            stamped = log.append(batch)
            fresh += time.perf_counter() - start
            raw_write(stamped, batch)
    finally:
        store_module._append_or_take_back = real_write
        close_idle_descriptors()
        os.close(raw)
    return (
        store / appends,
        plain / appends,
        (split_store - in_write[0]) / appends,
        (split_store_cpu - in_write[1]) / appends,
        in_write[0] / appends,
        fresh / fresh_appends,
        before_write / appends,
        after_fsync / appends,
    )


def bench_batch(index: int) -> list[RulingRecorded]:
    """What a small command appends: three lines."""
    return [
        RulingRecorded(turn=1, rule="T2", text=f"bench {index} {line}") for line in range(LINES_PER_APPEND)
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    directory = args.dir or Path(tempfile.mkdtemp(prefix="append-", dir=out))
    directory.mkdir(parents=True, exist_ok=True)
    try:
        results = [one_run(directory, args.appends, run) for run in range(args.runs)]
    finally:
        if args.dir is None:
            shutil.rmtree(directory, ignore_errors=True)
    store, plain = Timing([r[0] for r in results]), Timing([r[1] for r in results])
    print(f"appends: {args.appends} a run, {LINES_PER_APPEND} lines each, in {directory}")
    print(f"GameLog.append (write, fsync, head anchor in place): {store.shown('ms')} per append")
    print(f"raw os.write + os.fsync of the same bytes:          {plain.shown('ms')} per append")
    own = Timing([r[2] for r in results])
    own_cpu = Timing([r[3] for r in results])
    print(f"the store's own work (outside its write and fsync): {own.shown('ms')} per append")
    print(f"  the same in CPU time (this thread's):             {own_cpu.shown('ms')} per append")
    before, after = Timing([r[6] for r in results]), Timing([r[7] for r in results])
    print(f"  of it, before the write (lock, checks, stamping): {before.shown('ms')} per append")
    print(f"  of it, after the fsync (head slot, unlock):       {after.shown('ms')} per append")
    inside = Timing([r[4] for r in results])
    print(f"the store's own write + fsync (vs raw's above):     {inside.shown('ms')} per append")
    fresh = Timing([r[5] for r in results])
    print(f"GameLog.append opening its files (one-shot command): {fresh.shown('ms')} per append "
          f"(for information: raw / this {plain.median / fresh.median:.2f})")  # fmt: skip
    ratios = sorted(r[1] / r[0] for r in results)
    verdict(
        "durable append vs raw write+fsync of the same bytes (speed ratio)",
        plain.median / store.median,
        0.8,
        at_least=True,
        detail=f"per-run ratios {ratios[0]:.2f}..{ratios[-1]:.2f}",
    )


if __name__ == "__main__":
    main()
