"""Archive and analytics speed: simulate, archive and query about 1,000,000 events; archive memory
against the number of games.

Run: ``.venv/bin/python bench/bench_archive.py [--events N] [--jobs J] [--sample G] [--runs R]
[--rss-games SMALL BIG] [--rss-turns T] [--flush-events F]``. Prints

1. simulation speed on one core (games/s, two players of four ships each: the demo fleets), from
   ``--sample`` games played in memory, then written through GameLog.create; target >= 20 games/s;
2. the corpus: games and events, simulated on ``--jobs`` processes (speed measured in 1 only);
3. archive throughput (events/s, everything ``archive`` does: verify, rows, Parquet) against
   DuckDB's own ``read_json`` turning the same logs into Parquet **in one call with the columns
   given** (``seq``, ``turn``, ``type``, ``ship``, ``prev``, ``hash`` and the file name: no schema
   guessed per file), interleaved run after run, median of ``--runs``; goal >= 0.5.
   DuckDB's raw-lines reader (``read_ndjson_objects``) is printed too, the archive's own DuckDB
   stage (the verified logs to the events table, its staged rows of the other tables to Parquet)
   timed apart, the CPU seconds of a run split between the archiving process (the DuckDB stage's
   share apart) and its workers (verifying, building rows), the workers' own split when they are
   forked (``verify_folded``, decoding the log, rows, the rest of each game, outside the games:
   :class:`GameSplit`), and with ``--jobs 1`` the share of the verification (chain, dice, state
   hashes), timed apart;
4. archive memory: max RSS of an ``archive`` run (a fresh process each run: the archiving process
   plus ``--jobs`` times its largest worker) over ``SMALL`` and ``BIG`` games (default 1,000 and
   10,000 games of ``--rss-turns`` turns at most: copies, under their own names, of a pool of
   distinct simulated games), the two interleaved, median of ``--runs``; goal: BIG within 1.3x of
   SMALL (memory flat in the number of games). ``--flush-events`` is the archive's batch size
   (its default, ``FLUSH_EVENTS``, unless scaled down with the corpus, as bench/run does). At the
   default sizes one BIG run takes minutes: ``--rss-runs`` may lower its runs (say so when quoting);
5. three report queries on the archive (Parquet views) as a ratio to the same SQL on a DuckDB
   table loaded from it, median of ``--runs``; target <= 3.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import duckdb

import mortecouille.replays.analytics.archive as archive_module
from bench.timing import Timing, interleaved, verdict
from mortecouille.app.simulate import game_name, game_seed, play_bot_game
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.analytics.archive import FLUSH_EVENTS, archive_games, columns_struct, sql_string
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


#: What the baseline's one ``read_json`` call is given: every line's envelope and the columns the
#: archive's events table takes from it (no schema guessed per file)
BASELINE_COLUMNS = (
    ("seq", "BIGINT"), ("turn", "INTEGER"), ("type", "VARCHAR"), ("ship", "VARCHAR"),
    ("prev", "VARCHAR"), ("hash", "VARCHAR"),
)  # fmt: skip


def play_and_write(directory: Path, index: int, max_turns: int = MAX_TURNS) -> int:
    log = GameLog(directory / f"{game_name(SEED, index)}.jsonl")
    played = play_bot_game(log.name, game_seed(SEED, index), BUDGET, max_turns)
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


def copies_corpus(directory: Path, pool: Path, games: int) -> int:
    """``games`` logs in ``directory``: hard links, under their own names, to the pool's logs in
    turn (each is verified and archived like any game; archive names a game after its file).
    Returns the events."""
    directory.mkdir()
    sources = sorted(pool.glob("*.jsonl"))
    sizes = {path: path.read_bytes().count(b"\n") for path in sources}
    events = 0
    for index in range(games):
        source = sources[index % len(sources)]
        os.link(source, directory / f"copy-{index:05d}.jsonl")
        head = source.with_suffix(".head")
        if head.exists():
            os.link(head, directory / f"copy-{index:05d}.head")
        events += sizes[source]
    return events


def cpu_seconds(who: int) -> float:
    """User and system CPU seconds of this process (``RUSAGE_SELF``, all its threads) or of its
    reaped children (``RUSAGE_CHILDREN``)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    """This process's peak RSS since it started its program (``VmHWM``): ``ru_maxrss`` would also
    count the parent's memory this process had before its exec (a spawned child shares it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class GameSplit:
    """Where the CPU of preparing the games goes, measured where they are prepared: each part's
    function in the archive module (``decode_lines``, ``verify_folded``, ``derived_rows``, and
    ``stage_game`` around them) is wrapped before a run's workers are forked, so that each forked
    worker counts its own CPU seconds (``time.process_time``: the worker has no other thread) and
    writes them after every game to ``folder/PID.json``. A
    spawned worker imports the module afresh (no wrappers): nothing is counted then."""

    PARTS = ("stage", "decode", "verify", "rows")

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.spent = dict.fromkeys(self.PARTS, 0.0)
        self.real = {
            "stage": archive_module.stage_game,
            "decode": archive_module.decode_lines,
            "verify": archive_module.verify_folded,
            "rows": archive_module.derived_rows,
        }

    def install(self) -> None:
        names = {
            "stage": "stage_game",
            "decode": "decode_lines",
            "verify": "verify_folded",
            "rows": "derived_rows",
        }
        for part, name in names.items():
            wrapper = partial(self.counted, part)
            if part == "stage":  # pickled to the workers by reference: it must be found by its name
                wrapper = self.stage_wrapper()
            setattr(archive_module, name, wrapper)

    def uninstall(self) -> None:
        archive_module.stage_game = self.real["stage"]  # type: ignore[assignment]
        archive_module.decode_lines = self.real["decode"]  # type: ignore[assignment]
        archive_module.verify_folded = self.real["verify"]  # type: ignore[assignment]
        archive_module.derived_rows = self.real["rows"]  # type: ignore[assignment]

    def counted(self, part: str, *args: object, **kwargs: object) -> object:
        began = time.process_time()
        try:
            return self.real[part](*args, **kwargs)  # type: ignore[operator]
        finally:
            self.spent[part] += time.process_time() - began

    def stage_wrapper(self) -> object:
        def stage_game(*args: object, **kwargs: object) -> object:
            try:
                return self.counted("stage", *args, **kwargs)
            finally:
                if self.folder is not None:
                    (self.folder / f"{os.getpid()}.json").write_text(json.dumps(self.spent))

        stage_game.__module__ = archive_module.__name__
        stage_game.__qualname__ = "stage_game"
        return stage_game

    def start_run(self, folder: Path) -> None:
        """Count the next run's games in ``folder`` (the workers it forks inherit the counts at 0)."""
        folder.mkdir()
        self.folder = folder
        self.spent = dict.fromkeys(self.PARTS, 0.0)

    def run_totals(self) -> dict[str, float] | None:
        """The last run's parts summed over its workers, None when no worker counted (spawned)."""
        assert self.folder is not None
        counted = [json.loads(path.read_text()) for path in self.folder.glob("*.json")]
        self.folder = None
        if not counted:
            return None
        return {key: sum(c[key] for c in counted) for key in self.PARTS}


