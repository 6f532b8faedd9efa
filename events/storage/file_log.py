"""The file store's game log: one JSON-lines file per game (:class:`GameLog`).

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

The head anchor's format is :mod:`~mortecouille.events.storage.file_head`; the descriptors a
process keeps between appends, :mod:`~mortecouille.events.storage.file_handles`; writing,
:mod:`~mortecouille.events.storage.file_writing`; streaming reads,
:mod:`~mortecouille.events.storage.file_stream`.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import msgspec

from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import (
    LogError,
    TornTail,
    check_lines,
    decode_block,
    decode_lines,
)
from mortecouille.events.game import LossRecorded
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.chain import Head, check_chain, check_head
from mortecouille.events.storage.errors import AnchoredLoss, Conflict, GameNotFound, RepairPlan, Unwritable
from mortecouille.events.storage.file_handles import (
    IDLE_LOGS,
    _give_back,
    _Handles,
    _idle,
    _SlotUpdate,
    close_idle_descriptors,
)
from mortecouille.events.storage.file_head import HeadSlots, _OpenSlots
from mortecouille.events.storage.file_io import (
    _HEAD_FLAGS,
    _LOCK_NOW,
    _NO_ATIME,
    _NO_LINK,
    _SLOTS_SIZE,
    LOCK_TIMEOUT_SECONDS,
    NAME_MAX,
    _complete_part,
    _fsync_dir,
    _head_identity,
    _identity,
    _map_slots,
    _open_without_atime,
    _tail,
    _unwritable,
    _write_all,
    lock_within,
)
from mortecouille.events.storage.file_stream import STREAM_CHUNK_BYTES, CheckedStream, _torn_tail_at
from mortecouille.events.storage.file_writing import Creation, Transaction, _append_locked

_log = get_logger("mortecouille")


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
        than the system calls themselves."""
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
        written, so a name the file system refuses is never half-created."""
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
        resumes with cold caches, only that system call is left; readying writes nothing
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
        system calls and no more parsing than finding the newest valid slot. A
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
        # a fresh file. The rename replaces a link at the head path, too.
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
        never held whole. ``offset`` must be where a line starts (0, or an
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
        the empty file is removed: a refused creation leaves nothing.

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
        manager costs: every command pays this path besides its fsync."""
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


