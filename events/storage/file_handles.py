"""The descriptors a process keeps open between its appends to a file log.

A process keeps a log's descriptors (the log's and the anchor's) open between its appends
(:class:`_Handles`, at most :data:`IDLE_LOGS` logs): an append takes and releases the lock on the
kept descriptor as on a fresh one, and trusts it only once an ``lstat`` of each path finds the kept
file; the anchor's slots are read again each time, from a read-only shared mapping of
the kept anchor from the process's second append to the log on (no system call: another
process's ``pwrite`` of a slot shows there at once), and only after that ``lstat`` has found the
file both slots long. The slot is still written with ``pwrite``, after the log's ``fsync``.
"""

from __future__ import annotations

import errno
import os
import threading
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from mortecouille.events.base import Event
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.chain import Head
from mortecouille.events.storage.file_head import HeadSlots, _OpenSlots
from mortecouille.events.storage.file_io import _Identity

_log = get_logger("mortecouille")

if TYPE_CHECKING:
    import mmap

    from mortecouille.events.storage.file_head import _OpenSlots


class _Handles:
    """A log's descriptors kept open in this process between its appends, so that an append opens
    nothing: the log's and the head anchor's paths (as strings); the log's descriptor
    (opened to append, never through a link) with the identity of its file; the head anchor's
    (opened to read and write in place, -1 when not open) with its file's identity, its 256 bytes
    as last read or written and the anchor they hold (:meth:`HeadSlots.newest`'s fields after the
    descriptor, for bytes read again unchanged).

    Trusted only once checked: an append takes the log's lock on the kept descriptor, then checks
    with one ``lstat`` that the path still names that file (and the head's path the head's, by
    ``lstat`` too), and reads the head's slots again, parsing them only when they differ from
    those kept: with one ``pread`` at the log's second append in the process, which also maps the
    head (read-only, shared: :func:`_map_slots`), and from the mapping, with no system call, from
    the third on (a one-shot command maps nothing); anything else (the file replaced, moved away
    or removed, a link put in its place, another mode or owner) and the descriptor is closed and
    the path opened again, as a fresh command would open it. An idle set waits in the process's
    pool (:data:`_idle`), at most :data:`IDLE_LOGS` logs, the least recently used closed first."""

    __slots__ = ("path", "head_path", "log_fd", "log_id", "head_fd", "head_id", "head_map", "map_refused",
                 "head_bytes", "head_slots")  # fmt: skip

    def __init__(self, path: str, head_path: str, log_fd: int, log_id: _Identity) -> None:
        self.path, self.head_path = path, head_path
        self.log_fd = log_fd
        self.log_id = log_id
        self.head_fd = -1
        #: the head's identity, then its number of links and size (1 and both slots' when kept)
        self.head_id: tuple[int, ...] | None = None
        #: the head's slots mapped into memory (read-only, shared: another process's update of
        #: them is seen there at once), None when not mapped (:func:`_map_slots`)
        self.head_map: mmap.mmap | None = None
        #: whether the kept head could not be mapped (its slots then read with ``pread``)
        self.map_refused = False
        self.head_bytes = b""
        self.head_slots: _OpenSlots | None = None

    def drop_head(self) -> None:
        """Close the head's descriptor and its mapping, and forget what it held."""
        fd, self.head_fd = self.head_fd, -1
        mapped, self.head_map, self.map_refused = self.head_map, None, False
        self.head_id, self.head_bytes, self.head_slots = None, b"", None
        try:
            if mapped is not None:
                mapped.close()
        finally:
            if fd >= 0:
                os.close(fd)

    def close(self) -> None:
        """Close both descriptors (closing the log's releases its lock, if held)."""
        try:
            self.drop_head()
        finally:
            os.close(self.log_fd)


#: How many logs' descriptors a process keeps open while idle (:class:`_Handles`): two
#: descriptors each, so a ``serve`` with many games holds at most twice this many between its
#: appends (the least recently used log's are closed first); a log past it opens its files for
#: each append, as a command does.
IDLE_LOGS = 64

#: The idle descriptors by log path (as given, relative or absolute), least recently used first.
_idle: dict[str, _Handles] = {}
_idle_lock = threading.Lock()


def _give_back(path: str, handles: _Handles) -> None:
    """Return ``handles`` (unlocked) to the pool, closing the least recently used past
    :data:`IDLE_LOGS` and a set the path already had (two threads appended at once). Taking
    from the pool is one ``dict.pop``, atomic under the GIL; the lock keeps two givers from
    evicting at once."""
    with _idle_lock:
        surplus = [_idle.pop(path, None)]
        if _idle.setdefault(path, handles) is not handles:  # another thread kept the path's
            surplus.append(handles)
        for oldest in list(_idle)[: max(0, len(_idle) - IDLE_LOGS)]:
            surplus.append(_idle.pop(oldest, None))
    for extra in surplus:
        if extra is not None:
            extra.close()


