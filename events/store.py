"""The append-only store: one JSON-lines file per game.

Guarantees, each tested in ``tests/test_store.py`` and ``tests/test_reliability*.py``:

* an append is durable when it returns (one write of all the command's lines,
  then one fsync, so a command's events land together or, after a crash, as a
  torn tail that is reported);
* one writer at a time (an exclusive ``flock`` held for the whole
  read-decide-append cycle of a command);
* optimistic concurrency: an append may state the ``seq`` its first event must
  get, and a stale one is refused with nothing written;
* a torn last line is reported on open, never dropped silently; only
  :meth:`GameLog.repair`, asked for explicitly, cuts it off.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import msgspec

from events.base import GENESIS_HASH, Event
from events.codec import LogError, TornTail, check_line, decode_lines, stamp


class Conflict(Exception):
    """The log moved on since the caller read it, or another writer holds it (exit 3)."""

    exit_code = 3


class GameNotFound(Exception):
    exit_code = 2


LOCK_TIMEOUT_SECONDS = 30.0


class GameLog:
    """One game's log file. Cheap to construct; every method opens what it needs."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def name(self) -> str:
        return self.path.stem

    def exists(self) -> bool:
        return self.path.exists()

    # ---------------------------------------------------------------- reading

    def read_bytes(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            raise GameNotFound(f"game {self.name!r}: no log at {self.path}") from None

    def read(self) -> list[Event]:
        """Every event, typed. Raises TornTail or CorruptLine; never skips a line."""
        data = self.read_bytes()
        complete = _complete_part(data)
        return decode_lines(complete)

    def verify_chain(self) -> int:
        """Check every line's canonical form, seq, prev and hash; return the number of lines."""
        data = _complete_part(self.read_bytes())
        prev = GENESIS_HASH
        lines = data.splitlines()
        for number, line in enumerate(lines, 1):
            prev = check_line(line, number, number - 1, prev)
        return len(lines)

    # ---------------------------------------------------------------- writing

    def create(self, events: Sequence[Event]) -> list[Event]:
        """Start a new log with ``events``; refuses if the game already exists."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise Conflict(f"game {self.name!r} already exists at {self.path}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            stamped, payload = _stamp_all(events, 0, GENESIS_HASH)
            _write_all(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
        _fsync_dir(self.path.parent)
        return stamped

    @contextmanager
    def transaction(self, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[Transaction]:
        """Hold the writer lock while reading, deciding and appending."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            raise GameNotFound(f"game {self.name!r}: no log at {self.path}") from None
        try:
            _lock(fd, timeout, self.name)
            yield Transaction(self, fd)
        finally:
            os.close(fd)

    def append(self, events: Sequence[Event], expected_seq: int | None = None) -> list[Event]:
        """Append under the lock; see :meth:`Transaction.append`."""
        with self.transaction() as tx:
            return tx.append(events, expected_seq)

    def torn_tail(self) -> bytes:
        """The bytes after the last newline (empty when the log is whole)."""
        data = self.read_bytes()
        cut = data.rfind(b"\n") + 1
        return data[cut:]

    def repair(self) -> bytes:
        """Cut a torn last line off; return what was removed (empty if nothing was torn)."""
        with self.transaction() as tx:
            data = self.read_bytes()
            cut = data.rfind(b"\n") + 1
            removed = data[cut:]
            if removed:
                os.ftruncate(tx.fd, cut)
                os.fsync(tx.fd)
            return removed


class Transaction:
    """A locked log: read it, then append to it, with nobody writing in between."""

    def __init__(self, log: GameLog, fd: int) -> None:
        self.log = log
        self.fd = fd

    def read(self) -> list[Event]:
        return self.log.read()

    def append(self, events: Sequence[Event], expected_seq: int | None = None) -> list[Event]:
        """Stamp and write ``events`` with one write and one fsync.

        ``expected_seq`` is the seq the first new event must receive; if the log
        has moved on, :class:`Conflict` is raised and nothing is written.
        """
        next_seq, prev = _tail_position(self.fd, self.log.name)
        if expected_seq is not None and expected_seq != next_seq:
            raise Conflict(
                f"game {self.log.name!r}: expected seq {expected_seq} but the log is at "
                f"{next_seq}; someone else appended first. Nothing was written."
            )
        if not events:
            return []
        stamped, payload = _stamp_all(events, next_seq, prev)
        _write_all(self.fd, payload)
        os.fsync(self.fd)
        return stamped


def _complete_part(data: bytes) -> bytes:
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        raise TornTail(line=data.count(b"\n") + 1, fragment=data[cut:])
    return data


def _stamp_all(events: Sequence[Event], first_seq: int, prev: str) -> tuple[list[Event], bytes]:
    stamped: list[Event] = []
    lines: list[bytes] = []
    for offset, event in enumerate(events):
        done, line = stamp(event, first_seq + offset, prev)
        prev = done.hash
        stamped.append(done)
        lines.append(line)
    return stamped, b"\n".join(lines) + b"\n"


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _lock(fd: int, timeout: float, name: str) -> None:
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.EACCES):
                raise
        if time.monotonic() >= deadline:
            raise Conflict(f"game {name!r} is locked by another writer (waited {timeout:g} s)")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _tail_position(fd: int, name: str) -> tuple[int, str]:
    """The next seq and the last hash, read from the end of the file only."""
    size = os.fstat(fd).st_size
    if size == 0:
        return 0, GENESIS_HASH
    chunk = 4096
    buffer = b""
    position = size
    while True:
        start = max(0, position - chunk)
        buffer = os.pread(fd, position - start, start) + buffer
        position = start
        if not buffer.endswith(b"\n"):
            whole = os.pread(fd, size, 0)
            cut = whole.rfind(b"\n") + 1
            raise TornTail(line=whole.count(b"\n") + 1, fragment=whole[cut:])
        body_end = len(buffer) - 1
        line_start = buffer.rfind(b"\n", 0, body_end) + 1
        if line_start > 0 or position == 0:
            last = buffer[line_start:body_end]
            break
        chunk *= 2
    try:
        head = msgspec.json.decode(last, type=dict)
        seq, digest = int(head["seq"]), str(head["hash"])
    except (msgspec.DecodeError, KeyError, TypeError, ValueError):
        raise LogError(f"game {name!r}: the last line is not a valid event; run verify") from None
    return seq + 1, digest
