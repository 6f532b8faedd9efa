"""Derived files beside a game's log: what makes a command's cost independent of the log's length
(issue 16, item 1), never trusted over the log.

Two files, each derived from the log alone and rebuilt from it whenever it cannot be used:

* ``GAME.state``, the *snapshot*: the folded state after some event, so a command folds only the
  events after it (at most :data:`SNAPSHOT_EVERY` of them before a command writes a newer one);
* ``GAME.turns``, the *turn index*: where every turn starts and ends (by seq), the rulings' lines,
  and a *keyframe* (the folded state) every :data:`KEYFRAME_EVERY` events, so ``replay --turn N``,
  ``explain --turn N`` and ``board --turn N`` fold at most that many events, at any turn.

Each stands on one line of the log, its :class:`Anchor`: the seq, the hash and the byte where that
line ends. Before either is used, that one line is read back from the log (at that byte) and its
seq, its hash and the hash of its body are compared: since every line's hash covers the previous
line's, a line that checks out vouches for every line before it, so a state derived from them is
the fold of the log as it is. A file that is missing, damaged (its own checksum does not match),
of another format version, another game's, or whose line the log no longer holds (a repair cut
the tail, the log was replaced) is ignored and rebuilt; a file merely behind the log is used and
the events after it are folded. Deleting them changes nothing but speed; ``verify`` never reads
them.

They are written by temporary file and rename (no fsync: a lost one is rebuilt), only after a
command succeeded or by a reading command that found them stale, never on a refused command; a
failure to write one is logged and otherwise ignored, so it can never change an outcome.

The PostgreSQL store keeps the snapshot in a table of its schema instead (``snapshots``: the
game, the seq and hash of the line it stands on, :data:`FORMAT` and the state as
:func:`encode_state_compact` writes it; see docs/stores.md), through the store's raw-bytes
interface (:class:`~mortecouille.events.stores.KeepsSnapshots`), decoded here
(:func:`fold_stored`). It is used on the same terms: the store returns it only when the log's row
at its seq has its hash (checked in the statement that reads it, with that row's line), and it is
used only when its format is this one and it decodes; else the game is folded from its first
event, and the snapshot rewritten by the next command that succeeds having folded
:data:`SNAPSHOT_EVERY` events or more (at once, for a game that long). The turn index has no
PostgreSQL counterpart.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import zlib
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final, NamedTuple, Protocol

import msgspec

from mortecouille.core.errors import BadInput
from mortecouille.core.game import evolve, fold
from mortecouille.core.state import EMPTY, GameState, without_defaults
from mortecouille.events.base import Event
from mortecouille.events.codec import decode_line, decode_lines, line_hash
from mortecouille.events.game import GameEnded, TurnEnded, TurnStarted
from mortecouille.events.house_log import get_logger
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.store import GameLog
from mortecouille.events.stored_snapshot import StoredSnapshot
from mortecouille.events.stores import EventStore, KeepsSnapshots, events_from

_log = get_logger("mortecouille")


class StoreWithSnapshots(EventStore, KeepsSnapshots, Protocol):
    """A game's log in a store that keeps its snapshot (PostgreSQL)."""


#: The derived files' suffixes (in ``GAME_FILE_SUFFIXES``: no game is named after them).
SNAPSHOT_SUFFIX: Final = ".state"
TURNS_SUFFIX: Final = ".turns"
DERIVED_SUFFIXES: Final = (SNAPSHOT_SUFFIX, TURNS_SUFFIX)

#: The format version of both files; a file of any other version is rebuilt, never read.
FORMAT: Final = 1

#: A snapshot is rewritten once this many events have been folded past it: a command folds at
#: most this many events (and small games, in the tests, keep no snapshot at all).
SNAPSHOT_EVERY = 256

#: The turn index keeps the state every this many events (positions 0, K, 2K, ...): a turn's
#: position is reached by folding at most K - 1 events from its keyframe.
KEYFRAME_EVERY = 1024

_SNAPSHOT_MAGIC: Final = b"mortecouille-snapshot %d\n" % FORMAT
_TURNS_MAGIC: Final = b"mortecouille-turns %d\n" % FORMAT


class Anchor(msgspec.Struct, frozen=True, array_like=True):
    """The line a derived state stands on: its seq, its hash, and the byte just after its newline
    (where the events after it start)."""

    seq: int
    hash: str
    end: int


