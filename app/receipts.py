"""Receipts and head codes for the shells: one call each for the CLI and
the game service.

* ``receipt_for(outcome, salt)``: the receipt of a player's accepted submission, salted by the
  submitter (the player page sends its own salt; the CLI makes one with :func:`new_receipt_salt`);
* ``head_code(events, seq)`` and ``turn_head_code(events, seq)``: the code read aloud after a turn;
* a receipts file (``{"receipts": [...]}``), read and appended to.

The format, the commitment and the checks (``verify_receipts``, ``check_head_code``) are
:mod:`mortecouille.replays.reading.receipts`: they read logs, so ``verify`` uses them too.
docs/service.md, "Receipts and head codes", is the contract.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import msgspec

from mortecouille.app.commands import Outcome
from mortecouille.core.errors import BadInput
from mortecouille.events.base import Event
from mortecouille.events.codec import NONCE_FIELD
from mortecouille.events.game import TurnEnded
from mortecouille.replays.reading.receipts import (
    HeadCode,
    Malformed,
    Receipt,
    ReceiptsFileError,
    check_salt,
    commitment,
    event_line,
    kind_of,
    parse_receipts,
    shown_code,
    stretched_code,
    subject_of,
)
from mortecouille.replays.reading.receipts import head_code as head_code_of_hashes


def new_receipt_salt() -> str:
    """A fresh random salt for a receipt's commitment (16 bytes, hex), as the CLI chooses one."""
    import secrets  # only where a salt is drawn: not imported by every command

    return secrets.token_hex(16)


def is_submission(events: Sequence[Event]) -> bool:
    """Whether ``events`` (one command's append) are a player's submission, which gets a receipt."""
    return bool(events) and kind_of(event_line(events[0])) is not None


def receipt_for(outcome: Outcome, salt: str) -> Receipt:
    """The receipt of the submission ``outcome`` appended (events stamped, so with their seq and
    hash, and the ``nonce`` of each line), salted with the submitter's ``salt``. A salt no
    receipt may hold is refused naming the field ``salt``; events that are not a player's
    submission are a programming error."""
    problem = check_salt(salt)
    if problem is not None:
        raise BadInput("salt", "{problem}", problem=problem)
    events = outcome.events
    if not is_submission(events):
        raise ValueError(f"not a player's submission: {[type(e).__name__ for e in events]}")
    lines = [event_line(event) for event in events]
    for index, line in enumerate(lines):
        # each line as written: its nonce is part of the submission a receipt commits to
        nonce = outcome.nonce_of(index)
        if nonce is not None:
            line[NONCE_FIELD] = nonce
    kind = kind_of(lines[0])
    assert kind is not None  # is_submission
    return Receipt(
        game=outcome.state.game,
        seq=events[0].seq,
        last=events[-1].seq,
        kind=kind,
        subject=subject_of(lines[0]),
        commitment=commitment(salt, lines),
        salt=salt,
        head=events[-1].hash,
    )


# --- head codes -------------------------------------------------------------------------------


def head_code(events: Sequence[Event], seq: int | None = None) -> HeadCode:
    """The head code at ``seq`` (default: the log's head, its last event)."""
    return head_code_of_hashes([event.hash for event in events], seq)


def turn_head_code(events: Sequence[Event], seq: int | None = None) -> tuple[int, HeadCode] | None:
    """The last turn resolved among ``events`` by ``seq`` (default: all of them) and the head code
    at its ``turn-ended``: what the table reads aloud after that turn. None before any turn is
    resolved. ``events`` may be a whole log or one command's append (``resolve``'s).

    A turn's end, not any seq, because everything up to it is public by then (the turn's orders
    and tokens revealed, every fleet sealed): a code taken where an unnonced secret line is the
    head would give bits of a hash a guess of that secret could be checked against."""
    for event in reversed(events):
        if isinstance(event, TurnEnded) and (seq is None or event.seq <= seq):
            return event.turn, HeadCode(event.seq, shown_code(stretched_code(event.hash)))
    return None


# --- receipts files ---------------------------------------------------------------------------


def read_receipts_file(path: Path, option: str = "receipts") -> list[Receipt | Malformed]:
    """The receipts of a file (malformed entries named, not refused: ``verify`` reports them);
    a file that cannot be read or is not a receipts file is refused naming ``option``."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise BadInput(option, "cannot read {path}: {strerror}", path=path, strerror=error.strerror) from None
    try:
        return parse_receipts(data)
    except ReceiptsFileError as error:
        raise BadInput(option, "{path}: {error}", path=path, error=str(error)) from None


def check_receipts_file(path: Path, option: str = "receipts") -> None:
    """Refuse, before a command runs, a file its receipt could not be appended to: one that exists
    and is not a receipts file, or whose folder does not exist."""
    if path.exists():
        read_receipts_file(path, option)
    elif not path.parent.is_dir():
        raise BadInput(option, "{parent} is not a folder", parent=path.parent)


def append_receipt(path: Path, receipt: Receipt, option: str = "receipts") -> None:
    """Add ``receipt`` to the receipts file at ``path`` (created if missing), replacing the file
    whole (a temporary file renamed over it), so a crash leaves the old file or the new one."""
    entries: list[object] = []
    if path.exists():
        read_receipts_file(path, option)  # refuses anything but a receipts file
        document = msgspec.json.decode(path.read_bytes())
        entries = list(document["receipts"] if isinstance(document, dict) else document)
    entries.append(msgspec.to_builtins(receipt))
    body = b",\n".join(msgspec.json.encode(entry) for entry in entries)
    temporary = path.with_name(f".{path.name}.new")
    try:
        temporary.write_bytes(b'{"receipts": [\n' + body + b"\n]}\n")
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise BadInput(
            option, "cannot write {path}: {strerror}", path=path, strerror=error.strerror
        ) from None
