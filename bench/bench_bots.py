"""Bot games: whole two-player demo games per second, and how they end.

Run: ``.venv/bin/python bench/bench_bots.py [--seeds N] [--max-turns T] [--repeat R] [--profile]``.
Plays the demo set-up (mortecouille.app.botgame: four ships a side) for seeds ``demo``,
``1``..``N`` in memory on one core, each game named ``demo-SEED`` as
``mortecouille demo --seed SEED`` names it (so the same games), and prints
games/s, the share of games won outright (T3 victory; target 80% within 40
turns), the average number of turns, and shots, hits, collisions and fire
checks per game. The simulation benchmark needs 20+ games/s.

Games/s is the best of ``R`` runs, in CPU time of this process: on a shared
machine wall-clock rates vary by a factor of two from run to run. ``--profile``
prints the 25 most expensive functions (cumulative) of one run as well.

The ``simulate`` command path (measured, with no goal): ``--sim-games`` games (the
demo's fleets, seeds ``bench-0``...) through :func:`mortecouille.app.simulate.simulate`, as
``mortecouille simulate`` plays them: each game played in memory, then its log written, hashed line
by line and fsynced with its seed beside it, into a folder under bench/out/ (on the repository's
disk). Measured in the same run, interleaved run after run, wall clock (fsync is no CPU time),
median of ``--runs``: the same games played in memory only, and the fsync floor, as many
``os.fsync`` calls as one command-path run made (counted during a first run), each after writing
its share of the same bytes into a fresh file in the same folder. Printed: the command path's
games/s, its ratio to the in-memory speed, and what it costs beyond playing the games and the
fsync floor. No goal of the issue applies (it asks only that the path be measured), so no verdict.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.timing import Timing
from mortecouille.app.botgame import GameSummary, play_in_memory, summarise
from mortecouille.app.simulate import DEFAULT_BUDGET, game_name, game_seed, play_bot_game, simulate

SIM_SEED = "bench"

VICTORY = "victory"


def play_all(seeds: list[str], max_turns: int) -> tuple[list[GameSummary], float]:
    """Every game's summary and the CPU seconds spent playing (summaries not counted)."""
    logs = []
    started = time.process_time()
    for seed in seeds:
        logs.append(play_in_memory(f"demo-{seed}", seed, max_turns))
    elapsed = time.process_time() - started
    return [summarise(log) for log in logs], elapsed


def report(summaries: list[GameSummary], elapsed: float, max_turns: int) -> None:
    games = len(summaries)
    victories = [s for s in summaries if s.reason == VICTORY]
    winners = Counter(s.winner or "nobody (last ships sank together)" for s in victories)

    def per_game(total: float) -> str:
        return f"{total / games:.1f}"

    print(f"games: {games}, {games / elapsed:.1f} games/s ({elapsed / games * 1000:.0f} ms of CPU a game)")
    print(
        f"victory (T3) within {max_turns} turns: {len(victories)}/{games} = {len(victories) / games:.0%}; "
        f"winners {dict(sorted(winners.items()))}"
    )
    print(
        f"turns: average {per_game(sum(s.turns for s in summaries))}, "
        f"average for victories {sum(s.turns for s in victories) / max(len(victories), 1):.1f}"
    )
    print(
        f"per game: shots {per_game(sum(s.shots for s in summaries))}, "
        f"hits {per_game(sum(s.hits for s in summaries))}, "
        f"collisions {per_game(sum(s.collisions for s in summaries))}, "
        f"fire checks {per_game(sum(s.fire_checks for s in summaries))}"
    )


