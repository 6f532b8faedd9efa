"""The change feed of a PostgreSQL store: every row appended by any process, in the global order,
delivered to this process (several ``serve`` processes on one database).

Every append to a :class:`~mortecouille.events.storage.postgres.PostgresStore` sends ``NOTIFY
<schema>_events`` in its transaction (delivered at commit, only if it commits). A
:class:`PostgresFeed` keeps **one** ``LISTEN`` connection per process, in a thread of its own, and
on each notification reads the store's global order (``events.position``) after the last position
it delivered: the rows, not the payloads, are what it hands on. So

* nothing is lost when notifications are: after a dropped connection the feed reconnects,
  ``LISTEN``s again and reads every row after its last position, which includes whatever was
  appended while it was away; several notifications that arrive together cost one read;
* nothing is skipped: the store commits positions in the order it takes them (its appends hold the
  events table's EXCLUSIVE lock), so a row that commits later never has a smaller position than
  one already read (a position that never commits leaves a hole, never a late row);
* nothing is delivered twice: positions only grow.

The receiver (``on_rows``) is called in the feed's thread with each batch of :class:`FeedRow`, in
position order; the game service hands them to its event loop (``web/live.py``). A receiver that
raises is logged and the feed goes on.

Imported only where a PostgreSQL store is served (psycopg is the optional ``postgres`` dependency).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import psycopg
from psycopg import sql

from mortecouille.events.house_log import get_logger

_log = get_logger("mortecouille.feed")

#: How long the feed's thread waits for a notification before it looks whether it was stopped.
WAKE_SECONDS = 0.5
#: How long the feed waits before connecting again after the server dropped it (or refused it).
RECONNECT_SECONDS = 1.0
#: How many rows one read of the global order takes at most (a long backlog is read in batches).
BATCH_ROWS = 1000


class FeedRow(NamedTuple):
    """One appended row: its global position, its game, its seq in the game, its event type and
    its line (the exact canonical bytes, without the newline: a watcher hands them on without
    reading the game again, after checking them against the chain it holds)."""

    position: int
    game: str
    seq: int
    type: str
    line: bytes


class PostgresFeed:
    """One ``LISTEN`` connection and the rows it reads after each notification (see the module).

    ``url`` and ``schema`` name the store (as :class:`PostgresStore` takes them). ``after``: the
    position to deliver from (exclusive); None (the default) starts at the end of the global
    order as it is when the feed first connects: only what is appended from then on.
    """

    def __init__(
        self,
        url: str,
        schema: str,
        on_rows: Callable[[list[FeedRow]], None],
        *,
        after: int | None = None,
        wake_seconds: float = WAKE_SECONDS,
        reconnect_seconds: float = RECONNECT_SECONDS,
    ) -> None:
        self.url = url
        self.schema = schema
        self.channel = f"{schema}_events"
        self.on_rows = on_rows
        #: the last position delivered (None until the feed has connected once and read the end)
        self.position = after
        self.wake_seconds = wake_seconds
        self.reconnect_seconds = reconnect_seconds
        #: how many times the feed connected (1 after its start; more after a drop)
        self.connections = 0
        self._stopping = threading.Event()
        self._listening = threading.Event()
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- life

    def start(self, timeout: float = 30.0) -> None:
        """Start the feed's thread and wait (at most ``timeout`` seconds) until it listens, so an
        append made after ``start`` returns is delivered. A server that cannot be reached then is
        logged and tried again in the background (the feed catches up when it connects)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name=f"feed {self.channel}", daemon=True)
        self._thread.start()
        if not self._listening.wait(timeout):
            _log.warning("the store's change feed is not listening yet", channel=self.channel)

    def stop(self) -> None:
        """Stop the thread (at most about :data:`WAKE_SECONDS` later) and wait for it."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> PostgresFeed:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------- the thread

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True) as conn:
                    self._listen(conn)
            except psycopg.OperationalError as error:
                _log.warning(
                    "the store's change feed lost its connection; connecting again",
                    channel=self.channel,
                    error=str(error).strip(),
                )
            finally:
                self._listening.clear()
            self._stopping.wait(self.reconnect_seconds)

    def _listen(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
        self.connections += 1
        if self.position is None:
            self.position = self._end(conn)
        self._listening.set()
        # listening first, then reading: a row committed in between is in the read, or notified
        # after it (then read again, from the new position: never twice)
        self._deliver(conn)
        while not self._stopping.is_set():
            notified = False
            for _notice in conn.notifies(timeout=self.wake_seconds, stop_after=1):
                notified = True
            if notified:
                # several notifications that came together: drained, then one read for them all
                for _notice in conn.notifies(timeout=0.001):
                    pass
                self._deliver(conn)

    def _end(self, conn: psycopg.Connection[Any]) -> int:
        row = conn.execute(
            sql.SQL("SELECT coalesce(max(position), 0) FROM {}").format(self._events())
        ).fetchone()
        return int(row[0]) if row is not None else 0

    def _events(self) -> sql.Composed:
        return sql.SQL("{}.{}").format(sql.Identifier(self.schema), sql.Identifier("events"))

    def _deliver(self, conn: psycopg.Connection[Any]) -> None:
        """Hand on every row after the last position delivered, in batches of :data:`BATCH_ROWS`."""
        assert self.position is not None
        while True:
            rows = [
                FeedRow(int(position), str(game), int(seq), str(kind), bytes(line))
                for position, game, seq, kind, line in conn.execute(
                    sql.SQL(
                        "SELECT position, game, seq, type, line FROM {} WHERE position > %s"
                        " ORDER BY position LIMIT %s"
                    ).format(self._events()),
                    [self.position, BATCH_ROWS],
                )
            ]
            if not rows:
                return
            self.position = rows[-1].position
            try:
                self.on_rows(rows)
            except Exception:  # noqa: BLE001 - one receiver's problem never stops the feed
                _log.warning("the change feed's receiver failed", channel=self.channel, exc_info=True)
            if len(rows) < BATCH_ROWS:
                return
