"""The ``mortecouille`` program, its script and ``python -m mortecouille``: a plain
``state GAME`` or ``state GAME --json`` is run here, without click; every other command line goes
to click's group (:mod:`mortecouille.cli.main`), whose parsing, help and errors are the reference.

Why (the CLI's start-up): importing click (its modules, and ``gettext`` and ``locale``
for its messages), building the group and parsing cost about 40 of the 300 million instructions
``state`` ran on a 1,000-event game, more than its log work; and ``state`` is what a referee runs
most, between every two commands.

Only the exact shapes of :func:`plain_state` are taken: the subcommand ``state``, a game name not
starting with ``-``, then ``--json`` or nothing, on an stdout and stderr click writes to as they
are (:func:`streams_written_as_they_are`). Anything else (a global option, ``--help``, another
argument, shell completion, an ASCII terminal) goes to click unchanged. What ``state`` prints
(:mod:`mortecouille.cli.state_output`) and how each error ends (:mod:`mortecouille.cli.plain`)
are shared with the click command, and tests/test_launch.py runs both ways on the same games,
good and bad, comparing output, errors and exit codes.
"""

from __future__ import annotations

import codecs
import errno
import gc
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

#: click's shell completion variable for the program ``mortecouille`` (see click's
#: ``_main_shell_completion``): when set, the command line is completed, not run.
COMPLETION_VARIABLE = "_MORTECOUILLE_COMPLETE"


#: A ``state`` command line the launcher runs itself: the game's name, and whether ``--json``.
#: (A plain tuple, not a NamedTuple: making one compiles code, which every ``state`` would pay.)
PlainState = tuple[str, bool]


def plain_state(args: Sequence[str], environ: Mapping[str, str]) -> PlainState | None:
    """``args`` (the command line after the program) as a plain ``state GAME [--json]``, or None
    for any other command line, which click runs."""
    if environ.get(COMPLETION_VARIABLE):
        return None
    if len(args) not in (2, 3) or args[0] != "state" or args[1].startswith("-"):
        return None
    if len(args) == 3 and args[2] != "--json":
        return None
    return args[1], len(args) == 3


def streams_written_as_they_are(streams: Sequence[object]) -> bool:
    """Whether click would write to each of ``streams`` (stdout, stderr) as it is: a stream with an
    encoding other than ASCII. Click replaces a missing stream by nothing and re-wraps an ASCII one
    as UTF-8 (``click._compat``); the launcher leaves those command lines to click."""
    for stream in streams:
        encoding = getattr(stream, "encoding", None)
        if stream is None or not isinstance(encoding, str) or not encoding:
            return False
        try:
            if codecs.lookup(encoding).name == "ascii":
                return False
        except LookupError:
            pass  # click writes to a stream of an encoding it cannot look up as it is
    return True


def main() -> None:
    """Run the command line of this process (``sys.argv``) and exit with its code."""
    plain = None
    if streams_written_as_they_are([sys.stdout, sys.stderr]):
        plain = plain_state(sys.argv[1:], os.environ)
    if plain is None:
        from mortecouille.cli import interrupts

        interrupts.hold()  # a Ctrl-C while the modules load is the command's to take (cli.interrupts)
        from mortecouille.cli.main import main as click_main

        click_main()
        return
    sys.exit(run_plain_state(*plain))


def run_plain_state(game: str, as_json: bool) -> int:
    """``state`` as click's command runs it (with no option given): the same lines on stdout, the
    same error line on stderr and the same exit code, every error ending as there (the group's
    ``RefereeGroup.invoke`` and click's ``main``)."""
    # as in cli.main: the collector waits while the modules' long-lived objects are made, which are
    # then frozen (never walked again), and runs as before for what the command allocates
    collecting = gc.isenabled()
    gc.disable()
    try:
        from mortecouille.app.games import open_games, store_source, store_url
        from mortecouille.cli.plain import (
            DELIBERATE_ERRORS,
            configure_logging,
            error_line,
            exit_code_of,
            system_refusal,
            unexpected,
        )
        from mortecouille.cli.refusals import refusal_text
        from mortecouille.cli.state_output import state_lines
        from mortecouille.events.house_log import get_logger
        from mortecouille.events.storage.contract import GameStore
    finally:
        gc.freeze()
        if collecting:
            gc.enable()

    configure_logging(0, False)
    store: GameStore | None = None
    try:
        try:
            try:
                store = open_games(store_url(None, None), store_source(None, None))
                lines = state_lines(store, game, as_json)
            except DELIBERATE_ERRORS as error:
                return _error(error_line(refusal_text(error)), exit_code_of(error))
            for line in lines:
                _write(sys.stdout, line)
            return 0
        finally:
            if store is not None:
                store.close()
    except OSError as error:
        if error.errno == errno.EPIPE:
            # ``state g | head -1``: click's main leaves quietly with 1, and so does this
            _quiet_stdout()
            return 1
        get_logger().debug("system error", exc_info=True)
        return _error(error_line(system_refusal(error)), 1)
    except KeyboardInterrupt:
        _write(sys.stderr, "")
        _write(sys.stderr, "Aborted!")
        return 1
    except Exception as error:
        get_logger().debug("unexpected error", exc_info=True)
        return _error(error_line(unexpected(error)), 1)


def _write(stream: TextIO, line: str) -> None:
    """``line`` and a newline on ``stream``, flushed (as ``click.echo``)."""
    stream.write(line + "\n")
    stream.flush()


def _error(line: str, code: int) -> int:
    _write(sys.stderr, line)
    return code


def _quiet_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush finds no closed pipe."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)
