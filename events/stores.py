"""The store contract: what every event store of a game offers, whatever its medium.

Two stores keep a game's log: the file store (:class:`mortecouille.events.store.GameLog`, one
JSON-lines file per game, the embedded default) and the PostgreSQL store
(:mod:`mortecouille.events.postgres_store`, imported only when a ``postgresql://`` URL is used).
Both keep the same canonical line bytes (:func:`mortecouille.events.codec.stamp_all`), so a log
exported from either is the same JSONL with the same hashes.

The contract, written from what :class:`GameLog` and its ``Transaction`` offer and what
``app/commands.py`` uses (issue 17, item 1):

* ``read``: every event, typed; a corrupt or torn log raises :class:`LogError`, never skips;
* ``read_bytes``: the log as the file store writes it (one canonical line per event);
* ``verify_chain``: every line's canonical form, seq, prev and hash checked, then the tail against
  the head; :class:`LogError` names the first bad seq;
* ``read_head``: the seq and hash of the last line the store vouches for (None: none recorded);
* ``creating``: create the game exclusively (:class:`Conflict` if it exists) and write its first
  events; a block that raises leaves nothing;
* ``transaction``: one writer at a time for a read-decide-append cycle; inside it, ``position``
  (next seq, last hash), ``read`` and ``append(events, expected_seq, first_extras)``: a stale
  ``expected_seq`` raises :class:`Conflict` and writes nothing; an append that returns is durable.

Reading from a seq is :func:`events_from`: a store that can stream from a seq
(:class:`ReadsFromSeq`) does; otherwise the whole log is read and cut.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from mortecouille.events.base import Event
from mortecouille.events.store import Head


class StoreCreation(Protocol):
    """A game just created, empty and held by its creator (see :meth:`EventStore.creating`)."""

    def write(self, events: Sequence[Event]) -> list[Event]:
        """Write the game's first events; the creation counts only once this returned."""
        ...


class StoreTransaction(Protocol):
    """A game held by one writer: read it, then append to it, with nobody writing in between."""

    def read(self) -> list[Event]:
        """Every event of the game, typed."""
        ...

    def position(self) -> tuple[int, str]:
        """The seq the next event gets and the hash of the last line (the genesis hash if none)."""
        ...

    def append(
        self,
        events: Sequence[Event],
        expected_seq: int | None = None,
        first_extras: Mapping[str, Any] | None = None,
    ) -> list[Event]:
        """Stamp ``events`` after the last line and make them durable; raise Conflict (nothing
        written) when ``expected_seq`` is given and is not the next seq."""
        ...


class EventStore(Protocol):
    """One game's append-only log in some store (file or PostgreSQL)."""

    @property
    def name(self) -> str:
        """The game's name."""
        ...

    def exists(self) -> bool:
        """Whether the game has a log in this store."""
        ...

    def read(self) -> list[Event]:
        """Every event, typed; raises LogError (TornTail, CorruptLine) rather than skip a line."""
        ...

    def read_bytes(self) -> bytes:
        """The log's canonical lines, each ending with a newline; GameNotFound if there is none."""
        ...

    def verify_chain(self, data: bytes | None = None) -> int:
        """Check the chain and the head; return the number of lines or raise LogError."""
        ...

    def read_head(self) -> Head | None:
        """The seq and hash of the last line the store vouches for, or None."""
        ...

    def create(self, events: Sequence[Event]) -> list[Event]:
        """Create the game with ``events``; Conflict if it exists."""
        ...

    def creating(self) -> AbstractContextManager[StoreCreation]:
        """Create the game exclusively, for the block to write its first events."""
        ...

    def transaction(self, timeout: float = ...) -> AbstractContextManager[StoreTransaction]:
        """Hold the game's writer lock (waiting at most ``timeout`` seconds, else Conflict)."""
        ...

    def append(self, events: Sequence[Event], expected_seq: int | None = None) -> list[Event]:
        """Append under the writer lock (see :meth:`StoreTransaction.append`)."""
        ...


@runtime_checkable
class ReadsFromSeq(Protocol):
    """A store that reads a game from a seq on without reading what comes before (streaming)."""

    def events_from(self, seq: int) -> Iterator[Event]:
        """The events from ``seq`` on, in order."""
        ...


def events_from(store: EventStore, seq: int) -> Iterator[Event]:
    """The events of ``store`` from ``seq`` on: streamed where the store can, else cut from a read."""
    if seq < 0:
        raise ValueError(f"seq {seq} is not a seq (0 or more)")
    if isinstance(store, ReadsFromSeq):
        return store.events_from(seq)
    return iter(store.read()[seq:])
