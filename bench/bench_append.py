"""One command's durable append against a raw write + fsync of the same bytes (issue 16, item 3).

Run: ``.venv/bin/python bench/bench_append.py [--appends N] [--runs 5] [--dir DIR]``.

Each run appends N commands' worth of events (three lines each, as a small command writes) to a
game through ``GameLog.append`` (open, lock, the log's size, the head anchor opened and read, whose
seq, hash and END give the tail while the log ends at END, stamp, the anchor's update readied, one
write, one fsync, the anchor's slot written in place), and writes the same bytes to a plain file
with one ``os.write`` and one ``os.fsync`` each, interleaved, in the same directory. Prints each
side's median per append over ``--runs`` runs with min and max, the ratio raw / append, and OK or
MISSED against the goal (at least 0.8: appends at disk speed). Besides, the command's own work:
the append's time outside its own write and fsync (timed around the store's
``_append_or_take_back``), which the ratio depends on but a busy disk's slow fsync hides, in wall
clock and in this thread's CPU time (which time taken by other processes on a shared machine does
not inflate). And the store's own write and fsync, timed around the same call, against the raw
ones: the rest of the split (append = own work + its write and fsync). ``--dir``: where to write
(default: a fresh temporary directory under bench/out, on the repository's file system).
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
from mortecouille.events import store as store_module  # noqa: E402
from mortecouille.events.board import Board  # noqa: E402
from mortecouille.events.codec import stamp_all  # noqa: E402
from mortecouille.events.rulings import RulingRecorded  # noqa: E402
from mortecouille.events.store import GameLog, HeadSlots  # noqa: E402

LINES_PER_APPEND = 3


def one_run(directory: Path, appends: int, run: int) -> tuple[float, float, float, float, float]:
    """Seconds per append through the store, per raw write + fsync of the same bytes, of the
    store's work outside its own write and fsync, in wall clock and in CPU time, and of the store's
    own write and fsync."""
    log = GameLog(directory / f"append-{run}.jsonl")
    create = CreateGame(game="bench", ruleset="blockade", players=("A", "B"), budget=0,
                        board=Board(width=8, height=8), dice_mode="table")  # fmt: skip
    log.create(decide(EMPTY, create, TableDice()))
    assert log.head_path.read_bytes().startswith(HeadSlots.MAGIC)
    raw = os.open(directory / f"raw-{run}.bin", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    store = plain = store_cpu = 0.0
    in_write = [0.0, 0.0]  # wall clock, CPU time
    real_write = store_module._append_or_take_back

    def timed_write(fd: int, payload: bytes, size: int, path: Path) -> None:
        start, start_cpu = time.perf_counter(), time.thread_time()
        try:
            real_write(fd, payload, size, path)
        finally:
            in_write[0] += time.perf_counter() - start
            in_write[1] += time.thread_time() - start_cpu

    store_module._append_or_take_back = timed_write
    try:
        for index in range(appends):
            batch = [
                RulingRecorded(turn=1, rule="T2", text=f"bench {index} {line}")
                for line in range(LINES_PER_APPEND)
            ]
            start, start_cpu = time.perf_counter(), time.thread_time()
            stamped = log.append(batch)
            store += time.perf_counter() - start
            store_cpu += time.thread_time() - start_cpu
            _, payload = stamp_all(batch, stamped[0].seq, stamped[0].prev)  # the very bytes appended
            start = time.perf_counter()
            os.write(raw, payload)
            os.fsync(raw)
            plain += time.perf_counter() - start
    finally:
        store_module._append_or_take_back = real_write
        os.close(raw)
    return (
        store / appends,
        plain / appends,
        (store - in_write[0]) / appends,
        (store_cpu - in_write[1]) / appends,
        in_write[0] / appends,
    )


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
    inside = Timing([r[4] for r in results])
    print(f"the store's own write + fsync (vs raw's above):     {inside.shown('ms')} per append")
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
