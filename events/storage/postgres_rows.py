"""What a PostgreSQL game does row by row, apart from the store that opens it: its writer's
transaction (an append in one exchange), its secrets' rows, its head, its rows checked as read.
Written against :class:`PostgresGame` (what they use of a
:class:`~mortecouille.events.storage.postgres.PostgresGame`), so the log imports them and they
import nothing of it."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import msgspec
import psycopg
import psycopg.errors
from psycopg import sql
from psycopg_pool import PoolTimeout

from mortecouille.events.base import Event
from mortecouille.events.codec import Extras, LogError, check_line, stamp_all
from mortecouille.events.house_log import get_logger
from mortecouille.events.schema import event_tag
from mortecouille.events.storage.errors import (
    Conflict,
    GameNotFound,
    StoreUnavailable,
)

if TYPE_CHECKING:
    pass

_log = get_logger("mortecouille")

#: The event types the turn commands find by seq (``replay``, ``explain`` and ``board --turn``:
#: where each turn starts and ends, where the game ended, the rulings), through a partial index of
#: the events table on just their rows (``events_turn_marks``), so that finding a game's turns
#: reads those rows, never the game.
TURN_MARK_TYPES = ("turn-started", "turn-ended", "game-ended", "ruling")

#: How many rows one INSERT statement carries at most (a command's batch is one statement; an
#: imported log is cut in statements of this many rows, within PostgreSQL's 65,535 parameters).
INSERT_ROWS = 1000


class SchemaTables(Protocol):
    """The names a store's schema gives its tables, functions and channel."""

    @property
    def channel(self) -> str: ...

    @property
    def schema(self) -> str: ...

    def table(self, name: str) -> sql.Composed: ...

    def function(self, name: str) -> sql.Composed: ...


class PostgresGame(Protocol):
    """What the rows' code uses of a PostgreSQL game's log."""

    game: str
    _local: threading.local

    @property
    def store(self) -> SchemaTables: ...

    @property
    def _lock_key(self) -> tuple[str]: ...

    def read(self) -> list[Event]: ...

    @property
    def _bound(self) -> psycopg.Connection[Any] | None: ...

    def _connection(self) -> AbstractContextManager[psycopg.Connection[Any]]: ...


class PostgresSecrets:
    """A game's secrets in the store's ``secrets`` table: ``(game, kind) -> data``, the game's row
    in ``games`` referenced (no secret without its game). ``conn``: the connection of the game's
    creation under way, whose transaction they then join (committed with the game, or rolled
    back with it); otherwise each change is a transaction of its own on a pooled connection.
    The table is revoked from PUBLIC: only the store's role reads it (the file store's 0600)."""

    def __init__(self, log: PostgresGame, conn: psycopg.Connection[Any] | None = None) -> None:
        self.log = log
        self.conn = conn

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        if self.conn is not None:
            yield self.conn
            return
        # each change is one statement, its own transaction (autocommit): no BEGIN and COMMIT to pay
        with _reachable(), self.log._connection() as conn:
            yield conn

    def where(self, kind: str) -> str:
        return f"the {kind} of {self.log.game!r} in the store {self.log.store.schema!r}"

    def read(self, kind: str) -> bytes | None:
        if self.conn is None and self.log._bound is not None:
            return self._read_in_session(kind)
        with self._connection() as conn:
            row = conn.execute(
                sql.SQL("SELECT data FROM {} WHERE game = %s AND kind = %s").format(
                    self.log.store.table("secrets")
                ),
                [self.log.game, kind],
            ).fetchone()
        return None if row is None else bytes(row[0])

    def _read_in_session(self, kind: str) -> bytes | None:
        """Within a session (one request), every secret of the game read by one statement the
        first time one is asked for (a command reads the caller's seats, then the seed: one round
        trip for both), and kept until the session ends or one of them is changed."""
        kept: dict[str, bytes] | None = getattr(self.log._local, "secrets", None)
        if kept is None:
            with self._connection() as conn:
                rows = conn.execute(
                    sql.SQL("SELECT kind, data FROM {} WHERE game = %s").format(
                        self.log.store.table("secrets")
                    ),
                    [self.log.game],
                ).fetchall()
            kept = {str(found): bytes(data) for found, data in rows}
            self.log._local.secrets = kept
        return kept.get(kind)

    def _forget(self) -> None:
        self.log._local.secrets = None

    def exists(self, kind: str) -> bool:
        return self.read(kind) is not None

    def create(self, kind: str, data: bytes) -> None:
        self._forget()
        with self._connection() as conn:
            try:
                inserted = conn.execute(
                    sql.SQL(
                        "INSERT INTO {} (game, kind, data) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING"
                    ).format(self.log.store.table("secrets")),
                    [self.log.game, kind, data],
                )
            except psycopg.errors.ForeignKeyViolation:
                raise GameNotFound(self._no_game()) from None
            if inserted.rowcount != 1:
                raise Conflict(f"{self.where(kind)} already exists")

    def replace(self, kind: str, data: bytes) -> None:
        self._forget()
        with self._connection() as conn:
            try:
                conn.execute(
                    sql.SQL(
                        "INSERT INTO {} (game, kind, data) VALUES (%s, %s, %s)"
                        " ON CONFLICT (game, kind) DO UPDATE SET data = EXCLUDED.data"
                    ).format(self.log.store.table("secrets")),
                    [self.log.game, kind, data],
                )
            except psycopg.errors.ForeignKeyViolation:
                raise GameNotFound(self._no_game()) from None

    def _no_game(self) -> str:
        return f"game {self.log.game!r}: not in the store {self.log.store.schema!r}"

    def remove(self, kind: str) -> None:
        if self.conn is not None:
            return  # joined to a creation: its rollback takes the secret back with the game
        self._forget()
        with self._connection() as conn:
            conn.execute(
                sql.SQL("DELETE FROM {} WHERE game = %s AND kind = %s").format(
                    self.log.store.table("secrets")
                ),
                [self.log.game, kind],
            )



