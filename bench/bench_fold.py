"""Fold speed: read + decode + fold of a 1,000,000-event log, against decode alone.

Run: ``.venv/bin/python bench/bench_fold.py [--events N]``. Prints events/s for
a pure msgspec decode of the file's typed JSON lines and for the end-to-end
path a command takes (GameLog.read + fold), and their ratio. Target: the
end-to-end rate is at least 40% of the decode-only rate.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import events  # noqa: E402,F401
from core.board import Board  # noqa: E402
from core.dice import (  # noqa: E402
    DiceCup,
    SeededDice,
    TableDice,  # noqa: E402
    seed_commitment,
)
from core.game import EMPTY, CreateGame, decide, fold  # noqa: E402
from events.base import Event  # noqa: E402
from events.codec import event_decoder  # noqa: E402
from events.game import TurnEnded, TurnStarted  # noqa: E402
from events.store import GameLog  # noqa: E402


def build_log(path: Path, total: int) -> None:
    """A long game's worth of turns: turn markers and per-ship dice, written in big batches."""
    log = GameLog(path)
    created = decide(
        EMPTY,
        CreateGame(
            game="bench",
            ruleset="mortecouille",
            players=("A", "B"),
            budget=1,
            board=Board(20, 20),
            seed_sha256=seed_commitment("bench"),
            rules_version="bench",
        ),
        TableDice(),
    )
    log.create(created)
    written = 1
    turn = 1
    batch: list[Event] = []
    dice = SeededDice("bench")
    while written < total:
        cup = DiceCup(dice, "bench", turn)
        batch.append(TurnStarted(turn=turn))
        for ship in ("A1", "A2", "A3", "A4", "B1", "B2", "B3", "B4"):
            cup.roll("wind", ship, "wind", "")
            cup.roll("combat", ship, "shot", "")
        batch.extend(cup.events)
        batch.append(TurnEnded(turn=turn, state_hash="0" * 64))
        turn += 1
        if len(batch) >= 50_000 or written + len(batch) >= total:
            batch = batch[: total - written]
            log.append(batch)
            written += len(batch)
            batch = []


def best_of(runs: int, fn: object) -> float:
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        timings.append(time.perf_counter() - start)
    return min(timings)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        build_log(path, args.events)
        log = GameLog(path)
        decoder = event_decoder()

        def decode_only() -> None:
            decoder.decode_lines(path.read_bytes())

        def end_to_end() -> None:
            fold(log.read())

        n = args.events
        t_decode = best_of(args.runs, decode_only)
        t_fold = best_of(args.runs, end_to_end)
        print(f"events:                  {n:,} ({path.stat().st_size / 1e6:.0f} MB)")
        print(f"decode only:             {n / t_decode:,.0f} events/s ({t_decode:.2f} s)")
        print(f"read + decode + fold:    {n / t_fold:,.0f} events/s ({t_fold:.2f} s)")
        ratio = t_decode / t_fold
        print(f"ratio end-to-end/decode: {ratio:.2f} (target >= 0.40) {'OK' if ratio >= 0.4 else 'MISSED'}")


if __name__ == "__main__":
    main()
