"""Reading a file log as a stream, its chain checked a block at a time (:class:`CheckedStream`)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Generator, Iterator

from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import (
    LogError,
    TornTail,
    check_lines,
    decode_block,
)
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.chain import Head, check_head
from mortecouille.events.storage.file_handles import LogFiles

_log = get_logger("mortecouille")


STREAM_CHUNK_BYTES = 1 << 20


class CheckedStream:
    """A file log's events, yielded only once their lines' chain is checked: the checks of
    :meth:`GameLog.verify_chain` (canonical form, seq, prev and hash of every line, then the tail
    against the head anchor, raising the same LogError at the same line) in the same pass as the
    typed decoding, a block at a time, so the log is read and decoded once and never held whole
    (``verify``).

    The head anchor is read and the log's end settled (:meth:`GameLog.settled_size`) when the
    stream is made: :meth:`chunks` and the iteration both stop there. A line that does not decode
    to an event does not stop the chain check: the events stop there (nothing after it is
    yielded), the error is kept in :attr:`decode_error`, and the chain is checked to the end, as
    the chain check comes first. :attr:`lines` is the number of lines once the iteration ended."""

    def __init__(self, log: LogFiles) -> None:
        self.log = log
        try:
            self.head: Head | LogError | None = log.read_head()
        except LogError as error:  # raised after the chain, whose errors come first
            self.head = error
        self.end = log.settled_size()
        self.lines = 0
        self.decode_error: LogError | None = None

    def chunks(self) -> Iterator[bytes]:
        """The log up to :attr:`end` in chunks of whole lines (a torn tail left out, unchecked): for
        a look at its bytes before the checked pass (``verify``'s dice and seed)."""
        fd = self.log._open_for_reading()
        try:
            yield from self._whole_chunks(fd)
        finally:
            os.close(fd)

    def _whole_chunks(self, fd: int) -> Generator[bytes, None, bytes]:
        """:meth:`chunks` read from ``fd``; returns what is left after the last newline (nothing
        unless the log was cut while read).

        What follows a chunk's last newline (a line the chunk cut) is read again at the start of
        the next chunk rather than carried over and copied in front of it (a copy of every chunk,
        made for each pass over the log:); only a line longer than a chunk is carried,
        until its newline comes."""
        position, carry, tail = 0, b"", b""
        while position < self.end:
            chunk = os.pread(fd, min(STREAM_CHUNK_BYTES, self.end - position), position)
            if not chunk:
                break
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            if not cut:  # one line longer than a chunk: keep reading it
                carry = data
                position += len(chunk)
                continue
            # the bytes after the newline: read again from there next (what is left if the log
            # was cut while read)
            tail = data[cut:]
            carry = b""
            position += len(chunk) - len(tail)
            yield data[:cut] if tail else data
        return carry or tail

    def __iter__(self) -> Iterator[Event]:
        return itertools.chain.from_iterable(self.batches())

    def batches(self) -> Iterator[list[Event]]:
        """The events a block at a time (what iterating gives, without a step per event)."""
        head = self.head
        anchored_seq = head.seq if isinstance(head, Head) else -1
        prev = GENESIS_HASH
        at_anchor: str | None = None
        crashed: Exception | None = None
        count = 0
        for block, lines in self.line_blocks():
            events: list[Event] | None = None
            if self.decode_error is None and crashed is None:
                try:
                    events = decode_block(block, count + 1)
                except LogError as error:
                    self.decode_error = error
                except Exception as error:  # noqa: BLE001 - raised once the chain is checked, as before
                    crashed = error
            prev, found = check_lines(lines, events, count, prev, anchored_seq, block=block)
            if found is not None:
                at_anchor = found
            count += len(lines)
            if events is not None:
                yield events
        if isinstance(head, LogError):
            raise head
        check_head(head, count, at_anchor)
        self.lines = count
        if crashed is not None:
            raise crashed

    def line_blocks(self) -> Iterator[tuple[bytes, list[bytes]]]:
        """The log up to :attr:`end` as blocks of complete lines with their lines (newlines cut),
        as :meth:`GameLog.stream_lines` reads it: a torn tail raises :class:`TornTail` first, a
        line is never cut between blocks. The lines are counted as they are split, not by counting
        each block's newlines first (a pass over every byte of the log:)."""
        fd = self.log._open_for_reading()
        try:
            if self.end > 0 and os.pread(fd, 1, self.end - 1) != b"\n":
                raise _torn_tail_at(fd, 0, 0, self.end)
            chunks = self._whole_chunks(fd)
            count = 0
            while True:
                try:
                    complete = next(chunks)
                except StopIteration as ended:
                    left: bytes = ended.value
                    break
                lines = complete.split(b"\n")
                lines.pop()  # the empty piece after the block's last newline
                yield complete, lines
                count += len(lines)
            if left:  # cut while read (only repair cuts, and only a torn tail)
                raise TornTail(line=count + 1, fragment=left)
        finally:
            os.close(fd)


def _torn_tail_at(fd: int, offset: int, first_seq: int, end: int) -> TornTail:
    """The :class:`TornTail` of a log whose bytes from ``offset`` (the line of ``first_seq``) to
    ``end`` do not end with a newline: its line number counted a chunk at a time."""
    lines, position, last_newline = 0, offset, offset - 1
    while position < end:
        block = os.pread(fd, min(STREAM_CHUNK_BYTES, end - position), position)
        if not block:
            break
        lines += block.count(b"\n")
        found = block.rfind(b"\n")
        if found >= 0:
            last_newline = position + found
        position += len(block)
    fragment = os.pread(fd, end - last_newline - 1, last_newline + 1)
    return TornTail(line=first_seq + lines + 1, fragment=fragment)