class _LineHead(msgspec.Struct):
    seq: Any = None
    hash: Any = None


_LINE_HEAD = msgspec.json.Decoder(_LineHead)
_RAW_LINE = msgspec.json.Decoder(dict[str, Any])


def anchor_holds(log_: GameLog, anchor: Anchor) -> bool:
    """Whether the log's line ending at ``anchor.end`` is the line the anchor names: the same seq
    and hash, and a hash that is its body's (so the line, and the chain before it, are intact)."""
    try:
        line = log_.line_ending_at(anchor.end)
    except OSError:
        return False
    if line is None:
        return False
    try:
        head = _LINE_HEAD.decode(line)
        if head.seq != anchor.seq or head.hash != anchor.hash:
            return False
        body = _RAW_LINE.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return False
    body.pop("hash", None)
    return line_hash(body) == anchor.hash


# --- writing a derived file --------------------------------------------------------------------


def _write_derived(path: Path, payload: bytes) -> bool:
    """Replace ``path`` with ``payload`` by a temporary file of its own and a rename (no fsync: a
    derived file lost in a crash is rebuilt). Never through a link; a failure is logged and
    leaves the file as it was. True when written."""
    import secrets  # only when a derived file is written: not imported by every command (issue 16)

    temporary = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temporary, path)
        return True
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        # derived: only speed is lost, so no warning on every read of a read-only games directory
        _log.info("derived file not written", path=str(path), error=error.strerror or str(error))
        return False


def _read_derived(path: Path) -> bytes | None:
    """A derived file's bytes, or None (missing, a link, unreadable: all rebuilt)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            return handle.read()
    except OSError:
        return None


#: The bytes of :func:`_digest`.
_DIGEST_SIZE: Final = 4


def _digest(data: bytes) -> bytes:
    """The CRC-32 of a derived file's part: it catches a damaged or cut file (a derived file is
    no defence against whoever can write the games directory: they could write the log), at a
    fraction of a cryptographic hash's cost on every command."""
    return zlib.crc32(data).to_bytes(_DIGEST_SIZE, "big")


_STATE_ENCODER = msgspec.msgpack.Encoder()
_STATE_DECODER = msgspec.msgpack.Decoder(GameState)


def encode_state(state: GameState) -> bytes:
    """A state as the derived files keep it (msgpack); :func:`decode_state` gives it back equal,
    with the same ``state_hash``."""
    return _STATE_ENCODER.encode(state)


def decode_state(data: bytes) -> GameState:
    return _STATE_DECODER.decode(data)


def encode_state_compact(state: GameState) -> bytes:
    """A state as the snapshot keeps it: msgpack with every field equal to its default left out
    (:func:`~mortecouille.core.state.without_defaults`), which :func:`decode_state` fills back in.
    Every read command decodes the snapshot, and a long game's state is mostly ships whose fields
    keep their defaults: fewer keys to match makes its decoding about a quarter cheaper (issue 16),
    for more work when it is written, once in :data:`SNAPSHOT_EVERY` events. The turn index's
    keyframes, written by the thousand when it is built, keep :func:`encode_state`."""
    return _STATE_ENCODER.encode(without_defaults(state))


# --- the snapshot --------------------------------------------------------------------------------


class _SnapshotHead(msgspec.Struct, frozen=True):
    name: str
    anchor: Anchor
    digest: bytes


def snapshot_path(log_: GameLog) -> Path:
    return log_.sibling(SNAPSHOT_SUFFIX)


def read_snapshot(log_: GameLog) -> tuple[Anchor, GameState] | None:
    """The snapshot beside ``log_`` and the line it stands on, if it can be used: its format, its
    game, its own digest and its anchor's line in the log all check out; else None."""
    data = _read_derived(snapshot_path(log_))
    if data is None or not data.startswith(_SNAPSHOT_MAGIC):
        return None
    try:
        body = data[len(_SNAPSHOT_MAGIC) :]
        length = int.from_bytes(body[:4], "big")
        head = msgspec.msgpack.decode(body[4 : 4 + length], type=_SnapshotHead)
        encoded = body[4 + length :]
        if head.name != log_.name or _digest(encoded) != head.digest:
            return None
        if not anchor_holds(log_, head.anchor):
            return None
        return head.anchor, decode_state(encoded)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        return None


