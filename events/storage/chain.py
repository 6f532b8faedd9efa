"""The one chain check every store and ``verify`` use: each line canonical, its seq, prev and
hash chained from the genesis hash, then the tail against the head the store vouches for."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from mortecouille.events.base import GENESIS_HASH
from mortecouille.events.codec import LogError, checked_body


class Head(msgspec.Struct, frozen=True):
    """The anchor of a log's tail: the seq and hash of its last line when the store last wrote it."""

    seq: int
    hash: str


#: Called with each checked line's seq, bytes and decoded body (``verify`` gathers its dice so).
OnLine = Callable[[int, bytes, dict[str, Any]], None]


def check_head(head: Head | None, lines: int, at_anchor: str | None, anchor: str = "head anchor") -> None:
    """Refuse a log of ``lines`` lines shorter than its ``head``, or whose line at the head's seq
    has another hash (``at_anchor``); ``anchor`` names the head in the message."""
    if head is None:
        return
    if lines <= head.seq:
        raise LogError(
            f"the log ends at seq {lines - 1} but its {anchor} says seq {head.seq}: "
            f"seq {lines} to {head.seq} were removed",
            line=lines + 1,
            seq=lines,
        )
    if at_anchor != head.hash:
        raise LogError(
            f"seq {head.seq} has hash {str(at_anchor)[:12]} but the {anchor} says "
            f"{head.hash[:12]}: the log was rewritten",
            line=head.seq + 1,
            seq=head.seq,
        )


def check_chain(
    lines: Iterable[bytes],
    head: Head | LogError | None,
    on_line: OnLine | None = None,
    anchor: str = "head anchor",
) -> int:
    """Check ``lines`` (without their newlines) from seq 0, then the tail against ``head`` (a
    LogError: the head could not be read, raised after the chain's own errors); return the number
    of lines or raise LogError naming the first bad seq."""
    anchored_seq = head.seq if isinstance(head, Head) else -1
    prev = GENESIS_HASH
    at_anchor: str | None = None
    seq = -1
    for seq, line in enumerate(lines):
        body = checked_body(line, seq + 1, seq, prev)
        prev = body["hash"]
        if seq == anchored_seq:
            at_anchor = prev
        if on_line is not None:
            on_line(seq, line, body)
    if isinstance(head, LogError):
        raise head
    check_head(head, seq + 1, at_anchor, anchor)
    return seq + 1


def whole_lines(data: bytes) -> list[bytes]:
    """The lines of a log's bytes; a last line without its newline (a torn tail) is a LogError."""
    if data and not data.endswith(b"\n"):
        raise LogError("the bytes given end without a newline", line=data.count(b"\n") + 1)
    return data.splitlines()
