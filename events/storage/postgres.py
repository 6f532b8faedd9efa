"""The PostgreSQL store: the same contract as the file store (:mod:`mortecouille.events.storage.contract`),
for when one machine's files are not enough. Imported only when a ``postgresql://`` URL
is used: psycopg 3 and its pool are the optional ``postgres`` dependency.

Schema (in a PostgreSQL schema of the store's own, ``mortecouille`` by default; see docs/stores.md):

* ``events``: one row per log line, the exact canonical line bytes (``line``, without the newline)
  with ``game``, ``seq``, ``type``, ``v``, ``prev`` and ``hash`` beside them; primary key
  ``(game, seq)``; ``position``, a global order over all games (a sequence), unique;
* ``games``: one row per game, its head (``next_seq``, ``last_hash``): what the store vouches for,
  moved in the same transaction as the rows, so a removed row or a rewritten one is caught;
* ``snapshots``: one row per game for the app (:mod:`mortecouille.app.snapshots`), derived: the
  seq and hash of the line it stands on, a format number and the state's bytes; returned only
  while the log's row at that seq has that hash (:meth:`PostgresGameLog.snapshot_and_events`), never
  read by ``read``, ``read_bytes`` or ``verify_chain``, never copied with a game.

An append is one transaction, sent in one pipelined exchange: the head moved by a compare-and-set
from where the writer read it under the game's lock (a function that raises when the head moved,
so nothing after it runs), ``events`` locked in EXCLUSIVE mode, taken last, so global positions
commit in the order they are taken (a reader tailing ``position`` never skips a row that commits
later: the lesson of Marten's gap bug, and what the ``eventsourcing`` library's recorder does),
the rows inserted (stamped by :func:`stamp_all`, the file store's codec: same bytes, same
hashes), a ``NOTIFY`` on the store's channel with the game and its last seq; then commit. An
append that returns is committed (and so durable under PostgreSQL's default
``synchronous_commit``).

A writer's read-decide-append cycle (:meth:`PostgresGameLog.transaction`) also holds the game's
advisory lock at session level, as the file store holds its ``flock``: one writer per game at a
time, across processes and machines; a client that dies releases it with its session. A
:meth:`PostgresGameLog.session` lends one connection to a thread for a whole command (its reads,
secrets, lock and append): one connection per command, a few round trips (docs/stores.md).
Reading re-checks every line with the file reader's own check (:func:`check_line`) and the rows'
columns against their bytes, then the head: a changed byte, hash or a removed row is named by seq.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec
import psycopg
import psycopg.errors
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import Extras, LogError, check_line, decode_line, stamp_all
from mortecouille.events.house_log import get_logger
from mortecouille.events.schema import event_tag
from mortecouille.events.storage.chain import Head, OnLine, check_chain, whole_lines
from mortecouille.events.storage.errors import (
    Conflict,
    GameNotFound,
    StoreUnavailable,
    Unwritable,
    redacted_url,
)
from mortecouille.events.storage.file_io import LOCK_TIMEOUT_SECONDS
from mortecouille.events.storage.postgres_rows import (
    HEAD_MOVED,
    PostgresSecrets,
    PostgresTransaction,
    StoredKeyframe,
    _checked_row,
    _head,
    _insert,
    _lock_and_head,
    _reachable,
    _removed,
    _Row,
    _rows_of,
    _turn_marks_predicate,
    turn_marks_query,
)
from mortecouille.events.storage.stored_snapshot import StoredSnapshot

if TYPE_CHECKING:
    from mortecouille.events.storage.postgres_feed import FeedRow, PostgresFeed

__all__ = ["Appended", "PostgresGameLog", "PostgresStore"]

_log = get_logger("mortecouille")

#: How many rows a streaming read fetches from its server-side cursor at a time.
FETCH_ROWS = 500


#: The most connections a store's pool opens (lazily: one is open at first). ``serve`` runs each
#: command in one of at most 40 worker threads (anyio's default limiter) and a command uses one
#: connection from its start to its end (:meth:`PostgresGameLog.session`), so a pool as large as
#: the threads never makes a command wait for a connection while another waits for a game's lock.
MAX_CONNECTIONS = 40


#: How many rows one statement of :meth:`PostgresGameLog.checked_range` reads.
RANGE_ROWS = 2048

#: A schema name the store accepts: a plain lower-case identifier (it is also the NOTIFY channel's stem).
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,40}")


class Appended(NamedTuple):
    """One row in the store's global order: its position, its game and its seq in that game."""

    position: int
    game: str
    seq: int


_POOL_PREFIX = re.compile(r"^error connecting in '[^']*': (connection failed: )?")


