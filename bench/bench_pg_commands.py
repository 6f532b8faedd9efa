"""Commands against the log's length on PostgreSQL: the log work of ``state`` and ``order`` on a
game of 1,000 vs 100,000 events, folded from the store's snapshot (``app/snapshots.py``, the
``snapshots`` table of ``events/storage/postgres.py``) and the events after it; ``replay`` and
``explain --turn`` at the first and last turn, from the turn marks and keyframes.

Run: ``.venv/bin/python bench/bench_pg_commands.py [--sizes 1000 100000] [--runs 5]
[--turns-events 100000] [--only work turns]``. Starts a throw-away PostgreSQL cluster
(``tests/postgres_cluster.py``: Debian's server binaries, a free loopback port of 5500-5599).
The games are ``bench_fold.py``'s blockade battle (built once per size and kept in
``bench/out/``), imported as their exact lines (``import_lines``) with their secret seed, each
into a schema of its own.

* ``state``: ``load_state(log, keep=True)``, the reading command's path (the snapshot read, checked
  against its row, the events after it folded); ``order``: a guard ship's blockade tokens through
  ``run_command`` (lock, fold from the snapshot, decide, append, unlock; the snapshot rewritten
  when due). Each after one warm-up run, which keeps the snapshot (the warm-up's time, a game with
  no snapshot yet, is printed too). Wall time (the work is the server's as much as this process's),
  the sizes run after run in turn so the shared machine's load hits them alike, the reads 20 at a
  time. Goal: the largest size within 2x of the smallest.
* Baseline, measured in the same run: the old path, every event read from seq 0 and folded
  (``fold(events_from(log, 0))``), at the largest size.

* ``replay --turn N`` and ``explain --turn N`` (the whole CLI command in-process, the store opened
  and closed by it, output included) at the first and the last turn of a ``--turns-events`` game
  (100,000 by default), the first and last turn run after run in turn, after one warm-up run each
  (the first run of all, printed, builds the keyframes: ``app/stored_turns.py``). Goals: the file
  store's, under 150 ms at any turn and the last within 2x of the first. Baseline, measured in
  the same run: the old path, the whole game mirrored into a temporary file and the file turn
  index built there (``log_as_file`` and ``turn_index``), for ``replay --turn 1``.

Times print as the median of ``--runs`` (at least 5) runs with min and max, and OK or MISSED
(``bench/timing.py``).
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from click.testing import CliRunner  # noqa: E402
from psycopg import sql  # noqa: E402

from bench.bench_commands import GAME, SEED, first_and_last_turn, give_tokens  # noqa: E402
from bench.bench_fold import cached_log  # noqa: E402
from bench.timing import RUNS, Timing, timed, verdict  # noqa: E402
from mortecouille.app.games import load_state  # noqa: E402
from mortecouille.app.store_copy import log_as_file, turns_of  # noqa: E402
from mortecouille.app.turn_index import turn_index  # noqa: E402
from mortecouille.cli.main import cli  # noqa: E402
from mortecouille.core.game import fold  # noqa: E402
from mortecouille.events.storage.contract import SEED as SEED_KIND  # noqa: E402
from mortecouille.events.storage.contract import events_from  # noqa: E402
from mortecouille.events.storage.postgres import PostgresGameLog, PostgresStore  # noqa: E402
from tests.postgres_cluster import throwaway_cluster  # noqa: E402

#: Calls per timed run of ``state``, a few milliseconds each: a run of one would time the load
READS_PER_RUN = 20


def imported(url: str, events: int) -> tuple[PostgresStore, PostgresGameLog]:
    """The ``events``-event benchmark game in a schema of its own, with its seed, no snapshot."""
    store = PostgresStore(url, schema=f"bench_{events}_{uuid.uuid4().hex[:8]}")
    log_ = store.log(GAME)
    log_.import_lines(cached_log(events).read_bytes(), {SEED_KIND: (SEED + "\n").encode()})
    return store, log_


def read_state(log_: PostgresGameLog) -> None:
    load_state(log_, keep=True)


def repeat(command: Callable[[PostgresGameLog], None], log_: PostgresGameLog, times: int) -> None:
    for _ in range(times):
        command(log_)


def forget_snapshot(store: PostgresStore) -> None:
    """The game as a store that never kept a snapshot has it (the rows are derived: only speed)."""
    with store.pool.connection() as conn:
        conn.execute(sql.SQL("DELETE FROM {}").format(store.table("snapshots")))


def order(log_: PostgresGameLog) -> None:
    """``order`` as ``bench_commands.py`` gives it (its ``give_tokens``: any store's log)."""
    give_tokens(log_)  # type: ignore[arg-type]


COMMANDS: dict[str, tuple[Callable[[PostgresGameLog], None], int]] = {
    "state": (read_state, READS_PER_RUN),
    "order": (order, 1),
}


def measure(sizes: list[int], runs: int, url: str) -> bool:
    met = True
    print("log work of a command on PostgreSQL (wall time, after one warm-up run that keeps the snapshot)")
    games = {size: imported(url, size) for size in sizes}
    try:
        medians: dict[str, dict[int, Timing]] = {}
        for name, (command, per_call) in COMMANDS.items():
            for store, _ in games.values():
                forget_snapshot(store)
            cold = {size: timed(partial(command, log_), 1).runs[0] for size, (_, log_) in games.items()}
            spent: dict[int, list[float]] = {size: [] for size in sizes}
            for _ in range(runs):  # the sizes in turn, run after run
                for size, (_, log_) in games.items():
                    run = timed(partial(repeat, command, log_, per_call), 1).runs[0]
                    spent[size].append(run / per_call)
            medians[name] = {size: Timing(spent[size]) for size in sizes}
            for size in sizes:
                print(
                    f"  {name:5} {size:>9,} events: {medians[name][size].shown('ms')}; "
                    f"first run, no snapshot yet: {cold[size] * 1e3:.0f} ms"
                )
        largest = max(sizes)
        _, big = games[largest]
        baseline = timed(lambda: fold(events_from(big, 0)), runs)
        print(
            f"  baseline, the old path (every event read from seq 0 and folded), {largest:,} events: "
            f"{baseline.shown('ms')}"
        )
        smallest = min(sizes)
        for name in COMMANDS:
            old_ratio = baseline.median / medians[name][smallest].median
            for size in sizes:
                if size == smallest:
                    continue
                ratio = medians[name][size].median / medians[name][smallest].median
                met &= verdict(
                    f"{name} on PostgreSQL: log work at {size:,} events vs {smallest:,} (time ratio)",
                    ratio,
                    2.0,
                    False,
                    f"the old path's fold at {largest:,}: {old_ratio:.0f}x {name} at {smallest:,}",
                )
    finally:
        for store, _ in games.values():
            store.close()
    return met


def mirrored_replay(log_: PostgresGameLog, turn: int) -> None:
    """``replay --turn`` as it was: the game mirrored into a temporary file, its turn index built."""
    with log_as_file(log_) as readable:
        index = turn_index(readable)
        index.state_at(index.position_after_turn(turn))


def turn_reads(url: str, events: int, runs: int) -> bool:
    met = True
    store, log_ = imported(url, events)
    try:
        game_url = f"{url}?schema={store.schema}"
        with turns_of(log_) as index:
            turns = len(index.resolved_turns())
        print(f"replay/explain --turn N on PostgreSQL, a {events:,}-event game ({turns:,} turns resolved)")
        cold = timed(
            lambda: CliRunner().invoke(cli, ["--store", game_url, "replay", GAME, "--turn", str(turns)]), 1
        )
        print(f"  first replay of the last turn, no keyframes yet (built up to it): {cold.runs[0]:.2f} s")
        met &= first_and_last_turn(["--store", game_url], turns, events, runs, " on PostgreSQL")
        baseline = timed(partial(mirrored_replay, log_, 1), runs)
        print(f"  baseline, the old path (the game mirrored, its turn index built): {baseline.shown('ms')}")
    finally:
        store.close()
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100000])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--turns-events", type=int, default=100000)
    parser.add_argument("--only", nargs="*", choices=("work", "turns"), default=None)
    args = parser.parse_args()
    if args.runs < RUNS:
        parser.error(f"--runs: at least {RUNS}")
    with throwaway_cluster() as server:
        met = True
        if args.only is None or "work" in args.only:
            met &= measure(sorted(args.sizes), args.runs, server.url)
        if args.only is None or "turns" in args.only:
            met &= turn_reads(server.url, args.turns_events, args.runs)
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
