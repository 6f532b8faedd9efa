"""Commands against the log's length: the log work of ``state``, ``order``, ``place`` and
``board``; ``replay --turn N`` and ``explain --turn N`` at the first and last turn; the most memory
``state`` and ``verify`` take on a long game.

Run: ``.venv/bin/python bench/bench_commands.py [--sizes 1000 10000 100000 1000000]
[--turns-events N] [--rss-events N] [--runs 5]``. The logs are ``bench_fold.py``'s blockade battle
that stays representative to its end (built once per size, kept in ``bench/out/``), each copied
into a games directory of its own (with its secret seed, so ``order`` rolls as a referee's would).

* Log work (the command's path through ``mortecouille.app`` without the process's start-up,
  which ``bench_startup.py`` measures): ``state`` and ``board`` read the current state (drawing the
  board grows with its ships, not the log: timed apart), ``order`` gives a ship its blockade
  tokens and ``place`` places a new ship (both lock, fold, decide, append with its fsync). Each
  is measured after one warm-up run, which keeps the derived files a long game's commands find
  (``app/snapshots.py``); the warm-up's time, that of a game with no derived file yet, is printed
  too, and the old path (read the whole log and fold it) at the largest size as the baseline.
  Goal: each size within 2x of the smallest (the issue's: 100k within 2x of 1k). The sizes are
  measured in turn, run after run, in CPU time of the process (on a shared machine wall time
  measures the neighbours; the fsync's wait is ``bench_append.py``'s), the reads 20 at a time.
  ``state``'s is split at the smallest and largest size (reading and checking the snapshot,
  decoding its state, folding the events after it): what grows there is what the game holds.
  Beside the split, the ships built alone from values already in memory (``msgspec.convert``, the
  decoder's own way of building them, without reading bytes) and what one ship more costs each
  way: what building the ships costs whatever the encoding (README.md, "Performance").
* ``replay --turn N`` and ``explain --turn N`` (the whole CLI command in-process, output
  included) at the first and the last turn of a ``--turns-events`` game. Goals: under 150 ms at
  any turn; the last turn within 2x of the first (the baseline).
* Max RSS of ``state`` and ``verify`` on an ``--rss-events`` game, each a fresh process
  (``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` of a wrapper that runs only it); ``state``
  both without derived files (a stream of the whole log) and with them; the baseline is
  ``state`` on a 1,000-event game. Goal: under 200 MB.

Each time prints the median of ``--runs`` (at least 5) runs with min and max and OK or MISSED
(``bench/timing.py``).
"""

from __future__ import annotations

import argparse
import gc
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from bench.bench_fold import cached_log  # noqa: E402
from bench.timing import Timing, interleaved, timed, verdict  # noqa: E402
from mortecouille.app.commands import run_command  # noqa: E402
from mortecouille.app.games import load_state  # noqa: E402
from mortecouille.app.snapshots import (  # noqa: E402
    DERIVED_SUFFIXES,
    Anchor,
    _usable_snapshot,
    decode_state,
    derived_digest,
    read_snapshot,
)
from mortecouille.cli.main import cli  # noqa: E402
from mortecouille.core.board.ships import PlaceShip  # noqa: E402
from mortecouille.core.game import fold  # noqa: E402
from mortecouille.core.state import GameState, ShipState, without_defaults  # noqa: E402
from mortecouille.core.turn_commands import GiveTokens  # noqa: E402
from mortecouille.events.storage.file_log import GameLog  # noqa: E402
from mortecouille.replays.pictures.board_text import render_board  # noqa: E402

Argument = TypeVar("Argument")

#: the secret seed of bench_fold's game (its CreateGame commits to it)
SEED = "bench"
GAME = "bench"


def game_copy(directory: Path, events: int) -> GameLog:
    """A copy of the ``events``-event benchmark log as a game of ``directory``, with its seed and
    no derived file."""
    source = cached_log(events)
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{GAME}.jsonl"
    shutil.copyfile(source, target)
    shutil.copyfile(source.with_suffix(".head"), target.with_suffix(".head"))
    target.with_suffix(".seed").write_text(SEED + "\n")
    return GameLog(target)


def drop_derived(log_: GameLog) -> None:
    for suffix in DERIVED_SUFFIXES:
        log_.sibling(suffix).unlink(missing_ok=True)


def give_tokens(log_: GameLog) -> None:
    """``order`` of a blockade game: a guard ship's four tokens for the turn."""
    four = ("L", "L", "L", "L")
    run_command(log_, lambda state: GiveTokens(ship=guard_ship(state), tokens=four, replace=True))


