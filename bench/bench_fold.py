"""Fold speed: read + decode + fold of a 1,000,000-event log, against decode alone; and verify.

Run: ``.venv/bin/python bench/bench_fold.py [--events N] [--verify-events N] [--hashes]``.

* replay vs decode: a pure msgspec decode of the file's typed JSON lines (the floor), and the path
  a command takes (GameLog.read + fold), interleaved run after run; goal: the replay at
  least 0.7 of the decode's speed.
* verify per event vs a replay of the same log (``--verify-events``, a shorter log: verify resolves
  every turn again); goal: at most 3x.

Each prints the median of ``--runs`` (at least 5) with min and max, and OK or MISSED. Each run is
timed in this process's CPU time by default (``--clock wall``: wall time): every measure here is
one thread's work on a file in the page cache, and on the shared machine wall-time runs moved with
others' load far more than with the code. The log is a
blockade battle that stays representative to its end: sunk ships keep being replaced, so moves,
collisions, damage and sinkings go on, and the state grows as a long game's does.
``--hashes`` also times ``state_hash`` at every turn end, as ``verify`` computes it.
``--verify-split`` also times ``verify`` without re-deriving the turns (its chain check, decode,
fold and hashes alone), the part of its ratio no speed-up of the rules can remove, and of that the
chain check with the typed decode alone; what re-deriving adds is printed from those medians.
``--only-verify`` measures only ``verify`` against its replay (with ``--verify-split``, as
``bench/run`` passes it): the same lines, without the long replay and the ``eventsourcing`` part.

* replay vs the ``eventsourcing`` library (``--eventsourcing-events``, a shorter log): the same
  number of events, each stored with as many bytes as the log's lines have on average, read back
  from its SQLite recorder (a file, as the log is) and reconstructed into an aggregate by its
  repository, against our replay of that log; goal: at least 8x faster. ``eventsourcing`` is not a
  dependency of the project: when it is missing, the benchmark installs it into the running
  environment (``pip install eventsourcing``) or says how.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.timing import Timing, interleaved, verdict  # noqa: E402
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import DicePolicy, LoggedDice, TableDice, seed_commitment
from mortecouille.core.game import decide, evolve, fold, play_turn
from mortecouille.core.life_cycle import Command, CreateGame, ResolveTurn
from mortecouille.core.rulings import RecordRuling
from mortecouille.core.state import EMPTY, GameState, state_hash
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.codec import event_decoder
from mortecouille.events.game import DieRolled, GameCreated, TurnEnded, TurnStarted
from mortecouille.events.rulings import Adjustment
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.rederive import turn_segments
from mortecouille.replays.reading.verify import verify_log

#: how two measures are timed run after run: :func:`cpu_interleaved` or ``bench.timing.interleaved``
Measure = Callable[[Callable[[], object], Callable[[], object], int], tuple[Timing, Timing]]

GRID = 6  # a 6x6 grid of ships circling in their own 3x3 boxes, plus a few ramming ones
WILD = 6
#: new ships placed until then; after it a referee's ruling refloats a wreck instead (a game holds
#: at most 200 ships, SHIPS_MAX), so ships keep being replaced to the log's end
NEW_WILD = 150


def build_log(path: Path, total: int) -> None:
    """A long blockade game decided by the real decider, as real games log it.

    Thirty-six ships sail four quarter turns a turn round their own boxes (moves every
    round), six more sail at random through them (pushes, collisions, damage, sinkings);
    a sunk ship is replaced, always, so the battle never stops (the sunk stay in the state, as
    in any game). Every turn logs tokens, moves,
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
        while len(wild) < WILD:
            square = (rng.randrange(size), rng.randrange(size))
            if square in taken:
                continue
            if serial < NEW_WILD:
                serial += 1
                kind = rng.choice(("sloop", "cutter", "war-brig"))
                facing = rng.choice("NESW")
                apply(PlaceShip(ship=f"W{serial}", at=square, facing=facing, kind=kind, owner="B"))
            else:
                wrecks = sorted(s.id for s in state.ships.values() if s.id.startswith("W") and not s.afloat)
                wreck = rng.choice(wrecks)
                repaired = int(state.ships[wreck].damage)  # a ruling changes damage by whole points
                changes = (
                    Adjustment(ship=wreck, at=square),
                    *((Adjustment(ship=wreck, damage=-repaired),) if repaired else ()),
                    Adjustment(ship=wreck, sunk=False),
                )
                apply(RecordRuling(rule="T2", text=f"{wreck} refloated", adjustments=changes))
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
    path = out / f"fold-v2-{total}.jsonl"
    if not path.exists():
        building = out / f"fold-v2-{total}.building.jsonl"
        building.unlink(missing_ok=True)
        build_log(building, total)
        building.with_suffix(".head").rename(path.with_suffix(".head"))
        building.rename(path)
    return path


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


