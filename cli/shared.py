"""What every CLI command shares: the games context, printing, and how errors become exit codes.

The click group itself and its list of commands are in mortecouille.cli.main.

Exit codes: 0 ok, 2 bad input or a rule refusal (the message names the field
or rule ID), 3 conflict or lock, 4 corrupt or tampered log.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
import msgspec
import structlog

from mortecouille.core.errors import MortecouilleError
from mortecouille.core.limits import shown
from mortecouille.events.codec import LogError
from mortecouille.events.store import Conflict, GameNotFound, Unwritable

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {shown(message)}", err=True)
    sys.exit(code)


def reports_errors(fn: F) -> F:
    """Turn the engine's deliberate errors into a message and the documented exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (MortecouilleError, LogError, Conflict, GameNotFound, Unwritable) as error:
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


def echo_lines(lines: Iterable[str]) -> None:
    """Print what the application described, one line at a time: each escaped (names and texts
    from a log may be old or forged), so none drives the terminal or starts a line of its own."""
    for line in lines:
        click.echo(shown(line))


def echo_text(text: str) -> None:
    """Print a text of several lines (no styles), each line escaped as ``echo_lines`` does."""
    echo_lines(text.split("\n"))