def guard_ship(state: GameState) -> str:
    """A ship afloat (the 36 guards early on; late in the 1M-event battle only raiders are left)."""
    return min(s.id for s in state.ships.values() if s.afloat)


def place_ship(log_: GameLog) -> None:
    """``place``: a new ship on a free square (the game holds at most 200: a few runs fit)."""

    def command(state: GameState) -> PlaceShip:
        taken = {s.at for s in state.ships.values() if s.at is not None}
        free = next(
            (x, y) for y in range(state.board.height) for x in range(state.board.width) if (x, y) not in taken
        )
        name = f"P{len(state.ships)}"
        return PlaceShip(ship=name, at=free, facing="N", kind="sloop", owner="B")

    run_command(log_, command)


#: Calls per timed run of the reads, each well under a millisecond: a run of one would time the
#: machine's load more than the read
READS_PER_RUN = 20


def read_state(log_: GameLog) -> None:
    load_state(log_, keep=True)


def board_state(log_: GameLog) -> None:
    """``board``'s log work: the state it draws (the drawing grows with the ships, not the log:
    timed apart, see :func:`drawing`)."""
    load_state(log_, keep=True)


def drawing(boards: dict[int, GameState], runs: int) -> None:
    for size, state in boards.items():
        timing = timed(partial(render_board, state), runs)
        print(
            f"  (drawing the board of {size:,} events, {len(state.ships)} ships: "
            f"{timing.shown('ms')}; not log work)"
        )


def state_split(logs: dict[int, GameLog], runs: int) -> None:
    """Where ``state``'s log work goes at each size (CPU time per call, the sizes in turn, run
    after run): what grows with the game's ships (decoding the snapshot's state, the checksum of
    its bytes) apart from what does not (reading the file, checking the anchor's line, the log's
    end, starting the fold)."""
    kept = {size: snapshot_bytes(log_) for size, log_ in logs.items()}
    snapshots = {size: read_snapshot(log_) for size, log_ in logs.items()}
    ready = {size: ship_values(decode_state(kept[size])) for size in logs}
    parts: dict[str, Callable[[int], object]] = {
        "read and check the snapshot": lambda size: _usable_snapshot(logs[size]),
        "of it, its state's checksum": lambda size: derived_digest(kept[size]),
        "decode its state": lambda size: decode_state(kept[size]),
        "fold the events after it": lambda size: fold_after(logs[size], snapshots[size]),
        "(its ships from values held)": lambda size: ships_from_values(ready[size]),
    }
    spent: dict[tuple[str, int], list[float]] = {(part, size): [] for part in parts for size in logs}
    for _ in range(runs):
        for part, work in parts.items():
            for size in logs:
                calls = partial(repeat, work, size, READS_PER_RUN)
                spent[(part, size)].extend(cpu_timed(calls, 1).runs)
    ships = {size: len(decode_state(kept[size]).ships) for size in logs}
    heading = " and ".join(f"{size:,} events ({ships[size]} ships)" for size in logs)
    print(f"  split of state's log work, ms per call, at {heading}:")
    for part in parts:
        medians = [Timing([run / READS_PER_RUN for run in spent[(part, size)]]).median for size in logs]
        print(f"    {part:28} " + "  ".join(f"{value * 1e3:.3f}" for value in medians))
    smallest, largest = min(logs), max(logs)
    grown = {
        part: (Timing([run / READS_PER_RUN for run in spent[(part, largest)]]).median
               - Timing([run / READS_PER_RUN for run in spent[(part, smallest)]]).median)
        / (ships[largest] - ships[smallest])
        for part in ("decode its state", "(its ships from values held)")
    }  # fmt: skip
    print(
        f"  each ship more costs {grown['decode its state'] * 1e6:.2f} us to decode; building it alone, "
        f"from values already held, {grown['(its ships from values held)'] * 1e6:.2f} us "
        "(what building a ShipState costs, whatever the snapshot's encoding)"
    )


def ship_values(state: GameState) -> dict[str, dict[str, object]]:
    """Each ship of ``state`` as the values of its fields that are not their defaults: what a
    decoder holds once the snapshot's bytes are parsed, before it builds a ``ShipState``."""
    return {sid: without_defaults(ship) for sid, ship in state.ships.items()}


