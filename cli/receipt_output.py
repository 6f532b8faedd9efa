"""Receipts on the command line: a referee submitting for a player prints the
player's receipt, and with ``--receipts FILE`` keeps it in the player's receipts file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from mortecouille.app.commands import Outcome
from mortecouille.app.receipts import append_receipt, check_receipts_file, new_receipt_salt, receipt_for
from mortecouille.cli.shared import echo_lines
from mortecouille.core.errors import BadInput

F = TypeVar("F", bound=Callable[..., Any])


def _checked_file(_: click.Context, __: click.Parameter, value: Path | None) -> Path | None:
    """Refuse, before the command runs, a file its receipt could not be added to: the submission
    is not appended only to find its receipt cannot be kept."""
    if value is not None:
        try:
            check_receipts_file(value)
        except BadInput as error:
            raise click.BadParameter(error.message) from None
    return value


def receipts_option(command: F) -> F:
    """``--receipts FILE`` on a submitting command."""
    return click.option(
        "--receipts",
        "receipts_file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        callback=_checked_file,
        help="Also add the receipt to this receipts file (created if missing), for `verify --receipts`.",
    )(command)


def echo_receipt(outcome: Outcome, receipts_file: Path | None) -> None:
    """Print the receipt of the submission ``outcome`` appended (salted afresh), one JSON line, and
    add it to ``receipts_file`` when one is given."""
    receipt = receipt_for(outcome, new_receipt_salt())
    echo_lines([f"receipt: {receipt.to_json()}"])
    if receipts_file is not None:
        append_receipt(receipts_file, receipt)
