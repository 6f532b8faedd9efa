"""Writing a file log: its creation and a writer's locked transaction (one write, one fsync)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import (
    Extras,
    stamp_all,
)
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.errors import Conflict, Unwritable
from mortecouille.events.storage.file_handles import LogFiles, _Handles, _SlotUpdate
from mortecouille.events.storage.file_head import _OpenSlots
from mortecouille.events.storage.file_io import (
    _SLOTS_SIZE,
    _append_or_take_back,
    _head_identity,
    _tail_at,
    _tail_position,
)

_log = get_logger("mortecouille")


class Creation:
    """A log just created, empty and locked (see :meth:`GameLog.creating`)."""

    def __init__(self, log: LogFiles, fd: int, *, taken_over: bool = False) -> None:
        self.log = log
        self.fd = fd
        self.written = False
        #: whether this creation took over a log an earlier creation left empty as it died
        #: (:meth:`GameLog._abandoned_log`): what that one kept beside it (a seed) is stale
        self.taken_over = taken_over

    def write(self, events: Sequence[Event], extras: Extras = None) -> list[Event]:
        """Write the log's first events (one write, one fsync) and its head anchor.
        ``extras``: envelope fields for the first line (a creation's ``idem``, see
        :mod:`mortecouille.app.idempotency`) or for each line (:func:`~.codec.stamp_all`);
        without them the lines are what they always were."""
        stamped, payload = stamp_all(events, 0, GENESIS_HASH, extras)
        _append_or_take_back(self.fd, payload, 0, self.log.path)
        if stamped:
            try:
                self.log.start_head(stamped[-1].seq, stamped[-1].hash, len(payload))
            except OSError as error:  # the creation is taken back whole: the log is removed
                raise Unwritable(
                    f"cannot write {self.log.head_path}: {error.strerror}; the game was not created",
                    reason=error.strerror or str(error),
                ) from None
        self.written = True
        return stamped


class Transaction:
    """A locked log: read it, then append to it, with nobody writing in between."""

    def __init__(
        self, log: LogFiles, fd: int, handles: _Handles | None = None, size: int | None = None
    ) -> None:
        self.log = log
        self.fd = fd
        #: the log's kept descriptors, ``fd`` among them (:class:`_Handles`), whose head an append uses
        self._handles = handles
        #: the log's size, when the caller has just read it under this lock: the first append's
        self._size = size

    def read(self) -> list[Event]:
        return self.log.read(settle=False)  # this transaction holds the writer lock

    def position(self) -> tuple[int, str]:
        """The next seq and the last line's hash, read from the end of the file only."""
        return _tail_position(self.fd, self.log)

    def offset(self) -> int:
        """The size of the locked log."""
        return os.fstat(self.fd).st_size

    def acknowledge(self, last: Event) -> None:
        self.anchor_through(last)

    def anchor_through(self, last: Event) -> None:
        """Move a head anchor that lags behind ``last`` (the log's last line, read whole under this
        lock) up to it. A writer killed between its fsync and its anchor leaves complete lines the
        anchor does not vouch for, which a later repair would cut with the next torn tail; before
        such lines are acknowledged (a retry answered from them), the anchor must cover them."""
        head = self.log.read_head()
        if head is None or head.seq < last.seq:
            self.log.write_head(last.seq, last.hash, os.lseek(self.fd, 0, os.SEEK_END))

    def append(
        self,
        events: Sequence[Event],
        expected_seq: int | None = None,
        extras: Extras = None,
    ) -> list[Event]:
        """Stamp and write ``events`` with one write and one fsync.

        ``expected_seq`` is the seq the first new event must receive; if the log
        has moved on, :class:`Conflict` is raised and nothing is written.
        ``extras``: envelope fields for the first line or for each line (``idem``, ``nonce``, see
        :data:`mortecouille.events.codec.ENVELOPE_EXTRAS`), written in the same write and fsync.
        """
        size, self._size = self._size, None
        return _append_locked(self.log, self.fd, self._handles, size, events, expected_seq, extras)


