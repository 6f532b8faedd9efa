"""The append-only store: one JSON-lines file per game.

Guarantees, each tested in ``tests/test_store.py`` and ``tests/test_reliability*.py``:

* an append is durable when it returns (one write of all the command's lines,
  then one fsync, so a command's events land together or, after a crash, as a
  torn tail that is reported);
* one writer at a time (an exclusive ``flock`` held for the whole
  read-decide-append cycle of a command);
* optimistic concurrency: an append may state the ``seq`` its first event must
  get, and a stale one is refused with nothing written;
* a torn last line is reported on open, never dropped silently; only
  :meth:`GameLog.repair`, asked for explicitly, cuts it off, and never a line the head anchor
  vouches for (a log missing those was cut: refused, or the loss recorded as an event);
* nothing is written through a symbolic link, and a game's files are created exclusively;
* a removed tail is caught: after every create, append and repair the store
  moves a sidecar ``GAME.head`` (the seq and hash of the last line, not fsynced)
  and :meth:`GameLog.verify_chain` refuses a log shorter than its head, or whose
  line at the head's seq has another hash. A log longer than its head is accepted
  when the extra lines chain: a crash between the log's fsync and the head's
  update leaves it so.

The head is two fixed-size slots (:class:`HeadSlots`), each with a counter and a CRC; an update
overwrites the older slot in place (one ``pwrite``, no rename: replacing a file by rename cost as
much as the log's own fsync on ext4, issue 16), so a torn update spoils only the slot it wrote and
the other still names the anchor before it, a lag the rule above accepts. A head in the format of
earlier versions (one JSON object) is read as before and turned into slots by the next append,
by rename, once. A slot also records END, the log's size when it ended with the anchored line: an
append reads the head first (to update it), and while the log still has that size the anchor's
seq and hash are the log's tail, so no line of the log is read; any other size (a lagging anchor,
a torn tail) or no END, and the tail is read from the log's end.

A process keeps a log's descriptors (the log's and the anchor's) open between its appends
(:class:`_Handles`, at most :data:`IDLE_LOGS` logs): an append takes and releases the lock on the
kept descriptor as on a fresh one, and trusts it only once an ``lstat`` of each path finds the kept
file; the anchor's slots are read again each time (issue 16), from a read-only shared mapping of
the kept anchor from the process's second append to the log on (no system call: another
process's ``pwrite`` of a slot shows there at once), and only after that ``lstat`` has found the
file both slots long. The slot is still written with ``pwrite``, after the log's ``fsync``.
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import operator
import os
import stat
import threading
import time
import zlib
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import (
    Extras,
    LogError,
    TornTail,
    check_lines,
    decode_block,
    decode_lines,
    stamp_all,
)
from mortecouille.events.game import LossRecorded
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.chain import Head, check_chain, check_head

if TYPE_CHECKING:
    import mmap

_log = get_logger("mortecouille")


class Conflict(Exception):
    """The log moved on since the caller read it, or another writer holds it (exit 3)."""

    exit_code = 3

    @classmethod
    def stale(cls, game: str, expected_seq: int, next_seq: int) -> Conflict:
        """An append whose ``expected_seq`` is not the log's next seq (every store says it so)."""
        return cls(
            f"game {game!r}: expected seq {expected_seq} but the log is at "
            f"{next_seq}; someone else appended first. Nothing was written."
        )


class GameNotFound(Exception):
    exit_code = 2


class Unwritable(Exception):
    """A log's files cannot be written where they are (a bad path, a symlink in the way, no
    permission, a full disk); nothing was changed, or what was cut short was taken back (exit 2).
    ``reason``: why, in the system's words and without a path (``No space left on device``), for a
    message to someone who must not see the server's files (the service's clients)."""

    exit_code = 2

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


class HeadSlots:
    """The head anchor's file format: two slots of :data:`SIZE` bytes, each one line of text,
    ``mortecouille-head 3 COUNTER SEQ HASH END CRC`` padded with spaces, CRC being the CRC-32 (8 hex
    digits) of what precedes it and END the log's size in bytes when it ended with that line (``-``
    when the writer did not know it). The slot with the highest counter whose CRC holds is the
    anchor; the next update writes counter + 1 into slot ``counter % 2``, never the slot it
    supersedes. Slots of the format before END (``mortecouille-head 2 COUNTER SEQ HASH CRC``) are
    read as anchors whose END is not known; an update writes the current format."""

    MAGIC = b"mortecouille-head 3 "
    #: the magic of the slots written before END was recorded (issue 16): still read
    MAGIC_2 = b"mortecouille-head 2 "
    SIZE = 128

    @classmethod
    def encode(cls, counter: int, seq: int, digest: str, end: int | None = None) -> bytes:
        """One slot naming ``seq`` and ``digest``, and ``end`` when known (left out, as ``-``, from
        a record it would not let fit its slot: the anchor matters, END only saves a read)."""
        return cls.recorded(counter, seq, digest, end)[0]

    @classmethod
    def recorded(cls, counter: int, seq: int, digest: str, end: int | None) -> tuple[bytes, int | None]:
        """:meth:`encode`'s slot, and the END it records (None when left out): the fields
        :meth:`newest` reads back from it, known without parsing it (an append keeps them for
        the next one, issue 16). Every append pays it, right after a sleep in its caller's fsync:
        so it takes the interpreter's most used paths (an f-string, one encoding, a slice of the
        padding), which measured cheaper there than bytes formatting (issue 16)."""
        text = f"mortecouille-head 3 {counter} {seq} {digest} {'-' if end is None else end}"  # MAGIC, fields
        if end is not None and len(text) + 9 >= cls.SIZE:
            text, end = f"mortecouille-head 3 {counter} {seq} {digest} -", None
        body = text.encode("ascii")
        record = b"%b %08x" % (body, zlib.crc32(body))
        if len(record) >= cls.SIZE:
            raise ValueError(f"a head anchor record of {len(record)} bytes does not fit its slot")
        return record + _SLOT_PADDING[len(record) :], end

    @classmethod
    def decode(cls, data: bytes) -> tuple[int, Head] | None:
        """The newest valid slot of ``data`` as (counter, head), or None when no slot is valid."""
        best: tuple[int, Head] | None = None
        for start in range(0, min(len(data), 2 * cls.SIZE), cls.SIZE):
            found = cls._slot(data[start : start + cls.SIZE])
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        return best

    @classmethod
    def newest(cls, data: bytes) -> tuple[int, int, str, int | None] | None:
        """The fields of :meth:`decode`'s slot, (counter, seq, hash, end), or None when no slot is
        valid: what an append needs, found without building the anchor (the higher counter's CRC
        checked first, and the other slot's only when that one is torn). Every append reads its
        anchor here, so the counters are read inline (issue 16)."""
        size, start, magics = cls.SIZE, len(cls.MAGIC), (cls.MAGIC, cls.MAGIC_2)
        first, second = data[:size], data[size : 2 * size]
        claimed = second[start : second.find(b" ", start)]
        if second[:start] in magics and claimed.isdigit():  # else the first slot, if any, is newer
            other = first[start : first.find(b" ", start)]
            if not (first[:start] in magics and other.isdigit() and int(other) >= int(claimed)):
                first, second = second, first
        found = cls._fields(first)
        return found if found is not None else cls._fields(second)

    @classmethod
    def _slot(cls, slot: bytes) -> tuple[int, Head] | None:
        found = cls._fields(slot)
        return None if found is None else (found[0], Head(seq=found[1], hash=found[2]))

    @classmethod
    def _fields(cls, slot: bytes) -> tuple[int, int, str, int | None] | None:
        """A slot's (counter, seq, hash, end), end None when not recorded; None unless its CRC
        holds and its fields are those of its format."""
        body, _, crc = slot.rstrip(b" \n").rpartition(b" ")
        if len(crc) != 8 or b"%08x" % zlib.crc32(body) != crc:
            return None
        magic, fields = body[: len(cls.MAGIC)], body[len(cls.MAGIC) :].split(b" ")
        try:
            if magic == cls.MAGIC and len(fields) == 4:
                counter, seq, digest, end = fields
                known = None if end == b"-" else int(end)
                if known is not None and known < 0:
                    return None
            elif magic == cls.MAGIC_2 and len(fields) == 3:
                counter, seq, digest = fields
                known = None
            else:
                return None
            return int(counter), int(seq), digest.decode("ascii"), known
        except ValueError:
            return None


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
        # its update before its fsync, so that only the pwrite is left after it (issue 16).
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


