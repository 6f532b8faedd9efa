"""Time one blockade round (movement + wind phase + damage) for densely packed fleets.

Run: ``.venv/bin/python bench/bench_movement.py``. Targets: 1,000 ships under 20 ms
per round, and t(4n)/t(n) under 5 (linear growth).
"""

from __future__ import annotations

import gc
import math
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mortecouille.core.blockade.rounds import BLOCKADE_KINDS, BlockadeShip, resolve_round  # noqa: E402
from mortecouille.core.board.geometry import ORTHOGONAL_FACINGS  # noqa: E402
from mortecouille.events.board import Board, WindTile  # noqa: E402

SIZES = (250, 1000, 4000)
DENSITY = 0.6  # ships per open square: most moves end in contests, bumps or convoys
REPEATS = 25


def scenario(n: int, seed: int) -> tuple[Board, dict[str, BlockadeShip], dict[str, str | None]]:
    rng = random.Random(seed)
    side = math.ceil(math.sqrt(n / DENSITY * 1.15))
    squares = [(x, y) for x in range(side) for y in range(side)]
    rng.shuffle(squares)
    whirlpools: list[tuple[int, int]] = []
    taken: set[tuple[int, int]] = set()
    for _ in range(max(1, n // 200)):
        x, y = rng.randrange(side - 1), rng.randrange(side - 1)
        block = {(x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1)}
        if not block & taken:
            taken |= block
            whirlpools.append((x, y))
    free = [s for s in squares if s not in taken]
    rocks = free[: len(free) // 20]
    winds = [WindTile(s, rng.choice(ORTHOGONAL_FACINGS)) for s in free[len(rocks) : len(rocks) * 3]]
    board = Board(side, side, tuple(rocks), tuple(winds), tuple(whirlpools))
    open_squares = [s for s in squares if s not in set(rocks)]
    kinds = list(BLOCKADE_KINDS)
    ships: dict[str, BlockadeShip] = {}
    tokens: dict[str, str | None] = {}
    for i, at in enumerate(open_squares[:n]):
        sid = f"ship{i:05d}"
        ships[sid] = BlockadeShip(sid, rng.choice(kinds), at, rng.choice(ORTHOGONAL_FACINGS))
        tokens[sid] = rng.choice(("F", "F", "L", "R", None))
    return board, ships, tokens


def time_rounds() -> dict[int, tuple[float, float, int]]:
    """Best and median seconds per round for each size, and its collision count.

    Sizes are interleaved so machine jitter hits them alike; each sample starts
    after a garbage collection so no sample pays for the previous one's garbage.
    """
    cases = {n: scenario(n, seed=n) for n in SIZES}
    collisions = {}
    for n, (board, ships, tokens) in cases.items():
        collisions[n] = len(resolve_round(board, ships, tokens).collisions)  # warm caches
    samples: dict[int, list[float]] = {n: [] for n in SIZES}
    for _ in range(REPEATS):
        for n, (board, ships, tokens) in cases.items():
            gc.collect()
            start = time.perf_counter()
            resolve_round(board, ships, tokens)
            samples[n].append(time.perf_counter() - start)
    return {n: (min(s), statistics.median(s), collisions[n]) for n, s in samples.items()}


def main() -> int:
    results = time_rounds()
    for n, (best, median, collisions) in results.items():
        print(
            f"n={n:5d}: best {best * 1000:7.2f} ms, median {median * 1000:7.2f} ms per round"
            f" ({collisions} collisions)"
        )
    ok = True
    for small, large in zip(SIZES, SIZES[1:], strict=False):
        ratio = results[large][0] / results[small][0]
        median_ratio = results[large][1] / results[small][1]
        ok &= ratio < 5
        print(
            f"t({large})/t({small}) = {ratio:.2f} best-of-{REPEATS}, {median_ratio:.2f} median (target < 5)"
        )
    thousand = results[1000][1] * 1000
    under = thousand < 20
    ok &= under
    print(f"1000 ships: median {thousand:.2f} ms (target < 20 ms): {'ok' if under else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