def write_snapshot(log_: GameLog, anchor: Anchor, state: GameState) -> bool:
    """Keep ``state``, the fold of the log through ``anchor``, beside the log."""
    encoded = encode_state_compact(state)
    head = msgspec.msgpack.encode(_SnapshotHead(name=log_.name, anchor=anchor, digest=_digest(encoded)))
    payload = _SNAPSHOT_MAGIC + len(head).to_bytes(4, "big") + head + encoded
    return _write_derived(snapshot_path(log_), payload)


class Folded(msgspec.Struct, frozen=True):
    """A log's current state, the line it stands on (None: an empty log) and how many events were
    folded past the snapshot to reach it (all of them without one)."""

    state: GameState
    anchor: Anchor | None
    folded: int


def fold_log(log_: GameLog, *, end: int | None = None, settle: bool = True) -> Folded:
    """The fold of ``log_`` from its snapshot (when it can be used) and the events after it,
    read as a stream. ``end``: the log's size when the caller holds the writer lock (then
    ``settle`` is False); else the log is read as it stands once any append in progress is done."""
    found = read_snapshot(log_)
    state, anchor = (EMPTY, None) if found is None else (found[1], found[0])
    size = log_.settled_size() if end is None else end
    if anchor is not None and anchor.end > size:  # cannot hold: the log is shorter than it
        state, anchor = EMPTY, None
    start, first_seq = (0, 0) if anchor is None else (anchor.end, anchor.seq + 1)
    counted = _Counted(log_.stream(start, first_seq, settle=settle, end=size))
    state = fold(counted, state)
    if counted.last is not None:
        anchor = Anchor(counted.last.seq, counted.last.hash, size)
    return Folded(state, anchor, counted.count)


class _Counted:
    """The events of a stream as they pass: how many, and the last."""

    def __init__(self, events: Iterable[Event]) -> None:
        self._events = iter(events)
        self.count = 0
        self.last: Event | None = None

    def __iter__(self) -> Iterator[Event]:
        for event in self._events:
            self.count += 1
            self.last = event
            yield event


def current_state(store: EventStore, *, keep: bool = False) -> GameState:
    """The game's current state: from the snapshot and the events after it (a file store, or a
    store that keeps snapshots: PostgreSQL), or from all its events (another store). ``keep``: a
    reading command's success path, which rewrites a snapshot left :data:`SNAPSHOT_EVERY` or more
    events behind."""
    if isinstance(store, GameLog):
        folded = fold_log(store)
        if keep:
            keep_snapshot(store, folded)
        return folded.state
    if isinstance(store, KeepsSnapshots):
        stored = fold_stored(store)
        if keep:
            keep_stored_snapshot(store, stored)
        return stored.state
    return fold(events_from(store, 0))


def keep_snapshot(log_: GameLog, folded: Folded) -> None:
    """Rewrite the snapshot when ``folded`` went :data:`SNAPSHOT_EVERY` or more events past it."""
    if folded.anchor is not None and folded.folded >= SNAPSHOT_EVERY:
        write_snapshot(log_, folded.anchor, folded.state)


# --- the snapshot a store keeps (PostgreSQL) -----------------------------------------------------


class StoreFolded(NamedTuple):
    """A game's state folded in a store that keeps snapshots: the seq and hash of the last event
    in it (None: no event), how many events were folded to reach it past the snapshot (all of
    them without a usable one), and the seq the fold started from (0 without a snapshot)."""

    state: GameState
    last: tuple[int, str] | None
    folded: int
    start: int


def decoded_snapshot(found: StoredSnapshot | None) -> GameState | None:
    """The state a snapshot a store kept holds, if it can be used: the store vouched that the log
    holds its line (:class:`~mortecouille.events.stores.KeepsSnapshots`), its format is
    :data:`FORMAT` and its bytes decode to a state; else None (folded from the start)."""
    if found is None or found.format != FORMAT:
        return None
    try:
        return decode_state(found.state)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError):
        return None


def fold_stored(store: StoreWithSnapshots) -> StoreFolded:
    """The fold of a game in ``store`` from its snapshot (when it can be used) and the events after
    it, streamed; from its first event otherwise (a snapshot refused here costs one more read)."""
    found, events = store.snapshot_and_events()
    state = decoded_snapshot(found)
    if found is None or state is None:
        if found is not None:  # read after a snapshot not used: from the start instead
            events = events_from(store, 0)
        start, state, last = 0, EMPTY, None
    else:
        start, last = found.seq + 1, (found.seq, found.hash)
    counted = _Counted(events)
    state = fold(counted, state)
    if counted.last is not None:
        last = (counted.last.seq, counted.last.hash)
    return StoreFolded(state, last, counted.count, start)