class _FirstConnectionFailures(logging.Filter):
    """Holds back the pool's warnings while a store opens, keeping the last one's reason."""

    def __init__(self) -> None:
        super().__init__()
        self.last = ""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            # "error connecting in 'pool-1': [connection failed: ]<the reason>"
            self.last = _POOL_PREFIX.sub("", record.getMessage())
            return False
        return True


class PostgresStore:
    """Every game of one store in a PostgreSQL database: a connection pool and the store's schema.

    ``url``: a libpq connection URL (``postgresql://user@host:port/db``). ``schema``: the
    PostgreSQL schema holding the store's tables, created if missing; several stores can share a
    database under different schemas. Close it (or use it as a context manager) when done."""

    def __init__(
        self,
        url: str,
        schema: str = "mortecouille",
        max_connections: int = MAX_CONNECTIONS,
        timeout: float = 10.0,
    ) -> None:
        if not _SCHEMA_NAME.fullmatch(schema):
            raise ValueError(f"schema {schema!r}: a store's schema is a lower-case identifier")
        #: the URL as it may be printed (no password; a schema other than the default as the
        #: ``schema`` parameter ``--store`` takes); ``dsn`` is the one to connect with
        named = "" if schema == "mortecouille" else f"{'&' if '?' in url else '?'}schema={schema}"
        self.url = redacted_url(url) + named
        self.dsn = url
        self.schema = schema
        #: The NOTIFY channel of this store; each payload is ``{"game": ..., "seq": ...}``.
        self.channel = f"{schema}_events"
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            kwargs={"autocommit": True},
            check=ConnectionPool.check_connection,
            open=False,
            timeout=timeout,
        )
        # The pool retries a first connection until ``timeout``, logging a warning for each
        # failure; while it does, those warnings are kept rather than printed (a referee who
        # mistyped the host would otherwise see the pool's chatter first), and the last one says
        # why in the one refusal.
        unanswered = _FirstConnectionFailures()
        pool_log = logging.getLogger("psycopg.pool")
        pool_log.addFilter(unanswered)
        try:
            self.pool.open()
            self.pool.wait(timeout)
            self._create_schema()
        except (PoolTimeout, psycopg.OperationalError) as error:
            self.pool.close()
            why = unanswered.last if isinstance(error, PoolTimeout) and unanswered.last else str(error)
            raise StoreUnavailable(
                f"cannot reach the PostgreSQL store at {redacted_url(url)}: {' '.join(why.split())}"
            ) from None
        except BaseException:
            self.pool.close()
            raise
        finally:
            pool_log.removeFilter(unanswered)

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.pool.close()

    def function(self, name: str) -> sql.Composed:
        """A function of this store, qualified by its schema."""
        return sql.SQL("{}.{}").format(sql.Identifier(self.schema), sql.Identifier(name))

    def table(self, name: str) -> sql.Composed:
        """A table of this store, qualified by its schema."""
        return sql.SQL("{}.{}").format(sql.Identifier(self.schema), sql.Identifier(name))

    def _create_schema(self) -> None:
        with self.pool.connection() as conn, conn.transaction():
            # one creator at a time: IF NOT EXISTS alone races between processes
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"schema {self.schema}"])
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema)))
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {games} ("
                    " game text PRIMARY KEY,"
                    " next_seq bigint NOT NULL CHECK (next_seq >= 0),"
                    " last_hash text NOT NULL,"
                    " created timestamptz NOT NULL DEFAULT now())"
                ).format(games=self.table("games"))
            )
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {events} ("
                    " position bigserial UNIQUE,"
                    " game text NOT NULL REFERENCES {games} (game),"
                    " seq bigint NOT NULL CHECK (seq >= 0),"
                    " type text NOT NULL,"
                    " v integer NOT NULL,"
                    " prev text NOT NULL,"
                    " hash text NOT NULL,"
                    " line bytea NOT NULL,"
                    " PRIMARY KEY (game, seq))"
                ).format(events=self.table("events"), games=self.table("games"))
            )
            # the head's compare-and-set as one call that raises when the head moved, so that an
            # append can be sent in one pipelined exchange (a refusal aborts what follows it)
            conn.execute(
                sql.SQL(
                    "CREATE OR REPLACE FUNCTION {move_head}(for_game text, from_seq bigint, from_hash text,"
                    " to_seq bigint, to_hash text) RETURNS void LANGUAGE plpgsql AS $$"
                    " BEGIN"
                    " UPDATE {games} SET next_seq = to_seq, last_hash = to_hash"
                    " WHERE game = for_game AND next_seq = from_seq AND last_hash = from_hash;"
                    " IF NOT FOUND THEN"
                    " RAISE EXCEPTION 'the head of % moved from seq %', for_game, from_seq"
                    " USING ERRCODE = '{code}';"
                    " END IF;"
                    " END $$"
                ).format(
                    move_head=self.function("move_head"), games=self.table("games"), code=sql.SQL(HEAD_MOVED)
                )
            )
            # the app's snapshot of each game (derived, never trusted over the rows: see
            # snapshot_and_events); created here too in a database made by a version without it
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {snapshots} ("
                    " game text PRIMARY KEY REFERENCES {games} (game) ON DELETE CASCADE,"
                    " seq bigint NOT NULL CHECK (seq >= 0),"
                    " hash text NOT NULL,"
                    " format integer NOT NULL,"
                    " state bytea NOT NULL)"
                ).format(snapshots=self.table("snapshots"), games=self.table("games"))
            )
            # the app's keyframes of each game's turn index (derived, never trusted over the rows:
            # see keyframe_at_or_before), and the partial index that finds a game's turns by seq
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {keyframes} ("
                    " game text NOT NULL REFERENCES {games} (game) ON DELETE CASCADE,"
                    " position bigint NOT NULL CHECK (position > 0),"
                    " hash text NOT NULL,"
                    " format integer NOT NULL,"
                    " state bytea NOT NULL,"
                    " PRIMARY KEY (game, position))"
                ).format(keyframes=self.table("keyframes"), games=self.table("games"))
            )
            conn.execute(
                sql.SQL(
                    "CREATE INDEX IF NOT EXISTS events_turn_marks ON {events} (game, seq) WHERE {marks}"
                ).format(events=self.table("events"), marks=_turn_marks_predicate())
            )
            # what the app keeps beside a log, never in it: the secret seed, the seat token hashes;
            # readable by the store's role only (revoked from PUBLIC once, as it is created)
            found = conn.execute("SELECT to_regclass(%s)", [f"{self.schema}.secrets"]).fetchone()
            if found is not None and found[0] is not None:
                return
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {secrets} ("
                    " game text NOT NULL REFERENCES {games} (game),"
                    " kind text NOT NULL,"
                    " data bytea NOT NULL,"
                    " PRIMARY KEY (game, kind))"
                ).format(secrets=self.table("secrets"), games=self.table("games"))
            )
            conn.execute(sql.SQL("REVOKE ALL ON {} FROM PUBLIC").format(self.table("secrets")))

    def log(self, game: str) -> PostgresGameLog:
        """One game's log in this store (cheap: nothing is read until asked)."""
        return PostgresGameLog(self, game)

    def folder(self) -> None:
        return None

    def change_feed(self, receive: Callable[[list[FeedRow]], None]) -> PostgresFeed:
        """The store's feed of appends (one ``LISTEN`` connection once started)."""
        from mortecouille.events.storage.postgres_feed import PostgresFeed

        return PostgresFeed(self.dsn, self.schema, receive)

    def names(self) -> list[str]:
        """The names of every game in the store, sorted
        (:class:`~mortecouille.events.storage.contract.GameStore`)."""
        with _reachable():
            return self.games()

    def games(self) -> list[str]:
        """The names of every game in the store, sorted."""
        with self.pool.connection() as conn:
            rows = conn.execute(sql.SQL("SELECT game FROM {} ORDER BY game").format(self.table("games")))
            return [str(row[0]) for row in rows]

    def tail(self, after: int = 0, limit: int = 1000) -> list[Appended]:
        """The rows after global ``position`` ``after`` in position order, at most ``limit``. A reader
        that keeps the last position it saw and asks again never misses a row committed later:
        positions are taken and committed in order (the EXCLUSIVE lock of every append)."""
        with self.pool.connection() as conn:
            rows = conn.execute(
                sql.SQL(
                    "SELECT position, game, seq FROM {} WHERE position > %s ORDER BY position LIMIT %s"
                ).format(self.table("events")),
                [after, limit],
            )
            return [Appended(int(p), str(g), int(s)) for p, g, s in rows]