def _append_locked(
    log: LogFiles,
    fd: int,
    handles: _Handles | None,
    size: int | None,
    events: Sequence[Event],
    expected_seq: int | None,
    extras: Extras,
) -> list[Event]:
    """:meth:`Transaction.append` on the log open as ``fd`` and locked, with its kept descriptors
    (``handles``, None when opened for this transaction only) and its size when the caller has just
    read it under the lock. A function of its own so that :meth:`GameLog.append`, which every
    command pays, builds no transaction object."""
    if size is None:
        size = os.lseek(fd, 0, os.SEEK_END)
    if handles is not None:
        # The steady state of a process appending to a log again (``serve``, a batch of
        # commands): its kept head, mapped, checked by one lstat, its slots as this process last
        # left them and its END the log's size. Anything else takes the general path below.
        head = _kept_head_unchanged(handles)
        if head is not None and head[4] == size:
            return _append_after_kept_head(log, fd, handles, head, size, events, expected_seq, extras)
    # The head anchor is opened first: while the log still ends where the anchor says it did
    # (its END), the anchor's seq and hash are the log's tail, which then is not read (issue
    # 16). A log longer than that (the last writer stopped before moving the anchor, or a torn
    # tail) or any other size is read from its end, as an anchor without END makes it.
    try:
        opened = log._open_slots() if handles is None else log._kept_slots(handles)
    except OSError:
        opened = None  # write_head tries again after the fsync, and reports it
    prepared: _SlotUpdate | None = None
    try:
        if opened is not None and opened[4] == size:
            next_seq, prev = opened[2] + 1, opened[3]
        else:
            next_seq, prev = _tail_at(fd, size, log)
        if expected_seq is not None and expected_seq != next_seq:
            raise Conflict.stale(log.name, expected_seq, next_seq)
        if not events:
            return []
        stamped, payload = stamp_all(events, next_seq, prev, extras)
        last = stamped[-1]
        # the anchor's update is readied before the fsync and written after it (the order the
        # guarantees need): only its pwrite is left once the fsync returns
        if log._prepared is not None:
            log.drop_prepared_head()
        if opened is not None:
            prepared = log._prepared = _SlotUpdate(
                opened[0], opened[1], last.seq, last.hash, size + len(payload), handles
            )
            opened = None  # the update holds the descriptor now
        _append_or_take_back(fd, payload, size, log.path)
        prepared = None  # durable: write_head takes the update from here
    finally:
        if opened is not None and handles is None:
            os.close(opened[0])
        if prepared is not None:  # the write failed: the head is given back unwritten
            log.drop_prepared_head()
    # After the fsync the process resumes with cold caches: nothing but the slot's pwrite and the
    # way out is left here.
    try:
        log.write_head(last.seq, last.hash)  # the readied update, END included
    except OSError as error:
        _anchor_lags(log, error, stamped)
    finally:
        if log._prepared is not None:  # not taken: write_head was replaced
            log.drop_prepared_head()
    return stamped


def _kept_head_unchanged(handles: _Handles) -> _OpenSlots | None:
    """The anchor of the head kept (and mapped) in ``handles`` when nothing changed it since this
    process last read or wrote it: its path still names the kept file, one link and both slots
    long (one ``lstat``, as :meth:`GameLog._kept_slots` checks it), and the mapped slots are the
    bytes kept. None otherwise (nothing closed: :meth:`GameLog._kept_slots` looks again and opens
    what changed). The mapping is read only once the ``lstat`` has found the file both slots long
    (a file shrunk under a mapping faults on access)."""
    mapped = handles.head_map
    if mapped is None:  # not opened yet (a process's first append), or not mappable
        return None
    try:
        info = os.lstat(handles.head_path)
    except OSError:
        return None
    if _head_identity(info) != handles.head_id or mapped[:_SLOTS_SIZE] != handles.head_bytes:
        return None
    return handles.head_slots


def _append_after_kept_head(
    log: LogFiles,
    fd: int,
    handles: _Handles,
    head: _OpenSlots,
    size: int,
    events: Sequence[Event],
    expected_seq: int | None,
    extras: Extras,
) -> list[Event]:
    """:func:`_append_locked` once :func:`_kept_head_unchanged` found ``head``, the anchor of the
    head kept in ``handles``, naming the log's tail (its END is the log's ``size``): the same
    steps as the general path (stamp, the slot's update readied, one write, one fsync, the older
    slot written with one ``pwrite``: :class:`_SlotUpdate`), without reading the slots again nor
    going through :meth:`GameLog.write_head`'s checks, so that after the fsync, when the process
    resumes with cold caches, only the ``pwrite`` and the way out are left. A failed
    ``pwrite`` leaves the anchor lagging, which is reported and accepted as on the general path
    (:meth:`GameLog.write_head`'s callers)."""
    next_seq = head[2] + 1
    if expected_seq is not None and expected_seq != next_seq:
        raise Conflict.stale(log.name, expected_seq, next_seq)
    if not events:
        return []
    if log._prepared is not None:  # readied by prepare_head for another anchor: not this one
        log.drop_prepared_head()
    stamped, payload = stamp_all(events, next_seq, head[3], extras)
    last = stamped[-1]
    # readied before the write, as the general path readies it: only its pwrite follows the fsync
    update = _SlotUpdate(handles.head_fd, head[1], last.seq, last.hash, size + len(payload), handles)
    _append_or_take_back(fd, payload, size, log.path)
    try:
        update.commit()
    except OSError as error:
        _anchor_lags(log, error, stamped)
    return stamped


def _anchor_lags(log: LogFiles, error: OSError, stamped: list[Event]) -> None:
    """Report an anchor not moved over ``stamped``, lines already durable. They chain after the
    lagging anchor, which verify accepts: the command happened, so it succeeds (a failure would
    invite a retry that appends it twice); the anchor catches up at the next append."""
    _log.warning(
        "head anchor not replaced",
        path=str(log.head_path),
        error=error.strerror,
        appended=f"seq {stamped[0].seq}..{stamped[-1].seq}",
    )


#: How much of a log :meth:`GameLog.stream` reads at a time: large enough that decoding runs at
#: msgspec's speed, small enough that a stream's memory does not grow with the log.
