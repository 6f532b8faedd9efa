"""Fold speed: read + decode + fold of a 1,000,000-event log, against decode alone.

Run: ``.venv/bin/python bench/bench_fold.py [--events N] [--hashes]``. Prints events/s for
a pure msgspec decode of the file's typed JSON lines and for the end-to-end
path a command takes (GameLog.read + fold), and their ratio. Target: the
end-to-end rate is at least 40% of the decode-only rate. ``--hashes`` also times
``state_hash`` at every turn end, as ``verify`` computes it (the fold itself never hashes).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mortecouille.core.blockade.commands import GiveTokens
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import TableDice, seed_commitment
from mortecouille.core.game import decide, evolve, fold
from mortecouille.core.life_cycle import Command, CreateGame, ResolveTurn
from mortecouille.core.state import EMPTY, state_hash
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.codec import event_decoder
from mortecouille.events.game import TurnEnded
from mortecouille.events.store import GameLog

GRID = 6  # a 6x6 grid of ships circling in their own 3x3 boxes, plus a few ramming ones
WILD = 6
MAX_WILD = 150  # replacements stop there: a real game's state does not grow without bound


def build_log(path: Path, total: int) -> None:
    """A long blockade game decided by the real decider, as real games log it.

    Thirty-six ships sail four quarter turns a turn round their own boxes (moves every
    round), six more sail at random through them (pushes, collisions, damage, sinkings);
    a sunk ship is replaced so the battle never stops. Every turn logs tokens, moves,
    collisions and a turn end with its state hash. Commands are decided in memory and
    written in large batches.
    """
    rng = random.Random(1)
    size = GRID * 4 + 4
    log = GameLog(path)
    state = EMPTY
    pending: list[Event] = []
    dice = TableDice()
    written = 0
    created = False

    def apply(command: Command) -> None:
        nonlocal state
        produced = decide(state, command, dice)
        pending.extend(produced)
        state = fold(produced, state)

    apply(
        CreateGame(
            game="bench",
            ruleset="blockade",
            players=("A", "B"),
            budget=0,
            board=Board(size, size),
            seed_sha256=seed_commitment("bench"),
            rules_version="bench",
        )
    )
    for gx in range(GRID):
        for gy in range(GRID):
            square = (4 * gx + 4, 4 * gy + 3)
            apply(PlaceShip(ship=f"G{gx}{gy}", at=square, facing="N", kind="war-frigate", owner="A"))
    serial = 0
    while written + len(pending) < total:
        wild = [s for s in state.ships.values() if s.afloat and s.id.startswith("W")]
        taken = {s.at for s in state.ships.values() if s.afloat}
        while len(wild) < WILD and serial < MAX_WILD:
            square = (rng.randrange(size), rng.randrange(size))
            if square not in taken:
                serial += 1
                kind = rng.choice(("sloop", "cutter", "war-brig"))
                facing = rng.choice("NESW")
                apply(PlaceShip(ship=f"W{serial}", at=square, facing=facing, kind=kind, owner="B"))
                taken.add(square)
                wild = [s for s in state.ships.values() if s.afloat and s.id.startswith("W")]
        for ship in sorted((s for s in state.ships.values() if s.afloat), key=lambda s: s.id):
            if ship.id.startswith("G"):
                tokens: tuple[str | None, ...] = ("L", "L", "L", "L")
            else:
                tokens = tuple(rng.choice(("F", "F", "L", "R", None)) for _ in range(4))
            apply(GiveTokens(ship=ship.id, tokens=tokens))
        apply(ResolveTurn())
        if len(pending) >= 20_000 or written + len(pending) >= total:
            batch = pending[: total - written]
            if created:
                log.append(batch)
            else:
                log.create(batch)
                created = True
            written += len(batch)
            pending.clear()


def cached_log(total: int) -> Path:
    """The benchmark log, built once per size and kept in bench/out/ (ignored by git)."""
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    path = out / f"fold-{total}.jsonl"
    if not path.exists():
        building = out / f"fold-{total}.building.jsonl"
        building.unlink(missing_ok=True)
        build_log(building, total)
        building.with_suffix(".head").rename(path.with_suffix(".head"))
        building.rename(path)
    return path


def best_of(runs: int, fn: object) -> float:
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        timings.append(time.perf_counter() - start)
    return min(timings)


def time_turn_end_hashes(events: list[Event]) -> tuple[int, float]:
    """Fold ``events`` and hash the state each ``TurnEnded`` records; the hashes' time only."""
    state = EMPTY
    count = 0
    spent = 0.0
    for event in events:
        if isinstance(event, TurnEnded):
            start = time.perf_counter()
            digest = state_hash(state)
            spent += time.perf_counter() - start
            count += 1
            if digest != event.state_hash:
                raise SystemExit(f"turn {event.turn}: state hash {digest} differs from the log's")
        state = evolve(state, event)
    return count, spent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--hashes", action="store_true", help="also time state_hash at every turn end")
    args = parser.parse_args()
    started = time.perf_counter()
    path = cached_log(args.events)
    print(f"log ready in {time.perf_counter() - started:.1f} s: {path}")
    log = GameLog(path)
    decoder = event_decoder()

    def decode_only() -> None:
        decoder.decode_lines(path.read_bytes())

    def end_to_end() -> None:
        fold(log.read())

    n = args.events
    t_decode = best_of(args.runs, decode_only)
    t_fold = best_of(args.runs, end_to_end)
    print(f"events:                  {n:,} ({path.stat().st_size / 1e6:.0f} MB, a long blockade game)")
    print(f"decode only:             {n / t_decode:,.0f} events/s ({t_decode:.2f} s)")
    print(f"read + decode + fold:    {n / t_fold:,.0f} events/s ({t_fold:.2f} s)")
    ratio = t_decode / t_fold
    print(f"ratio end-to-end/decode: {ratio:.2f} (target >= 0.40) {'OK' if ratio >= 0.4 else 'MISSED'}")
    if args.hashes:
        events = log.read()
        count, spent = min((time_turn_end_hashes(events) for _ in range(args.runs)), key=lambda r: r[1])
        print(f"state_hash at turn ends: {count / spent:,.0f} hashes/s ({count:,} hashes, {spent:.2f} s)")


if __name__ == "__main__":
    main()