def close_idle_descriptors(path: Path | str | None = None) -> None:
    """Close the descriptors this process keeps open between appends (:class:`_Handles`): those
    of the log at ``path``, or all. Nothing depends on it but the number of open files: a
    descriptor kept is checked before each use."""
    closing: list[_Handles | None] = []
    with _idle_lock:
        if path is None:
            while True:  # one pair at a time, each taken in one step
                try:
                    closing.append(_idle.popitem()[1])
                except KeyError:
                    break
        else:
            closing.append(_idle.pop(str(path), None))
    for handles in closing:
        if handles is not None:
            handles.close()


def _forget_idle_in_child() -> None:
    """In a forked child: close its copies of the parent's kept descriptors and start an empty
    pool with a fresh lock. Parent and child sharing an open file would share its ``flock`` (a
    lock held through one is held through the other), so the child opens its own."""
    global _idle_lock
    _idle_lock = threading.Lock()
    for handles in _idle.values():
        with suppress(OSError):
            handles.close()
    _idle.clear()


os.register_at_fork(after_in_child=_forget_idle_in_child)


class _SlotUpdate:
    """An update of the head anchor in slots, ready to be written: the head's open descriptor,
    the anchor it moves to (the log's size then ``end``, if known), the slot's bytes and where
    they go, the anchor's fields as the slot records them, and the kept descriptors the head's
    belongs to (None: the update's own, closed once written). Made for the head open as ``fd``,
    whose newest valid slot has ``counter``: into the other slot, with the next counter."""

    __slots__ = ("fd", "seq", "digest", "end", "record", "offset", "fields", "handles", "kept")

    def __init__(
        self, fd: int, counter: int, seq: int, digest: str, end: int | None, handles: _Handles | None = None
    ) -> None:
        counter += 1
        record, recorded_end = HeadSlots.recorded(counter, seq, digest, end)
        offset = (counter & 1) * HeadSlots.SIZE
        self.fd, self.seq, self.digest, self.end, self.handles = fd, seq, digest, end, handles
        self.record, self.offset = record, offset
        self.fields: _OpenSlots = (fd, counter, seq, digest, recorded_end)
        # The kept copy of the head's bytes once the slot is written, made now: an append readies
        # its update before its fsync, so that only the pwrite is left after it.
        # The slot written has the highest counter with a valid CRC (the other slot's, if valid, is
        # lower: the update's counter is one past the newest), so it is the anchor HeadSlots.newest
        # reads from these bytes: its fields are kept with them.
        if handles is not None:
            before, size = handles.head_bytes, HeadSlots.SIZE
            self.kept = record + before[size:] if offset == 0 else before[:size] + record

    def commit(self) -> None:
        """Write the slot (one ``pwrite``); close the head unless it is kept open (:class:`_Handles`),
        whose copy of the head's bytes then becomes what was written, so that the next append of
        the process finds its anchor without parsing the slots again."""
        handles = self.handles
        try:
            if os.pwrite(self.fd, self.record, self.offset) != HeadSlots.SIZE:
                raise OSError(errno.EIO, "short write of the head anchor")
        except BaseException:
            if handles is None:
                os.close(self.fd)
            else:
                handles.head_bytes = b""  # what the head holds now is not known: read it again
            raise
        if handles is None:
            os.close(self.fd)
        else:
            handles.head_bytes, handles.head_slots = self.kept, self.fields

    def release(self) -> None:
        """Give the head back unwritten: closed, unless it is kept open (:class:`_Handles`)."""
        if self.handles is None:
            os.close(self.fd)


class LogFiles(Protocol):
    """What the file store's writing and streaming use of a :class:`~.file_log.GameLog`, so that
    they need not import it (it imports them)."""

    path: Path
    _prepared: _SlotUpdate | None

    @property
    def name(self) -> str: ...

    @property
    def head_path(self) -> Path: ...

    def read(self, *, settle: bool = True) -> list[Event]: ...

    def read_head(self) -> Head | None: ...

    def start_head(self, seq: int, digest: str, end: int | None = None) -> None: ...

    def write_head(self, seq: int, digest: str, end: int | None = None) -> None: ...

    def drop_prepared_head(self) -> None: ...

    def settled_size(self) -> int: ...

    def _open_slots(self) -> _OpenSlots | None: ...

    def _kept_slots(self, handles: _Handles) -> _OpenSlots | None: ...

    def _open_for_reading(self) -> int: ...