def keep_stored_snapshot(store: KeepsSnapshots, folded: StoreFolded) -> bool:
    """Rewrite the snapshot ``store`` keeps when ``folded`` went :data:`SNAPSHOT_EVERY` or more
    events past it (a command's success path; a failure to write is only logged). True when
    written."""
    if folded.last is None or folded.folded < SNAPSHOT_EVERY:
        return False
    seq, digest = folded.last
    return store.write_snapshot(seq, digest, FORMAT, encode_state_compact(folded.state))


# --- the turn index --------------------------------------------------------------------------

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


def turns_path(log_: GameLog) -> Path:
    return log_.sibling(TURNS_SUFFIX)


class TurnIndex:
    """Where every turn of a log starts and ends, and its keyframes: positions of a long game
    reached by folding at most :data:`KEYFRAME_EVERY` events. Built or brought up to date by
    :func:`turn_index`; the turn lookups give what :mod:`mortecouille.replays.reading.replay` and
    :func:`~mortecouille.replays.reading.explain.story_span` give on the whole list of events."""

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
        self.final = final
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
            known = f"resolved turns: {done[0]}..{done[-1]}" if done else "no turn has been resolved yet"
            raise BadInput("--turn", f"turn {turn} has not been resolved ({known})")
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

    def rulings_until(self, position: int) -> list[RulingRecorded]:
        """The rulings among the first ``position`` events."""
        marks = self.marks
        count = bisect.bisect_left(marks.ruling_seqs, position)
        if count == 0:
            return []
        # one decoding call for all of them: a long game's rulings run into thousands
        found = decode_lines(bytes(marks.ruling_lines[: marks.ruling_ends[count - 1]]))
        return [event for event in found if isinstance(event, RulingRecorded)]

    def keyframe_bytes(self, position: int) -> bytes:
        """The encoded state at keyframe ``position``; :class:`_DamagedKeyframe` when its bytes in
        the index file do not match their digest (the file changed or was damaged since)."""
        stored = self.keyframes[position]
        if isinstance(stored, bytes):
            return stored
        data = _read_range(self._kept_in, stored.start, stored.length)
        if data is None or _digest(data) != stored.digest:
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

    def state_at(self, position: int) -> tuple[GameState, Event | None]:
        """The state at ``position`` and the event that led there (None at 0)."""
        if position <= 0:
            return EMPTY, None
        before, events = self.span(position - 1, position)
        if not events:
            return self.final, None
        return evolve(before, events[0]), events[0]

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
    header = _read_range(path, 0, at + 8 + _DIGEST_SIZE)
    if header is None or not header.startswith(_TURNS_MAGIC):
        return None
    try:
        length = int.from_bytes(header[at : at + 8], "big")
        directory_bytes = _read_range(path, at + 8 + _DIGEST_SIZE, length)
        if directory_bytes is None or _digest(directory_bytes) != header[at + 8 :]:
            return None
        directory = msgspec.msgpack.decode(directory_bytes, type=_Directory)
        if directory.name != log_.name:
            return None
        if directory.covered is not None and not anchor_holds(log_, directory.covered):
            return None
        final_bytes = _read_range(path, directory.final.start, directory.final.length)
        if final_bytes is None or _digest(final_bytes) != directory.final.digest:
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
            frames.append(Keyframe(position, index.offset_of(position), at, len(encoded), _digest(encoded)))
            at += len(encoded)
        return frames, Keyframe(index.end, 0, at, len(final), _digest(final))

    # the directory holds the blobs' places, which follow it: laid out until its length settles
    base = len(_TURNS_MAGIC) + 8 + _DIGEST_SIZE
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
        wanted = len(_TURNS_MAGIC) + 8 + _DIGEST_SIZE + len(directory)
        if wanted == base:
            break
        base = wanted
    else:  # pragma: no cover - msgpack integers grow by steps: a few passes settle it
        return False
    header = _TURNS_MAGIC + len(directory).to_bytes(8, "big") + _digest(directory)
    blobs = [encoded for _, encoded in pending]
    return _write_derived(turns_path(index.log), b"".join([header, directory, *blobs, final]))


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