class PostgresTransaction:
    """A game held by one writer (see :meth:`PostgresGame.transaction`)."""

    def __init__(self, log: PostgresGame, conn: psycopg.Connection[Any], head: tuple[int, str]) -> None:
        self.log = log
        self.conn = conn
        #: the game's head (next seq, last hash) as read once the lock was taken, then moved by
        #: this writer's appends: every writer of the game holds its lock, so nobody else moves it
        #: (and the append's compare-and-set on the head row would refuse it if anyone had)
        self.head = head
        #: whether the game's writer lock went with the last append (``release=True``)
        self.released = False

    def read(self) -> list[Event]:
        return self.log.read()

    def position(self) -> tuple[int, str]:
        """The next seq and the last line's hash (read when the lock was taken; no round trip)."""
        return self.head

    def acknowledge(self, last: Event) -> None:
        """Nothing to do: an append commits whole, and nothing repairs a committed line."""

    def offset(self) -> None:
        return None

    def append(
        self,
        events: Sequence[Event],
        expected_seq: int | None = None,
        extras: Extras = None,
        *,
        release: bool = False,
    ) -> list[Event]:
        """Stamp ``events`` after the head and commit them in one transaction (see the module's
        docstring); a stale ``expected_seq`` raises Conflict and nothing is written. ``release``:
        the writer's last act (``log.append``): the game's lock is released in the same exchange,
        after the commit, rather than in one of its own."""
        if self.released:
            raise Conflict(f"game {self.log.game!r}: its writer lock was released by the last append")
        game = self.log.game
        next_seq, prev = self.head
        if expected_seq is not None and expected_seq != next_seq:
            raise Conflict.stale(game, expected_seq, next_seq)
        if not events:
            return []
        stamped, payload = stamp_all(events, next_seq, prev, extras)
        with _reachable():
            _append_pipelined(
                self.conn,
                self.log,
                _rows_of(stamped, payload),
                next_seq,
                prev,
                self.log._lock_key if release else None,
            )
        self.released = release
        self.head = (stamped[-1].seq + 1, stamped[-1].hash)
        return stamped



class _Row(NamedTuple):
    seq: int
    type: str
    v: int
    prev: str
    hash: str
    line: bytes


def _rows_of(stamped: Sequence[Event], payload: bytes) -> list[_Row]:
    """The rows of stamped events, each with its line cut from their ``payload``."""
    lines = payload.split(b"\n")[:-1]
    return [
        _Row(event.seq, event_tag(type(event)), event.v, event.prev, event.hash, line)
        for event, line in zip(stamped, lines, strict=True)
    ]


