"""What the command line says and does without click: the lines its errors print and the logging
its options ask for.

Both ways a command line is run share these: click's (:mod:`mortecouille.cli.main`, every
command) and the launcher's own for a plain ``state GAME [--json]``
(:mod:`mortecouille.cli.launch`, which never imports click: the CLI's start-up). So the
two cannot drift apart: the same errors end the same way, with the same line and exit code.
"""

from __future__ import annotations

from typing import Final

from mortecouille.core.errors import MortecouilleError
from mortecouille.core.limits import shown
from mortecouille.events import house_log
from mortecouille.events.codec import LogError
from mortecouille.events.storage.errors import Conflict, GameNotFound, StoreError, Unwritable

#: The engine's deliberate errors: each ends a command with its message and its own exit code
#: (``exit_code``, else 1), never a traceback.
DELIBERATE_ERRORS: Final = (MortecouilleError, LogError, Conflict, GameNotFound, Unwritable, StoreError)


def error_line(message: str) -> str:
    """The one line (on stderr) that ends a command in error: escaped, so a name in it can neither
    drive the terminal nor start a line of its own."""
    return f"error: {shown(message)}"


def exit_code_of(error: Exception) -> int:
    """The exit code a deliberate error documents (2 bad input or refusal, 3 conflict, 4 corrupt)."""
    code: int = getattr(error, "exit_code", 1)
    return code


def system_refusal(error: OSError) -> str:
    """The message for an error of the system (a file it would not read or write): exit 1."""
    where = f": {error.filename}" if error.filename else ""
    return f"the system refused: {error.strerror or error}{where}"


def unexpected(error: Exception) -> str:
    """The message for any other error, a bug: exit 1, its traceback only in the debug log (-vv)."""
    return f"unexpected {type(error).__name__}: {error} (a bug: please report it with the command)"


def configure_logging(verbose: int, log_json: bool) -> None:
    """``-v``/``-vv`` and ``--log-json``, applied to structlog when something is first logged
    (:mod:`mortecouille.events.house_log`: a command that logs nothing never imports it)."""
    # the stdlib's levels (logging.WARNING 30, INFO 20, DEBUG 10) spelt out: importing logging
    # (and its traceback, string) for three numbers cost every command a few ms
    level = 30 if verbose == 0 else 20 if verbose == 1 else 10
    house_log.configure(level, log_json)
