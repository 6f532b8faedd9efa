"""The file store's low-level writes and reads: whole writes, fsyncs, locks, a log's tail."""

from __future__ import annotations

import errno
import fcntl
import operator
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import msgspec

from mortecouille.events.base import GENESIS_HASH
from mortecouille.events.codec import (
    LogError,
    TornTail,
)
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.errors import Unwritable
from mortecouille.events.storage.file_head import HeadSlots

if TYPE_CHECKING:
    import mmap


_log = get_logger("mortecouille")


class _Named(Protocol):
    """A log as a message names it."""

    @property
    def name(self) -> str: ...


LOCK_TIMEOUT_SECONDS = 30.0

#: The exclusive lock, taken only if free (:func:`lock_within` waits for one that is not).
_LOCK_NOW = fcntl.LOCK_EX | fcntl.LOCK_NB

#: The head anchor's file size in slots: both slots.
_SLOTS_SIZE = 2 * HeadSlots.SIZE

#: The longest file name most file systems take, in bytes (ext4, xfs, btrfs, tmpfs: NAME_MAX).
NAME_MAX = 255

#: Opening a file to write: never through a symbolic link (a planted link would redirect the write).
_NO_LINK = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)

#: Reading a file without moving its access time: an append reads the log's tail and the head
#: anchor's slots right after writing them, and under ``relatime`` each such read would dirty the
#: inode again for the journal. Taken only where the file's owner runs the command.
_NO_ATIME = getattr(os, "O_NOATIME", 0)


#: How the head anchor is opened for an update in place: to read and write it, never through a link.
_HEAD_FLAGS = os.O_RDWR | _NO_LINK


def _open_without_atime(path: str | Path, flags: int) -> int:
    """``os.open(path, flags)``, with ``O_NOATIME`` when the system lets this process use it (the
    file's owner; anyone else is refused it with EPERM and opens the file as usual)."""
    if _NO_ATIME:
        try:
            return os.open(path, flags | _NO_ATIME)
        except PermissionError:
            pass
    return os.open(path, flags)


#: What names a file for a descriptor kept open: the path must still name the file with the same
#: inode, device, type and permissions, owner and group (a replaced, moved or removed file, a link
#: put in its place, a changed mode: opened again, as a fresh command would, see :class:`_Handles`).
_Identity = tuple[int, int, int, int, int]


def _identity(info: os.stat_result) -> _Identity:
    return info.st_ino, info.st_dev, info.st_mode, info.st_uid, info.st_gid


#: A kept head anchor's identity: its file's (:func:`_identity`), and its number of links and size,
#: which must stay one and both slots' (a hard link would carry a write into another name's file).
#: One call in C: every append of a kept log checks it.
_head_identity: Callable[[os.stat_result], tuple[int, ...]] = operator.attrgetter(
    "st_ino", "st_dev", "st_mode", "st_uid", "st_gid", "st_nlink", "st_size"
)


def _map_slots(fd: int) -> mmap.mmap | None:
    """The head anchor open as ``fd`` (both slots long, checked by the caller) mapped into memory,
    read-only and shared, so that an append of a kept log reads the slots, as another process may
    have left them, with no system call: the mapping shows the file's page cache, which
    every ``pwrite`` of a slot updates at once. None when the file system cannot map it (the slots
    are then read with ``pread``). Only ever read after an ``lstat`` under the log's lock has found
    the kept file both slots long: a file shrunk under a mapping faults on access (SIGBUS), so a
    head of another size is closed, never read through it (:meth:`GameLog._kept_slots`)."""
    import mmap  # only a process that appends twice to a log maps it: not every command's import

    try:
        return mmap.mmap(fd, _SLOTS_SIZE, mmap.MAP_SHARED, mmap.PROT_READ)
    except (OSError, ValueError):
        return None


def _complete_part(data: bytes) -> bytes:
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        raise TornTail(line=data.count(b"\n") + 1, fragment=data[cut:])
    return data