def cpu_interleaved(
    first: Callable[[], object], second: Callable[[], object], runs: int
) -> tuple[Timing, Timing]:
    """:func:`bench.timing.interleaved` in this process's CPU time (user and system): every measure
    here is one thread's work on a file in the page cache, and on a machine shared with others the
    wall time of each run moves with their load far more than with the code (per-run ratios from
    0.3 to 1.5 in one run); the CPU time does not wait for them."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(runs):
        for fn, into in ((first, a), (second, b)):
            gc.collect()
            start = time.process_time()
            fn()
            into.append(time.process_time() - start)
    return Timing(a), Timing(b)


def eventsourcing_module() -> Any | None:
    """The ``eventsourcing`` library, installed into the running environment first if missing
    (it is the benchmark's baseline, not a dependency of the project); None if it cannot be."""
    try:
        return importlib.import_module("eventsourcing.application")
    except ImportError:
        pass
    print("installing eventsourcing for the comparison: pip install eventsourcing", flush=True)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "eventsourcing"], check=False)
    if done.returncode != 0:
        print(f"could not install it; run `{sys.executable} -m pip install eventsourcing` and run again")
        return None
    importlib.invalidate_caches()
    return importlib.import_module("eventsourcing.application")


def eventsourcing_replay(count: int, line_bytes: int, directory: Path) -> tuple[Any, Any, int]:
    """An ``eventsourcing`` application on a SQLite file holding one aggregate of ``count``
    events, each event's stored state padded to ``line_bytes`` bytes; the application, the
    aggregate's id, and the bytes one event's state takes."""
    from eventsourcing.application import Application
    from eventsourcing.domain import Aggregate, event

    class Ship(Aggregate):
        """An aggregate whose every event changes it, as our moves change a ship."""

        def __init__(self) -> None:
            self.moves = 0
            self.last = ""

        @event("Moved")
        def move(self, payload: str) -> None:
            self.moves += 1
            self.last = payload

    class Fleet(Application):
        pass

    app = Fleet(env={"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(directory / "es.db")})
    probe = Ship()
    probe.move("")
    empty = len(app.mapper.to_stored_event(probe.collect_events()[-1]).state)
    ship = Ship()
    payload = "x" * max(0, line_bytes - empty)
    for _ in range(count - 1):  # with its creation, ``count`` events
        ship.move(payload)
    app.save(ship)
    stored = app.recorder.select_events(ship.id, gt=1, limit=1)[0].state
    return app, ship.id, len(stored)


def compare_with_eventsourcing(log_path: Path, count: int, runs: int, measure: Measure) -> None:
    """Our replay of ``log_path`` against ``eventsourcing`` reconstructing an aggregate from as
    many events of the same mean size, interleaved run after run."""
    if eventsourcing_module() is None:
        print("MISSED replay vs the eventsourcing library: not measured (the library is not installed)")
        return
    data = log_path.read_bytes()
    line_bytes = round(len(data) / count)
    log = GameLog(log_path)
    with tempfile.TemporaryDirectory(prefix="eventsourcing-") as directory:
        app, aggregate, stored = eventsourcing_replay(count, line_bytes, Path(directory))
        ours, theirs = measure(lambda: fold(log.read()), lambda: app.repository.get(aggregate), runs)
        app.close()
    print(f"eventsourcing log:    {count:,} events; our lines {line_bytes} bytes on average, "
          f"its stored events {stored} bytes each (SQLite recorder, JSON transcoder)")  # fmt: skip
    print(f"our replay:           {count / ours.median:,.0f} events/s, {ours.shown()}")
    print(f"eventsourcing get:    {count / theirs.median:,.0f} events/s, {theirs.shown()}")
    ratios = sorted(t / o for o, t in zip(ours.runs, theirs.runs, strict=True))
    verdict(
        "replay vs the eventsourcing library, events of the same size (speed ratio)",
        theirs.median / ours.median,
        8.0,
        at_least=True,
        detail=f"per-run ratios {ratios[0]:.1f}..{ratios[-1]:.1f}",
    )


def turns_to_play(events: list[Event]) -> list[tuple[GameState, ResolveTurn, LoggedDice]]:
    """Every resolved turn of ``events`` (a log of :func:`build_log`) as ``verify`` re-derives it:
    the state before it, its command, the log's dice."""
    created = events[0]
    assert isinstance(created, GameCreated)
    dice = LoggedDice([e for e in events if isinstance(e, DieRolled)], DicePolicy.of(created, None, {}))
    turns = []
    state = EMPTY
    for resolved, segment in turn_segments(events):
        if resolved:
            started = segment[0]
            assert isinstance(started, TurnStarted)
            turns.append((state, ResolveTurn(partial=True, rounds=started.rounds), dice))
        state = fold(segment, state)
    return turns


def play_turns(turns: list[tuple[GameState, ResolveTurn, LoggedDice]]) -> None:
    for state, command, dice in turns:
        play_turn(state, command, dice)


def measure_verify(events: int, runs: int, split: bool, measure: Measure) -> None:
    """verify against a replay of the same log (its goal's line); ``split``: also verify without
    re-deriving the turns."""
    short = GameLog(cached_log(events))
    t_replay, t_verify = measure(lambda: fold(short.read()), lambda: verify_log(short), runs)
    print(f"verify log:           {events:,} events")
    print(f"replay:               {t_replay.shown()}")
    print(f"verify:               {t_verify.shown()}")
    if split:
        # what verify costs without resolving every turn again (chain check, typed decode, fold,
        # a state hash per turn): the part re-derivation cannot remove, against the same replay
        t_again, t_floor = measure(
            lambda: fold(short.read()), lambda: verify_log(short, rederive_turns=False), runs
        )
        print(f"verify, no rederive:  {t_floor.shown()}, {t_floor.median / t_again.median:.2f}x its replay")
        # of that: the chain check and the typed decode alone (the file log's checked stream, read
        # to its end); the rest is the fold, the dice, the turn segments and the state hashes
        t_base, t_chain = measure(
            lambda: fold(short.read()), lambda: sum(1 for _ in short.checked_stream().batches()), runs
        )
        print(f"  chain + decode:     {t_chain.shown()}, {t_chain.median / t_base.median:.2f}x its replay")
        # what re-deriving adds: verify with and without it, run after run, the median difference
        with_it, without_it = measure(
            lambda: verify_log(short), lambda: verify_log(short, rederive_turns=False), runs
        )
        added = statistics.median(a - b for a, b in zip(with_it.runs, without_it.runs, strict=True))
        print(f"  re-derivation:      {added:.3f} s (verify minus verify without it, run after run), "
              f"{added / t_replay.median:.2f}x the replay")  # fmt: skip
        # the rules alone: every resolved turn played again from the state the log reaches before
        # it (folded beforehand), as verify's re-derivation plays it; verify beyond that is its own
        # work (reading, the chain, decoding the lines between turns, comparing, hashing, folding)
        turns = turns_to_play(short.read())
        t_fold_again, t_rules = measure(lambda: fold(short.read()), lambda: play_turns(turns), runs)
        beyond = (t_verify.median - t_rules.median) / t_replay.median
        rules_ratio = t_rules.median / t_fold_again.median
        print(f"  the rules alone:    {t_rules.shown()}, {rules_ratio:.2f}x its replay; verify beyond them "
              f"{beyond:.2f}x the replay")  # fmt: skip
    ratio = t_verify.median / t_replay.median
    verdict("verify per event vs a replay (time ratio)", ratio, 3.0, at_least=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--verify-events", type=int, default=50_000)
    parser.add_argument("--eventsourcing-events", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="each run's CPU time in this process (the default: robust to others' load) or wall time",
    )
    parser.add_argument("--hashes", action="store_true", help="also time state_hash at every turn end")
    parser.add_argument(
        "--verify-split",
        action="store_true",
        help="also time verify without its re-derivation (the chain, decode, fold and hashes alone)",
    )
    parser.add_argument(
        "--only-verify",
        action="store_true",
        help="only verify against its replay (and --verify-split): no long replay, no eventsourcing",
    )
    args = parser.parse_args()
    measure: Measure = cpu_interleaved if args.clock == "cpu" else interleaved
    print(f"clock: {'CPU time of this process' if args.clock == 'cpu' else 'wall time'}")
    if args.only_verify:
        measure_verify(args.verify_events, args.runs, args.verify_split, measure)
        return
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
    t_decode, t_fold = measure(decode_only, end_to_end, args.runs)
    print(f"events:               {n:,} ({path.stat().st_size / 1e6:.0f} MB, a long blockade game)")
    print(f"decode only:          {n / t_decode.median:,.0f} events/s, {t_decode.shown()}")
    print(f"read + decode + fold: {n / t_fold.median:,.0f} events/s, {t_fold.shown()}")
    ratios = sorted(d / f for d, f in zip(t_decode.runs, t_fold.runs, strict=True))
    verdict(
        "replay vs typed msgspec decode of the same file (speed ratio)",
        t_decode.median / t_fold.median,
        0.7,
        at_least=True,
        detail=f"per-run ratios {ratios[0]:.2f}..{ratios[-1]:.2f}",
    )
    if args.hashes:
        events = log.read()
        count, spent = min((time_turn_end_hashes(events) for _ in range(args.runs)), key=lambda r: r[1])
        print(f"state_hash at turn ends: {count / spent:,.0f} hashes/s ({count:,} hashes, {spent:.2f} s)")
    measure_verify(args.verify_events, args.runs, args.verify_split, measure)
    es_events = args.eventsourcing_events
    compare_with_eventsourcing(cached_log(es_events), es_events, args.runs, measure)


if __name__ == "__main__":
    main()
