"""The turn index beside a game's log, ``GAME.turns``: where every turn starts
and ends (by seq), the rulings' lines, and a *keyframe* (the folded state) every
:data:`KEYFRAME_EVERY` events, so ``replay --turn N``, ``explain --turn N`` and ``board --turn N``
fold at most that many events, at any turn.

A derived file on the terms of :mod:`mortecouille.app.snapshots` (read there): it stands on one
line of the log, its :class:`~mortecouille.app.snapshots.Anchor`, checked before use; missing,
damaged, another game's or no longer held by the log, it is rebuilt from the log; deleting it
changes nothing but speed, and ``verify`` never reads it. Apart from the snapshot so that a
command folding the current state (``state``, ``order``) does not import it.
"""

from __future__ import annotations

import bisect
import os
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final, overload

import msgspec

from mortecouille.app.snapshots import (
    DIGEST_SIZE,
    FORMAT,
    TURNS_SUFFIX,
    Anchor,
    anchor_holds,
    decode_state,
    derived_digest,
    encode_state,
    write_derived,
)
from mortecouille.core.errors import BadInput, phrase
from mortecouille.core.game import evolve
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.codec import LogError, decode_line, decode_lines
from mortecouille.events.game import GameEnded, TurnEnded, TurnStarted
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage.file_log import GameLog

#: The turn index keeps the state every this many events (positions 0, K, 2K, ...): a turn's
#: position is reached by folding at most K - 1 events from its keyframe.
KEYFRAME_EVERY = 1024

_TURNS_MAGIC: Final = b"mortecouille-turns %d\n" % FORMAT


STARTED: Final = 0
ENDED: Final = 1
GAME_ENDED: Final = 2


#: A turn started or ended, or the game ended: (seq, STARTED | ENDED | GAME_ENDED, turn); plain
#: tuples, the cheapest to decode and scan in their thousands
Marker = tuple[int, int, int]


class Keyframe(msgspec.Struct, frozen=True, array_like=True):
    """The state at ``position`` (events applied), whose next line starts at byte ``offset`` of
    the log, stored at ``start`` in the index file (``length`` bytes, their CRC-32 ``digest``)."""

    position: int
    offset: int
    start: int
    length: int
    digest: bytes


class _DamagedKeyframe(Exception):
    """A keyframe's bytes in the index file are gone or do not match their digest."""


class _Directory(msgspec.Struct, frozen=True):
    name: str
    #: the last line the index covers (None: an empty log)
    covered: Anchor | None
    #: the seqs and turns of the turn-started and turn-ended events, and the seqs of game-ended
    #: ones, as arrays of int64 (``array('q')`` bytes: tens of thousands read at once)
    started_turns: bytes
    started_seqs: bytes
    ended_turns: bytes
    ended_seqs: bytes
    game_ended: bytes
    #: each turn started once, after the one before ended, and ended once: lookups by bisection
    ordered: bool
    #: the rulings' lines (each with its newline) and seqs, and where each line ends in them: a
    #: position's rulings in force, read without the log
    ruling_seqs: bytes
    ruling_ends: bytes
    ruling_lines: bytes
    keyframes: list[Keyframe]
    #: the state at the covered end (where an index behind the log resumes)
    final: Keyframe


def _int64s(data: bytes = b"") -> array[int]:
    values = array("q")
    values.frombytes(data)
    return values