def _insert(
    conn: psycopg.Connection[Any], log: PostgresGame, rows: Sequence[_Row], next_seq: int, prev: str
) -> None:
    """Insert ``rows`` (chained after ``(next_seq, prev)``) inside the caller's transaction, move
    the head from ``(next_seq, prev)`` by compare-and-set, and notify the store's channel."""
    store = log.store
    if not rows:
        return
    # the head first, by compare-and-set (it locks the game's row only), so that the global lock
    # below is held for as little as possible: the insert, the notify and the commit
    moved = conn.execute(
        sql.SQL(
            "UPDATE {} SET next_seq = %s, last_hash = %s WHERE game = %s AND next_seq = %s AND last_hash = %s"
        ).format(store.table("games")),
        [rows[-1].seq + 1, rows[-1].hash, log.game, next_seq, prev],
    )
    if moved.rowcount != 1:
        raise Conflict(f"game {log.game!r}: the head moved from seq {next_seq}; nothing was written")
    try:
        _lock_insert_notify(conn, log, rows)
    except psycopg.errors.UniqueViolation:
        raise Conflict(f"game {log.game!r}: seq {next_seq} is taken; nothing was written") from None


def _lock_insert_notify(conn: psycopg.Connection[Any], log: PostgresGame, rows: Sequence[_Row]) -> None:
    """The end of every append's transaction, after its head moved: the global lock, the rows, the
    notification (delivered at commit, only if it commits)."""
    store = log.store
    # positions must commit in the order they are taken: one appender at a time holds the table
    # from here to its commit (taken last, just before the insert that takes the positions)
    conn.execute(sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(store.table("events")))
    for start in range(0, len(rows), INSERT_ROWS):
        chunk = rows[start : start + INSERT_ROWS]
        values = sql.SQL(", ").join(sql.SQL("(%s, %s, %s, %s, %s, %s, %s)") for _ in chunk)
        conn.execute(
            sql.SQL("INSERT INTO {} (game, seq, type, v, prev, hash, line) VALUES {}").format(
                store.table("events"), values
            ),
            [value for row in chunk for value in (log.game, *row)],
        )
    notice = msgspec.json.encode({"game": log.game, "seq": rows[-1].seq}).decode()
    conn.execute("SELECT pg_notify(%s, %s)", [store.channel, notice])


#: The SQLSTATE the head's compare-and-set raises when the head moved (a code of the user range).
HEAD_MOVED = "MCHDM"


def _append_pipelined(
    conn: psycopg.Connection[Any],
    log: PostgresGame,
    rows: Sequence[_Row],
    next_seq: int,
    prev: str,
    unlock: tuple[str] | None = None,
) -> None:
    """The writer's append: :func:`_insert`'s transaction in ONE exchange with the server instead of
    six (psycopg's pipeline mode sends the statements without waiting for each answer): BEGIN, the
    head's compare-and-set (which raises, server side, when the head is not where this writer
    read it, so the statements after it are not run), the EXCLUSIVE lock, the insert, the NOTIFY,
    COMMIT. The global lock is so held for the insert, the notify and the commit's flush, with no
    client round trip among them. A statement refused aborts the rest and the transaction is
    rolled back: nothing is written."""
    store = log.store
    try:
        with conn.pipeline():
            conn.execute("BEGIN")
            conn.execute(
                sql.SQL("SELECT {cas}(%s, %s, %s, %s, %s)").format(cas=store.function("move_head")),
                [log.game, next_seq, prev, rows[-1].seq + 1, rows[-1].hash],
            )
            _lock_insert_notify(conn, log, rows)
            conn.execute("COMMIT")
            if unlock is not None:  # after the commit: run only if every statement before it was
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", unlock)
    except psycopg.errors.UniqueViolation:
        _roll_back(conn)
        raise Conflict(f"game {log.game!r}: seq {next_seq} is taken; nothing was written") from None
    except psycopg.Error as error:
        _roll_back(conn)
        if error.sqlstate == HEAD_MOVED:
            raise Conflict(
                f"game {log.game!r}: the head moved from seq {next_seq}; nothing was written"
            ) from None
        raise
    except BaseException:
        _roll_back(conn)
        raise


