"""Archive and analytics speed: simulate, archive and query about 1,000,000 events.

Run: ``.venv/bin/python bench/bench_archive.py [--events N] [--jobs J] [--sample G]``. Prints

1. simulation speed on one core (games/s, two players of four ships each: the demo fleets), from
   ``--sample`` games played in memory, then written through GameLog.create; target >= 20 games/s;
2. the corpus: games and events, simulated on ``--jobs`` processes (speed measured in 1 only);
3. archive throughput (events/s, everything ``archive`` does: verify, rows, Parquet) as a ratio to
   DuckDB's own ``read_json`` turning the same logs into Parquet (typed columns, and raw lines with
   ``read_ndjson_objects``); target >= 0.5. The verification
   (chain, dice, state hashes, re-derivation of every turn) is timed apart, so the ratio of the
   rest (decode, rows, Parquet) is printed too;
4. three report queries on the archive (Parquet views) as a ratio to the same SQL on a DuckDB
   table loaded from it; target <= 3.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import duckdb

import mortecouille.replays.analytics.archive as archive_module
from mortecouille.app.simulate import game_name, game_seed, play_bot_game
from mortecouille.events.store import GameLog
from mortecouille.replays.analytics.archive import archive_games, sql_string
from mortecouille.replays.analytics.query import archive_views

SEED = "bench"
MAX_TURNS = 60
BUDGET = 100_000

REPORT_QUERIES = {
    "dice faces": "SELECT source, purpose, sides, value, count(*) FROM dice GROUP BY ALL",
    "gunnery": "SELECT mode, distance, cannons, len(dice), bonus, count(*), sum(CAST(hit AS INTEGER)) "
    "FROM shots GROUP BY ALL",
    "events by type and turn": "SELECT type, turn, count(*), count(DISTINCT game) FROM events GROUP BY ALL",
}


def play_and_write(directory: Path, index: int) -> int:
    log = GameLog(directory / f"{game_name(SEED, index)}.jsonl")
    played = play_bot_game(log.name, game_seed(SEED, index), BUDGET, MAX_TURNS)
    log.create(played)
    return len(played)


def simulation_speed(directory: Path, sample: int) -> None:
    started = time.perf_counter()
    played = [play_bot_game(f"speed-{i}", f"speed-{i}", BUDGET, MAX_TURNS) for i in range(sample)]
    playing = time.perf_counter() - started
    for index, events in enumerate(played):
        GameLog(directory / f"speed-{index}.jsonl").create(events)
    total = time.perf_counter() - started
    events = sum(len(e) for e in played)
    print(
        f"simulation (1 core, {sample} games, {events / sample:.0f} events/game): "
        f"{sample / playing:.1f} games/s playing, {sample / total:.1f} games/s with the writes "
        f"(target >= 20)"
    )


def build_corpus(directory: Path, target_events: int, jobs: int) -> tuple[int, int]:
    games = events = 0
    batch = max(jobs * 8, 8)
    with ProcessPoolExecutor(jobs) as pool:
        while events < target_events:
            sizes = pool.map(play_and_write, [directory] * batch, range(games, games + batch))
            for size in sizes:
                games += 1
                events += size
    return games, events


def timed(action: object) -> float:
    started = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument(
        "--jobs", type=int, default=2, help="processes that build the corpus and verify it while archiving"
    )
    parser.add_argument("--sample", type=int, default=20, help="games timed for the simulation speed")
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-archive-"))
    try:
        simulation_speed(work / "speed", options.sample)
        logs = work / "games"
        logs.mkdir()
        started = time.perf_counter()
        games, events = build_corpus(logs, options.events, options.jobs)
        print(
            f"corpus: {games} games, {events} events "
            f"({time.perf_counter() - started:.1f} s on {options.jobs} processes)"
        )

        # DuckDB alone: the same logs to Parquet through its JSON reader.
        connection = duckdb.connect()
        glob = sql_string(str(logs / "*.jsonl"))
        baseline = timed(
            lambda: connection.execute(
                f"COPY (SELECT * FROM read_json({glob}, format = 'newline_delimited', union_by_name = true, "
                f"filename = true)) TO {sql_string(str(work / 'baseline.parquet'))} (FORMAT PARQUET)"
            )
        )
        baseline_rate = events / baseline
        raw = timed(
            lambda: connection.execute(
                f"COPY (SELECT * FROM read_ndjson_objects({glob}, filename = true)) "
                f"TO {sql_string(str(work / 'raw.parquet'))} (FORMAT PARQUET)"
            )
        )
        raw_rate = events / raw

        # archive, with the verification timed apart by wrapping the function archive calls
        verifying = [0.0]
        real_verify = archive_module.verify_log

        def timed_verify(log: GameLog, *args: object, **kwargs: object) -> object:
            began = time.perf_counter()
            try:
                return real_verify(log, *args, **kwargs)  # type: ignore[arg-type]
            finally:
                verifying[0] += time.perf_counter() - began

        archive_module.verify_log = timed_verify  # type: ignore[assignment]
        target = work / "archive"
        archiving = timed(
            lambda: archive_games(sorted(logs.glob("*.jsonl")), target, "2026-01", jobs=options.jobs)
        )
        archive_module.verify_log = real_verify
        rate = events / archiving
        rest_rate = events / (archiving - verifying[0])
        print(
            f"DuckDB read_json (typed columns) -> Parquet: {baseline_rate:,.0f} events/s ({baseline:.2f} s)"
        )
        print(f"DuckDB read_ndjson_objects (raw lines) -> Parquet: {raw_rate:,.0f} events/s ({raw:.2f} s)")
        print(
            f"archive: {rate:,.0f} events/s ({archiving:.2f} s), "
            f"ratio {rate / baseline_rate:.3f} (target >= 0.5)"
        )
        print(
            f"  on {options.jobs} process(es), like DuckDB's threads; "
            f"against raw lines: ratio {rate / raw_rate:.3f}"
        )
        if options.jobs == 1:
            print(
                f"  of which verify_log {verifying[0]:.2f} s; decode + rows + Parquet alone: "
                f"{rest_rate:,.0f} events/s, ratio {rest_rate / baseline_rate:.3f}"
            )

        views = archive_views(target)
        on_files = duckdb.connect()
        on_table = duckdb.connect()
        for name, select in views.items():
            on_files.execute(f'CREATE VIEW "{name}" AS {select}')
            on_table.execute(f'CREATE TABLE "{name}" AS {select}')
        for label, sql in REPORT_QUERIES.items():
            files = min(timed(lambda sql=sql: on_files.execute(sql).fetchall()) for _ in range(3))
            table = min(timed(lambda sql=sql: on_table.execute(sql).fetchall()) for _ in range(3))
            print(
                f"query {label}: Parquet {files * 1000:.1f} ms, table {table * 1000:.1f} ms, "
                f"ratio {files / table:.2f} (target <= 3)"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
