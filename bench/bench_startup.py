"""Whole CLI commands, start-up included: ``state`` and ``order`` on a game of about
1,000 events, each a fresh ``python -m mortecouille`` process as a referee runs it.

Run: ``.venv/bin/python bench/bench_startup.py [--runs 5]``. For each command prints the median
wall time of ``--runs`` runs (min, max) with the bytecode cache (a ``PYTHONPYCACHEPREFIX`` of its
own, written by a warm-up run) and, for ``state``, without it, the bare interpreter's start as
the baseline, and the import-time split of one run (``python -X importtime``: the total, and the
biggest top-level parts). Goals: ``state`` under 100 ms with the bytecode cache, under 200 ms
without.

The game is finished, so its snapshot (``GAME.state``, rewritten by the first ``state``) stands on
its log's last line and ``state`` folds nothing: it imports neither the fold nor the game's
ruleset. For reference, ``state`` on a copy of it whose snapshot stands 100 events before the end
(a game in play: a snapshot is rewritten every 256 events) is printed too, with its import split:
it decodes and folds those events, with the ruleset's evolvers.

"Without the bytecode cache" is the project's own modules compiled again at every run (their
cached bytecode removed from the prefix before each): what a referee meets on the first command
after a fresh clone or an update, since the standard library's and the installed packages'
bytecode are written when they are installed (by the distribution, by pip). The goal is judged
on that. For reference, the time with nothing cached at all (an empty prefix: click, msgspec and
the standard library compiled too, which no install leaves) is printed as well.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.timing import Timing, verdict  # noqa: E402
from mortecouille.app.botgame import play_demo  # noqa: E402
from mortecouille.app.games import load  # noqa: E402
from mortecouille.app.snapshots import Anchor, snapshot_path, write_snapshot  # noqa: E402
from mortecouille.core.game import fold  # noqa: E402
from mortecouille.events.game import TurnStarted  # noqa: E402
from mortecouille.events.storage.file_log import GameLog  # noqa: E402

TARGET_EVENTS = 1_000
#: how many events before the end the copy "in play" has its snapshot
PAST_THE_SNAPSHOT = 100
REPOSITORY = Path(__file__).resolve().parent.parent


def game_of_about(directory: Path, events: int) -> str:
    """A finished bot game of at least ``events`` events (the first seed that gives one), its name."""
    for number in range(200):
        name = f"g{number}"
        run = play_demo(directory, f"startup-{number}", name, max_turns=80)
        if run.summary.events >= events:
            return name
        for path in directory.glob(f"{name}.*"):
            path.unlink()
    raise SystemExit(f"no demo game of {events} events in 200 seeds")


def copy_in_play(directory: Path, name: str, events: int) -> str:
    """A copy of the game ``name`` (its log, head anchor and seed) whose snapshot stands ``events``
    events before its log's end, as a game in play has it; its name."""
    copy = f"{name}-in-play"
    for path in directory.glob(f"{name}.*"):
        if path.suffix != ".state":
            shutil.copyfile(path, directory / f"{copy}{path.suffix}")
    log_ = GameLog(directory / f"{copy}.jsonl")
    lines = log_.path.read_bytes().splitlines(keepends=True)
    kept = log_.read()[: len(lines) - events]
    end = sum(len(line) for line in lines[: len(kept)])
    snapshot_path(log_).unlink(missing_ok=True)
    if not write_snapshot(log_, Anchor(kept[-1].seq, kept[-1].hash, end), fold(kept)):
        raise SystemExit(f"no snapshot written for {copy}")
    return copy


class Runs(NamedTuple):
    """The wall time of each run (what the goal is judged on) and its CPU time (user + system of
    the process): on a loaded machine the wall time waits for the CPU, the CPU time much less so."""

    wall: Timing
    cpu: Timing

    def shown(self) -> str:
        cpu_ms = self.cpu.median * 1000, min(self.cpu.runs) * 1000
        return f"{self.wall.shown('ms')}; CPU median {cpu_ms[0]:.1f} ms (min {cpu_ms[1]:.1f})"


def wall(
    command: list[str], env: dict[str, str], runs: int, before: Callable[[], object] = lambda: None
) -> Runs:
    spent, cpu = [], []
    for _ in range(runs):
        before()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, check=False)
        spent.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime)
        if done.returncode not in (0, 2):
            raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()[-400:]}")
    return Runs(Timing(spent), Timing(cpu))