def ships_from_values(values: dict[str, dict[str, object]]) -> dict[str, ShipState]:
    """The ships built from their values alone (``msgspec.convert``, in C, as the decoder builds
    them): the part of decoding the snapshot that no encoding of its bytes can save."""
    return msgspec.convert(values, dict[str, ShipState])


def snapshot_bytes(log_: GameLog) -> bytes:
    """The state's bytes of the snapshot beside ``log_`` (kept by the warm-up run)."""
    found = _usable_snapshot(log_)
    if found is None:
        raise SystemExit(f"{log_.name}: no usable snapshot after the warm-up run")
    return bytes(found[1])


def fold_after(log_: GameLog, found: tuple[Anchor, GameState] | None) -> GameState:
    """The fold of the events after the snapshot ``found`` beside ``log_`` (none after the
    warm-up run: the fold's start, the log's end read and the stream opened)."""
    if found is None:
        raise SystemExit(f"{log_.name}: no usable snapshot after the warm-up run")
    anchor, state = found
    return fold(log_.stream(anchor.end, anchor.seq + 1, end=log_.settled_size()), state)


def cpu_timed(fn: Callable[[], object], runs: int) -> Timing:
    """As :func:`bench.timing.timed`, in CPU seconds of this process: the log work itself, not
    the fsync's wait for the disk nor the neighbours' load on a shared machine."""
    spent = []
    for _ in range(runs):
        gc.collect()
        start = time.process_time()
        fn()
        spent.append(time.process_time() - start)
    return Timing(spent)


def repeat(command: Callable[[Argument], object], argument: Argument, times: int) -> None:
    for _ in range(times):
        command(argument)


COMMANDS: dict[str, Callable[[GameLog], None]] = {
    "state": read_state,
    "order": give_tokens,
    "place": place_ship,
    "board": board_state,
}


def log_work(sizes: list[int], runs: int, work: Path) -> bool:
    met = True
    print("log work of a command (CPU time in-process, after one warm-up run that keeps the derived files)")
    medians: dict[str, dict[int, Timing]] = {name: {} for name in COMMANDS}
    boards: dict[int, GameState] = {}
    for name, command in COMMANDS.items():
        logs = {size: game_copy(work / f"{name}-{size}", size) for size in sizes}
        cold = {size: timed(partial(command, log_), 1) for size, log_ in logs.items()}
        spent: dict[int, list[float]] = {size: [] for size in sizes}
        per_call = READS_PER_RUN if name in ("state", "board") else 1
        for _ in range(runs):  # the sizes in turn, run after run: the machine's load hits them alike
            for size, log_ in logs.items():
                spent[size].extend(cpu_timed(partial(repeat, command, log_, per_call), 1).runs)
        if name == "board":
            boards = {size: load_state(log_) for size, log_ in logs.items()}
        if name == "state":
            state_split({size: logs[size] for size in (min(sizes), max(sizes))}, runs)
        for size in sizes:
            medians[name][size] = Timing([run / per_call for run in spent[size]])
            print(
                f"  {name:5} {size:>9,} events: {medians[name][size].shown('ms')}; "
                f"first run, no derived file yet: {cold[size].runs[0] * 1e3:.0f} ms"
            )
            shutil.rmtree(work / f"{name}-{size}")
    drawing(boards, runs)
    largest = max(sizes)
    baseline_log = game_copy(work / "baseline", largest)
    baseline = timed(lambda: fold(baseline_log.read()), runs)
    shutil.rmtree(work / "baseline")
    print(
        f"  baseline, the old path (read the whole log, fold it), {largest:,} events: {baseline.shown('ms')}"
    )
    smallest = min(sizes)
    for name in COMMANDS:
        for size in sizes[1:]:
            ratio = medians[name][size].median / medians[name][smallest].median
            met &= verdict(
                f"{name}: log work at {size:,} events vs {smallest:,} (time ratio)", ratio, 2.0, False
            )
    return met


def cli_command(store: list[str], args: list[str]) -> Callable[[], None]:
    """The whole CLI command ``args`` in-process (output included) on the games ``store`` names
    (``--games-dir DIR`` or ``--store URL``), run once to warm up (which keeps the derived files:
    the turn index, the keyframes)."""
    runner = CliRunner()

    def once() -> None:
        result = runner.invoke(cli, [*store, *args])
        if result.exit_code != 0:
            raise SystemExit(f"{' '.join(args)} failed: {result.output}")

    once()
    warm = runner.invoke(cli, [*store, *args])
    print(f"  ({' '.join(args)} prints {warm.output.count(chr(10)):,} lines)")
    return once