class _Marks:
    """Where turns start and end and where the rulings are, as the turn index keeps them."""

    def __init__(self, directory: _Directory | None = None) -> None:
        self.started_turns = _int64s(directory.started_turns if directory else b"")
        self.started_seqs = _int64s(directory.started_seqs if directory else b"")
        self.ended_turns = _int64s(directory.ended_turns if directory else b"")
        self.ended_seqs = _int64s(directory.ended_seqs if directory else b"")
        self.game_ended = _int64s(directory.game_ended if directory else b"")
        self.ordered = directory.ordered if directory else True
        self.ruling_seqs = _int64s(directory.ruling_seqs if directory else b"")
        self.ruling_ends = _int64s(directory.ruling_ends if directory else b"")
        self.ruling_lines = bytearray(directory.ruling_lines if directory else b"")

    def note(self, seq: int, event: Event, line: bytes) -> None:
        """Take note of ``event`` (at ``seq``, from ``line``) if it is one the index keeps."""
        if isinstance(event, TurnStarted):
            # ordered: every turn started after the one before ended, with a greater number
            self.ordered &= len(self.started_turns) == len(self.ended_turns) and (
                not self.started_turns or event.turn > self.started_turns[-1]
            )
            self.started_turns.append(event.turn)
            self.started_seqs.append(seq)
        elif isinstance(event, TurnEnded):
            # ordered: it ends the turn started last, which had not ended
            self.ordered &= len(self.started_turns) == len(self.ended_turns) + 1 and (
                event.turn == self.started_turns[-1]
            )
            self.ended_turns.append(event.turn)
            self.ended_seqs.append(seq)
        elif isinstance(event, GameEnded):
            self.game_ended.append(seq)
        elif isinstance(event, RulingRecorded):
            self.ruling_lines += line + b"\n"
            self.ruling_seqs.append(seq)
            self.ruling_ends.append(len(self.ruling_lines))

    def merged(self) -> list[Marker]:
        """Every marker in seq order (for a log whose turns are not :attr:`ordered`)."""
        found = [
            (seq, STARTED, turn) for seq, turn in zip(self.started_seqs, self.started_turns, strict=True)
        ]
        found += [(seq, ENDED, turn) for seq, turn in zip(self.ended_seqs, self.ended_turns, strict=True)]
        found += [(seq, GAME_ENDED, 0) for seq in self.game_ended]
        return sorted(found)

    def turn_bounds(self, turn: int) -> tuple[int, int] | None:
        """As :func:`~mortecouille.replays.reading.replay.turn_bounds`, by seq."""
        if self.ordered:  # the k-th turn ended is the k-th started
            at = bisect.bisect_left(self.ended_turns, turn)
            if at < len(self.ended_turns) and self.ended_turns[at] == turn:
                return self.started_seqs[at], self.ended_seqs[at]
            return None
        start: int | None = None
        for seq, kind, marked in self.merged():
            if kind == STARTED and marked == turn:
                start = seq
            elif kind == ENDED and marked == turn and start is not None:
                return start, seq
        return None

    def directory_fields(self) -> dict[str, Any]:
        return {
            "started_turns": self.started_turns.tobytes(),
            "started_seqs": self.started_seqs.tobytes(),
            "ended_turns": self.ended_turns.tobytes(),
            "ended_seqs": self.ended_seqs.tobytes(),
            "game_ended": self.game_ended.tobytes(),
            "ordered": self.ordered,
            "ruling_seqs": self.ruling_seqs.tobytes(),
            "ruling_ends": self.ruling_ends.tobytes(),
            "ruling_lines": bytes(self.ruling_lines),
        }