def import_split(command: list[str], env: dict[str, str]) -> str:
    """``-X importtime`` of one run: the total, and the self time summed by part (a package of the
    project, ``mortecouille.core.fleet``, or a library), the biggest five."""
    done = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]], env=env, capture_output=True, text=True
    )
    parts: dict[str, int] = {}
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)", line)
        if found:
            name = found.group(3).split(".")
            part = ".".join(name[:3]) if name[0] == "mortecouille" else name[0]
            parts[part] = parts.get(part, 0) + int(found.group(1))
    total = sum(parts.values())
    own = sum(us for part, us in parts.items() if part.startswith("mortecouille"))
    biggest = ", ".join(
        f"{part} {us / 1000:.0f}" for part, us in sorted(parts.items(), key=lambda i: -i[1])[:5]
    )
    return f"imports {total / 1000:.0f} ms ({own / 1000:.0f} ms the project's); biggest (ms): {biggest}"


def own_bytecode(prefix: Path) -> list[Path]:
    """Where the bytecode of the project's own modules goes under the cache ``prefix``: the
    package folder and each top-level folder it links to, and nothing else of the repository (a
    virtual environment made inside the clone, ``.venv``, holds installed packages, whose bytecode
    an install writes: removing it too would time compiling click and msgspec as well)."""
    package = REPOSITORY / "mortecouille"
    names = {"mortecouille", *(entry.name for entry in package.iterdir() if entry.is_symlink())}
    return [prefix.joinpath(*REPOSITORY.parts[1:], name) for name in sorted(names)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    games = Path(tempfile.mkdtemp(prefix="startup-"))
    nocache = Path(tempfile.mkdtemp(prefix="startup-pyc-"))
    warm = Path(tempfile.mkdtemp(prefix="startup-pyc-warm-"))
    try:
        name = game_of_about(games, TARGET_EVENTS)
        events, state = load(GameLog(games / f"{name}.jsonl"))
        ship = next(iter(state.ships))
        python = sys.executable
        # with the cache: written once (a warm-up run) under its own prefix, whatever the caller's
        # PYTHONDONTWRITEBYTECODE says (set, the project's modules would be compiled on every run)
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env |= {"MORTECOUILLE_GAMES": str(games), "PYTHONPYCACHEPREFIX": str(warm)}
        print(f"game: {name}, {len(events)} events, {sum(isinstance(e, TurnStarted) for e in events)} turns")
        bare = wall([python, "-c", "pass"], env, args.runs)
        print(f"python -c pass (the floor):        {bare.shown()}")
        commands = {
            "state": [python, "-m", "mortecouille", "state", name],
            # refused (the game has ended: exit 2), after the whole command path: load, fold, decide
            "order": [python, "-m", "mortecouille", "order", name, ship, "advance"],
        }
        cached: dict[str, Runs] = {}
        for label, command in commands.items():
            wall(command, env, 1)  # writes the bytecode cache
            cached[label] = wall(command, env, args.runs)
            print(f"{label:6} with the bytecode cache:     {cached[label].shown()}")
            print(f"       {import_split(command, env)}")
        # for reference: a game in play, its snapshot behind the log (folded, not rewritten: fewer
        # than SNAPSHOT_EVERY events past it)
        in_play = [python, "-m", "mortecouille", "state", copy_in_play(games, name, PAST_THE_SNAPSHOT)]
        wall(in_play, env, 1)
        print(f"state  {PAST_THE_SNAPSHOT} events past the snapshot: {wall(in_play, env, args.runs).shown()} "
              "(for reference: a game in play)")  # fmt: skip
        print(f"       {import_split(in_play, env)}")
        # the warm prefix without the project's part: its modules compiled at every run
        project_parts = own_bytecode(warm)
        own_env = {**env, "PYTHONDONTWRITEBYTECODE": "1"}

        def forget_own_bytecode() -> None:
            for part in project_parts:
                shutil.rmtree(part, ignore_errors=True)

        cold = wall(commands["state"], own_env, args.runs, forget_own_bytecode)
        print(f"state  without the bytecode cache:  {cold.shown()} (the project's modules compiled)")
        bare_env = {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(nocache)}
        nothing = wall(commands["state"], bare_env, args.runs)
        print(f"state  with nothing cached at all: {nothing.shown()} (for reference: click, msgspec "
              "and the standard library compiled too)")  # fmt: skip
        verdict(
            "`state` on a 1k-event game, with the bytecode cache (ms)",
            cached["state"].wall.median * 1000,
            100,
            at_least=False,
        )
        verdict(
            "`state` on a 1k-event game, without the bytecode cache (ms)",
            cold.wall.median * 1000,
            200,
            at_least=False,
        )
    finally:
        shutil.rmtree(games, ignore_errors=True)
        shutil.rmtree(nocache, ignore_errors=True)
        shutil.rmtree(warm, ignore_errors=True)


if __name__ == "__main__":
    main()
