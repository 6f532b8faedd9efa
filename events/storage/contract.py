"""The store contract: what every event store of a game offers, whatever its medium.

Two stores keep a game's log: the file store (:class:`mortecouille.events.storage.file_log.GameLog`, one
JSON-lines file per game, the embedded default) and the PostgreSQL store
(:mod:`mortecouille.events.storage.postgres`, imported only when a ``postgresql://`` URL is used).
Both keep the same canonical line bytes (:func:`mortecouille.events.codec.stamp_all`), so a log
exported from either is the same JSONL with the same hashes.

The contract, written from what :class:`GameLog` and its ``Transaction`` offer and what
``app/commands.py`` uses:

* ``read``: every event, typed; a corrupt or torn log raises :class:`LogError`, never skips;
* ``read_bytes``: the log as the file store writes it (one canonical line per event);
* ``verify_chain``: every line's canonical form, seq, prev and hash checked, then the tail against
  the head; :class:`LogError` names the first bad seq;
* ``read_head``: the seq and hash of the last line the store vouches for (None: none recorded);
* ``creating``: create the game exclusively (:class:`Conflict` if it exists) and write its first
  events; a block that raises leaves nothing;
* ``transaction``: one writer at a time for a read-decide-append cycle; inside it, ``position``
  (next seq, last hash), ``read`` and ``append(events, expected_seq, extras)``: a stale
  ``expected_seq`` raises :class:`Conflict` and writes nothing; an append that returns is durable.

Reading from a seq is :func:`events_from`: a store that can stream from a seq
(:class:`ReadsFromSeq`) does; otherwise the whole log is read and cut.

A store may also keep a game's **snapshot** for the app (:class:`KeepsSnapshots`: the PostgreSQL
store, in a table; the file store's are files the app writes beside the log): raw bytes standing on
one line of the log, returned only while the log still holds that line, never read by ``read``,
``read_bytes`` or ``verify_chain`` nor copied with a log.

A **store of games** (:class:`GameStore`) holds many games: :class:`FileStore` (a directory) or
``PostgresStore``; :func:`open_store` opens one from its URL (``file:./games``, a bare path,
``postgresql://...``). Beside each log a store keeps a game's **secrets** (:class:`GameSecrets`:
the secret seed of D2, the seat token hashes), never in the log itself; :func:`secrets_of` gives
them for a log. Whole logs move between stores as bytes (:func:`import_lines`), never re-stamped.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_STORE_URL",
    "SEATS",
    "SEED",
    "EventStore",
    "FileSecrets",
    "FileStore",
    "GameSecrets",
    "GameStore",
    "KeepsSnapshots",
    "ReadsFromSeq",
    "SecretRefused",
    "StoreCreation",
    "StoreTransaction",
    "checked_lines",
    "events_from",
    "import_lines",
    "is_file_store_url",
    "open_store",
    "secrets_of",
]

import contextlib
import errno
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import Extras, LogError, check_line, decode_line
from mortecouille.events.storage.chain import Head, OnLine
from mortecouille.events.storage.errors import (
    Conflict,
    StoreError,
    StoreUnavailable,
    Unwritable,
    redacted_url,
)
from mortecouille.events.storage.file_io import _append_or_take_back, _fsync_dir
from mortecouille.events.storage.file_log import GameLog
from mortecouille.events.storage.file_writing import Creation

if TYPE_CHECKING:
    # a type only (what a store that keeps snapshots returns, PostgreSQL's): a file store's command
    # never makes one, so it need not import it (the CLI's start-up)
    from mortecouille.events.storage.postgres_feed import FeedRow
    from mortecouille.events.storage.stored_snapshot import StoredSnapshot


class StoreCreation(Protocol):
    """A game just created, empty and held by its creator (see :meth:`EventStore.creating`)."""

    #: whether this creation took over a game an earlier creation left empty as it died (a file
    #: store's log created but never written; a PostgreSQL creation is one transaction: never)
    taken_over: bool

    def write(self, events: Sequence[Event], extras: Extras = None) -> list[Event]:
        """Write the game's first events; the creation counts only once this returned.
        ``extras``: envelope fields of the first line (a creation's ``idem``), or of each line
        (:func:`~mortecouille.events.codec.stamp_all`)."""
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
        extras: Extras = None,
    ) -> list[Event]:
        """Stamp ``events`` after the last line and make them durable; raise Conflict (nothing
        written) when ``expected_seq`` is given and is not the next seq."""
        ...

    def acknowledge(self, last: Event) -> None:
        """Make sure no repair will cut the lines through ``last`` (already durable) before they
        are acknowledged: a file store moves a head anchor left behind by a killed writer; a store
        whose appends commit whole has nothing to do."""
        ...

    def offset(self) -> int | None:
        """Where the held log ends, in bytes, for a store read by offset (the file store's size
        under the lock); None for the others."""
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

    def verify_chain(self, data: bytes | None = None, on_line: OnLine | None = None) -> int:
        """Check the chain and the head (:func:`~mortecouille.events.storage.chain.check_chain`);
        return the number of lines or raise LogError. ``data``: the log's bytes read before;
        ``on_line``: told each line once checked (``verify`` gathers its dice so)."""
        ...

    def head_status(self, lines: int) -> str:
        """How the log's ``lines`` lines stand against the head the store vouches for, for a report."""
        ...

    def read_head(self) -> Head | None:
        """The seq and hash of the last line the store vouches for, or None."""
        ...

    def describe(self) -> str:
        """Where the game is, for a message to the store's owner (a file store's path)."""
        ...

    def as_files(self) -> GameLog | None:
        """The game's log as files, where the store keeps it so (the file store: the app keeps its
        derived files beside it, reads it by offset and repairs a torn tail); None elsewhere."""
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


@runtime_checkable
class KeepsSnapshots(Protocol):
    """A store that keeps one snapshot per game for the app (the PostgreSQL store): derived data,
    so a store is free to lose it, and it is never returned unless the log still holds its line."""

    def snapshot_and_events(self) -> tuple[StoredSnapshot | None, Iterator[Event]]:
        """The game's snapshot, only if the log's line at its seq has its hash (checked in the read
        itself; its format and bytes are the app's to check), and the events after it, checked and
        chained on to its line, or None and every event: a fold's reads, in as few round trips as the store
        can. If the app refuses the snapshot, it reads ``events_from(0)`` instead."""
        ...

    def write_snapshot(self, seq: int, digest: str, format_: int, state: bytes) -> bool:
        """Replace the game's snapshot by ``state`` at ``seq`` (whose line hashes to ``digest``),
        only if the log holds that line; a failure is logged, never raised. True when written."""
        ...


def events_from(store: EventStore, seq: int) -> Iterator[Event]:
    """The events of ``store`` from ``seq`` on: streamed where the store can, else cut from a read."""
    if seq < 0:
        raise ValueError(f"seq {seq} is not a seq (0 or more)")
    if isinstance(store, ReadsFromSeq):
        return store.events_from(seq)
    if isinstance(store, GameLog) and seq == 0:  # the file log streams from its start
        return store.stream()
    return iter(store.read()[seq:])


class AppendFeed(Protocol):
    """What sees every append to a store, by any process; it calls its receiver from a thread."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


@runtime_checkable
class FeedsAppends(Protocol):
    """A store that tells each append by any process as it commits (PostgreSQL's ``LISTEN``),
    where a file store's watchers poll the files."""

    def change_feed(self, receive: Callable[[list[FeedRow]], None]) -> AppendFeed:
        """A feed (not started) handing ``receive`` each batch of rows appended."""
        ...


# --- a store of many games, selected by URL ----------------------------------------------------


class GameStore(Protocol):
    """Every game of one store: a directory of logs, or a PostgreSQL schema."""

    @property
    def url(self) -> str:
        """The store's URL as it may be printed (a password replaced by ``***``)."""
        ...

    def log(self, game: str) -> EventStore:
        """One game's log (cheap: nothing is read until asked)."""
        ...

    def folder(self) -> Path | None:
        """The directory holding the games as files (the file store), or None."""
        ...

    def names(self) -> list[str]:
        """The names of every game of the store, sorted."""
        ...

    def close(self) -> None:
        """Give back what the store holds (connections); the store is not used after."""
        ...


#: The suffix of a game's log file in a file store.
LOG_SUFFIX = ".jsonl"

#: The default store: the ``games`` folder of the working directory.
DEFAULT_STORE_URL = "file:./games"


class FileStore:
    """The games of a directory: ``GAME.jsonl`` with its head anchor ``GAME.head``, and the
    game's secrets in files beside them (:class:`FileSecrets`)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def url(self) -> str:
        return f"file:{self.directory}"

    def log(self, game: str) -> GameLog:
        return GameLog(self.directory / f"{game}{LOG_SUFFIX}")

    def folder(self) -> Path:
        return self.directory

    def names(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        return sorted(path.name.removesuffix(LOG_SUFFIX) for path in self.directory.glob(f"*{LOG_SUFFIX}"))

    def close(self) -> None:
        """Nothing to give back: every method opens what it needs."""

    def __enter__(self) -> FileStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: A URL scheme (``postgresql:``, ``file:``): letters, then letters, digits, ``+.-``.
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):")

#: The query parameter naming the PostgreSQL schema of a store (not passed to the server).
SCHEMA_PARAMETER = "schema"


def is_file_store_url(url: str) -> bool:
    """Whether ``url`` names a file store (``file:DIR`` or a bare path), without opening it."""
    scheme = _SCHEME.match(url)
    return scheme is None or scheme.group(1).lower() == "file"


def open_store(url: str, option: str = "--store") -> GameStore:
    """The store ``url`` names: ``file:DIR`` (``file:./games``, ``file:/abs/path``,
    ``file:///abs/path``) or a bare path, a directory of logs (made when the first game is
    created); ``postgresql://user@host:port/db[?schema=NAME]``, a PostgreSQL database (psycopg
    imported only then; the store's tables in the schema ``NAME``, ``mortecouille`` by default).

    A URL of another kind, a missing driver or an unreachable server is a :class:`StoreError`
    naming ``option`` (exit 2)."""
    shown = redacted_url(url)
    if not url.strip():
        raise StoreError(f"{option}: empty; give file:DIR or postgresql://...")
    scheme = _SCHEME.match(url)
    if scheme is None:
        return FileStore(Path(url))
    kind = scheme.group(1).lower()
    if kind == "file":
        path = url[scheme.end() :]
        if path.startswith("//"):  # file:///abs/path, file://localhost/abs/path
            host, _, rest = path[2:].partition("/")
            if host not in ("", "localhost"):
                raise StoreError(f"{option} {shown}: a file store is on this machine (file:///path)")
            path = "/" + rest
        if not path:
            raise StoreError(f"{option} {shown}: name the directory, e.g. file:./games")
        return FileStore(Path(path))
    if kind in ("postgresql", "postgres"):
        return _open_postgres(url, option)
    raise StoreError(f"{option} {shown}: unknown kind of store {kind!r}; give file:DIR or postgresql://...")


def _open_postgres(url: str, option: str) -> GameStore:
    """The PostgreSQL store of ``url`` (its ``schema`` parameter taken out), the driver imported here."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    shown = redacted_url(url)
    parts = urlsplit(url)
    parameters = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [value for key, value in parameters if key == SCHEMA_PARAMETER]
    rest = [(key, value) for key, value in parameters if key != SCHEMA_PARAMETER]
    connection_url = urlunsplit(parts._replace(query=urlencode(rest)))
    try:
        from mortecouille.events.storage.postgres import PostgresStore
    except ImportError as error:
        raise StoreError(
            f"{option} {shown}: the PostgreSQL driver is not installed ({error.name or error}); "
            "install it with pip install 'mortecouille[postgres]' (psycopg 3 and psycopg-pool)"
        ) from None
    try:
        if schemas:
            return PostgresStore(connection_url, schema=schemas[-1])
        return PostgresStore(connection_url)
    except ValueError as error:
        raise StoreError(f"{option} {shown}: {error}") from None
    except StoreUnavailable as error:
        raise StoreUnavailable(f"{option}: {error}") from None


# --- what a store keeps beside a log: the game's secrets ---------------------------------------


class SecretRefused(StoreError):
    """A secret that cannot be read as stored: a link planted in its place, or not readable."""


#: The secrets a game may have: its secret seed (D2) and its seat token hashes.
SEED = "seed"
SEATS = "seats"


class GameSecrets(Protocol):
    """What a store keeps beside one game's log and never in it: the secret seed until the game
    reveals it (D2), the hashes of the seat tokens. Each secret is a few bytes under a kind
    (:data:`SEED`, :data:`SEATS`), readable by the store's owner only (a file of mode 0600; a
    table no other role is granted)."""

    def where(self, kind: str) -> str:
        """Where the secret ``kind`` is kept, for messages (a path, or the game in the store)."""
        ...

    def exists(self, kind: str) -> bool:
        """Whether something is kept under ``kind`` (for a file: a file or a link)."""
        ...

    def read(self, kind: str) -> bytes | None:
        """The secret, or None if there is none; SecretRefused if it cannot be read as kept."""
        ...

    def create(self, kind: str, data: bytes) -> None:
        """Keep ``data`` under ``kind``, durably, exclusively: Conflict if something is there."""
        ...

    def replace(self, kind: str, data: bytes) -> None:
        """Replace the secret ``kind`` atomically (the old or the new one, never a mix)."""
        ...

    def remove(self, kind: str) -> None:
        """Take back what :meth:`create` kept (a creation that failed after it)."""
        ...


@runtime_checkable
class KeepsSecrets(Protocol):
    """A log (or a creation under way) that keeps its game's secrets itself (PostgreSQL)."""

    def secrets(self) -> GameSecrets:
        """The secrets of the game."""
        ...


#: Opening a secret's file: never through a symbolic link (a planted link would redirect it).
_NO_LINK = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class FileSecrets:
    """A file store's secrets: ``GAME.seed``, ``GAME.seats`` beside the log, mode 0600, created
    exclusively and never read or written through a link; replaced by a temporary file
    (``GAME.seats-new``) written, fsync'd and renamed over the secret."""

    def __init__(self, log: GameLog, *, in_creation: bool = False) -> None:
        self.log = log
        #: kept during the game's creation, which fsyncs the directory once at its end
        self.in_creation = in_creation

    def path(self, kind: str) -> Path:
        return self.log.sibling(f".{kind}")

    def where(self, kind: str) -> str:
        return str(self.path(kind))

    def exists(self, kind: str) -> bool:
        path = self.path(kind)
        return path.is_symlink() or path.exists()

    def read(self, kind: str) -> bytes | None:
        path = self.path(kind)
        try:
            fd = os.open(path, os.O_RDONLY | _NO_LINK)
        except FileNotFoundError:
            return None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise SecretRefused(f"{path} is a symbolic link; refusing to read through it") from None
            raise SecretRefused(f"cannot read {path}: {error.strerror}") from None
        with os.fdopen(fd, "rb") as handle:
            return handle.read()

    def create(self, kind: str, data: bytes) -> None:
        self._write_new(self.path(kind), data)
        if not self.in_creation:
            with _unwritable_dir(self.path(kind).parent):
                _fsync_dir(self.path(kind).parent)

    def replace(self, kind: str, data: bytes) -> None:
        # called under the game's lock: a temporary file already there is one a crash left
        path = self.path(kind)
        temporary = path.with_name(f"{path.name}-new")
        temporary.unlink(missing_ok=True)
        self._write_new(temporary, data)
        try:
            os.replace(temporary, path)
            _fsync_dir(temporary.parent)
        except OSError as error:
            temporary.unlink(missing_ok=True)
            raise Unwritable(
                f"cannot replace {path}: {error.strerror}", reason=error.strerror or str(error)
            ) from None

    def remove(self, kind: str) -> None:
        self.path(kind).unlink(missing_ok=True)

    @staticmethod
    def _write_new(path: Path, data: bytes) -> None:
        """Write ``data`` to ``path``, created exclusively, mode 0600, never through a link."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_LINK, 0o600)
        except FileExistsError:
            raise Conflict(
                f"{path} already exists (left without its game, or a link): remove it first"
            ) from None
        except OSError as error:
            raise Unwritable(
                f"cannot create {path}: {error.strerror}", reason=error.strerror or str(error)
            ) from None
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as error:
            path.unlink(missing_ok=True)
            raise Unwritable(
                f"cannot write {path}: {error.strerror}", reason=error.strerror or str(error)
            ) from None


@contextlib.contextmanager
def _unwritable_dir(directory: Path) -> Iterator[None]:
    try:
        yield
    except OSError as error:
        raise Unwritable(
            f"cannot write {directory}: {error.strerror or error}", reason=error.strerror or str(error)
        ) from None


def secrets_of(log: EventStore, creation: object | None = None) -> GameSecrets:
    """The secrets of ``log``'s game: its files beside a file log, the store's own otherwise.
    ``creation``: the game's creation under way (:meth:`EventStore.creating`), for a secret that
    must commit with it (PostgreSQL: in the creation's transaction)."""
    if isinstance(creation, KeepsSecrets):
        return creation.secrets()
    if isinstance(log, KeepsSecrets):
        return log.secrets()
    if isinstance(log, GameLog):
        return FileSecrets(log, in_creation=creation is not None)
    raise TypeError(f"{type(log).__name__} keeps no secrets")


# --- moving whole logs as bytes ----------------------------------------------------------------


@runtime_checkable
class ImportsLines(Protocol):
    """A store that creates a game from a written log's exact bytes (PostgreSQL)."""

    def import_lines(self, data: bytes, secrets: Mapping[str, bytes] | None = None) -> int:
        """Create the game from ``data`` with its ``secrets``; return its number of lines."""
        ...


def checked_lines(data: bytes) -> int:
    """Check a whole log's bytes as a reader would (each line canonical, chained from the genesis
    hash, and an event this version knows); return the number of lines or raise LogError naming
    the first bad seq. Nothing is decoded for keeps: the bytes stay as they are."""
    if data and not data.endswith(b"\n"):
        torn_at = data.count(b"\n") + 1
        raise LogError("the last line has no newline (a torn tail): repair it first", line=torn_at)
    prev = GENESIS_HASH
    lines = data.splitlines()
    for number, line in enumerate(lines, 1):
        prev = check_line(line, number, number - 1, prev)
        decode_line(line, number)  # an unknown type or a bad field is refused here
    return len(lines)


def import_lines(log: EventStore, data: bytes, secrets: Mapping[str, bytes] | None = None) -> int:
    """Create ``log``'s game from a written log's exact bytes (an export, another store's log),
    checked first (:func:`checked_lines`), with its ``secrets`` (kind -> bytes: the seed, the
    seats): a copy keeps every byte and hash, where re-stamping decoded events would not (an int
    written in a float field comes back as a float). Conflict if the game exists (or, in a file
    store, a secret's file is already there); a bad line is a LogError; either way nothing is
    created. Returns the line count.

    A file log is created as any (exclusively, locked), then its secrets (as ``create_game``
    keeps a seed), then its lines with one write and one fsync, then its head anchor at the last
    line; a failure at any step removes what was written. PostgreSQL: one transaction."""
    if isinstance(log, ImportsLines):
        return log.import_lines(data, secrets)
    if not isinstance(log, GameLog):
        raise TypeError(f"{type(log).__name__} cannot import lines")
    count = checked_lines(data)
    with log.creating() as creation:
        kept = FileSecrets(log, in_creation=True)
        if creation.taken_over:
            # the log an earlier creation left empty as it died (GameLog.creating): a secret it
            # kept first belongs to no game and would refuse this one's
            for kind in secrets or {}:
                kept.remove(kind)
        created: list[str] = []
        try:
            for kind, value in (secrets or {}).items():
                kept.create(kind, value)
                created.append(kind)
            _write_lines(creation, data)
        except BaseException:
            for kind in created:  # ours: created exclusively just above
                kept.remove(kind)
            raise
    return count


def _write_lines(creation: Creation, data: bytes) -> None:
    """The file store's raw-lines creation: ``data`` written as it is, then the head anchor."""
    _append_or_take_back(creation.fd, data, 0, creation.log.path)
    if data:
        last = data.splitlines()[-1]
        head = decode_line(last, data.count(b"\n"))
        try:
            creation.log.start_head(head.seq, head.hash)
        except OSError as error:
            raise Unwritable(
                f"cannot write {creation.log.head_path}: {error.strerror}; the game was not created",
                reason=error.strerror or str(error),
            ) from None
    creation.written = True