#: What pads a slot's record to the slot's size: spaces, the newline last (:meth:`HeadSlots.recorded`
#: appends its tail from the record's length on).
_SLOT_PADDING = b" " * (HeadSlots.SIZE - 1) + b"\n"


#: The head anchor in slots, opened to be updated: its descriptor, then its newest valid slot's
#: counter, seq, hash and end (see :meth:`GameLog._open_slots`).
_OpenSlots = tuple[int, int, int, str, int | None]


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
#: inode again for the journal (issue 16). Taken only where the file's owner runs the command.
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
    have left them, with no system call (issue 16): the mapping shows the file's page cache, which
    every ``pwrite`` of a slot updates at once. None when the file system cannot map it (the slots
    are then read with ``pread``). Only ever read after an ``lstat`` under the log's lock has found
    the kept file both slots long: a file shrunk under a mapping faults on access (SIGBUS), so a
    head of another size is closed, never read through it (:meth:`GameLog._kept_slots`)."""
    import mmap  # only a process that appends twice to a log maps it: not every command's import

    try:
        return mmap.mmap(fd, _SLOTS_SIZE, mmap.MAP_SHARED, mmap.PROT_READ)
    except (OSError, ValueError):
        return None


class _Handles:
    """A log's descriptors kept open in this process between its appends, so that an append opens
    nothing (issue 16): the log's and the head anchor's paths (as strings); the log's descriptor
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


