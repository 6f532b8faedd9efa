"""Many finished games, one SQL engine: ``archive``, ``query``, ``report`` and ``simulate``.

DuckDB is imported only inside the functions these commands call (mortecouille.replays.analytics.archive,
mortecouille.replays.analytics.query), so ``mortecouille --help`` and the table-side commands never load
it. The clock
lives here and nowhere else: ``archive --month`` defaults to the current month.
"""

from __future__ import annotations

import datetime
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from mortecouille.app.games import games_dir as resolve_games_dir
from mortecouille.app.games import open_games
from mortecouille.app.outputs import SVG_SUFFIXES, check_output, write_output
from mortecouille.app.simulate import DEFAULT_BUDGET, DEFAULT_MAX_TURNS, Fleets, load_fleets, simulate
from mortecouille.app.store_copy import logs_as_files
from mortecouille.cli import interrupts
from mortecouille.cli.plain import error_line
from mortecouille.cli.refusals import refusal_text
from mortecouille.cli.shared import Context, pass_context, reports_errors
from mortecouille.core.errors import BadInput
from mortecouille.core.limits import shown
from mortecouille.events.storage.contract import FileStore, is_file_store_url
from mortecouille.replays.analytics.archive import archive_games
from mortecouille.replays.analytics.query import (
    DEFAULT_LIMITS,
    QueryLimits,
    QueryRefused,
    QueryResult,
    format_csv,
    format_json,
    format_table,
    query_archive,
    query_logs,
)
from mortecouille.replays.analytics.reports import REPORTS, build_report, render_svg, render_text

MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


@contextmanager
def progress(length: int, label: str) -> Iterator[Callable[[str], None]]:
    """A progress bar on a terminal (stderr), nothing when the output is redirected."""
    if not sys.stderr.isatty() or length == 0:
        yield lambda _: None
        return
    with click.progressbar(length=length, label=label, file=sys.stderr, show_pos=True) as bar:
        yield lambda _: bar.update(1)


def current_month() -> str:
    return datetime.date.today().strftime("%Y-%m")


@click.command()
@click.option(
    "--games-dir",
    "games_option",
    type=click.Path(file_okay=False),
    default=None,
    help="Where the logs to archive are (default: the global --games-dir).",
)
@click.option(
    "--to", "target", required=True, type=click.Path(file_okay=False), help="The archive directory."
)
@click.option("--month", default=None, help="Month partition YYYY-MM (default: the current month).")
@click.option(
    "--rederive", is_flag=True, help="Also re-derive every turn's outcomes, as verify does (slower)."
)
@click.option(
    "--jobs",
    type=click.IntRange(1, 64),
    default=None,
    help="Processes verifying games side by side (default: the machine's cores).",
)
@pass_context
@reports_errors
def archive(
    ctx: Context, games_option: str | None, target: str, month: str | None, rederive: bool, jobs: int | None
) -> None:
    """Verify every finished game and add it to a Parquet archive (idempotent).

    Unfinished games are skipped; a corrupt or tampered log is refused by name (exit 4 at the end,
    the others are archived); a game archived before whose log has changed is refused (exit 3).
    """
    month = month or current_month()
    if not MONTH.match(month):
        raise BadInput("--month", f"{month!r} is not YYYY-MM")
    store = FileStore(resolve_games_dir(games_option)) if games_option is not None else ctx.store
    folder = store.folder()
    if folder is not None and not folder.is_dir():
        raise BadInput("--games-dir", f"{folder} is not a directory")
    # a store that is not a directory is written out as files, one game at a time, for the workers
    with logs_as_files(store) as games:
        logs = sorted(games.glob("*.jsonl"))
        with progress(len(logs), "archiving") as advance:
            result = archive_games(
                logs,
                Path(target),
                month,
                on_game=advance,
                rederive_turns=rederive,
                jobs=jobs or os.cpu_count() or 1,
            )
    for name in result.unfinished:
        click.echo(f"skipped {name}: not finished (no game-ended yet)", err=True)
    for refusal in result.conflicts:
        click.echo(f"refused {refusal.game}: {refusal.reason}", err=True)
    for refusal in result.refused:
        click.echo(f"refused {refusal.game}: corrupt or tampered log: {refusal.reason}", err=True)
    click.echo(
        f"archived {len(result.archived)} game(s), {result.events} events into {target} (month {month}); "
        f"{len(result.already)} already archived, {len(result.unfinished)} unfinished, "
        f"{len(result.refused) + len(result.conflicts)} refused"
    )
    if result.exit_code:
        sys.exit(result.exit_code)


FORMATTERS: dict[str, Callable[[QueryResult], str]] = {
    "table": format_table,
    "csv": format_csv,
    "json": format_json,
}


#: The exit code of a query stopped by Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED_EXIT = 130