def _roll_back(conn: psycopg.Connection[Any]) -> None:
    """End a transaction the append left open (refused, or interrupted), writing nothing."""
    if not conn.closed and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.execute("ROLLBACK")


def _turn_marks_predicate() -> sql.Composed:
    """``type IN (...)`` of :data:`TURN_MARK_TYPES`, as literals: the predicate of the partial
    index, which the planner matches only when a query spells it the same way."""
    return sql.SQL("type IN ({})").format(sql.SQL(", ").join(sql.Literal(tag) for tag in TURN_MARK_TYPES))


def turn_marks_query(store: SchemaTables) -> sql.Composed:
    """The statement of :meth:`PostgresGame.turn_marks` (its one parameter: the game)."""
    return sql.SQL(
        "SELECT g.next_seq, g.last_hash, e.seq, e.prev, e.hash, e.line FROM {games} g"
        " LEFT JOIN LATERAL (SELECT seq, prev, hash, line FROM {events}"
        " WHERE game = g.game AND seq < g.next_seq AND {marks}) e ON true"
        " WHERE g.game = %s ORDER BY e.seq"
    ).format(games=store.table("games"), events=store.table("events"), marks=_turn_marks_predicate())


class StoredKeyframe(NamedTuple):
    """A keyframe of a game's turn index as the store keeps it: the position (events folded), the
    hash of the line before it (checked against the log when read), the app's format and state."""

    position: int
    hash: str
    format: int
    state: bytes


def _head(conn: psycopg.Connection[Any], store: SchemaTables, game: str) -> tuple[int, str] | None:
    row = conn.execute(
        sql.SQL("SELECT next_seq, last_hash FROM {} WHERE game = %s").format(store.table("games")), [game]
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def _lock_and_head(
    conn: psycopg.Connection[Any], store: SchemaTables, game: str, key: tuple[str], timeout: float
) -> tuple[bool, tuple[int, str] | None]:
    """Take the game's session advisory lock (as :func:`_advisory_lock_within`), then read its
    head, in one exchange (pipelined): the server runs the head's read after the lock is granted,
    with a snapshot taken then, so no other writer can have moved it. (False, None) when the
    lock was not granted within ``timeout``."""
    milliseconds = max(1, int(timeout * 1000))
    try:
        with conn.pipeline():
            conn.execute(
                "SELECT pg_advisory_lock(hashtextextended(%s, 0))"
                " FROM (SELECT set_config('lock_timeout', %s, true)) AS timeout",
                [key[0], f"{milliseconds}ms"],
            )
            read = conn.execute(
                sql.SQL("SELECT next_seq, last_hash FROM {} WHERE game = %s").format(store.table("games")),
                [game],
            )
    except psycopg.errors.LockNotAvailable:
        return False, None
    row = read.fetchone()
    return True, None if row is None else (int(row[0]), str(row[1]))


def _checked_row(seq: int, column_prev: str, column_hash: str, line: bytes, prev: str) -> str:
    """The hash of row ``seq``'s line, checked as every read checks a row: the line itself
    (``check_line``, chained after ``prev``), then its prev and hash columns against it (a row
    edited beside its line); LogError names the line otherwise."""
    digest = check_line(line, seq + 1, seq, prev)
    if column_hash != digest or column_prev != prev:
        raise LogError(
            "the row's hash or prev column differs from its line (the row was edited)",
            line=seq + 1,
            seq=seq,
        )
    return digest


def _removed(seq: int, next_seq: int) -> LogError:
    return LogError(
        f"the game's head says seq {next_seq - 1} but seq {seq} is missing: "
        f"seq {seq} to {next_seq - 1} were removed",
        line=seq + 1,
        seq=seq,
    )


@contextmanager
def _reachable() -> Iterator[None]:
    """A dropped or refused connection as :class:`StoreUnavailable`, not a driver traceback."""
    try:
        yield
    except (psycopg.OperationalError, PoolTimeout) as error:
        raise StoreUnavailable(
            f"the PostgreSQL store is unreachable ({str(error).strip() or type(error).__name__}); "
            "an append in flight may or may not have been committed: read the game before retrying"
        ) from None
