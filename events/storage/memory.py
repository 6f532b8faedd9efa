"""The in-memory store: the store contract kept in a process's memory, for scenarios, bots, tests
and benchmarks that play a game through the same write path without touching a disk.

Lines are stamped by the one codec (:func:`~mortecouille.events.codec.stamp_all`), so a game kept
here has the bytes and hashes the file store would write, and its chain checks the same way
(:mod:`mortecouille.events.storage.chain`). Nothing survives the process; one writer at a time
per game among its threads (a lock with a timeout, then Conflict)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import Extras, decode_lines, stamp_all
from mortecouille.events.storage.chain import Head, OnLine, check_chain, whole_lines
from mortecouille.events.storage.errors import Conflict, GameNotFound
from mortecouille.events.storage.file_io import LOCK_TIMEOUT_SECONDS

#: The URL a memory store gives itself (nothing to open: each store is its own).
MEMORY_URL = "memory:"


class MemoryStore:
    """Every game of one process's memory (a :class:`~mortecouille.events.storage.contract.GameStore`)."""

    url = MEMORY_URL

    def __init__(self) -> None:
        self._games: dict[str, MemoryLog] = {}
        self._lock = threading.Lock()

    def log(self, game: str) -> MemoryLog:
        with self._lock:
            found = self._games.get(game)
            if found is None:
                found = self._games[game] = MemoryLog(game)
            return found

    def folder(self) -> None:
        return None

    def names(self) -> list[str]:
        with self._lock:
            return sorted(name for name, log in self._games.items() if log.exists())

    def close(self) -> None:
        """Nothing to give back."""

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MemoryLog:
    """One game's log in memory: its canonical lines, its stamped events and its head."""

    def __init__(self, game: str) -> None:
        self._name = game
        #: the canonical lines, without their newlines (None: no game)
        self.lines: list[bytes] | None = None
        self._events: list[Event] = []
        self.head: Head | None = None
        self._writer = threading.Lock()
        self._secrets = MemorySecrets(self)

    @property
    def name(self) -> str:
        return self._name

    def exists(self) -> bool:
        return self.lines is not None

    def describe(self) -> str:
        return f"game {self._name!r} in memory"

    def as_files(self) -> None:
        return None

    def _lines(self) -> list[bytes]:
        if self.lines is None:
            raise GameNotFound(f"game {self._name!r}: not in this memory store")
        return self.lines

    def read(self) -> list[Event]:
        self._lines()
        return list(self._events)

    def events_from(self, seq: int) -> Iterator[Event]:
        self._lines()
        return iter(self._events[seq:])

    def lines_from(self, seq: int) -> Iterator[tuple[int, bytes]]:
        """Each line from ``seq`` on, with its seq (the service's idempotency index reads them)."""
        return enumerate(self._lines()[seq:], seq)

    def read_bytes(self) -> bytes:
        return b"".join(line + b"\n" for line in self._lines())

    def verify_chain(self, data: bytes | None = None, on_line: OnLine | None = None) -> int:
        lines = self._lines() if data is None else whole_lines(data)
        return check_chain(lines, self.head, on_line)

    def read_head(self) -> Head | None:
        return self.head

    def head_status(self, lines: int) -> str:
        return f"store head at seq {lines - 1} matches"

    def secrets(self) -> MemorySecrets:
        return self._secrets

    # ---------------------------------------------------------------- writing

    def create(self, events: Sequence[Event]) -> list[Event]:
        with self.creating() as creation:
            return creation.write(events)

    @contextmanager
    def creating(self) -> Iterator[MemoryCreation]:
        with self.transaction(LOCK_TIMEOUT_SECONDS):
            if self.lines is not None:
                raise Conflict(f"game {self._name!r} already exists in memory")
            creation = MemoryCreation(self)
            try:
                yield creation
            except BaseException:
                self._forget()
                raise
            if not creation.written:
                self._forget()

    def _forget(self) -> None:
        self.lines, self._events, self.head = None, [], None
        self._secrets.kept.clear()

    def import_lines(self, data: bytes, secrets: Mapping[str, bytes] | None = None) -> int:
        """Create the game from a written log's exact bytes, checked first; Conflict if it exists."""
        lines = whole_lines(data)
        check_chain(lines, None)
        events = decode_lines(data)  # an unknown type or a bad field is refused here
        with self.creating() as creation:
            self._secrets.kept.update(secrets or {})
            creation.written = True
            self._put(lines, events)
        return len(lines)

    def _put(self, lines: list[bytes], events: Sequence[Event]) -> None:
        if self.lines is None:
            self.lines = []
        self.lines.extend(lines)
        self._events.extend(events)
        if events:
            self.head = Head(events[-1].seq, events[-1].hash)

    @contextmanager
    def transaction(self, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[MemoryTransaction]:
        if not self._writer.acquire(timeout=max(timeout, 0)):
            raise Conflict(f"game {self._name!r} is locked by another writer (waited {timeout:g} s)")
        try:
            yield MemoryTransaction(self)
        finally:
            self._writer.release()

    def append(self, events: Sequence[Event], expected_seq: int | None = None) -> list[Event]:
        with self.transaction() as tx:
            return tx.append(events, expected_seq)


class MemoryCreation:
    """A game just created in memory, held by its creator."""

    taken_over = False

    def __init__(self, log: MemoryLog) -> None:
        self.log = log
        self.written = False

    def secrets(self) -> MemorySecrets:
        return self.log.secrets()

    def write(self, events: Sequence[Event], extras: Extras = None) -> list[Event]:
        stamped, payload = stamp_all(events, 0, GENESIS_HASH, extras)
        self.log._put(payload.splitlines(), stamped)
        self.written = True
        return stamped


class MemoryTransaction:
    """A game held by one writer of this process."""

    def __init__(self, log: MemoryLog) -> None:
        self.log = log

    def read(self) -> list[Event]:
        return self.log.read()

    def acknowledge(self, last: Event) -> None:
        """Nothing to do: nothing repairs a memory store's lines."""

    def offset(self) -> None:
        return None

    def position(self) -> tuple[int, str]:
        events = self.log._events
        self.log._lines()
        return (len(events), events[-1].hash) if events else (0, GENESIS_HASH)

    def append(
        self, events: Sequence[Event], expected_seq: int | None = None, extras: Extras = None
    ) -> list[Event]:
        next_seq, prev = self.position()
        if expected_seq is not None and expected_seq != next_seq:
            raise Conflict.stale(self.log.name, expected_seq, next_seq)
        stamped, payload = stamp_all(events, next_seq, prev, extras)
        self.log._put(payload.splitlines(), stamped)
        return stamped


class MemorySecrets:
    """A memory store's secrets of one game: bytes under a kind, beside the log."""

    def __init__(self, log: MemoryLog) -> None:
        self.log = log
        self.kept: dict[str, bytes] = {}

    def where(self, kind: str) -> str:
        return f"the {kind} of {self.log.describe()}"

    def exists(self, kind: str) -> bool:
        return kind in self.kept

    def read(self, kind: str) -> bytes | None:
        return self.kept.get(kind)

    def create(self, kind: str, data: bytes) -> None:
        if kind in self.kept:
            raise Conflict(f"{self.where(kind)} already exists")
        self.kept[kind] = bytes(data)

    def replace(self, kind: str, data: bytes) -> None:
        self.kept[kind] = bytes(data)

    def remove(self, kind: str) -> None:
        self.kept.pop(kind, None)