class PostgresGameLog:
    """One game's log in a :class:`PostgresStore`, an
    :class:`~mortecouille.events.storage.contract.EventStore`."""

    def __init__(self, store: PostgresStore, game: str) -> None:
        self.store = store
        self.game = game
        #: per thread: ``conn``, the connection its :meth:`session` (or writer's :meth:`transaction`)
        #: holds, through which its reads, secrets and appends of this game all go (a command takes
        #: one connection from the pool, not one per statement); ``writing``, whether that
        #: connection holds the game's writer lock
        self._local = threading.local()

    @property
    def _bound(self) -> psycopg.Connection[Any] | None:
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        return conn

    @property
    def _writing(self) -> bool:
        return bool(getattr(self._local, "writing", False))

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection of this thread's session of the game, else one lent by the pool."""
        bound = self._bound
        if bound is not None:
            yield bound
            return
        with self.store.pool.connection() as conn:
            yield conn

    @contextmanager
    def session(self) -> Iterator[None]:
        """Run the block on one pooled connection: everything this thread does with the game meanwhile
        (reads, its secrets, a writer's lock and append) uses it. A command of the service runs in
        one session, so it costs one connection, and one check of it by the pool, whatever it reads."""
        if self._bound is not None:
            yield
            return
        with _reachable(), self.store.pool.connection() as conn:
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None
                self._local.secrets = None

    @property
    def name(self) -> str:
        return self.game

    @property
    def _lock_key(self) -> tuple[str]:
        # the advisory lock of this game in this store (hashed to the bigint key server side)
        return (f"{self.store.schema}/{self.game}",)

    def describe(self) -> str:
        return f"game {self.game!r} in the store"

    def as_files(self) -> None:
        return None

    def exists(self) -> bool:
        with _reachable(), self._connection() as conn:
            row = conn.execute(
                sql.SQL("SELECT 1 FROM {} WHERE game = %s").format(self.store.table("games")), [self.game]
            ).fetchone()
            return row is not None

    def read_head(self) -> Head | None:
        with _reachable(), self._connection() as conn:
            head = _head(conn, self.store, self.game)
        if head is None or head[0] == 0:
            return None
        return Head(seq=head[0] - 1, hash=head[1])

    # ---------------------------------------------------------------- reading

    @contextmanager
    def _snapshot(self) -> Iterator[tuple[psycopg.Connection[Any], tuple[int, str]]]:
        """A connection in a REPEATABLE READ transaction (the head and the rows read from one
        snapshot, so an append committing meanwhile is not taken for a removed row) and the head."""
        with _reachable(), self._connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            head = _head(conn, self.store, self.game)
            if head is None:
                raise GameNotFound(f"game {self.game!r}: not in the store {self.store.schema!r}")
            yield conn, head

    def _rows(self, conn: psycopg.Connection[Any], first_seq: int) -> Iterator[tuple[int, str, str, bytes]]:
        """The rows (seq, prev, hash, line) from ``first_seq`` on, streamed from a server-side cursor."""
        query = sql.SQL(
            "SELECT seq, prev, hash, line FROM {} WHERE game = %s AND seq >= %s ORDER BY seq"
        ).format(self.store.table("events"))
        with conn.cursor(name="mortecouille_read") as cursor:
            cursor.itersize = FETCH_ROWS
            cursor.execute(query, [self.game, first_seq])
            for seq, prev, digest, line in cursor:
                yield int(seq), str(prev), str(digest), bytes(line)

    def _checked_lines(self, first_seq: int = 0) -> Iterator[tuple[int, bytes]]:
        """Every line from ``first_seq`` on, each checked as the file reader checks a line (canonical
        form, seq, prev, hash) and against its row's columns, then the head: LogError names the
        first bad seq."""
        quick = self._few_rows(first_seq)
        if quick is not None:
            (next_seq, last_hash), rows = quick
            if first_seq > next_seq:
                return
            prev = GENESIS_HASH
            if first_seq > 0:
                if not rows or rows[0][0] != first_seq - 1:
                    raise _removed(first_seq - 1, next_seq)
                prev = rows.pop(0)[2]
            yield from self._check(iter(rows), first_seq, prev, next_seq, last_hash)
            return
        with self._snapshot() as (conn, (next_seq, last_hash)):
            if first_seq > next_seq:  # past the end: nothing to read, as a file read cut there
                return
            prev = GENESIS_HASH
            if first_seq > 0:
                row = conn.execute(
                    sql.SQL("SELECT hash FROM {} WHERE game = %s AND seq = %s").format(
                        self.store.table("events")
                    ),
                    [self.game, first_seq - 1],
                ).fetchone()
                if row is None:
                    raise _removed(first_seq - 1, next_seq)
                prev = str(row[0])
            yield from self._check(self._rows(conn, first_seq), first_seq, prev, next_seq, last_hash)

    def _few_rows(self, first_seq: int) -> tuple[tuple[int, str], list[tuple[int, str, str, bytes]]] | None:
        """The head and the rows from ``first_seq - 1`` on, read by ONE statement (so from one
        snapshot, with no transaction to open: one round trip), when they are at most
        :data:`FETCH_ROWS`; None when there are more (then streamed from a cursor instead)."""
        query = sql.SQL(
            "SELECT g.next_seq, g.last_hash, e.seq, e.prev, e.hash, e.line FROM {games} g"
            " LEFT JOIN LATERAL (SELECT seq, prev, hash, line FROM {events}"
            " WHERE game = g.game AND seq >= %s ORDER BY seq LIMIT %s) e ON true"
            " WHERE g.game = %s ORDER BY e.seq"
        ).format(games=self.store.table("games"), events=self.store.table("events"))
        with _reachable(), self._connection() as conn:
            found = conn.execute(query, [max(0, first_seq - 1), FETCH_ROWS + 1, self.game]).fetchall()
        if not found:
            raise GameNotFound(f"game {self.game!r}: not in the store {self.store.schema!r}")
        if len(found) > FETCH_ROWS:
            return None
        head = (int(found[0][0]), str(found[0][1]))
        rows = [
            (int(seq), str(prev), str(digest), bytes(line))
            for _next, _last, seq, prev, digest, line in found
            if seq is not None
        ]
        return head, rows

    def _check(
        self,
        rows: Iterator[tuple[int, str, str, bytes]],
        first_seq: int,
        prev: str,
        next_seq: int,
        last_hash: str,
    ) -> Iterator[tuple[int, bytes]]:
        """The lines of ``rows`` (from ``first_seq``, chained after ``prev``), each checked, then
        the head ``(next_seq, last_hash)`` they must end at: LogError names the first bad seq."""
        expected = first_seq
        for seq, column_prev, column_hash, line in rows:
            if seq != expected:
                raise _removed(expected, next_seq)
            prev = _checked_row(seq, column_prev, column_hash, line, prev)
            yield seq, line
            expected += 1
        if expected < next_seq:
            raise _removed(expected, next_seq)
        if expected > next_seq or (expected > 0 and prev != last_hash):
            raise LogError(
                f"the game's head says seq {next_seq - 1} with hash {last_hash[:12]} but the rows "
                f"end at seq {expected - 1} with hash {prev[:12]}: the log was rewritten",
                line=next_seq,
                seq=max(0, next_seq - 1),
            )

    def lines_from(self, seq: int) -> Iterator[tuple[int, bytes]]:
        """The lines (seq, bytes without the newline) from ``seq`` on, streamed, each checked as
        :meth:`read` checks them (the idempotency index catches up from them)."""
        return self._checked_lines(seq)

    def secrets(self) -> PostgresSecrets:
        """The game's secrets, each written in its own transaction (see :class:`PostgresSecrets`)."""
        return PostgresSecrets(self)

    def read(self) -> list[Event]:
        """Every event, typed, after checking the whole chain (see :meth:`_checked_lines`)."""
        return [decode_line(line, seq + 1) for seq, line in self._checked_lines()]

    def events_from(self, seq: int) -> Iterator[Event]:
        """The events from ``seq`` on, streamed (batches of :data:`FETCH_ROWS` rows), each checked."""
        for number, line in self._checked_lines(seq):
            yield decode_line(line, number + 1)

    def read_bytes(self) -> bytes:
        """The log as the file store writes it: the canonical lines, each ending with a newline
        (the bytes as stored; :meth:`verify_chain` checks them)."""
        with self._snapshot() as (conn, _head_now):
            return b"".join(line + b"\n" for _seq, _prev, _hash, line in self._rows(conn, 0))

    def verify_chain(self, data: bytes | None = None, on_line: OnLine | None = None) -> int:
        """Check every line and the head; return the number of lines. ``data``: bytes read before
        (from :meth:`read_bytes`), checked as given against the current head."""
        if data is None and on_line is None:
            return sum(1 for _ in self._checked_lines())
        if data is None:
            data = self.read_bytes()
        return check_chain(whole_lines(data), self.read_head(), on_line, anchor="game's head")

    def head_status(self, lines: int) -> str:
        return f"store head at seq {lines - 1} matches"

    # ---------------------------------------------------------------- the snapshot

    def snapshot_and_events(self) -> tuple[StoredSnapshot | None, Iterator[Event]]:
        """The game's snapshot, only if the log still holds the line it stands on (joined in the
        statement to the row at its seq with the same hash, at a seq the head vouches for, and
        that row checked with the rows after it, so a snapshot forged, stale or beyond the head is
        never returned; its format and bytes are the app's to check), and the events after it, or
        None and every event: what a fold from the snapshot needs, in ONE round trip when at
        most :data:`FETCH_ROWS` rows follow it (one statement: the checked snapshot, the head and
        the rows from the snapshot's on, as :meth:`_few_rows` reads them; more are streamed by
        :meth:`events_from`). The events are checked as :meth:`events_from` checks them, chained
        on to the snapshot's line. A snapshot the app then refuses (its format, its bytes) leaves
        it to read :meth:`events_from` ``(0)`` instead. GameNotFound when there is no such game."""
        query = sql.SQL(
            "WITH s AS (SELECT s.seq, s.format, s.state FROM {snapshots} s"
            " JOIN {games} g ON g.game = s.game AND s.seq < g.next_seq"
            " JOIN {events} e ON e.game = s.game AND e.seq = s.seq AND e.hash = s.hash"
            " WHERE s.game = %(game)s)"
            " SELECT g.next_seq, g.last_hash, e.seq, e.prev, e.hash, e.line, s.seq, s.format,"
            " CASE WHEN e.seq = s.seq THEN s.state END FROM {games} g LEFT JOIN s ON true"
            " LEFT JOIN LATERAL (SELECT seq, prev, hash, line FROM {events}"
            " WHERE game = g.game AND seq >= COALESCE(s.seq, 0) ORDER BY seq LIMIT %(rows)s) e ON true"
            " WHERE g.game = %(game)s ORDER BY e.seq"
        ).format(
            snapshots=self.store.table("snapshots"),
            games=self.store.table("games"),
            events=self.store.table("events"),
        )
        try:
            with _reachable(), self._connection() as conn:
                found = conn.execute(query, {"game": self.game, "rows": FETCH_ROWS + 1}).fetchall()
        except psycopg.Error as error:  # derived: a snapshot that cannot be read is not used
            _log.info("snapshot not read", game=self.game, error=str(error).strip())
            return None, self.events_from(0)
        if not found:
            raise GameNotFound(f"game {self.game!r}: not in the store {self.store.schema!r}")
        next_seq, last_hash = int(found[0][0]), str(found[0][1])
        rows = [(int(row[2]), str(row[3]), str(row[4]), bytes(row[5])) for row in found if row[2] is not None]
        snapshot: StoredSnapshot | None = None
        start, prev = 0, GENESIS_HASH
        if found[0][6] is not None:  # the first row is the snapshot's line: checked, it chains on
            if not rows or rows[0][0] != int(found[0][6]):
                return None, self.events_from(0)
            seq, line_prev, digest, line = rows.pop(0)
            try:
                if check_line(line, seq + 1, seq, line_prev) != digest:
                    return None, self.events_from(0)
            except LogError:
                return None, self.events_from(0)
            snapshot = StoredSnapshot(seq, digest, int(found[0][7]), bytes(found[0][8]))
            start, prev = seq + 1, digest
        if len(found) > FETCH_ROWS:
            return snapshot, self.events_from(start)
        checked = self._check(iter(rows), start, prev, next_seq, last_hash)
        return snapshot, (decode_line(line, number + 1) for number, line in checked)

    def write_snapshot(self, seq: int, digest: str, format_: int, state: bytes) -> bool:
        """Keep ``state`` (the app's encoding, of format ``format_``) as the game's snapshot at
        ``seq``, whose line hashes to ``digest``: one statement, its own transaction, that
        replaces the game's snapshot only if the log holds that line (a game dropped or
        re-created meanwhile gets none). Derived data: a failure is logged, never raised. True
        when written. Not to be called while an append's transaction is open (it would join it)."""
        query = sql.SQL(
            "INSERT INTO {snapshots} (game, seq, hash, format, state)"
            " SELECT game, seq, hash, %s, %s FROM {events} WHERE game = %s AND seq = %s AND hash = %s"
            " ON CONFLICT (game) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash,"
            " format = EXCLUDED.format, state = EXCLUDED.state"
        ).format(snapshots=self.store.table("snapshots"), events=self.store.table("events"))
        try:
            with _reachable(), self._connection() as conn:
                written = conn.execute(query, [format_, state, self.game, seq, digest])
        except (psycopg.Error, StoreUnavailable) as error:
            _log.warning("snapshot not written", game=self.game, seq=seq, error=str(error).strip())
            return False
        return written.rowcount == 1

    # ---------------------------------------------------------------- the turn index's reads

    def turn_marks(self) -> tuple[tuple[int, str], list[tuple[int, bytes]]]:
        """The head (the next seq and the last line's hash) and the lines of the rows of
        :data:`TURN_MARK_TYPES` before it, by seq: ONE statement, through the partial index
        ``events_turn_marks`` (a game's turns are found without reading the game). Each line is
        checked against its row (``check_line`` with the row's prev, and its hash column):
        LogError names the first bad one. GameNotFound when there is no such game."""
        query = turn_marks_query(self.store)
        with _reachable(), self._connection() as conn:
            found = conn.execute(query, [self.game]).fetchall()
        if not found:
            raise GameNotFound(f"game {self.game!r}: not in the store {self.store.schema!r}")
        marks: list[tuple[int, bytes]] = []
        for _next, _last, seq, prev, digest, line in found:
            if seq is None:
                continue
            line = bytes(line)
            if check_line(line, int(seq) + 1, int(seq), str(prev)) != digest:
                raise LogError(
                    "the row's hash column differs from its line (the row was edited)",
                    line=int(seq) + 1,
                    seq=int(seq),
                )
            marks.append((int(seq), line))
        return (int(found[0][0]), str(found[0][1])), marks

    def keyframe_at_or_before(self, position: int) -> StoredKeyframe | None:
        """The game's keyframe at the greatest position at most ``position`` that the log vouches
        for: joined in the statement to the row at its seq (``position - 1``) with its hash, and
        that row's line checked (``check_line``); one whose line does not check out is passed
        over for an earlier one. Its format and bytes are the app's to check. None: no keyframe
        (fold from the start). Derived data: one that cannot be read is not used."""
        query = sql.SQL(
            "SELECT k.position, k.hash, k.format, k.state, e.prev, e.line FROM {keyframes} k"
            " JOIN {events} e ON e.game = k.game AND e.seq = k.position - 1 AND e.hash = k.hash"
            " WHERE k.game = %s AND k.position <= %s ORDER BY k.position DESC LIMIT 1"
        ).format(keyframes=self.store.table("keyframes"), events=self.store.table("events"))
        while position > 0:
            try:
                with _reachable(), self._connection() as conn:
                    row = conn.execute(query, [self.game, position]).fetchone()
            except psycopg.Error as error:
                _log.info("keyframe not read", game=self.game, error=str(error).strip())
                return None
            if row is None:
                return None
            at, digest = int(row[0]), str(row[1])
            try:
                if check_line(bytes(row[5]), at, at - 1, str(row[4])) == digest:
                    return StoredKeyframe(at, digest, int(row[2]), bytes(row[3]))
            except LogError:
                pass
            position = at - 1
        return None

    def checked_range(self, first_seq: int, end_seq: int, prev: str) -> Iterator[tuple[int, bytes]]:
        """The lines ``first_seq`` .. ``end_seq - 1``, read :data:`RANGE_ROWS` at a time, each
        checked as a read checks it (``check_line`` chained on from ``prev``, the hash of line
        ``first_seq - 1``; its prev and hash columns): LogError names the first bad or missing
        seq. Rows before the head never change, so the statements need no common snapshot."""
        query = sql.SQL(
            "SELECT seq, prev, hash, line FROM {} WHERE game = %s AND seq >= %s AND seq < %s ORDER BY seq"
        ).format(self.store.table("events"))
        expected = first_seq
        while expected < end_seq:
            stop = min(end_seq, expected + RANGE_ROWS)
            with _reachable(), self._connection() as conn:
                rows = conn.execute(query, [self.game, expected, stop]).fetchall()
            for seq, column_prev, column_hash, line in rows:
                if seq != expected:
                    raise _removed(expected, end_seq)
                line = bytes(line)
                prev = _checked_row(seq, column_prev, column_hash, line, prev)
                yield seq, line
                expected += 1
            if expected < stop:
                raise _removed(expected, end_seq)

    def write_keyframes(self, format_: int, frames: Sequence[tuple[int, str, bytes]]) -> int:
        """Keep ``frames`` (position, the hash of line ``position - 1``, the app's encoding of the
        state there, of format ``format_``) as the game's keyframes: one statement, replacing
        those at the same positions, each only if the log holds its line. Derived data: a failure
        is logged, never raised. How many were written."""
        if not frames:
            return 0
        query = sql.SQL(
            "INSERT INTO {keyframes} (game, position, hash, format, state)"
            " SELECT e.game, f.position, f.hash, %s, f.state"
            " FROM unnest(%s::bigint[], %s::text[], %s::bytea[]) AS f (position, hash, state)"
            " JOIN {events} e ON e.game = %s AND e.seq = f.position - 1 AND e.hash = f.hash"
            " ON CONFLICT (game, position) DO UPDATE SET hash = EXCLUDED.hash,"
            " format = EXCLUDED.format, state = EXCLUDED.state"
        ).format(keyframes=self.store.table("keyframes"), events=self.store.table("events"))
        positions = [frame[0] for frame in frames]
        hashes = [frame[1] for frame in frames]
        states = [frame[2] for frame in frames]
        try:
            with _reachable(), self._connection() as conn:
                written = conn.execute(query, [format_, positions, hashes, states, self.game])
        except (psycopg.Error, StoreUnavailable) as error:
            _log.warning("keyframes not written", game=self.game, error=str(error).strip())
            return 0
        return max(0, written.rowcount)

    # ---------------------------------------------------------------- writing

    def create(self, events: Sequence[Event]) -> list[Event]:
        """Start the game with ``events``; Conflict if it exists."""
        with self.creating() as creation:
            return creation.write(events)

    @contextmanager
    def creating(self) -> Iterator[PostgresCreation]:
        """Create the game exclusively (its head row, in a transaction holding its lock) for the
        block to write its first events. If the block raises or writes nothing, the transaction
        is rolled back: a refused creation leaves nothing."""
        if "\0" in self.game:
            raise Unwritable("a game's name cannot hold a NUL character")
        with _reachable(), self._connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", self._lock_key)
            inserted = conn.execute(
                sql.SQL(
                    "INSERT INTO {} (game, next_seq, last_hash) VALUES (%s, 0, %s) ON CONFLICT DO NOTHING"
                ).format(self.store.table("games")),
                [self.game, GENESIS_HASH],
            )
            if inserted.rowcount != 1:
                raise Conflict(f"game {self.game!r} already exists in the store {self.store.schema!r}")
            creation = PostgresCreation(self, conn)
            yield creation
            if not creation.written:
                raise psycopg.Rollback()

    @contextmanager
    def transaction(self, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[PostgresTransaction]:
        """Hold the game's writer lock (a session-level advisory lock, waited for at most
        ``timeout`` seconds, else Conflict) for a read-decide-append cycle."""
        with self._writer_connection() as conn:
            locked, head = _lock_and_head(conn, self.store, self.game, self._lock_key, timeout)
            if not locked:
                raise Conflict(f"game {self.game!r} is locked by another writer (waited {timeout:g} s)")
            tx: PostgresTransaction | None = None
            try:
                if head is None:
                    raise GameNotFound(f"game {self.game!r}: not in the store {self.store.schema!r}")
                tx = PostgresTransaction(self, conn, head)
                yield tx
            finally:
                idle = not conn.closed and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
                if idle and (tx is None or not tx.released):
                    conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", self._lock_key)

    @contextmanager
    def _writer_connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection a writer locks the game on: this thread's session's, unless it holds
        the game's lock already (a second writer in the same thread is another writer, refused
        after its timeout as on files, so it needs a session, a connection, of its own)."""
        if self._writing:
            with _reachable(), self.store.pool.connection() as conn:
                yield conn
            return
        with self.session(), _reachable(), self._connection() as conn:
            self._local.writing = True
            try:
                yield conn
            finally:
                self._local.writing = False

    def import_lines(self, data: bytes, secrets: Mapping[str, bytes] | None = None) -> int:
        """Create the game from a written log's exact bytes (a file store's log, an export), for a
        copy that keeps every byte and hash (re-stamping decoded events would not: an int written
        in a float field comes back as a float). Every line is checked (:func:`check_line`, and
        decoded as an event) before anything is committed; a bad one is a LogError naming its seq
        and nothing is created. Conflict if the game exists. ``secrets`` (kind -> bytes: the seed,
        the seats) are written in the same transaction. Returns the number of lines."""
        with self.creating() as creation:
            count = creation.write_lines(data)
            for kind, value in (secrets or {}).items():
                creation.secrets().create(kind, value)
            return count

    def append(self, events: Sequence[Event], expected_seq: int | None = None) -> list[Event]:
        """Append under the writer lock; see :meth:`PostgresTransaction.append`."""
        with self.transaction() as tx:
            return tx.append(events, expected_seq, release=True)


class PostgresCreation:
    """A game just created, its head row inserted but not committed (see :meth:`PostgresGameLog.creating`)."""

    def __init__(self, log: PostgresGameLog, conn: psycopg.Connection[Any]) -> None:
        self.log = log
        self.conn = conn
        self.written = False
        #: never: a creation commits whole or not at all, so none is left half-made to take over
        self.taken_over = False

    def secrets(self) -> PostgresSecrets:
        """The game's secrets written in the creation's transaction: they commit with it, or
        nothing does (the secret seed of a new game)."""
        return PostgresSecrets(self.log, self.conn)

    def write(self, events: Sequence[Event], extras: Extras = None) -> list[Event]:
        """Stamp and insert the game's first events; they commit with the creation.
        ``extras``: envelope fields for the first line (a creation's ``idem``) or for each line,
        in the same transaction: the key and the game commit together, or neither does."""
        stamped, payload = stamp_all(events, 0, GENESIS_HASH, extras)
        _insert(self.conn, self.log, _rows_of(stamped, payload), 0, GENESIS_HASH)
        self.written = True
        return stamped

    def write_lines(self, data: bytes) -> int:
        """Write a whole log's lines as they are (see :meth:`PostgresGameLog.import_lines`)."""
        rows: list[_Row] = []
        prev = GENESIS_HASH
        if data and not data.endswith(b"\n"):
            raise LogError(
                "the last line has no newline (a torn tail): repair it first", line=data.count(b"\n") + 1
            )
        for number, line in enumerate(data.splitlines(), 1):
            digest = check_line(line, number, number - 1, prev)
            event = decode_line(line, number)  # an unknown type or a bad field is refused here
            version = msgspec.json.decode(line, type=dict[str, Any]).get("v", 1)
            rows.append(_Row(number - 1, event_tag(type(event)), int(version), prev, digest, line))
            prev = digest
        _insert(self.conn, self.log, rows, 0, GENESIS_HASH)
        self.written = True
        return len(rows)
