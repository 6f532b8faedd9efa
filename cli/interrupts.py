"""Ctrl-C, from the moment the program starts until its command ends.

Python raises KeyboardInterrupt wherever the main thread is when SIGINT comes, in the middle of an
import too (a traceback, or click's "Aborted!" for a command whose own handling has not begun).
So while the program loads, its modules and then its command's, a Ctrl-C is held (:func:`hold`,
from the launcher) and the command says what it means: the group hands it to most commands as
Python would (:func:`release`: click's "Aborted!", exit 1); ``query`` takes it itself
(:func:`stops_with`: exit 130), a Ctrl-C held while it loaded included.

Only the main thread sets signal handlers; elsewhere (a command run on another thread) these leave
Ctrl-C as it is.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import NoReturn

_held = False


def _hold(signum: int, frame: FrameType | None) -> None:
    global _held
    _held = True


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def hold() -> None:
    """From here on a Ctrl-C is held, not raised, until :func:`release` or :func:`stops_with`."""
    if _on_main_thread():
        signal.signal(signal.SIGINT, _hold)


def release() -> None:
    """Ctrl-C as Python takes it (KeyboardInterrupt) from here on; raised now for one held."""
    global _held
    if not _on_main_thread() or signal.getsignal(signal.SIGINT) is not _hold:
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if _held:
        _held = False
        raise KeyboardInterrupt


@contextmanager
def stops_with(code: int, message: str) -> Iterator[None]:
    """Within the block the first Ctrl-C (or one held since start-up) raises KeyboardInterrupt;
    once it is out of the block, ``message`` goes to stderr and the process exits with ``code``.
    A further Ctrl-C, while the block winds down, ends the process at once with ``code`` too."""
    global _held
    if not _on_main_thread():
        try:
            yield
        except KeyboardInterrupt:
            _leave(code, message)
        return
    pressed = False
    said = False

    def on_ctrl_c(signum: int, frame: FrameType | None) -> None:
        nonlocal pressed
        if not pressed:
            pressed = True
            raise KeyboardInterrupt
        # the user insists: nothing is written by this process, whatever is still winding down
        if not said:
            _say(message)
        os._exit(code)

    before = signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        if _held:
            _held = False
            pressed = True
            raise KeyboardInterrupt
        yield
    except KeyboardInterrupt:
        pressed = True
        _say(message)
        said = True
        sys.exit(code)
    finally:
        signal.signal(signal.SIGINT, before)


def _say(message: str) -> None:
    import click

    from mortecouille.cli.plain import error_line

    click.echo(error_line(message), err=True)


def _leave(code: int, message: str) -> NoReturn:
    _say(message)
    sys.exit(code)
