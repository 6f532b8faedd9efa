"""Idempotent commands: a request retried with the same ``Idempotency-Key`` answers
what the first one did and appends nothing, even across a crash and restart of the service.

Durable by construction: the key's SHA-256 is written **in the same append** as the command's
events, as an envelope field of the batch's first line (``"idem": {"key": SHA, "events": N}``,
see :data:`mortecouille.events.codec.ENVELOPE_EXTRAS`). So either the events and the key are on
disk together, or neither is; there is no window where a 2xx was sent and the key forgotten, nor
one where the key is kept for events that were not written. Lines without a key keep their bytes
and hashes, so every existing log stays as it was.

:class:`IdempotencyIndex` maps each game's keys to ``(first seq, count)``. It is caught up from the
log's bytes (only what was appended since it last looked) under the game's lock, right before the
command is decided, so it is never stale when it matters: not after a restart (it starts empty and
reads the whole log), not when the CLI appended meanwhile, not after a ``repair`` cut the tail.
On a store that is not a file (PostgreSQL) it catches up the same way from the lines after the
last seq it read (:meth:`IdempotencyIndex.find_in`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Hashable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import msgspec

from mortecouille.core.errors import BadInput
from mortecouille.events.base import Event
from mortecouille.events.codec import IDEM_FIELD, NONCE_FIELD
from mortecouille.events.fleet import ShipBought
from mortecouille.events.game import GameCreated
from mortecouille.events.storage.contract import EventStore, StoreTransaction
from mortecouille.events.storage.file_writing import Transaction

_MARKER = b'"idem":'
_NONCE_MARKER = b'"nonce":'

#: The longest key a client may send, in characters: a UUID or a hash fits many times over.
MAX_KEY_LENGTH = 200


class Recorded(msgspec.Struct, frozen=True):
    """What a key appended: ``count`` events from seq ``first``, and the ``nonces`` its lines carry
    (one per line, None for a line without; empty when none has one), which a retry's receipt
    commits to as the first answer's did."""

    first: int
    count: int
    nonces: tuple[str | None, ...] = ()


def key_digest(key: str) -> str:
    """The SHA-256 (hex) of an idempotency key alone: never the key itself, which a client may
    have built from something private. What logs written before keys were scoped by seat keep
    (:func:`seat_digest` is what is written now); still looked up, for their own retries."""
    check_key(key)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def check_key(key: str) -> None:
    """Refuse a key that is not 1 to :data:`MAX_KEY_LENGTH` printable characters (400 naming it)."""
    if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise BadInput(
            "Idempotency-Key",
            "a key is 1 to {max_key_length} printable characters",
            max_key_length=MAX_KEY_LENGTH,
        )


# --- keys scoped by seat ------------------------------------------------------------------------

#: The seat a key is scoped to when no seat sends it: a game's creation (anyone may create one),
#: and a fork's creation of its new game.
CREATION = "creation"
FORK = "fork"
#: The referee's seat (a player's is :func:`player_seat`).
REFEREE_SEAT = "referee"
_SCOPED_LABEL = "mortecouille idempotency key v2"


def player_seat(player: str) -> str:
    """The scope of a key a player sends: ``player:NAME``."""
    return f"player:{player}"


def seat_digest(seat: str, key: str) -> str:
    """The digest the log keeps of ``key`` sent from ``seat`` (:data:`REFEREE_SEAT`,
    :func:`player_seat`, :data:`CREATION`, :data:`FORK`): SHA-256 (hex) of the JSON array
    ``["mortecouille idempotency key v2", SEAT, KEY]``. Two seats that send the same key (a page
    counting its requests from 1, a key seen in another's traffic) name two commands: a key finds
    only its own seat's batch, never another seat's answer.

    >>> seat_digest("player:Anne", "k") != seat_digest("player:Bart", "k") != key_digest("k")
    True
    """
    check_key(key)
    return hashlib.sha256(msgspec.json.encode([_SCOPED_LABEL, seat, key])).hexdigest()


def batch_seat(events: Sequence[Event], first: int) -> str:
    """The seat whose command appended the batch at seq ``first`` of ``events``, as far as its
    first event tells (for a batch written under an unscoped key, :func:`key_digest`, by a service
    that did not scope keys): a game's creation (or a fork's); the player the event names (its
    ``player`` or ``owner``, or its ship's owner); else the referee (a resolution, a ruling, a
    lock, a deadline, an ending). A placement the referee made for a player's ship is that
    player's by this reading, so the referee's retry of it across such an upgrade is decided again
    (the same square: the same board)."""
    event = events[first]
    if isinstance(event, GameCreated):
        return FORK if event.forked_from is not None else CREATION
    player = getattr(event, "player", None) or getattr(event, "owner", None)
    ship = getattr(event, "ship", None)
    if not isinstance(player, str) and isinstance(ship, str):
        player = _owner(events[:first], ship)
    return player_seat(player) if isinstance(player, str) else REFEREE_SEAT


def _owner(events: Sequence[Event], ship: str) -> str | None:
    """Whose ``ship`` is, as the last of ``events`` naming its owner says (its purchase, or a
    placement or set-up naming one)."""
    for event in reversed(events):
        if getattr(event, "ship", None) != ship:
            continue
        owner = event.player if isinstance(event, ShipBought) else getattr(event, "owner", None)
        if isinstance(owner, str):
            return owner
    return None


def envelope(digest: str, count: int) -> dict[str, Any]:
    """The envelope fields of a batch of ``count`` events appended under the key ``digest``."""
    return {IDEM_FIELD: {"key": digest, "events": count}}


