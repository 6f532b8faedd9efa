"""Export scaling: ``export --html`` of a 10,000- and a 100,000-event game, and ``render --svg`` of
one early turn of each.

Run: ``.venv/bin/python bench/bench_export.py [--events N] [--runs R]``. The two logs are the first
``N`` and ``10 N`` events of one blockade battle that stays the same size to its end (42 ships:
36 circling, 6 sailing at random; a wreck is refloated by a ruling as soon as it sinks, so every
turn's frames hold as many ships as the first's): a page's size then grows as the log does, and
an export whose cost is linear in the log takes 10x as long for 10x the events. (A game whose
fleet keeps growing makes every frame bigger: its page grows faster than its log, whatever the
export does.)

Each export runs in a fresh process (the command's path: ``GameLog.stream`` -> ``page_parts`` ->
``write_output``), the two sizes interleaved run after run; the process's own time (imports not
counted) and its max RSS are printed, median of ``--runs`` (at least 5) with min and max (a
render's time in a process is the median of 11 renders there).
Goals: the big export within 12x of the small one (linear); its max RSS within 1.3x of
the small one's (memory flat: the page is written a turn at a time, from two passes over the log,
so what a process holds is the final state and one turn's story and frames, whatever the log's
length; 1.3 leaves room for the allocator's high-water mark, where an export holding its page
took 4x); ``render --turn 1`` of the big log within 2x of the small one's (it reads the log only as
far as the turn).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench.bench_fold as fold_bench  # noqa: E402
from bench.timing import Timing, verdict  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"

#: what one export process runs: the export command's path, timed inside (imports excluded)
CHILD = """
import json, resource, sys, time
from pathlib import Path
from mortecouille.app.outputs import HTML_SUFFIXES, SVG_SUFFIXES, write_output
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.pictures.html import page_parts
from mortecouille.replays.pictures.turns import turn_picture
log, out, what = GameLog(Path(sys.argv[1])), Path(sys.argv[2]), sys.argv[3]
if what == "html":
    started = time.perf_counter()
    write_output(out, page_parts(log.stream), "--html", None, True, HTML_SUFFIXES)
    spent = time.perf_counter() - started
else:  # a few milliseconds: the median of 11 in this process
    spents = []
    for _ in range(11):
        started = time.perf_counter()
        write_output(out, turn_picture(log.stream(), 1), "--svg", None, True, SVG_SUFFIXES)
        spents.append(time.perf_counter() - started)
    spent = sorted(spents)[5]
# VmHWM: the peak since this program started (ru_maxrss would count the parent's before the exec)
status = Path("/proc/self/status").read_text().split("VmHWM:")
if len(status) > 1:
    peak = int(status[1].split()[0]) / 1024
else:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": spent, "rss_mb": peak,
                  "bytes": out.stat().st_size}))
"""


def steady_log(total: int) -> Path:
    """The first ``total`` events of the steady battle, built once and kept in bench/out/."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"export-steady-v1-{total}.jsonl"
    if not path.exists():
        building = OUT / f"export-steady-v1-{total}.building.jsonl"
        building.unlink(missing_ok=True)
        building.with_suffix(".head").unlink(missing_ok=True)
        # bench_fold's battle with no new ship after the first wild ones: every wreck is refloated
        # at once by a ruling (its builder's rule once NEW_WILD ships were placed)
        wild = fold_bench.NEW_WILD
        fold_bench.NEW_WILD = fold_bench.WILD
        try:
            fold_bench.build_log(building, total)
        finally:
            fold_bench.NEW_WILD = wild
        building.with_suffix(".head").rename(path.with_suffix(".head"))
        building.rename(path)
    return path


def one_run(log: Path, out: Path, what: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(log), str(out), what], capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


Runs = list[dict[str, float]]


def measure(small: Path, big: Path, what: str, runs: int) -> tuple[Runs, Runs]:
    """Both logs' runs, interleaved run after run (a shared machine loads both alike)."""
    firsts: Runs = []
    seconds: Runs = []
    with tempfile.TemporaryDirectory(prefix="bench-export-") as work:
        out = Path(work) / ("page.html" if what == "html" else "turn.svg")
        for _ in range(runs):
            firsts.append(one_run(small, out, what))
            seconds.append(one_run(big, out, what))
    return firsts, seconds


def rss(runs: Runs) -> str:
    values = [run["rss_mb"] for run in runs]
    return f"max RSS median {statistics.median(values):.0f} MB (min {min(values):.0f}, max {max(values):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000, help="the small log; the big one is 10x")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    small_n, big_n = args.events, args.events * 10
    small, big = steady_log(small_n), steady_log(big_n)
    print(f"logs ready in {time.perf_counter() - started:.1f} s: {small.name}, {big.name}")

    a, b = measure(small, big, "html", args.runs)
    t_small, t_big = Timing([r["seconds"] for r in a]), Timing([r["seconds"] for r in b])
    for size, timing, runs in ((small_n, t_small, a), (big_n, t_big, b)):
        page = runs[0]["bytes"] / 1e6
        print(f"export --html, {size:,} events: {timing.shown()}, page {page:.1f} MB, {rss(runs)}")
    ratios = sorted(y["seconds"] / x["seconds"] for x, y in zip(a, b, strict=True))
    print(f"  page size ratio {b[0]['bytes'] / a[0]['bytes']:.1f}, events ratio 10")
    verdict(
        f"export --html: {big_n:,} events vs {small_n:,} (time ratio, linear)",
        t_big.median / t_small.median,
        12,
        at_least=False,
        detail=f"per-run ratios {ratios[0]:.1f}..{ratios[-1]:.1f}",
    )

    rss_small = statistics.median(run["rss_mb"] for run in a)
    rss_big = statistics.median(run["rss_mb"] for run in b)
    verdict(
        f"export --html: max RSS at {big_n:,} events vs {small_n:,} (memory flat: the page is streamed)",
        rss_big / rss_small,
        1.3,
        at_least=False,
        detail=f"{rss_big:.0f} MB vs {rss_small:.0f} MB",
    )

    a, b = measure(small, big, "svg", args.runs)
    t_small, t_big = Timing([r["seconds"] for r in a]), Timing([r["seconds"] for r in b])
    print(f"render --turn 1, {small_n:,}-event log: {t_small.shown('ms')}, {rss(a)}")
    print(f"render --turn 1, {big_n:,}-event log: {t_big.shown('ms')}, {rss(b)}")
    verdict(
        f"render --turn 1: {big_n:,}-event log vs {small_n:,} (time ratio: reads only up to the turn)",
        t_big.median / t_small.median,
        2,
        at_least=False,
    )


if __name__ == "__main__":
    main()
