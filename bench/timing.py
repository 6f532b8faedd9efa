"""What the fold, append and startup benchmarks print: the median of at least five runs with their min and
max, the baseline measured in the same run, the ratio, and OK or MISSED against the goal."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from typing import NamedTuple

RUNS = 5


class Timing(NamedTuple):
    """Seconds of each run of one measure."""

    runs: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    def shown(self, unit: str = "s") -> str:
        scale = {"s": 1.0, "ms": 1e3, "us": 1e6}[unit]
        low, mid, high = (value * scale for value in (min(self.runs), self.median, max(self.runs)))
        return f"median {mid:.3f} {unit} (min {low:.3f}, max {high:.3f}, {len(self.runs)} runs)"


def timed(fn: Callable[[], object], runs: int = RUNS) -> Timing:
    """Run ``fn`` ``runs`` times, collecting garbage before each run so one does not pay for another."""
    spent = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        fn()
        spent.append(time.perf_counter() - start)
    return Timing(spent)


def interleaved(
    first: Callable[[], object],
    second: Callable[[], object],
    runs: int = RUNS,
    *,
    before_first: Callable[[], object] | None = None,
    before_second: Callable[[], object] | None = None,
) -> tuple[Timing, Timing]:
    """Both measures, run after run in turn: a machine shared with others loads both alike.
    ``before_first``/``before_second``, when given, run untimed before each run of their measure
    (setting up what it needs, or taking down what the other left)."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(runs):
        for fn, into, before in ((first, a, before_first), (second, b, before_second)):
            if before is not None:
                before()
            gc.collect()
            start = time.perf_counter()
            fn()
            into.append(time.perf_counter() - start)
    return Timing(a), Timing(b)


def verdict(label: str, value: float, goal: float, at_least: bool, detail: str = "") -> bool:
    """Print one goal line, ``OK`` or ``MISSED``; True when met."""
    met = value >= goal if at_least else value <= goal
    sense = ">=" if at_least else "<="
    extra = f" ({detail})" if detail else ""
    print(f"{'OK    ' if met else 'MISSED'} {label}: {value:.2f} (goal {sense} {goal:g}){extra}")
    return met
