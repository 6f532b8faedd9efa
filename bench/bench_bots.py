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

The ``simulate`` command path (issue 16): ``--sim-games`` games (the demo's fleets, seeds
``bench-0``...) through :func:`mortecouille.app.simulate.simulate`, as ``mortecouille simulate``
plays them: each game played in memory, then its log written, hashed line by line and fsynced
with its seed beside it, into a folder under bench/out/ (on the repository's disk). Its baseline,
measured in the same run, interleaved run after run, is the same games played in memory only;
wall-clock time (fsync is no CPU time), median of ``--runs``. Goals: the command path at least
20 games/s, as the simulation needs; and at least 0.8 of the in-memory speed (writing, hashing and
fsync cost at most a fifth, as for one command's append).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.timing import interleaved, verdict
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
    """The simulate command path against the same games played in memory, interleaved."""
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-bots-", dir=out))
    written = [0]

    def in_memory() -> None:
        for index in range(games):
            play_bot_game(
                game_name(SIM_SEED, index), game_seed(SIM_SEED, index), DEFAULT_BUDGET, max_turns, "demo"
            )

    def command_path() -> None:
        written[0] += 1
        simulate(work / str(written[0]), games, SIM_SEED, DEFAULT_BUDGET, max_turns, fleets="demo")

    try:
        t_memory, t_command = interleaved(in_memory, command_path, runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    memory_rate, command_rate = games / t_memory.median, games / t_command.median
    print(f"in memory, {games} games: {memory_rate:.1f} games/s, {t_memory.shown()}")
    print(f"simulate command path (write, hash, fsync), {games} games: {command_rate:.1f} games/s,", end=" ")
    print(t_command.shown())
    verdict("bots: simulate command path, games per second", command_rate, 20, at_least=True)
    ratios = sorted(m / c for m, c in zip(t_memory.runs, t_command.runs, strict=True))
    verdict(
        "bots: simulate command path vs the same games in memory (speed ratio)",
        command_rate / memory_rate,
        0.8,
        at_least=True,
        detail=f"per-run ratios {ratios[0]:.2f}..{ratios[-1]:.2f}",
    )


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
