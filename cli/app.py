"""The click group, its shared options, and how errors become exit codes.

Exit codes: 0 ok, 2 bad input or a rule refusal (the message names the field
or rule ID), 3 conflict or lock, 4 corrupt or tampered log.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
import msgspec
import structlog

from mortecouille.app.session import game_log, run_command
from mortecouille.app.session import games_dir as resolve_games_dir
from mortecouille.core.errors import MortecouilleError
from mortecouille.core.game import Command
from mortecouille.core.state import GameState
from mortecouille.events.codec import LogError
from mortecouille.events.store import Conflict, GameNotFound
from mortecouille.replays.reading.describe import describe_event

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def reports_errors(fn: F) -> F:
    """Turn the engine's deliberate errors into a message and the documented exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (MortecouilleError, LogError, Conflict, GameNotFound) as error:
            fail(str(error), getattr(error, "exit_code", 1))

    return wrapper  # type: ignore[return-value]


def configure_logging(verbose: int, log_json: bool) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    renderer: Any = (
        structlog.processors.JSONRenderer() if log_json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


class Context(msgspec.Struct):
    games: Path


pass_context = click.make_pass_decorator(Context)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--games-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Where game logs live (default $MORTECOUILLE_GAMES or ./games).",
)
@click.option("-v", "--verbose", count=True, help="More detail on stderr (-vv for debug).")
@click.option("--log-json", is_flag=True, help="Structured JSON log lines on stderr.")
@click.pass_context
def cli(ctx: click.Context, games_dir: str | None, verbose: int, log_json: bool) -> None:
    """Mortecouille: an event-sourced referee for tabletop naval battles."""
    configure_logging(verbose, log_json)
    ctx.obj = Context(games=resolve_games_dir(games_dir))


def run_and_describe(
    ctx: Context, game: str, make_command: Callable[[GameState], Command], expect_seq: int | None
) -> None:
    """Run one command on GAME and print each event it appended."""
    appended, _ = run_command(game_log(ctx.games, game), make_command, expected_seq=expect_seq)
    for event in appended:
        click.echo(describe_event(event))
