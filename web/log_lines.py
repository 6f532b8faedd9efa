"""The log's lines as the store holds them, for the chain a page witnesses (docs/service.md,
"Phones as witnesses"): a readable event is sent with its exact line, for the page to hash it
again, and a line's nonce says whether its hash may be sent (``app.view.chain_links``).

Decoded events do not keep their lines, so the service keeps, per game, the lines it has read,
and reads only the ones appended since (a file's bytes from where it stopped; a PostgreSQL game's
rows from the next seq), shared by every view, answer and stream of the game. Nothing kept is
trusted: a line is handed out only when it holds the hash of the event asked about; any other
line (a log cut by ``repair``, or rewritten) makes the game's lines be read again from the start,
and a line still not matching is not handed out (the event is then sent without its line).
"""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Hashable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from mortecouille.events.base import Event
from mortecouille.events.storage.contract import EventStore

#: How many games' lines a service keeps (the least recently used are dropped first).
KEPT_GAMES = 64


@runtime_checkable
class _ReadsLines(Protocol):
    """A log that gives its checked lines from a seq on (the PostgreSQL store)."""

    def lines_from(self, seq: int) -> Iterator[tuple[int, bytes]]: ...


class _Kept:
    """One game's lines read so far, and where its file's next unread byte is (files only)."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.offset = 0
        self.guard = threading.Lock()


class LogLines:
    """Each game's lines, read once and kept (see the module docstring)."""

    def __init__(self, kept_games: int = KEPT_GAMES) -> None:
        self._games: collections.OrderedDict[Hashable, _Kept] = collections.OrderedDict()
        self._kept_games = kept_games
        self._guard = threading.Lock()

    def lines(self, log_: EventStore, events: Sequence[Event]) -> list[bytes | None]:
        """The line of each of ``events`` (one per event; None for one not found as it is)."""
        kept = self._kept(log_)
        with kept.guard:
            return [self._line(log_, kept, event) for event in events]

    def line(self, log_: EventStore, event: Event) -> bytes | None:
        """The line of ``event``, None when the log no longer holds it as it is."""
        kept = self._kept(log_)
        with kept.guard:
            return self._line(log_, kept, event)

    def _kept(self, log_: EventStore) -> _Kept:
        key = _where(log_)
        with self._guard:
            kept = self._games.get(key)
            if kept is None:
                kept = self._games[key] = _Kept()
                while len(self._games) > self._kept_games:
                    self._games.popitem(last=False)
            else:
                self._games.move_to_end(key)
            return kept

    def _line(self, log_: EventStore, kept: _Kept, event: Event) -> bytes | None:
        for fresh in (False, True):
            if fresh:  # the log is not what was read: read it again from its start
                kept.lines, kept.offset = [], 0
            if event.seq >= len(kept.lines):
                _read_more(log_, kept)
            if event.seq < len(kept.lines) and _holds_hash(kept.lines[event.seq], event.hash):
                return kept.lines[event.seq]
        return None


def _holds_hash(line: bytes, digest: str) -> bool:
    """Whether ``line`` is the line whose hash is ``digest`` (its top-level ``hash`` member: in a
    canonical line those bytes are a key, a quote inside a string being escaped)."""
    return bool(digest) and b'"hash":"' + digest.encode("ascii") + b'"' in line


def _read_more(log_: EventStore, kept: _Kept) -> None:
    """Add the lines appended since ``kept`` was last read (complete lines only)."""
    files = log_.as_files()
    if files is not None:
        try:
            fd = os.open(files.path, os.O_RDONLY)
        except OSError:
            return
        try:
            size = os.fstat(fd).st_size
            if size < kept.offset:  # shorter than read before: cut; read again by the caller
                return
            data = os.pread(fd, size - kept.offset, kept.offset)
        finally:
            os.close(fd)
        complete = data[: data.rfind(b"\n") + 1]
        kept.lines.extend(complete.splitlines())
        kept.offset += len(complete)
    elif isinstance(log_, _ReadsLines):
        for seq, line in log_.lines_from(len(kept.lines)):
            if seq != len(kept.lines):
                return
            kept.lines.append(line)
    else:
        kept.lines = log_.read_bytes().splitlines()


def _where(log_: EventStore) -> Hashable:
    """The key of a game's lines: its file, or its store and name."""
    files = log_.as_files()
    if files is not None:
        return str(files.path)
    store = getattr(log_, "store", None)
    return (getattr(store, "dsn", None), getattr(store, "schema", None), log_.name)