def simulate_path(games: int, max_turns: int, runs: int) -> None:
    """The simulate command path against the same games played in memory and the fsync floor."""
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-bots-", dir=out))
    written = [0]

    def in_memory() -> None:
        for index in range(games):
            play_bot_game(
                game_name(SIM_SEED, index), game_seed(SIM_SEED, index), DEFAULT_BUDGET, max_turns, "demo"
            )

    def command_path() -> Path:
        written[0] += 1
        target = work / str(written[0])
        simulate(target, games, SIM_SEED, DEFAULT_BUDGET, max_turns, fleets="demo")
        return target

    try:
        fsyncs, size = counted_fsyncs(command_path)
        share = size // max(fsyncs, 1)
        floors = [0]

        def fsync_floor() -> None:
            floors[0] += 1
            folder = work / f"floor-{floors[0]}"
            folder.mkdir()
            chunk = b"x" * share
            for index in range(fsyncs):
                fd = os.open(folder / f"{index}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                try:
                    os.write(fd, chunk)
                    os.fsync(fd)
                finally:
                    os.close(fd)

        t_memory, t_command, t_floor = interleaved_three(in_memory, command_path, fsync_floor, runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    memory_rate, command_rate = games / t_memory.median, games / t_command.median
    print(f"in memory, {games} games: {memory_rate:.1f} games/s, {t_memory.shown()}")
    print(f"simulate command path (write, hash, fsync), {games} games: {command_rate:.1f} games/s,", end=" ")
    print(t_command.shown())
    print(
        f"fsync floor: {fsyncs} fsyncs (as many as one command-path run made), each after writing "
        f"{share:,} bytes into a fresh file ({size:,} bytes in all): {t_floor.shown()}"
    )
    ratios = sorted(m / c for m, c in zip(t_memory.runs, t_command.runs, strict=True))
    beyond = t_command.median - t_memory.median - t_floor.median
    print(
        f"simulate command path vs in memory (speed ratio): {command_rate / memory_rate:.2f} "
        f"(per-run ratios {ratios[0]:.2f}..{ratios[-1]:.2f}); its cost beyond playing: "
        f"{(t_command.median - t_memory.median) * 1000 / games:.1f} ms a game, of which the fsync floor "
        f"{t_floor.median * 1000 / games:.1f} ms, the rest (encoding, hashing, writing, seeds) "
        f"{beyond * 1000 / games:.1f} ms (a measurement: no goal for this path)"
    )


def interleaved_three(
    first: Callable[[], object], second: Callable[[], object], third: Callable[[], object], runs: int
) -> tuple[Timing, Timing, Timing]:
    """Three measures run after run in turn, as bench.timing.interleaved does two (a machine
    shared with others loads them alike)."""
    times: list[list[float]] = [[], [], []]
    for _ in range(runs):
        for action, into in zip((first, second, third), times, strict=True):
            gc.collect()
            started = time.perf_counter()
            action()
            into.append(time.perf_counter() - started)
    return Timing(times[0]), Timing(times[1]), Timing(times[2])


def counted_fsyncs(action: Callable[[], Path]) -> tuple[int, int]:
    """How many ``os.fsync`` calls one run of ``action`` makes, and the bytes of the files it
    leaves in the folder it returns."""
    real = os.fsync
    calls = [0]

    def counting(fd: int) -> None:
        calls[0] += 1
        real(fd)

    os.fsync = counting
    try:
        folder = action()
    finally:
        os.fsync = real
    size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
    return calls[0], size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50, help="seeds 'demo' and 1..N")
    parser.add_argument("--max-turns", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3, help="runs to take the fastest of")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sim-games", type=int, default=30, help="games per run of the simulate path")
    parser.add_argument("--runs", type=int, default=5, help="runs of the simulate path measure")
    args = parser.parse_args()
    seeds = ["demo", *(str(n) for n in range(1, args.seeds + 1))]
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(play_all, seeds, args.max_turns)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    runs = [play_all(seeds, args.max_turns) for _ in range(max(args.repeat, 1))]
    summaries = runs[0][0]
    report(summaries, min(elapsed for _, elapsed in runs), args.max_turns)
    simulate_path(args.sim_games, args.max_turns, args.runs)


if __name__ == "__main__":
    main()