@click.command(context_settings={"ignore_unknown_options": False})
@click.argument("arguments", nargs=-1, required=True, metavar="[ARCHIVE] SQL")
@click.option(
    "--logs",
    metavar="DIR|URL",
    default=None,
    help="Query the *.jsonl logs of this directory, or the games of this store (file:DIR, "
    "postgresql://...), directly (no ARCHIVE): views events, dice, shots.",
)
@click.option("--format", "output", type=click.Choice(list(FORMATTERS)), default="table", show_default=True)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_LIMITS.timeout,
    show_default=True,
    help="Stop the query after this many seconds (0: no limit).",
)
@click.option(
    "--memory-limit",
    default=DEFAULT_LIMITS.memory,
    show_default=True,
    help="Most memory the query may use, e.g. 500MB, 8GB.",
)
@reports_errors
def query(
    arguments: tuple[str, ...], logs: str | None, output: str, timeout: float, memory_limit: str
) -> None:
    """Run read-only SQL over an archive's tables (games, events, dice, shots, collisions, damage,
    fires, ships, rulings). Statements that would change anything are refused (exit 2); Ctrl-C
    stops a query (exit 130). Several statements (separated by ;) run in turn and only the last
    one's rows are printed."""
    # Ctrl-C at any moment, from start-up (held while the program loaded) to the last line printed,
    # ends here, once the query's thread has stopped (replays.analytics.query.run_stoppable)
    with interrupts.stops_with(INTERRUPTED_EXIT, "query interrupted (Ctrl-C)"):
        limits = QueryLimits(timeout=timeout, memory=memory_limit.strip())
        try:
            if logs is not None:
                if len(arguments) != 1:
                    raise BadInput("SQL", "with --logs give the SQL only, no ARCHIVE")
                result = _query_store_logs(logs, arguments[0], limits)
            else:
                if len(arguments) != 2:
                    raise BadInput(
                        "ARCHIVE", "give the archive directory and the SQL (or --logs DIR and SQL)"
                    )
                result = query_archive(Path(arguments[0]), arguments[1], limits)
        except QueryRefused as refused:
            # DuckDB's message spans lines (candidates, the statement with a caret under the fault):
            # each printed on a line of its own, escaped, indented alike so the caret stays in place
            first, *rest = refusal_text(refused).split("\n")
            click.echo(
                "\n".join([error_line(first), *(f"  {shown(line)}".rstrip() for line in rest)]), err=True
            )
            sys.exit(refused.exit_code)
        click.echo(FORMATTERS[output](result))


def _query_store_logs(logs: str, sql: str, limits: QueryLimits) -> QueryResult:
    """``query --logs``: a directory's logs as they are; another store's written out as files one
    game at a time (never all in memory) into a temporary directory the query may read."""
    if is_file_store_url(logs):
        store = open_games(logs, "--logs")
        folder = store.folder()
        assert folder is not None  # a file store's URL
        if not folder.exists():
            raise BadInput("--logs", f"{folder} does not exist")
        return query_logs(folder, sql, limits)
    store = open_games(logs, "--logs")
    try:
        with logs_as_files(store) as directory:
            return query_logs(directory, sql, limits)
    finally:
        store.close()


@click.command()
@click.argument("archive_dir", metavar="ARCHIVE", type=click.Path(file_okay=False))
@click.argument("name", type=click.Choice(list(REPORTS)))
@click.option("--svg", "svg", type=click.Path(dir_okay=False), default=None, help="Also write a bar chart.")
@click.option("--force", is_flag=True, help="Replace the --svg file if it exists.")
@pass_context
@reports_errors
def report(ctx: Context, archive_dir: str, name: str, svg: str | None, force: bool) -> None:
    """A built-in report: dice (chi-square), gunnery (against S3/S4/K odds), fire, fleets, rulings."""
    if svg is not None:
        check_output(Path(svg), "--svg", ctx.games_directory, force, SVG_SUFFIXES)
    built = build_report(Path(archive_dir), name)
    click.echo(render_text(built))
    if svg is not None:
        if built.chart is None:
            click.echo(f"no chart written: {built.empty or 'nothing to draw'}", err=True)
        else:
            chart = render_svg(built.chart)
            write_output(Path(svg), chart, "--svg", ctx.games_directory, force, SVG_SUFFIXES)
            click.echo(f"chart written to {svg}", err=True)


@click.command(name="simulate")
@click.option("--games", "count", type=click.IntRange(0), required=True, help="How many games.")
@click.option("--seed", required=True, help="Run seed: game i rolls with seed SEED-i.")
@click.option(
    "--to", "target", required=True, metavar="DIR|URL", help="Where the games go: a directory or a store URL."
)
@click.option("--ruleset", default="mortecouille", show_default=True, help="Only mortecouille has bots.")
@click.option("--budget", type=click.IntRange(0), default=DEFAULT_BUDGET, show_default=True)
@click.option("--max-turns", type=click.IntRange(1, 500), default=DEFAULT_MAX_TURNS, show_default=True)
@click.option(
    "--fleets",
    "fleets_option",
    default="random",
    show_default=True,
    metavar="random|demo|FILE",
    help="random: each side buys a random legal fleet, seeded by the game's seed; demo: the demo's "
    'two fleets; FILE: fixed fleets, JSON {"Anne": [{"kind": "red-small", "name": "Hope", '
    '"options": ["siren"]}], "Bart": [...]} (README).',
)
@reports_errors
def simulate_command(
    count: int, seed: str, target: str, ruleset: str, budget: int, max_turns: int, fleets_option: str
) -> None:
    """The built-in bots play COUNT complete seeded games, each a normal verifiable log."""
    fleets: Fleets = "random"
    if fleets_option == "demo":
        fleets = "demo"
    elif fleets_option != "random":
        fleets = load_fleets(Path(fleets_option))
    started = time.perf_counter()
    store = open_games(target, "--to")
    try:
        with progress(count, "simulating") as advance:
            logs = simulate(
                store,
                count,
                seed,
                budget=budget,
                max_turns=max_turns,
                ruleset=ruleset,
                fleets=fleets,
                on_game=advance,
            )
    finally:
        store.close()
    elapsed = time.perf_counter() - started
    rate = f" ({len(logs) / elapsed:.1f} games/s)" if elapsed > 0 and logs else ""
    click.echo(f"simulated {len(logs)} game(s) into {target}{rate}")


COMMANDS: tuple[click.Command, ...] = (archive, query, report, simulate_command)