class GameLog:
    """One game's log file. Cheap to construct; every method opens what it needs, but for the
    descriptors an append keeps open for the process's next one (:class:`_Handles`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._files_cache: tuple[Path, str, str, str] | None = None
        #: the head update readied (by an append or :meth:`prepare_head`) for the next :meth:`write_head`
        self._prepared: _SlotUpdate | None = None

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def head_path(self) -> Path:
        return self.path.with_suffix(".head")

    @property
    def head_temporary(self) -> Path:
        return self.head_path.with_name(f".{self.head_path.name}.tmp")

    def _files(self) -> tuple[Path, str, str, str]:
        """The log's path, its head anchor's and the anchor's temporary file's, as strings, worked
        out once per path: every append opens the log and the anchor, and ``pathlib`` (each
        ``os.open`` of a ``Path`` goes through its Python-level ``__fspath__``) costs a command more
        than the system calls themselves (issue 16)."""
        cached = self._files_cache
        if cached is None or cached[0] is not self.path:
            head = self.head_path
            cached = (self.path, str(self.path), str(head), str(head.with_name(f".{head.name}.tmp")))
            self._files_cache = cached
        return cached  # (the Path they were worked out for, then the three strings)

    def sibling(self, suffix: str) -> Path:
        """A file kept beside the log (``.seed``): same stem, another suffix."""
        return self.path.with_suffix(suffix)

    def path_problem(self, suffixes: Sequence[str] = ()) -> str | None:
        """Why the files of this log (the log, its head and its temporary file, and a sibling for
        each of ``suffixes``) could not all be written, or None. Checked before anything is
        written, so a name the file system refuses is never half-created (issue 12, item 13)."""
        names = [self.path, self.head_path, self.head_temporary, *(self.sibling(s) for s in suffixes)]
        for path in names:
            try:
                encoded = os.fsencode(path.name)
                path.name.encode("utf-8")
            except UnicodeError:
                return f"{path.name!r} is not valid UTF-8"
            if b"\0" in encoded:
                return "a file name cannot hold a NUL character"
            if len(encoded) > NAME_MAX:
                return (
                    f"the file name {path.name[:40]}... would be {len(encoded)} bytes; "
                    f"file systems take at most {NAME_MAX}"
                )
        return None

    def describe(self) -> str:
        return str(self.path)

    def as_files(self) -> GameLog:
        return self

    def exists(self) -> bool:
        return self.path.exists()

    def read_head(self) -> Head | None:
        """The head anchor, or None when the log has none (a log written before anchors existed).
        Reads both formats: slots (:class:`HeadSlots`) and the single JSON object of earlier
        versions."""
        try:
            data = self.head_path.read_bytes()
        except FileNotFoundError:
            return None
        if data.startswith((HeadSlots.MAGIC, HeadSlots.MAGIC_2)):
            found = HeadSlots.decode(data)
            if found is None:
                raise LogError(f"the head anchor {self.head_path} is unreadable (no slot has a valid CRC)")
            head = found[1]
        else:
            try:
                head = msgspec.json.decode(data, type=Head)
            except (msgspec.DecodeError, msgspec.ValidationError) as error:
                raise LogError(f"the head anchor {self.head_path} is unreadable ({error})") from None
        if head.seq < 0:
            raise LogError(f"the head anchor {self.head_path} names seq {head.seq}")
        return head

    def start_head(self, seq: int, digest: str, end: int | None = None) -> None:
        """A new log's head anchor, in slots (:class:`HeadSlots`), by temporary file and rename.
        ``end``: the log's size in bytes when it ends with line ``seq``, if the caller knows it."""
        self._replace_head(HeadSlots.encode(1, seq, digest, end) + HeadSlots.encode(0, seq, digest, end))

    def write_head(self, seq: int, digest: str, end: int | None = None) -> None:
        """Move the head anchor to ``seq`` and ``digest``; no fsync by design. ``end``: the log's
        size in bytes when it ends with line ``seq``, recorded when given (the next append then
        knows the log's tail without reading it, while the log still has that size).

        A head in slots is updated in place: its older slot is overwritten with one ``pwrite``
        (:class:`HeadSlots`). Any other head is replaced atomically by a temporary file and a
        rename: one in the JSON of earlier versions (or unreadable, or a link planted in its place,
        or a file with other links) by slots, so an old log pays the rename once; none at all (a
        log from before anchors, or a tool anchoring a log written by hand, such as the golden
        logs' maker) by the one JSON object earlier versions wrote, byte for byte.

        When this very update was readied (by :meth:`prepare_head`, or by an append before its
        fsync, with the log's size after its write as ``end``), only its ``pwrite`` is left."""
        prepared, self._prepared = self._prepared, None
        if prepared is not None:
            if prepared.seq == seq and prepared.digest == digest and end in (None, prepared.end):
                prepared.commit()
                return
            prepared.release()
        slot = self._slot_update(seq, digest, end)
        if slot is not None:
            slot.commit()
            return
        if os.path.lexists(self._files()[2]):
            self.start_head(seq, digest, end)
        else:
            self._replace_head(msgspec.json.encode(Head(seq=seq, hash=digest)) + b"\n")

    def prepare_head(self, seq: int, digest: str, end: int | None = None) -> None:
        """Ready the in-place update of the head anchor to ``seq`` and ``digest`` (the head opened,
        checked and read, the slot's bytes made), for the next :meth:`write_head` with the same
        values to finish with one ``pwrite``. An append readies its update so (from the anchor it
        read for its tail) before its write and fsync, so that after the fsync, when the process
        resumes with cold caches, only that system call is left (issue 16); readying writes nothing
        to the head, so no crash guarantee moves. Nothing is
        readied for a head that is not in slots (:meth:`write_head` replaces it as before) or that
        cannot be read (:meth:`write_head` tries again and reports it)."""
        self.drop_prepared_head()
        try:
            self._prepared = self._slot_update(seq, digest, end)
        except OSError:
            self._prepared = None

    def drop_prepared_head(self) -> None:
        """Give back what :meth:`prepare_head` opened when :meth:`write_head` did not use it (the
        append's write failed, or ``write_head`` was replaced)."""
        prepared, self._prepared = self._prepared, None
        if prepared is not None:
            prepared.release()

    def _slot_update(self, seq: int, digest: str, end: int | None) -> _SlotUpdate | None:
        """The older slot of the head in slots, opened and ready to be overwritten with ``seq``,
        ``digest`` and ``end``; None (nothing opened) for any other head."""
        opened = self._open_slots()
        return None if opened is None else _SlotUpdate(opened[0], opened[1], seq, digest, end)

    def _open_slots(self) -> _OpenSlots | None:
        """The head in slots, opened to be updated in place, with its newest valid slot's fields;
        None (nothing opened) for any other head. Every command pays this, so it is kept to four
        system calls and no more parsing than finding the newest valid slot (issue 16). A
        temporary head file is removed on the way: it is stale or planted (only the lock holder
        writes the anchor), removed as the rename path would, a link itself and never its target
        (looked for first, without following a link, so that its absence, the rule, costs no
        failing ``unlink`` and no exception)."""
        _, _, head, temporary = self._files()
        try:
            try:
                fd = os.open(head, _HEAD_FLAGS | _NO_ATIME)  # as _open_without_atime, inline
            except PermissionError:
                if not _NO_ATIME:
                    raise
                fd = os.open(head, _HEAD_FLAGS)
        except OSError:
            return None  # none yet, or a link in its place (ELOOP): the rename replaces it
        try:
            info = os.fstat(fd)
            # a hard link would carry the write into another name's file: replaced instead
            if info.st_nlink != 1 or info.st_size != _SLOTS_SIZE or not stat.S_ISREG(info.st_mode):
                os.close(fd)
                return None
            found = HeadSlots.newest(os.pread(fd, _SLOTS_SIZE, 0))
            if found is None:
                os.close(fd)
                return None
            if os.access(temporary, os.F_OK, follow_symlinks=False):
                with suppress(FileNotFoundError):
                    os.unlink(temporary)
        except BaseException:
            os.close(fd)
            raise
        return fd, found[0], found[1], found[2], found[3]

    def _kept_slots(self, handles: _Handles) -> _OpenSlots | None:
        """:meth:`_open_slots` on the head kept open in ``handles`` (the log's lock held): the
        head's path is checked to name the kept file still (one ``lstat``, which also finds a hard
        link, another size or a link in its place, as :meth:`_open_slots`' ``fstat`` does), opened
        again when not, and its slots are read (one ``pread``) and parsed only when they differ
        from the bytes kept, which the last append read or wrote. The descriptor stays in
        ``handles``; None when the head is not in slots (then it is closed)."""
        try:
            info = os.lstat(handles.head_path)
        except OSError:
            handles.drop_head()
            return None  # none yet: the rename path writes one
        # the kept file, still one link and both slots long (as recorded when it was opened)
        if _head_identity(info) != handles.head_id:
            handles.drop_head()
            # a hard link would carry the write into another name's file: replaced instead
            if info.st_nlink != 1 or info.st_size != _SLOTS_SIZE or not stat.S_ISREG(info.st_mode):
                return None
            opened = self._open_slots()  # checks as much, and looks for the temporary file
            if opened is None:
                return None
            try:
                opened_info = os.fstat(opened[0])
                handles.head_id = _head_identity(opened_info)
                handles.head_bytes = os.pread(opened[0], _SLOTS_SIZE, 0)
            except BaseException:
                os.close(opened[0])
                raise
            handles.head_fd, handles.head_slots = opened[0], opened
            return opened
        # The slots as they are now: from the mapping when there is one (the lstat above found the
        # mapped file, both slots long, under the lock: only a process ignoring the lock could
        # shrink it now); else read, and the head mapped for the next append (a process that
        # appends to a log twice keeps appending to it: a one-shot command maps nothing).
        mapped = handles.head_map
        try:
            if mapped is not None:
                data = mapped[:_SLOTS_SIZE]
            else:
                data = os.pread(handles.head_fd, _SLOTS_SIZE, 0)
                if not handles.map_refused:
                    handles.head_map = _map_slots(handles.head_fd)
                    handles.map_refused = handles.head_map is None
        except BaseException:
            handles.drop_head()
            raise
        if data == handles.head_bytes:
            return handles.head_slots
        found = HeadSlots.newest(data)
        if found is None:
            handles.drop_head()
            return None
        handles.head_bytes = data
        handles.head_slots = opened = (handles.head_fd, *found)
        return opened

    def _replace_head(self, payload: bytes) -> None:
        """Replace the head anchor with ``payload`` atomically (temporary file, then rename)."""
        # Only the lock holder writes the anchor, so a temporary file left here is stale or planted:
        # unlinking it removes a link itself, never its target, and O_EXCL|O_NOFOLLOW then create
        # a fresh file (issue 12, item 11). The rename replaces a link at the head path, too.
        temporary = self.head_temporary
        temporary.unlink(missing_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_LINK, 0o644)
        try:
            _write_all(fd, payload)
        finally:
            os.close(fd)
        os.replace(temporary, self.head_path)

    # ---------------------------------------------------------------- reading

    def read_bytes(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            raise GameNotFound(f"game {self.name!r}: no log at {self.path}") from None

    def read(self, *, settle: bool = True) -> list[Event]:
        """Every event, typed. Raises TornTail or CorruptLine; never skips a line.

        A reader that does not hold the writer lock (a view, ``state``, a stream's backlog) may
        catch an append half written: when the tail has no newline, the log is read again under a
        shared lock, which waits for the writer to finish, so only a tail still torn with no
        writer at work (a crash's) is reported. ``settle=False``: the caller holds the writer
        lock (a transaction), so any torn tail is a crash's."""
        data = self.read_bytes()
        if settle and data and not data.endswith(b"\n"):
            data = self._read_settled(data)
        return decode_lines(_complete_part(data))

    def _read_settled(self, data: bytes) -> bytes:
        """The log's bytes read under a shared lock (no append in progress); ``data`` as read
        before if the lock cannot be had in time (a torn tail then stands, as it would have)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | _NO_LINK)
        except OSError:
            return data
        try:
            if not lock_within(fd, LOCK_TIMEOUT_SECONDS, shared=True):
                return data
            return self.read_bytes()
        finally:
            os.close(fd)  # closing releases the shared lock

    def stream(
        self, offset: int = 0, first_seq: int = 0, *, settle: bool = True, end: int | None = None
    ) -> Iterator[Event]:
        """The events from byte ``offset`` on, typed, decoded a chunk at a time: the decoded log is
        never held whole (issue 16, item 2). ``offset`` must be where a line starts (0, or an
        offset a derived index recorded and checked), and ``first_seq`` the seq of that line: it
        numbers the lines in errors as :meth:`read` does (line = seq + 1).

        The same errors as :meth:`read`, raised at the same point: a torn tail (the log not ending
        with a newline, after waiting for a writer at work when ``settle``, as :meth:`read` does)
        raises :class:`TornTail` before any event is yielded; a corrupt line raises
        :class:`CorruptLine` when the stream reaches it (events before it were yielded: a caller
        that acts on each event as it comes must be ready to stop halfway). The stream ends
        where the log ended when it was opened (lines appended after that are not read), or at byte
        ``end`` when given (a line's end the caller knows: :meth:`settled_size`, or a locked log's
        size), so the caller knows which line the stream stopped after."""
        for start_seq, block in self._complete_blocks(offset, first_seq, settle, end):
            yield from decode_block(block, start_seq + 1)

    def stream_lines(
        self, offset: int = 0, first_seq: int = 0, *, settle: bool = True, end: int | None = None
    ) -> Iterator[bytes]:
        """The log's lines from byte ``offset`` on, as bytes without their newline, read a chunk at a
        time (for the chain check, which needs the exact bytes). ``offset``, ``first_seq``,
        ``settle``, ``end``, the torn-tail check and where it ends: as :meth:`stream`."""
        for _, block in self._complete_blocks(offset, first_seq, settle, end):
            lines = block.split(b"\n")
            lines.pop()  # the empty piece after the block's last newline
            yield from lines

    def line_at(self, offset: int) -> bytes | None:
        """The complete line starting at byte ``offset``, without its newline; None when the log
        has no complete line there (shorter, or torn there). Reads only that line (the derived
        files, which know where their line ends, use :meth:`line_ending_at`)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise GameNotFound(f"game {self.name!r}: no log at {self.path}") from None
        try:
            collected = b""
            position = offset
            size = 4096
            while True:
                block = os.pread(fd, size, position)
                if not block:
                    return None
                end = block.find(b"\n")
                if end >= 0:
                    return collected + block[:end]
                collected += block
                position += len(block)
                size = min(size * 2, STREAM_CHUNK_BYTES)
        finally:
            os.close(fd)

    def settled_size(self) -> int:
        """The log's size in bytes, once a writer at work (if any) has finished its append: where a
        stream (``end``) stops so its caller knows the last line it read. A torn tail with no writer
        at work stays in it (a stream up to it raises :class:`TornTail`)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise GameNotFound(f"game {self.name!r}: no log at {self.path}") from None
        try:
            return self._settled_end(fd, True)
        finally:
            os.close(fd)

    def line_ending_at(self, end: int) -> bytes | None:
        """The complete line whose newline is the byte before ``end``, without its newline; None
        when there is none (the log is shorter, or has no newline there). Reads only that line,
        backwards from ``end``: how a derived file checks the line it stands on."""
        if end < 1:
            return None
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise GameNotFound(f"game {self.name!r}: no log at {self.path}") from None
        try:
            if os.pread(fd, 1, end - 1) != b"\n":
                return None
            collected = b""
            position = end - 1
            size = 4096
            while position > 0:
                start = max(0, position - size)
                block = os.pread(fd, position - start, start)
                found = block.rfind(b"\n")
                if found >= 0:
                    return block[found + 1 :] + collected
                collected = block + collected
                position = start
                size = min(size * 2, STREAM_CHUNK_BYTES)
            return collected
        finally:
            os.close(fd)

    def _complete_blocks(
        self, offset: int, first_seq: int, settle: bool, end: int | None = None
    ) -> Iterator[tuple[int, bytes]]:
        """The log from ``offset`` to its end as blocks of complete lines (each ending with a
        newline), about :data:`STREAM_CHUNK_BYTES` each, with the seq of each block's first line.
        The tail is checked first (see :meth:`stream`), so a torn log yields nothing."""
        if offset < 0 or first_seq < 0:
            raise ValueError(f"offset {offset} and seq {first_seq} must be 0 or more")
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise GameNotFound(f"game {self.name!r}: no log at {self.path}") from None
        try:
            if end is None:
                end = self._settled_end(fd, settle)
            if end > offset and os.pread(fd, 1, end - 1) != b"\n":
                raise _torn_tail_at(fd, offset, first_seq, end)
            position, seq, carry = offset, first_seq, b""
            while position < end:
                block = os.pread(fd, min(STREAM_CHUNK_BYTES, end - position), position)
                if not block:  # cut while read (only repair cuts, and only a torn tail)
                    break
                position += len(block)
                data = carry + block if carry else block
                cut = data.rfind(b"\n") + 1
                if cut == 0:  # one line longer than a chunk: keep reading it
                    carry = data
                    continue
                carry = data[cut:]
                complete = data[:cut] if carry else data
                yield seq, complete
                seq += complete.count(b"\n")
            if carry:
                raise TornTail(line=seq + 1, fragment=carry)
        finally:
            os.close(fd)

    def _settled_end(self, fd: int, settle: bool) -> int:
        """The log's size; when it ends without a newline and ``settle``, its size once a writer at
        work (if any) has finished, under a shared lock, as :meth:`read` waits for it."""
        end = os.fstat(fd).st_size
        torn = end > 0 and os.pread(fd, 1, end - 1) != b"\n"
        if settle and torn and lock_within(fd, LOCK_TIMEOUT_SECONDS, shared=True):
            try:
                end = os.fstat(fd).st_size
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        return end

    def verify_chain(
        self,
        data: bytes | None = None,
        on_line: Callable[[int, bytes, dict[str, Any]], None] | None = None,
        *,
        events: Sequence[Event] | None = None,
    ) -> int:
        """Check every line's canonical form, seq, prev and hash, then the tail against the head
        anchor; return the number of lines. Raises LogError naming the first bad seq.

        ``data``: the log's bytes when the caller has read them already (checked as given); else
        the log is read as a stream (:meth:`stream_lines`), never held whole. ``on_line``: called
        with each line's seq, bytes and decoded body once the line is checked, so a caller learns what
        it needs from the one pass (``verify``'s dice and seed). ``events``: ``data``'s lines as
        the caller decoded them (the archive), so that each line is proved canonical by its
        event's own encoding rather than decoded a second time (:func:`check_lines`: the same
        lines accepted, the same errors)."""
        try:
            head: Head | LogError | None = self.read_head()
        except LogError as error:  # raised after the chain, whose errors come first
            head = error
        anchored_seq = head.seq if isinstance(head, Head) else -1
        if events is not None and data is not None and on_line is None:
            block = _complete_part(data).splitlines()
            _, at_anchor = check_lines(block, events, 0, GENESIS_HASH, anchored_seq) if block else ("", None)
            if isinstance(head, LogError):
                raise head
            check_head(head, len(block), at_anchor)
            return len(block)
        lines = self.stream_lines() if data is None else iter(_complete_part(data).splitlines())
        return check_chain(lines, head, on_line)

    def _open_for_reading(self) -> int:
        try:
            return os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise GameNotFound(f"game {self.name!r}: no log at {self.path}") from None

    def checked_stream(self) -> CheckedStream:
        """The log's events as one streaming pass checks its chain (:class:`CheckedStream`): what
        :meth:`verify_chain` checks, with the events decoded once for both (``verify``)."""
        return CheckedStream(self)

    def head_status(self, lines: int | None = None) -> str:
        """How the log's tail stands against its head anchor, for a report (the chain is not checked).
        ``lines``: the log's line count when the caller has it (``verify``, from the chain check);
        else the lines are counted as a stream, never holding the log."""
        head = self.read_head()
        if head is None:
            return "no head anchor: a removed tail cannot be detected"
        if lines is None:
            lines = sum(block.count(b"\n") for _, block in self._complete_blocks(0, 0, True))
        extra = lines - 1 - head.seq
        if extra > 0:
            return (
                f"head anchor at seq {head.seq}; {extra} line(s) after it chain "
                "(written, but the writer stopped before moving the anchor)"
            )
        return f"head anchor at seq {head.seq} matches the last line"

    # ---------------------------------------------------------------- writing

    def create(self, events: Sequence[Event]) -> list[Event]:
        """Start a new log with ``events``; refuses if the game already exists."""
        with self.creating() as creation:
            return creation.write(events)

    @contextmanager
    def creating(self) -> Iterator[Creation]:
        """Create the log file exclusively, empty and locked, for the block to write its first
        events (and anything kept beside it, a seed) under the game's lock. If the block raises,
        the empty file is removed: a refused creation leaves nothing (issue 12, item 4).

        A log a creation left empty as it died (killed, crashed, the power lost between creating
        the file and writing its first line) is taken over (:meth:`_abandoned_log`,
        :attr:`Creation.taken_over`) rather than refused as an existing game, which would leave
        the name unusable until someone removed the file by hand."""
        problem = self.path_problem()
        if problem is not None:
            raise Unwritable(f"game {self.name!r}: {problem}")
        with _unwritable(self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        taken_over = False
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_LINK, 0o644)
        except FileExistsError:
            fd = self._abandoned_log()
            taken_over = True
        except OSError as error:
            raise Unwritable(
                f"cannot create {self.path}: {error.strerror}", reason=error.strerror or str(error)
            ) from None
        written = False
        ours = taken_over  # the file, empty and locked, is this creation's to remove if it fails
        try:
            if not taken_over:
                fcntl.flock(fd, fcntl.LOCK_EX)
                # Between its exclusive creation and this lock, the empty file looked abandoned:
                # another creation may have taken it over, and then written its game into it (or
                # failed, and removed it). Either way the name is not this creation's any more.
                if not self._empty_at_path(fd):
                    raise Conflict(f"game {self.name!r} already exists at {self.path}")
                ours = True
            creation = Creation(self, fd, taken_over=taken_over)
            yield creation
            written = creation.written
        finally:
            if not written and ours:
                # still locked, empty and named by the path: nobody else's game to lose
                self.path.unlink(missing_ok=True)
            os.close(fd)
        with _unwritable(self.path.parent):
            _fsync_dir(self.path.parent)

    def _abandoned_log(self) -> int:
        """The log at the path, opened and locked for a new creation to take over, when it is one
        a creation left empty as it died: a regular file of no byte, nobody holding its lock (a
        creation holds it from just after creating the file until its first line is written, and
        dies with it), and no head anchor beside it (a creation writes its anchor after its
        lines: a log emptied after that is a damaged game, which is never written over).
        Otherwise the game exists: Conflict, as a creation always answered."""
        exists = Conflict(f"game {self.name!r} already exists at {self.path}")
        if not self.looks_abandoned():
            raise exists
        try:
            # never blocking: O_NONBLOCK in case the path became a FIFO since the lstat (a regular
            # file ignores it), and the lock is taken only if it is free
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK | _NO_LINK)
        except OSError:
            raise exists from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise exists from None
        if not self._empty_at_path(fd) or os.path.lexists(self.head_path):
            os.close(fd)
            raise exists
        return fd

    def looks_abandoned(self) -> bool:
        """Whether the log is what a creation that died before its first line leaves: an empty
        regular file with no head anchor beside it. Only :meth:`creating` tells for sure (nobody
        may hold its lock: a creation under way looks the same); this is for what a command says
        before it creates a game (``new``: "already exists", or not)."""
        try:
            found = os.lstat(self.path)
            anchored = os.path.lexists(self.head_path)
        except OSError:
            return False
        return stat.S_ISREG(found.st_mode) and found.st_size == 0 and not anchored

    def _empty_at_path(self, fd: int) -> bool:
        """Whether ``fd``'s file, locked by the caller, is empty and still the file the path names."""
        info = os.fstat(fd)
        try:
            named = os.lstat(self.path)
        except OSError:
            return False
        return stat.S_ISREG(info.st_mode) and info.st_size == 0 and _identity(named) == _identity(info)

    @contextmanager
    def transaction(self, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[Transaction]:
        """Hold the writer lock while reading, deciding and appending."""
        handles, _ = self._locked(timeout)
        try:
            yield Transaction(self, handles.log_fd, handles)
        finally:
            self._release(handles)

    def _locked(self, timeout: float) -> tuple[_Handles, int]:
        """The log's descriptors with the log's own locked (waited for at most ``timeout`` seconds),
        and the log's size: this process's idle ones (:class:`_Handles`) once the lock is taken
        and the path is seen to name their file still (one ``lstat``, whose size is the locked
        file's), else the log opened afresh."""
        cached = self._files_cache
        path = cached[1] if cached is not None and cached[0] is self.path else self._files()[1]
        handles = _idle.pop(path, None)  # one step under the GIL: no other thread gets them too
        if handles is not None:
            try:  # a free lock taken at once, as lock_within's first try would (every append)
                fcntl.flock(handles.log_fd, _LOCK_NOW)
            except OSError:
                if not lock_within(handles.log_fd, timeout):
                    _give_back(path, handles)
                    raise self._locked_out(timeout) from None
            try:
                info = os.lstat(path)
            except OSError:
                pass  # opened again below, which reports what is wrong
            else:  # _identity's tuple, inline
                if (info.st_ino, info.st_dev, info.st_mode, info.st_uid, info.st_gid) == handles.log_id:
                    return handles, info.st_size
            handles.close()  # the path names another file now, or none: opened as a command would
        fd = self._open_to_write()
        try:
            if not lock_within(fd, timeout):
                raise self._locked_out(timeout)
            info = os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        return _Handles(path, self._files()[2], fd, _identity(info)), info.st_size

    def _locked_out(self, timeout: float) -> Conflict:
        return Conflict(f"game {self.name!r} is locked by another writer (waited {timeout:g} s)")

    def _release(self, handles: _Handles) -> None:
        """Unlock the log and keep its descriptors for this process's next append (closed instead
        if the lock cannot be given back: closing releases it)."""
        try:
            fcntl.flock(handles.log_fd, fcntl.LOCK_UN)
        except OSError:
            handles.close()
            return
        # as _give_back, for the usual case (the pool not full), in one step under the GIL: the
        # handles kept unless another thread kept the path's meanwhile
        if len(_idle) < IDLE_LOGS and _idle.setdefault(handles.path, handles) is handles:
            return
        _give_back(handles.path, handles)

    def close(self) -> None:
        """Close the descriptors this process keeps open for the log between appends, if any."""
        close_idle_descriptors(self._files()[1])

    def _open_to_write(self) -> int:
        """The log opened to append (never through a symbolic link), not yet locked."""
        try:
            return _open_without_atime(self._files()[1], os.O_RDWR | os.O_APPEND | _NO_LINK)
        except FileNotFoundError:
            raise GameNotFound(f"game {self.name!r}: no log at {self.path}") from None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise Unwritable(
                    f"game {self.name!r}: {self.path} is a symbolic link; refusing to write through it"
                ) from None
            raise Unwritable(
                f"cannot open {self.path} to write: {error.strerror}", reason=error.strerror or str(error)
            ) from None

    def append(self, events: Sequence[Event], expected_seq: int | None = None) -> list[Event]:
        """Append under the lock; see :meth:`Transaction.append`. The same steps as
        ``with self.transaction() as tx: tx.append(...)``, without the generator a context
        manager costs: every command pays this path besides its fsync (issue 16)."""
        handles, size = self._locked(LOCK_TIMEOUT_SECONDS)
        try:
            return _append_locked(self, handles.log_fd, handles, size, events, expected_seq, None)
        finally:
            self._release(handles)

    def torn_tail(self) -> bytes:
        """What :meth:`repair` would cut: empty when the log is whole; else the torn last line, and
        with it the complete lines after the head anchor (the rest of the interrupted append, so
        that a command's events stay all or nothing)."""
        return self.repair_plan().removed

    def repair_plan(self) -> RepairPlan:
        """What :meth:`repair` would do, read only: the bytes it cuts and how many events the head
        anchor vouches for that are gone. Raises LogError when the anchor is unreadable or the line
        at its seq has another hash: that is a rewritten log, which no repair may paper over."""
        data = self.read_bytes()
        head = self.read_head()
        whole = not data or data.endswith(b"\n")
        last_newline = len(data) if whole else data.rfind(b"\n") + 1
        if head is None:  # nothing vouches for any line: only the torn one can go
            return RepairPlan(data[last_newline:], data.count(b"\n"), None)
        position = 0
        for _ in range(head.seq + 1):
            end = data.find(b"\n", position)
            if end < 0:  # complete lines the anchor vouched for are gone: a cut, not a crash
                return RepairPlan(data[last_newline:], data[:last_newline].count(b"\n"), head)
            position = end + 1
        anchored = data[data.rfind(b"\n", 0, position - 1) + 1 : position - 1]
        try:
            body = msgspec.json.decode(anchored, type=dict)
        except msgspec.DecodeError:
            body = {}
        if body.get("seq") != head.seq or body.get("hash") != head.hash:
            raise LogError(
                f"the line at seq {head.seq} is not the one the head anchor names "
                f"({head.hash[:12]}): the log was rewritten; repair does not cut into it",
                line=head.seq + 1,
                seq=head.seq,
            )
        cut = len(data) if whole else position
        return RepairPlan(data[cut:], head.seq + 1, head)

    def repair(self, record_loss: bool = False) -> bytes:
        """Cut a torn tail off (see :meth:`torn_tail`), move the head anchor to the last line that
        stays; return what was removed (empty if nothing was torn).

        Only a tail after the anchored seq (an unfinished append) is cut. If complete lines the
        anchor vouched for are gone, :class:`AnchoredLoss` is raised and nothing changes, unless
        ``record_loss``: then the torn line is cut and a :class:`LossRecorded` event says what was
        lost, so the loss is in the log for ``verify`` and every reader, never hidden (item 2)."""
        with self.transaction() as tx:
            plan = self.repair_plan()
            if plan.lost and not record_loss:
                raise AnchoredLoss(plan)
            if plan.removed:
                size = os.fstat(tx.fd).st_size
                with _unwritable(self.path):
                    os.ftruncate(tx.fd, size - len(plan.removed))
                    os.fsync(tx.fd)
            if plan.lost and plan.anchored is not None:
                loss = LossRecorded(
                    anchored_seq=plan.anchored.seq,
                    anchored_hash=plan.anchored.hash,
                    lost=plan.lost,
                    cut_bytes=len(plan.removed),
                )
                tx.append([loss])
            elif plan.removed:
                size, next_seq, prev = _tail(tx.fd, self)
                with _unwritable(self.head_path):
                    if next_seq > 0:
                        self.write_head(next_seq - 1, prev, size)
                    else:
                        self.head_path.unlink(missing_ok=True)
            return plan.removed


class RepairPlan(NamedTuple):
    """What a repair of a log would do (see :meth:`GameLog.repair_plan`)."""

    #: the bytes cut off the end: the torn line and the rest of its unfinished append
    removed: bytes
    #: the complete lines that stay
    kept: int
    #: the head anchor, if the log has one
    anchored: Head | None

    @property
    def lost(self) -> int:
        """How many events the head anchor vouched for are gone (0 after an unfinished append)."""
        return max(0, self.anchored.seq + 1 - self.kept) if self.anchored is not None else 0


class AnchoredLoss(LogError):
    """Complete lines the head anchor vouched for are missing: the log was cut, not torn by a crash
    (exit 4). ``repair`` refuses to hide it; ``repair --record-loss`` records it as an event."""

    def __init__(self, plan: RepairPlan) -> None:
        assert plan.anchored is not None
        super().__init__(
            f"{plan.lost} anchored event(s) are gone: the head anchor vouches for seq "
            f"{plan.anchored.seq} but the complete lines end at seq {plan.kept - 1}. Repair will not "
            "hide it; `mortecouille repair GAME --record-loss` cuts the torn line and records the "
            "loss as an event in the log",
            line=plan.kept + 1,
            seq=plan.kept,
        )
        self.plan = plan


class Creation:
    """A log just created, empty and locked (see :meth:`GameLog.creating`)."""

    def __init__(self, log: GameLog, fd: int, *, taken_over: bool = False) -> None:
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
        self, log: GameLog, fd: int, handles: _Handles | None = None, size: int | None = None
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
    log: GameLog,
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
    command pays, builds no transaction object (issue 16)."""
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
    # way out is left here (issue 16).
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
    log: GameLog,
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
    resumes with cold caches, only the ``pwrite`` and the way out are left (issue 16). A failed
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


def _anchor_lags(log: GameLog, error: OSError, stamped: list[Event]) -> None:
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
STREAM_CHUNK_BYTES = 1 << 20


class CheckedStream:
    """A file log's events, yielded only once their lines' chain is checked: the checks of
    :meth:`GameLog.verify_chain` (canonical form, seq, prev and hash of every line, then the tail
    against the head anchor, raising the same LogError at the same line) in the same pass as the
    typed decoding, a block at a time, so the log is read and decoded once and never held whole
    (``verify``, issue 16).

    The head anchor is read and the log's end settled (:meth:`GameLog.settled_size`) when the
    stream is made: :meth:`chunks` and the iteration both stop there. A line that does not decode
    to an event does not stop the chain check: the events stop there (nothing after it is
    yielded), the error is kept in :attr:`decode_error`, and the chain is checked to the end, as
    the chain check comes first. :attr:`lines` is the number of lines once the iteration ended."""

    def __init__(self, log: GameLog) -> None:
        self.log = log
        try:
            self.head: Head | LogError | None = log.read_head()
        except LogError as error:  # raised after the chain, whose errors come first
            self.head = error
        self.end = log.settled_size()
        self.lines = 0
        self.decode_error: LogError | None = None

    def chunks(self) -> Iterator[bytes]:
        """The log up to :attr:`end` in chunks of whole lines (a torn tail left out, unchecked): for
        a look at its bytes before the checked pass (``verify``'s dice and seed)."""
        fd = self.log._open_for_reading()
        try:
            yield from self._whole_chunks(fd)
        finally:
            os.close(fd)

    def _whole_chunks(self, fd: int) -> Generator[bytes, None, bytes]:
        """:meth:`chunks` read from ``fd``; returns what is left after the last newline (nothing
        unless the log was cut while read).

        What follows a chunk's last newline (a line the chunk cut) is read again at the start of
        the next chunk rather than carried over and copied in front of it (a copy of every chunk,
        made for each pass over the log: issue 16); only a line longer than a chunk is carried,
        until its newline comes."""
        position, carry, tail = 0, b"", b""
        while position < self.end:
            chunk = os.pread(fd, min(STREAM_CHUNK_BYTES, self.end - position), position)
            if not chunk:
                break
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            if not cut:  # one line longer than a chunk: keep reading it
                carry = data
                position += len(chunk)
                continue
            # the bytes after the newline: read again from there next (what is left if the log
            # was cut while read)
            tail = data[cut:]
            carry = b""
            position += len(chunk) - len(tail)
            yield data[:cut] if tail else data
        return carry or tail

    def __iter__(self) -> Iterator[Event]:
        return itertools.chain.from_iterable(self.batches())

    def batches(self) -> Iterator[list[Event]]:
        """The events a block at a time (what iterating gives, without a step per event)."""
        head = self.head
        anchored_seq = head.seq if isinstance(head, Head) else -1
        prev = GENESIS_HASH
        at_anchor: str | None = None
        crashed: Exception | None = None
        count = 0
        for block, lines in self.line_blocks():
            events: list[Event] | None = None
            if self.decode_error is None and crashed is None:
                try:
                    events = decode_block(block, count + 1)
                except LogError as error:
                    self.decode_error = error
                except Exception as error:  # noqa: BLE001 - raised once the chain is checked, as before
                    crashed = error
            prev, found = check_lines(lines, events, count, prev, anchored_seq, block=block)
            if found is not None:
                at_anchor = found
            count += len(lines)
            if events is not None:
                yield events
        if isinstance(head, LogError):
            raise head
        check_head(head, count, at_anchor)
        self.lines = count
        if crashed is not None:
            raise crashed

    def line_blocks(self) -> Iterator[tuple[bytes, list[bytes]]]:
        """The log up to :attr:`end` as blocks of complete lines with their lines (newlines cut),
        as :meth:`GameLog.stream_lines` reads it: a torn tail raises :class:`TornTail` first, a
        line is never cut between blocks. The lines are counted as they are split, not by counting
        each block's newlines first (a pass over every byte of the log: issue 16)."""
        fd = self.log._open_for_reading()
        try:
            if self.end > 0 and os.pread(fd, 1, self.end - 1) != b"\n":
                raise _torn_tail_at(fd, 0, 0, self.end)
            chunks = self._whole_chunks(fd)
            count = 0
            while True:
                try:
                    complete = next(chunks)
                except StopIteration as ended:
                    left: bytes = ended.value
                    break
                lines = complete.split(b"\n")
                lines.pop()  # the empty piece after the block's last newline
                yield complete, lines
                count += len(lines)
            if left:  # cut while read (only repair cuts, and only a torn tail)
                raise TornTail(line=count + 1, fragment=left)
        finally:
            os.close(fd)


def _torn_tail_at(fd: int, offset: int, first_seq: int, end: int) -> TornTail:
    """The :class:`TornTail` of a log whose bytes from ``offset`` (the line of ``first_seq``) to
    ``end`` do not end with a newline: its line number counted a chunk at a time."""
    lines, position, last_newline = 0, offset, offset - 1
    while position < end:
        block = os.pread(fd, min(STREAM_CHUNK_BYTES, end - position), position)
        if not block:
            break
        lines += block.count(b"\n")
        found = block.rfind(b"\n")
        if found >= 0:
            last_newline = position + found
        position += len(block)
    fragment = os.pread(fd, end - last_newline - 1, last_newline + 1)
    return TornTail(line=first_seq + lines + 1, fragment=fragment)


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


def _tail_position(fd: int, log: GameLog) -> tuple[int, str]:
    """The next seq and the last hash, read from the end of the file only."""
    return _tail(fd, log)[1:]


#: How much of a log's end an append reads to find its last line: most lines are far shorter, so
#: one read does; a longer last line is read on, doubling.
_TAIL_CHUNK = 4096


def _tail(fd: int, log: GameLog) -> tuple[int, int, str]:
    """The file's size, the next seq and the last hash, read from the end of the file only."""
    size = os.lseek(fd, 0, os.SEEK_END)
    return (size, *_tail_at(fd, size, log))


def _tail_at(fd: int, size: int, log: GameLog) -> tuple[int, str]:
    """The next seq and the last hash of the file of ``size`` bytes, read from its end only.

    An append whose head anchor does not vouch for the log's end pays this before its write, so it
    is one ``pread`` for a last line under :data:`_TAIL_CHUNK` bytes (issue 16); ``log`` names the
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