class Rulings(Sequence[RulingRecorded]):
    """The rulings of a position, in log order: a sequence whose items are decoded from their
    lines (kept in the turn index, or read from the store's turn marks) only when read.

    A long game gathers rulings by the thousand (a wreck refloated by ruling each turn), and
    ``replay --turn N`` shows only the latest few and how many came before: decoding all of them
    was a late turn's largest cost beyond the board itself, growing with the log. The
    JSON output, which lists them all, reads them all, in one decoding call. Equal to any sequence
    of the same rulings (a list, as the functions over the whole list of events give)."""

    def __init__(self, lines: bytes | bytearray, ends: array[int]) -> None:
        #: the rulings' lines (each with its newline; more may follow, appended later), and where
        #: the i-th line ends in them
        self._lines = lines
        self._ends = ends

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> RulingRecorded: ...

    @overload
    def __getitem__(self, index: slice) -> list[RulingRecorded]: ...

    def __getitem__(self, index: int | slice) -> RulingRecorded | list[RulingRecorded]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return self._decoded(0, len(self))[index]
            return self._decoded(start, stop)
        at = index + len(self) if index < 0 else index
        if not 0 <= at < len(self):
            raise IndexError(index)
        return self._decoded(at, at + 1)[0]

    def __iter__(self) -> Iterator[RulingRecorded]:
        return iter(self._decoded(0, len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable

    def __repr__(self) -> str:
        return f"Rulings({list(self)!r})"

    def _decoded(self, start: int, stop: int) -> list[RulingRecorded]:
        """The rulings ``start``..``stop - 1``, from their lines in one decoding call."""
        if start >= stop:
            return []
        first = self._ends[start - 1] if start > 0 else 0
        found = decode_lines(bytes(self._lines[first : self._ends[stop - 1]]))
        rulings = [event for event in found if isinstance(event, RulingRecorded)]
        if len(rulings) != stop - start:  # the index only keeps rulings' lines (and checks them)
            raise LogError(f"the turn index's ruling lines {start}..{stop - 1} are not all rulings")
        return rulings


def turns_path(log_: GameLog) -> Path:
    return log_.sibling(TURNS_SUFFIX)


class TurnLookups:
    """What ``replay --turn``, ``explain --turn`` and ``board --turn`` ask of a game's turns, from
    its :class:`_Marks` (where turns start and end, the rulings) and how many events it holds;
    :meth:`span` (a stretch of events and the state before it) is the store's to give: from the
    turn index file beside a file log (:class:`TurnIndex`), or from the tables of a PostgreSQL
    store (:mod:`mortecouille.app.stored_turns`). The turn lookups give what
    :mod:`mortecouille.replays.reading.replay` and
    :func:`~mortecouille.replays.reading.explain.story_span` give on the whole list of events."""

    marks: _Marks

    @property
    def end(self) -> int:
        """How many events the log holds (the current position)."""
        raise NotImplementedError

    @property
    def final(self) -> GameState:
        """The state at :attr:`end`."""
        raise NotImplementedError

    def span(self, first: int, last: int) -> tuple[GameState, list[Event]]:
        """The state at position ``first`` and the events ``first``..``last - 1``."""
        raise NotImplementedError

    def keep(self) -> None:
        """Keep what was derived for the next command (a reading command's success path)."""
        raise NotImplementedError

    def resolved_turns(self) -> list[int]:
        return list(self.marks.ended_turns)

    def position_after_turn(self, turn: int) -> int:
        """As :func:`~mortecouille.replays.reading.replay.position_after_turn`."""
        marks = self.marks
        if not marks.ordered:
            for seq, kind, marked in marks.merged():
                if (kind == STARTED and marked > turn) or (kind == ENDED and marked == turn):
                    return seq if kind == STARTED else seq + 1
            return self.end
        # ordered: the first turn started after ``turn`` is the one with the least greater number
        later = bisect.bisect_right(marks.started_turns, turn)
        started = marks.started_seqs[later] if later < len(marks.started_turns) else None
        at = bisect.bisect_left(marks.ended_turns, turn)
        ended = (
            marks.ended_seqs[at] if at < len(marks.ended_turns) and marks.ended_turns[at] == turn else None
        )
        if ended is not None and (started is None or ended < started):
            return ended + 1
        return started if started is not None else self.end

    def story_span(self, turn: int) -> tuple[int, int]:
        """As :func:`~mortecouille.replays.reading.explain.story_span`, with the same refusal."""
        marks = self.marks
        bounds = marks.turn_bounds(turn)
        if bounds is None:
            done = self.resolved_turns()
            known = (
                phrase("resolved turns: {first}..{last}", first=done[0], last=done[-1])
                if done
                else phrase("no turn has been resolved yet")
            )
            raise BadInput("turn", "turn {turn} has not been resolved ({known})", turn=turn, known=known)
        start, end = bounds
        first = start
        if first > 1:  # back to just after the last turn that ended before it
            before = bisect.bisect_left(marks.ended_seqs, start) if marks.ordered else None
            if before is not None:
                ended_before = marks.ended_seqs[before - 1] if before > 0 else None
            else:
                ended_before = max((seq for seq in marks.ended_seqs if seq < start), default=None)
            first = 1 if ended_before is None else max(1, ended_before + 1)
        last = end + 1
        if last < self.end and last in marks.game_ended:
            last += 1
        return first, last

    def rulings_until(self, position: int) -> Rulings:
        """The rulings among the first ``position`` events, decoded as they are read
        (:class:`Rulings`)."""
        marks = self.marks
        count = bisect.bisect_left(marks.ruling_seqs, position)
        # the lines stay where they are (only appended to): each read copies the lines it decodes
        return Rulings(marks.ruling_lines, marks.ruling_ends[:count])

    def state_at(self, position: int) -> tuple[GameState, Event | None]:
        """The state at ``position`` and the event that led there (None at 0)."""
        if position <= 0:
            return EMPTY, None
        before, events = self.span(position - 1, position)
        if not events:
            return self.final, None
        return evolve(before, events[0]), events[0]


class TurnIndex(TurnLookups):
    """Where every turn of a file log starts and ends, and its keyframes: positions of a long game
    reached by folding at most :data:`KEYFRAME_EVERY` events. Built or brought up to date by
    :func:`turn_index`."""

    def __init__(
        self,
        log_: GameLog,
        covered: Anchor | None,
        marks: _Marks,
        keyframes: dict[int, bytes | Keyframe],
        offsets: dict[int, int],
        final: GameState,
        kept_in: Path | None,
    ) -> None:
        self.log = log_
        self.covered = covered
        self.marks = marks
        #: position -> the state's encoding (in memory) or where it is in the index file
        self.keyframes = keyframes
        #: position -> the byte where the line of that seq starts (where folding resumes)
        self.offsets = offsets
        self._final = final
        #: the index file the keyframes not in memory are read from (each checked by its digest)
        self._kept_in = kept_in
        #: events folded into the index since it was read from its file
        self.added = 0
        #: True when no kept index could be used
        self.rebuilt = kept_in is None
        #: True when a keyframe of the file did not match its digest: the file is built anew
        self.damaged = False

    @property
    def end(self) -> int:
        """How many events the log holds (the current position)."""
        return 0 if self.covered is None else self.covered.seq + 1

    @property
    def final(self) -> GameState:
        return self._final

    @final.setter
    def final(self, state: GameState) -> None:
        self._final = state

    def keyframe_bytes(self, position: int) -> bytes:
        """The encoded state at keyframe ``position``; :class:`_DamagedKeyframe` when its bytes in
        the index file do not match their digest (the file changed or was damaged since)."""
        stored = self.keyframes[position]
        if isinstance(stored, bytes):
            return stored
        data = _read_range(self._kept_in, stored.start, stored.length)
        if data is None or derived_digest(data) != stored.digest:
            raise _DamagedKeyframe(position)
        return data

    def offset_of(self, position: int) -> int:
        """The byte of the log where the line after keyframe ``position`` starts."""
        stored = self.keyframes[position]
        return self.offsets[position] if isinstance(stored, bytes) else stored.offset

    def keyframe_at_or_before(self, position: int) -> int:
        return max(p for p in self.keyframes if p <= position)

    def span(self, first: int, last: int) -> tuple[GameState, list[Event]]:
        """The state at position ``first`` and the events ``first``..``last - 1``, folded from the
        keyframe at or before ``first``."""
        first = max(0, min(first, self.end))
        last = max(first, min(last, self.end))
        if first == self.end:
            return self.final, []
        while True:
            origin = self.keyframe_at_or_before(first)
            try:
                state = decode_state(self.keyframe_bytes(origin))
                break
            except (_DamagedKeyframe, msgspec.DecodeError, msgspec.ValidationError):
                # never used: an earlier keyframe is folded from instead (position 0, the empty
                # state, is always there), and the index is written anew when kept
                del self.keyframes[origin]
                self.rebuilt = self.damaged = True
        events: list[Event] = []
        end = self.covered.end if self.covered is not None else 0
        seq = origin
        # lines decoded one by one, and only up to ``last``: a turn needs a few hundred of the
        # thousands of lines a chunk holds
        for line in self.log.stream_lines(self.offset_of(origin), origin, end=end):
            if seq >= last:
                break
            event = decode_line(line, seq + 1)
            if seq < first:
                state = evolve(state, event)
            else:
                events.append(event)
            seq += 1
        return state, events

    def keep(self) -> None:
        """Write the index beside the log when it was rebuilt or went :data:`KEYFRAME_EVERY` or
        more events past the one kept (a reading command's success path: nothing is written for
        a log shorter than that, folded whole as cheaply)."""
        worth = self.end >= KEYFRAME_EVERY and (self.rebuilt or self.added >= KEYFRAME_EVERY)
        if not worth:
            return
        if self.damaged:  # a file found damaged is replaced by one built from the log alone
            fresh = _empty_index(self.log)
            _extend(fresh, self.covered.end if self.covered is not None else 0)
            if _write_turn_index(fresh):
                self.rebuilt = self.damaged = False
                self.added = 0
            return
        if _write_turn_index(self):
            self.rebuilt, self.added = False, 0


def _read_range(path: Path | None, start: int, length: int) -> bytes | None:
    """``length`` bytes of a derived file from ``start``; None when they cannot be read."""
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        data = os.pread(fd, length, start)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == length else None


def _read_turn_index(log_: GameLog) -> TurnIndex | None:
    """The index kept beside ``log_`` if it can be used: its format, game, directory digest, the
    state at its end and its covered line check out. Its keyframes are read when needed, each
    checked against its digest then."""
    path = turns_path(log_)
    at = len(_TURNS_MAGIC)
    header = _read_range(path, 0, at + 8 + DIGEST_SIZE)
    if header is None or not header.startswith(_TURNS_MAGIC):
        return None
    try:
        length = int.from_bytes(header[at : at + 8], "big")
        directory_bytes = _read_range(path, at + 8 + DIGEST_SIZE, length)
        if directory_bytes is None or derived_digest(directory_bytes) != header[at + 8 :]:
            return None
        directory = msgspec.msgpack.decode(directory_bytes, type=_Directory)
        if directory.name != log_.name:
            return None
        if directory.covered is not None and not anchor_holds(log_, directory.covered):
            return None
        final_bytes = _read_range(path, directory.final.start, directory.final.length)
        if final_bytes is None or derived_digest(final_bytes) != directory.final.digest:
            return None
        final = decode_state(final_bytes)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        return None
    keyframes: dict[int, bytes | Keyframe] = {frame.position: frame for frame in directory.keyframes}
    keyframes[0] = encode_state(EMPTY)  # always at hand: where every fold can start
    return TurnIndex(
        log_,
        directory.covered,
        _Marks(directory),
        keyframes,
        {0: 0},
        final,
        path,
    )


def _empty_index(log_: GameLog) -> TurnIndex:
    return TurnIndex(log_, None, _Marks(), {0: encode_state(EMPTY)}, {0: 0}, EMPTY, None)


def _extend(index: TurnIndex, size: int) -> None:
    """Fold the lines of the log after the index's covered end, up to byte ``size``, into it."""
    covered = index.covered
    offset = 0 if covered is None else covered.end
    seq = index.end
    state = index.final
    last: tuple[int, str] | None = None
    for line in index.log.stream_lines(offset, seq, end=size):
        event = decode_line(line, seq + 1)
        state = evolve(state, event)
        index.marks.note(seq, event, bytes(line))
        offset += len(line) + 1
        seq += 1
        last = (event.seq, event.hash)
        if seq % KEYFRAME_EVERY == 0:
            index.keyframes[seq] = encode_state(state)
            index.offsets[seq] = offset
        index.added += 1
    if last is not None:
        index.covered = Anchor(last[0], last[1], size)
    index.final = state


def _write_turn_index(index: TurnIndex) -> bool:
    """The index as a file: magic, the directory's length and CRC-32, the directory, then each
    keyframe's state and the state at the end (where the directory says, each with its digest)."""
    pending: list[tuple[int, bytes]] = []
    for position in sorted(index.keyframes):
        try:
            pending.append((position, index.keyframe_bytes(position)))
        except _DamagedKeyframe:
            continue  # left out: the position is reached from an earlier one
    final = encode_state(index.final)

    def layout(base: int) -> tuple[list[Keyframe], Keyframe]:
        at = base
        frames = []
        for position, encoded in pending:
            digest = derived_digest(encoded)
            frames.append(Keyframe(position, index.offset_of(position), at, len(encoded), digest))
            at += len(encoded)
        return frames, Keyframe(index.end, 0, at, len(final), derived_digest(final))

    # the directory holds the blobs' places, which follow it: laid out until its length settles
    base = len(_TURNS_MAGIC) + 8 + DIGEST_SIZE
    for _ in range(8):
        frames, final_frame = layout(base)
        directory = msgspec.msgpack.encode(
            _Directory(
                name=index.log.name,
                covered=index.covered,
                keyframes=frames,
                final=final_frame,
                **index.marks.directory_fields(),
            )
        )
        wanted = len(_TURNS_MAGIC) + 8 + DIGEST_SIZE + len(directory)
        if wanted == base:
            break
        base = wanted
    else:  # pragma: no cover - msgpack integers grow by steps: a few passes settle it
        return False
    header = _TURNS_MAGIC + len(directory).to_bytes(8, "big") + derived_digest(directory)
    blobs = [encoded for _, encoded in pending]
    return write_derived(turns_path(index.log), b"".join([header, directory, *blobs, final]))


def turn_index(log_: GameLog) -> TurnIndex:
    """The turn index of ``log_`` up to its end: the one kept beside it if it can be used
    (brought up to date with the events after it), else rebuilt from the log. Nothing is
    written: a reading command calls :meth:`TurnIndex.keep` once it has succeeded."""
    size = log_.settled_size()
    index = _read_turn_index(log_)
    if index is None or (index.covered is not None and index.covered.end > size):
        index = _empty_index(log_)
    _extend(index, size)
    return index