def _append_or_take_back(fd: int, payload: bytes, size: int, path: Path) -> None:
    """Write ``payload`` at the end (``size`` bytes before it) and fsync; if the write fails (a full
    disk, an I/O error), cut the file back to ``size`` so the log is as it was. If even that fails,
    what was written is a torn tail, reported on the next open."""
    try:
        written = os.write(fd, payload)  # one write does, but for one the system cut short
        if written < len(payload):
            _write_all(fd, memoryview(payload)[written:])
        os.fsync(fd)
    except OSError as error:
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
            state = "the log is as it was"
        except OSError:
            state = "the log may end in a torn line; run `mortecouille repair`"
        raise Unwritable(
            f"cannot write {path}: {error.strerror}; nothing was appended ({state})",
            reason=error.strerror or str(error),
        ) from None


@contextmanager
def _unwritable(path: Path) -> Iterator[None]:
    """An OS refusal to write ``path`` as an :class:`Unwritable` naming it, not a traceback."""
    try:
        yield
    except OSError as error:
        raise Unwritable(
            f"cannot write {path}: {error.strerror or error}", reason=error.strerror or str(error)
        ) from None


def _write_all(fd: int, payload: bytes | memoryview) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def lock_within(fd: int, timeout: float, *, shared: bool = False) -> bool:
    """Take the exclusive lock on ``fd`` (``shared``: the shared one, which waits only for a
    writer), waiting at most ``timeout`` seconds (polling, backing off up to 50 ms); False when
    another holder kept it that long. Every lock of the project (a game's, the archive's) waits
    this way, so a crashed holder never hangs a command for good."""
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    deadline: float | None = None  # read the clock only once the lock is found taken
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return True
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.EACCES):
                raise
        now = time.monotonic()
        if deadline is None:
            deadline = now + timeout
        if now >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


class _LastLine(msgspec.Struct):
    """What the tail of a log tells an append: the last line's seq and hash (its other fields skipped)."""

    seq: int
    hash: str


_LAST_LINE = msgspec.json.Decoder(_LastLine)


def _tail_position(fd: int, log: _Named) -> tuple[int, str]:
    """The next seq and the last hash, read from the end of the file only."""
    return _tail(fd, log)[1:]


#: How much of a log's end an append reads to find its last line: most lines are far shorter, so
#: one read does; a longer last line is read on, doubling.
_TAIL_CHUNK = 4096


def _tail(fd: int, log: _Named) -> tuple[int, int, str]:
    """The file's size, the next seq and the last hash, read from the end of the file only."""
    size = os.lseek(fd, 0, os.SEEK_END)
    return (size, *_tail_at(fd, size, log))


def _tail_at(fd: int, size: int, log: _Named) -> tuple[int, str]:
    """The next seq and the last hash of the file of ``size`` bytes, read from its end only.

    An append whose head anchor does not vouch for the log's end pays this before its write, so it
    is one ``pread`` for a last line under :data:`_TAIL_CHUNK` bytes; ``log`` names the
    game in an error, worked out only then."""
    if size == 0:
        return 0, GENESIS_HASH
    chunk = _TAIL_CHUNK
    start = size - chunk if size > chunk else 0
    buffer = os.pread(fd, size - start, start)
    while True:
        if buffer[-1:] != b"\n":
            whole = os.pread(fd, size, 0)
            cut = whole.rfind(b"\n") + 1
            raise TornTail(line=whole.count(b"\n") + 1, fragment=whole[cut:])
        body_end = len(buffer) - 1
        line_start = buffer.rfind(b"\n", 0, body_end) + 1
        if line_start > 0 or start == 0:
            break
        # the last line is longer than what was read: read on, doubling
        chunk *= 2
        earlier = max(0, start - chunk)
        buffer = os.pread(fd, start - earlier, earlier) + buffer
        start = earlier
    try:
        found = _LAST_LINE.decode(memoryview(buffer)[line_start:body_end])
    except (msgspec.DecodeError, RecursionError):
        raise LogError(f"game {log.name!r}: the last line is not a valid event; run verify") from None
    return found.seq + 1, found.hash
