"""What a forger pays to make a rewritten log match one head code noted at the table.

A head code is twelve digits of scrypt(the turn-ended line's hash) (docs/service.md, "Head
codes"). A forger who rewrote history can only try rewritten lines (a fresh nonce, a key, a
ruling's text) until one gives the noted code: 10^12 tries on average, each one stretch (the
SHA-256 of the line beside it is noise). Measured here: the CPU time of one stretch (median of
several runs, each of many tries), and, as the baseline in the same run (interleaved), one try of
the code noted before the stretch (a SHA-256 of a log line, 16^6 tries on average). Printed: both
times, the ratio, the CPU-hours per noted code of each, the memory a stretch needs, and OK or
MISSED against the goal, at least 10^6 CPU-hours per noted code with a margin of 10.

``.venv/bin/python bench/bench_head_code.py [--tries 20] [--runs 7]``
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.timing import verdict  # noqa: E402
from mortecouille.replays.reading.receipts import (  # noqa: E402
    HEAD_CODE_DIGITS,
    HEAD_CODE_N,
    HEAD_CODE_R,
    LEGACY_HEAD_CODE_LENGTH,
    stretched_code,
)

#: a turn-ended line as a log writes it (about the size of one), the one a forger rehashes per try
LINE = (
    b'{"hash":"","prev":"' + b"0" * 64 + b'","rules":["T2"],"seq":41,"state_hash":"' + b"1" * 64
    + b'","turn":3,"type":"turn-ended","v":1}'
)  # fmt: skip
GOAL_CPU_HOURS = 1e6
MARGIN = 10


def cpu_seconds_per_try(tries: int, start: int, stretched: bool) -> float:
    """CPU seconds of one try: ``tries`` distinct hashes, each stretched (or one SHA-256 of a line)."""
    hashes = [hashlib.sha256(LINE + str(start + n).encode()).hexdigest() for n in range(tries)]
    if not stretched:
        repeat = tries * 2000  # a SHA-256 is too quick to time alone
        began = time.process_time()
        for n in range(repeat):
            hashlib.sha256(LINE + hashes[n % tries].encode()).hexdigest()
        return (time.process_time() - began) / repeat
    stretched_code.cache_clear()
    began = time.process_time()
    for line_hash in hashes:
        stretched_code(line_hash)
    return (time.process_time() - began) / tries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=20, help="stretches per run")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    stretch: list[float] = []
    plain: list[float] = []
    for run in range(args.runs):
        stretch.append(cpu_seconds_per_try(args.tries, run * args.tries, stretched=True))
        plain.append(cpu_seconds_per_try(args.tries, run * args.tries, stretched=False))
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    per_stretch, per_sha = statistics.median(stretch), statistics.median(plain)
    tries_now, tries_before = 10**HEAD_CODE_DIGITS, 16**LEGACY_HEAD_CODE_LENGTH
    hours_now = tries_now * per_stretch / 3600
    minutes_before = tries_before * per_sha / 60
    memory = 128 * HEAD_CODE_N * HEAD_CODE_R
    print(
        f"stretch (scrypt N=2^{HEAD_CODE_N.bit_length() - 1}, r={HEAD_CODE_R}, p=1): median "
        f"{per_stretch * 1e3:.1f} ms CPU a try (min {min(stretch) * 1e3:.1f}, max {max(stretch) * 1e3:.1f}, "
        f"{args.runs} runs of {args.tries})"
    )
    print(
        f"baseline, a code noted before (SHA-256 of a line): median {per_sha * 1e6:.2f} us CPU a try "
        f"(min {min(plain) * 1e6:.2f}, max {max(plain) * 1e6:.2f})"
    )
    print(f"ratio: a stretched try costs {per_stretch / per_sha:,.0f} SHA-256 tries")
    grew = (rss_after - rss_before) / 1024
    print(f"memory a stretch needs: {memory / 2**20:.0f} MiB (max RSS grew {grew:.0f} MiB)")
    before = f"{tries_before:,} tries x {per_sha * 1e6:.2f} us = {minutes_before:.1f} CPU-minutes"
    print(f"code noted before: {before} per noted code")
    now = f"{tries_now:.0e} tries x {per_stretch * 1e3:.1f} ms = {hours_now:.2e} CPU-hours"
    print(f"stretched code: {now} per noted code")
    met = verdict(
        "head code: CPU-hours to match one noted code, in units of 10^6",
        hours_now / GOAL_CPU_HOURS,
        MARGIN,
        at_least=True,
        detail=f"at least 10^6 CPU-hours with a margin of {MARGIN}",
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