@runtime_checkable
class _ReadsLines(Protocol):
    """A log that gives its checked lines from a seq on (the PostgreSQL store)."""

    def lines_from(self, seq: int) -> Iterator[tuple[int, bytes]]: ...


class _GameKeys:
    """One log's keys and how far it was read (a file's: offset of the next unread byte; another
    store's: the next unread seq), and the keyed batch whose lines are being read (its digest, its
    first seq and count, the nonces of its lines read so far): a batch is written whole, so its
    lines come in order, one read after the other."""

    def __init__(self) -> None:
        self.offset = 0
        self.keys: dict[str, Recorded] = {}
        self.open: tuple[str, int, int, list[str | None]] | None = None

    def line(self, line: bytes) -> None:
        """Read one line of the log, in order: a key it records, a nonce of the batch a key opened."""
        if self.open is not None:
            digest, first, count, nonces = self.open
            nonces.append(_nonce_of(line) if _NONCE_MARKER in line else None)
            if len(nonces) == count:
                self.open = None
                self._record(digest, first, count, nonces)
            return
        if _MARKER not in line:
            return
        read = _read_key(line)
        if read is None:
            return
        digest, first, count, nonce = read
        if count > 1:
            self.open = (digest, first, count, [nonce])
        else:
            self._record(digest, first, count, [nonce])

    def _record(self, digest: str, first: int, count: int, nonces: list[str | None]) -> None:
        self.keys.setdefault(digest, Recorded(first=first, count=count, nonces=_kept(nonces)))

    def reset(self) -> None:
        self.offset, self.keys, self.open = 0, {}, None


class IdempotencyIndex:
    """key digest -> :class:`Recorded`, per game log, caught up from the log under its lock."""

    def __init__(self) -> None:
        self._games: dict[Hashable, _GameKeys] = {}
        self._guard = threading.Lock()  # the dict of games; each game's part runs under its flock

    def catch_up(self, path: Path, fd: int) -> dict[str, Recorded]:
        """Read what ``fd`` (the locked log at ``path``) holds beyond what was read before and
        return the game's keys. A log shorter than what was read was cut (``repair``): read again."""
        with self._guard:
            game = self._games.setdefault(path, _GameKeys())
        size = os.fstat(fd).st_size
        if size < game.offset:
            game.reset()
        if size > game.offset:
            data = os.pread(fd, size - game.offset, game.offset)
            complete = data[: data.rfind(b"\n") + 1]  # a torn tail is the store's to report
            for line in complete.splitlines():
                game.line(line)
            game.offset += len(complete)
        return game.keys

    def find(self, path: Path, fd: int, digest: str) -> Recorded | None:
        """What the key ``digest`` appended to the locked log, if it was used on it."""
        return self.catch_up(path, fd).get(digest)

    def find_in(self, log: EventStore, tx: StoreTransaction, digest: str) -> Recorded | None:
        """What the key ``digest`` appended to ``log``, held by its writer ``tx``, whatever its store."""
        if isinstance(tx, Transaction):
            return self.find(tx.log.path, tx.fd, digest)
        if not isinstance(log, _ReadsLines):
            raise TypeError(f"{type(log).__name__} gives no lines to find idempotency keys in")
        with self._guard:
            game = self._games.setdefault(_where(log), _GameKeys())
        next_seq, _ = tx.position()
        if next_seq < game.offset:  # fewer lines than read before: another game of that name
            game.reset()
        if next_seq == game.offset:
            return game.keys.get(digest)  # every line read already: no read of the store at all
        for seq, line in log.lines_from(game.offset):
            game.line(line)
            game.offset = seq + 1
        return game.keys.get(digest)

    def appended(
        self, log: EventStore, digest: str, first: int, count: int, nonces: tuple[str | None, ...] = ()
    ) -> None:
        """Note a batch of ``count`` events from seq ``first`` that the caller, holding the writer
        lock of ``log`` (a store that is not a file), just appended under the key ``digest`` (its
        lines carrying ``nonces``), so the next catch-up does not read it back (one round trip
        fewer per command). Noted only if every line before it was read: otherwise the next
        catch-up reads it with the others."""
        with self._guard:
            game = self._games.get(_where(log))
        if game is not None and game.offset == first and game.open is None:
            game.keys.setdefault(digest, Recorded(first=first, count=count, nonces=_kept(nonces)))
            game.offset = first + count


def _where(log: EventStore) -> Hashable:
    """The index's key of a log of a store that is not a file: its store and its name."""
    store = getattr(log, "store", None)
    return (getattr(store, "dsn", None), getattr(store, "schema", None), log.name)


def _read_key(line: bytes) -> tuple[str, int, int, str | None] | None:
    """The key a line records: its digest, the batch's first seq and count, and the line's own
    nonce; None for a line that holds the marker but no key of ours (a text holding it)."""
    try:
        body = msgspec.json.decode(line)
        recorded = body[IDEM_FIELD]
        digest, count, seq = recorded["key"], recorded["events"], body["seq"]
    except (msgspec.DecodeError, KeyError, TypeError):
        return None
    if isinstance(digest, str) and isinstance(count, int) and isinstance(seq, int):
        nonce = body.get(NONCE_FIELD)
        return digest, seq, count, nonce if isinstance(nonce, str) else None
    return None


def _nonce_of(line: bytes) -> str | None:
    """A line's own nonce (None: none)."""
    try:
        nonce = msgspec.json.decode(line).get(NONCE_FIELD)
    except (msgspec.DecodeError, AttributeError):
        return None
    return nonce if isinstance(nonce, str) else None


def _kept(nonces: Sequence[str | None]) -> tuple[str | None, ...]:
    """The nonces a :class:`Recorded` keeps: empty when no line has one."""
    return tuple(nonces) if any(nonces) else ()