def archive_child(source: str, target: str, flush_events: str, jobs: str) -> None:
    """One archive run in this fresh process: its time and max RSS (own, largest worker's)."""
    import resource

    started = time.perf_counter()
    result = archive_games(
        sorted(Path(source).glob("*.jsonl")),
        Path(target),
        "2026-01",
        flush_events=int(flush_events),
        jobs=int(jobs),
    )
    spent = time.perf_counter() - started
    own = peak_rss_mb()
    worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"seconds": spent, "own_mb": own, "worker_mb": worker, "games": len(result.archived)}))


def archive_memory(work: Path, options: argparse.Namespace) -> None:
    """Max RSS of archive runs over SMALL and BIG games, interleaved, each in a fresh process."""
    small, big = options.rss_games
    pool = work / "rss-pool"
    pool.mkdir()
    with ProcessPoolExecutor(options.jobs) as executor:
        list(
            executor.map(partial(play_and_write, pool, max_turns=options.rss_turns), range(options.rss_pool))
        )
    corpora = {}
    for games in (small, big):
        corpora[games] = work / f"rss-{games}"
        events = copies_corpus(corpora[games], pool, games)
        print(
            f"memory corpus: {games:,} games ({options.rss_pool} distinct, at most {options.rss_turns} "
            f"turns), {events:,} events; batches of {options.flush_events:,} events"
        )
    runs: dict[int, list[dict[str, float]]] = {small: [], big: []}
    for run in range(options.rss_runs):
        for games in (small, big):
            target = work / f"rss-archive-{games}-{run}"
            done = subprocess.run(
                [sys.executable, __file__, "--archive-child", str(corpora[games]), str(target),
                 str(options.flush_events), str(options.jobs)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            runs[games].append(json.loads(done.stdout.splitlines()[-1]))
            shutil.rmtree(target)
    footprint = {}
    for games in (small, big):
        values = [r["own_mb"] + options.jobs * r["worker_mb"] for r in runs[games]]
        footprint[games] = statistics.median(values)
        took = Timing([r["seconds"] for r in runs[games]])
        own = statistics.median(r["own_mb"] for r in runs[games])
        worker = statistics.median(r["worker_mb"] for r in runs[games])
        print(
            f"archive of {games:,} games: max RSS median {footprint[games]:.0f} MB "
            f"(min {min(values):.0f}, max {max(values):.0f}; archiving process {own:.0f} MB "
            f"+ {options.jobs} x worker {worker:.0f} MB), {took.shown()}"
        )
    verdict(
        f"archive: max RSS of {big:,} games vs {small:,} (memory flat in the number of games)",
        footprint[big] / footprint[small],
        1.3,
        at_least=False,
    )


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--archive-child":
        archive_child(*sys.argv[2:])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument(
        "--jobs", type=int, default=2, help="processes that build the corpus and verify it while archiving"
    )
    parser.add_argument("--sample", type=int, default=20, help="games timed for the simulation speed")
    parser.add_argument("--runs", type=int, default=5, help="runs per measure (median, min, max)")
    parser.add_argument("--rss-games", type=int, nargs=2, default=[1_000, 10_000], metavar=("SMALL", "BIG"))
    parser.add_argument(
        "--rss-turns", type=int, default=MAX_TURNS, help="turns at most of the memory corpus' games"
    )
    parser.add_argument("--rss-pool", type=int, default=50, help="distinct games the memory corpus copies")
    parser.add_argument(
        "--rss-runs", type=int, default=None, help="runs of the memory measure (default --runs)"
    )
    parser.add_argument("--flush-events", type=int, default=FLUSH_EVENTS, help="archive batch size (events)")
    parser.add_argument("--skip-memory", action="store_true", help="leave out the memory measure")
    options = parser.parse_args()
    options.rss_runs = options.rss_runs or options.runs
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

        # DuckDB alone: the same logs to Parquet, one read_json call with the columns given. Its
        # connection is opened before each of its runs and closed before each archive run, both
        # untimed: an open connection keeps DuckDB's native threads running, beside which archive
        # would not fork its workers but spawn them (``_forking_is_safe``), which a CLI `archive`
        # (no DuckDB opened before its workers start) never does.
        connection = duckdb.connect()
        glob = sql_string(str(logs / "*.jsonl"))
        columns = columns_struct(BASELINE_COLUMNS)
        opened: list[duckdb.DuckDBPyConnection] = []

        def open_baseline() -> None:
            if not opened:
                opened.append(duckdb.connect())

        def close_baseline() -> None:
            while opened:
                opened.pop().close()

        def baseline() -> None:
            opened[0].execute(
                f"COPY (SELECT * FROM read_json({glob}, format = 'newline_delimited', columns = {columns}, "
                f"filename = true)) TO {sql_string(str(work / 'baseline.parquet'))} (FORMAT PARQUET)"
            )

        raw = timed(
            lambda: connection.execute(
                f"COPY (SELECT * FROM read_ndjson_objects({glob}, filename = true)) "
                f"TO {sql_string(str(work / 'raw.parquet'))} (FORMAT PARQUET)"
            )
        )
        raw_rate = events / raw

        # archive, with the verification timed apart by wrapping the function archive calls
        # (seen only with --jobs 1: the workers have their own module)
        verifying = [0.0]
        real_verify = archive_module.verify_folded

        def timed_verify(log: GameLog, *args: object, **kwargs: object) -> object:
            began = time.perf_counter()
            try:
                return real_verify(log, *args, **kwargs)  # type: ignore[arg-type]
            finally:
                verifying[0] += time.perf_counter() - began

        archive_module.verify_folded = timed_verify  # type: ignore[assignment]
        # the archive's own DuckDB stage (staged rows -> Parquet), in the archiving process whatever
        # --jobs is: what archive would cost if verifying and building rows cost nothing
        writing = [0.0]
        writing_cpu = [0.0]
        real_write = archive_module.write_batch

        def timed_write(*args: object, **kwargs: object) -> None:
            began, began_cpu = time.perf_counter(), cpu_seconds(resource.RUSAGE_SELF)
            try:
                real_write(*args, **kwargs)  # type: ignore[arg-type]
            finally:
                writing[0] += time.perf_counter() - began
                writing_cpu[0] += cpu_seconds(resource.RUSAGE_SELF) - began_cpu

        archive_module.write_batch = timed_write  # type: ignore[assignment]
        # the workers' CPU split: verifying, decoding, rows, the rest of each game and the rest
        split = GameSplit()
        split.install()
        splits: list[dict[str, float]] = []
        archived = [0]

        #: CPU seconds of each archive run: this process (DuckDB's threads included), its workers
        #: (counted once the run has joined them)
        own_cpu: list[float] = []
        workers_cpu: list[float] = []
        forked: list[bool] = []

        def archive_once() -> None:
            target = work / f"archive-{archived[0]}"
            archived[0] += 1
            own, workers = cpu_seconds(resource.RUSAGE_SELF), cpu_seconds(resource.RUSAGE_CHILDREN)
            forked.append(archive_module._forking_is_safe())  # how this run starts its workers
            if options.jobs > 1:
                split.start_run(work / f"split-{archived[0]}")
            archive_games(sorted(logs.glob("*.jsonl")), target, "2026-01", jobs=options.jobs)
            own_cpu.append(cpu_seconds(resource.RUSAGE_SELF) - own)
            workers_cpu.append(cpu_seconds(resource.RUSAGE_CHILDREN) - workers)
            counted = split.run_totals() if options.jobs > 1 else None
            if counted is not None:
                splits.append({**counted, "workers": workers_cpu[-1]})

        connection.close()  # the raw-lines run's, done with (see ``open_baseline``)
        t_base, t_archive = interleaved(
            baseline, archive_once, options.runs, before_first=open_baseline, before_second=close_baseline
        )
        close_baseline()
        split.uninstall()
        archive_module.verify_folded = real_verify
        archive_module.write_batch = real_write
        target = work / "archive-0"
        for extra in range(1, archived[0]):
            shutil.rmtree(work / f"archive-{extra}")
        baseline_rate, rate = events / t_base.median, events / t_archive.median
        print(
            f"DuckDB read_json (one call, columns given) -> Parquet: {baseline_rate:,.0f} events/s, "
            f"{t_base.shown()}"
        )
        print(
            f"DuckDB read_ndjson_objects (raw lines) -> Parquet: {raw_rate:,.0f} events/s "
            f"({raw:.2f} s, one run)"
        )
        print(
            f"archive: {rate:,.0f} events/s, {t_archive.shown()}, "
            f"on {options.jobs} process(es) like DuckDB's threads"
            + (f", workers forked in {sum(forked)} of {len(forked)} runs" if options.jobs > 1 else "")
        )
        ratios = sorted(b / a for a, b in zip(t_archive.runs, t_base.runs, strict=True))
        verdict(
            "archive throughput vs DuckDB read_json with the columns given (speed ratio)",
            rate / baseline_rate,
            0.5,
            at_least=True,
            detail=f"per-run ratios {ratios[0]:.3f}..{ratios[-1]:.3f}; vs raw lines {rate / raw_rate:.3f}",
        )
        per_write = writing[0] / options.runs
        write_rate = events / per_write
        print(
            f"  of which the DuckDB stage (verified logs -> events, staged rows of every other table -> "
            f"Parquet, ZSTD) {per_write:.2f} s a run (mean): {write_rate:,.0f} events/s alone, ratio "
            f"{write_rate / baseline_rate:.3f} to the baseline (the ratio archive would reach if verifying "
            "and building rows cost nothing)"
        )
        own, workers = statistics.median(own_cpu), statistics.median(workers_cpu)
        print(
            f"  CPU a run (median): {own + workers:.2f} s = archiving process {own:.2f} s (of which the "
            f"DuckDB stage {writing_cpu[0] / options.runs:.2f} s, mean) + {options.jobs} worker(s) "
            f"{workers:.2f} s (verifying, building rows); {(own + workers) / t_archive.median:.2f} cores "
            "busy over the median run"
        )
        if len(splits) == options.runs:  # every run's workers forked and counted
            middle = {key: statistics.median(s[key] for s in splits) for key in splits[0]}
            rest_of_game = middle["stage"] - middle["decode"] - middle["verify"] - middle["rows"]
            print(
                f"  workers' CPU a run (median of each part): {middle['workers']:.2f} s = verify_folded "
                f"{middle['verify']:.2f} s + decoding the log {middle['decode']:.2f} s + rows "
                f"{middle['rows']:.2f} s + the rest of each game (reading, head, JSON lines, writing the "
                f"log) {rest_of_game:.2f} s + outside the games (start, pool, pickling) "
                f"{middle['workers'] - middle['stage']:.2f} s"
            )
        if options.jobs == 1:
            per_run = verifying[0] / options.runs
            rest_rate = events / (t_archive.median - per_run)
            print(
                f"  of which verify_folded {per_run:.2f} s a run; decode + rows + Parquet alone: "
                f"{rest_rate:,.0f} events/s, ratio {rest_rate / baseline_rate:.3f}"
            )

        views = archive_views(target)
        on_files = duckdb.connect()
        on_table = duckdb.connect()
        for name, select in views.items():
            on_files.execute(f'CREATE VIEW "{name}" AS {select}')
            on_table.execute(f'CREATE TABLE "{name}" AS {select}')
        for label, sql in REPORT_QUERIES.items():
            files, table = interleaved(
                lambda sql=sql: on_files.execute(sql).fetchall(),
                lambda sql=sql: on_table.execute(sql).fetchall(),
                options.runs,
            )
            print(f"query {label}: Parquet {files.shown('ms')}, table {table.shown('ms')}")
            verdict(
                f"archive: query {label} on Parquet vs a DuckDB table (time ratio)",
                files.median / table.median,
                3,
                at_least=False,
            )
        if not options.skip_memory:
            archive_memory(work, options)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
