"""The snapshot of a game ``serve`` plays, on files (``GAME.state``) as on a store that keeps
snapshots (PostgreSQL), written off the request's path.

A CLI command rewrites a game's snapshot after it folded :data:`SNAPSHOT_EVERY` events or more
past it (:func:`~mortecouille.app.snapshots.keep_snapshot`,
:func:`~mortecouille.app.snapshots.keep_stored_snapshot`). ``serve`` seldom folds: it carries
each game's state from one command to the next (``known`` in ``run_command``), so its commands
never made a snapshot due, and after a long served game the first CLI ``state`` or ``order``
folded from an old snapshot or from seq 0. The service hands each append it answers, with the
state after it, to a :class:`SnapshotKeeper`, which writes the snapshot whenever the append took
the game past a multiple of :data:`SNAPSHOT_EVERY` events: no count of the kept snapshot's seq is
needed (one process of several, or a restarted one, cannot know it), and the snapshot stays fewer
than :data:`SNAPSHOT_EVERY` events plus one batch behind the games ``serve`` plays.

One keeper for both kinds of store: it knows only the line (seq and hash) and the state through
it, and :func:`~mortecouille.app.snapshots.write_snapshot_through` writes the store's own kind of
snapshot. On files that is ``GAME.state`` exactly as a command that folded through that line
writes it (``write_snapshot``, on the line's anchor: the byte where the line ends, found from the
log's settled end backwards and its line checked with ``anchor_holds``), never written over a
usable snapshot on that line or a later one (a CLI command may have written one meanwhile; the
check and the rename are not atomic against a CLI command writing in between, which can only
leave an older snapshot that holds, costing the next fold speed). On PostgreSQL, the store's
``write_snapshot``.

Why a thread: the write (the state encoded, one statement or one file) costs about as much as a
player's order itself on a long game (measured on PostgreSQL on a 100,000-event game: 1.5 ms to
encode the state and 1.6 ms for the statement, against 3.5 ms for a whole order through
``run_command``; on files the whole write, the line's anchor found and checked, the state encoded
and the file renamed, 2.6 ms), so it is not made on the request that made it due. Each game's
newest due snapshot waits in :attr:`SnapshotKeeper._due` (an older one not written yet is
replaced, never queued), and one thread writes them. The snapshot is derived data: a write that
fails is logged, one never made (the process stopped) costs the next command's fold only speed,
and it is written only if the log holds its line, so a game dropped, cut or rewritten meanwhile
gets none.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from mortecouille.app.snapshots import SNAPSHOT_EVERY, keeps_snapshots, write_snapshot_through
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.contract import EventStore

_log = get_logger("mortecouille")


def crosses_snapshot_mark(first_seq: int, last_seq: int) -> bool:
    """Whether a batch of seqs ``first_seq``..``last_seq`` took its game past a multiple of
    :data:`SNAPSHOT_EVERY` events (from ``first_seq`` events to ``last_seq + 1``)."""
    return (last_seq + 1) // SNAPSHOT_EVERY > first_seq // SNAPSHOT_EVERY


class _Due:
    """A snapshot to write: the store's game, the line it stands on and the state through it."""

    __slots__ = ("log", "seq", "hash", "state")

    def __init__(self, log_: EventStore, seq: int, digest: str, state: GameState) -> None:
        self.log = log_
        self.seq = seq
        self.hash = digest
        self.state = state


class SnapshotKeeper:
    """Writes, in a thread of its own (started with the first one due), the snapshots the appends
    handed to :meth:`appended` make due. :meth:`settled` waits until none is left (tests);
    :meth:`close` writes those left and stops the thread (the service's end, before its store
    closes)."""

    def __init__(self) -> None:
        self._due: dict[str, _Due] = {}
        self._guard = threading.Condition()
        self._writing = False
        self._closed = False
        self._thread: threading.Thread | None = None

    def appended(self, log_: EventStore, appended: Sequence[Event], state: GameState) -> bool:
        """Note ``appended``, the events just appended to ``log_``'s game (its last line now, as
        far as the caller knows), and ``state``, the fold of the log through them: when the game
        keeps a snapshot (:func:`~mortecouille.app.snapshots.keeps_snapshots`: a file log, or a
        store that keeps them) and the batch crossed a mark, the snapshot is written at its last
        event, soon, in the keeper's thread. True when one was noted as due."""
        if not keeps_snapshots(log_) or not appended:
            return False
        first, last = appended[0], appended[-1]
        if not crosses_snapshot_mark(first.seq, last.seq):
            return False
        name = getattr(log_, "name", None)
        if not isinstance(name, str):
            return False
        with self._guard:
            if self._closed:
                return False
            earlier = self._due.get(name)
            if earlier is None or earlier.seq < last.seq:
                self._due[name] = _Due(log_, last.seq, last.hash, state)
            if self._thread is None:
                self._thread = threading.Thread(target=self._write_due, name="snapshot-keeper", daemon=True)
                self._thread.start()
            self._guard.notify_all()
        return True

    def _write_due(self) -> None:
        while True:
            with self._guard:
                while not self._due and not self._closed:
                    self._guard.wait()
                if not self._due:
                    return  # closed, and every snapshot due written
                _, due = self._due.popitem()
                self._writing = True
            try:
                write_snapshot_through(due.log, due.seq, due.hash, due.state)
            except Exception:  # noqa: BLE001 - derived data: never stops the keeper (the store logs its own)
                _log.warning("snapshot not written", seq=due.seq, exc_info=True)
            finally:
                with self._guard:
                    self._writing = False
                    self._guard.notify_all()

    def settled(self) -> None:
        """Wait until every snapshot noted as due has been written (or failed)."""
        with self._guard:
            while self._due or self._writing:
                self._guard.wait()

    def close(self) -> None:
        """Write the snapshots still due, then stop the thread; later appends are not noted."""
        with self._guard:
            self._closed = True
            self._guard.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()