def first_and_last_turn(store: list[str], turns: int, events: int, runs: int, where: str = "") -> bool:
    """``replay --turn`` and ``explain --turn`` at the first and the last of ``turns`` on the game
    of ``events`` events ``store`` names (:func:`cli_command`), run after run, with their verdicts
    (``where``: what the lines add after the command, e.g. " on PostgreSQL"): each under 150 ms,
    the last within 2x of the first."""
    met = True
    for command in ("replay", "explain"):
        # first and last turn in turn, run after run: the machine's load hits both alike
        first, last = interleaved(
            cli_command(store, [command, GAME, "--turn", "1"]),
            cli_command(store, [command, GAME, "--turn", str(turns)]),
            runs,
        )
        print(f"  {command} --turn 1:      {first.shown('ms')}")
        print(f"  {command} --turn {turns}: {last.shown('ms')}")
        met &= verdict(f"{command} --turn 1{where} at {events:,} events (ms)", first.median * 1e3, 150, False)
        met &= verdict(
            f"{command} --turn {turns}{where} at {events:,} events (ms)", last.median * 1e3, 150, False
        )
        met &= verdict(
            f"{command}{where}: last turn vs first turn (time ratio, the first is the baseline)",
            last.median / first.median,
            2.0,
            False,
        )
    return met


def turn_reads(events: int, runs: int, work: Path) -> bool:
    met = True
    games = work / "turns"
    log_ = game_copy(games, events)
    turns = load_state(log_).turn - 1
    print(f"replay/explain --turn N on a {events:,}-event game ({turns:,} turns resolved)")
    cold = timed(
        lambda: CliRunner().invoke(cli, ["--games-dir", str(games), "replay", GAME, "--turn", "1"]), 1
    )
    print(f"  first replay, no turn index yet (it is built): {cold.runs[0]:.2f} s")
    met &= first_and_last_turn(["--games-dir", str(games)], turns, events, runs)
    shutil.rmtree(games)
    return met


WRAPPER = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def max_rss_mb(games: Path, *args: str) -> float:
    """The most memory (MB) one fresh ``mortecouille ARGS`` process took."""
    command = [sys.executable, "-c", "from mortecouille.cli.main import main; main()"]
    wrapped = [sys.executable, "-c", WRAPPER, *command, "--games-dir", str(games), *args]
    done = subprocess.run(wrapped, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: the measuring wrapper failed: {done.stderr[-500:]}")
    return int(done.stdout.split()[-1]) / 1024  # ru_maxrss is in KiB on Linux


def memory(events: int, work: Path) -> bool:
    met = True
    print(f"max RSS of one command on a {events:,}-event game (fresh processes)")
    small = work / "rss-small"
    game_copy(small, 1_000)
    floor = max_rss_mb(small, "state", GAME)
    print(f"  baseline: state on a 1,000-event game: {floor:.0f} MB")
    games = work / "rss"
    log_ = game_copy(games, events)
    cold = max_rss_mb(games, "state", GAME)  # no derived file: the whole log streamed and folded
    warm = max_rss_mb(games, "state", GAME)  # from the snapshot the first kept
    drop_derived(log_)
    verify = max_rss_mb(games, "verify", GAME)
    print(
        f"  state, no derived file: {cold:.0f} MB; state from its snapshot: {warm:.0f} MB; "
        f"verify: {verify:.0f} MB"
    )
    for label, value in (("state (no derived file)", cold), ("state", warm), ("verify", verify)):
        met &= verdict(
            f"max RSS of {label} at {events:,} events (MB; {value / floor:.1f}x the 1k baseline)",
            value,
            200,
            False,
        )
    shutil.rmtree(games)
    shutil.rmtree(small)
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--turns-events", type=int, default=1_000_000)
    parser.add_argument("--rss-events", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", nargs="*", choices=("work", "turns", "rss"), default=None)
    args = parser.parse_args()
    runs = max(args.runs, 5)
    with tempfile.TemporaryDirectory(prefix="bench-commands-") as scratch:
        work = Path(scratch)
        if args.only is None or "work" in args.only:
            log_work(sorted(args.sizes), runs, work)
        if args.only is None or "turns" in args.only:
            turn_reads(args.turns_events, runs, work)
        if args.only is None or "rss" in args.only:
            memory(args.rss_events, work)


if __name__ == "__main__":
    main()
