"""Derived files beside a game's log: what makes a command's cost independent of the log's length,
never trusted over the log.

Two files, each derived from the log alone and rebuilt from it whenever it cannot be used:

* ``GAME.state``, the *snapshot*: the folded state after some event, so a command folds only the
  events after it (at most :data:`SNAPSHOT_EVERY` of them before a command writes a newer one);
* ``GAME.turns``, the *turn index*: where every turn starts and ends (by seq), the rulings' lines,
  and a *keyframe* (the folded state) every ``KEYFRAME_EVERY`` events, so ``replay --turn N``,
  ``explain --turn N`` and ``board --turn N`` fold at most that many events, at any turn. It is
  built in :mod:`mortecouille.app.turn_index` (on the terms below, with this module's anchor,
  checksum and writing), which only those commands import: a command that folds the current
  state never needs it (the CLI's start-up).

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
failure to write one is logged and otherwise ignored, so it can never change an outcome. ``serve``,
whose commands carry the state on and so seldom fold, has the snapshot written by its keeper's
thread (:mod:`~mortecouille.app.snapshot_keeper`, through :func:`write_snapshot_through`), the
same file a command folding through that line would write.

The PostgreSQL store keeps the snapshot in a table of its schema instead (``snapshots``: the
game, the seq and hash of the line it stands on, :data:`FORMAT` and the state as
:func:`encode_state_compact` writes it; see docs/stores.md), through the store's raw-bytes
interface (:class:`~mortecouille.events.storage.contract.KeepsSnapshots`), decoded here
(:func:`fold_stored`). It is used on the same terms: the store returns it only when the log's row
at its seq has its hash (checked in the statement that reads it, with that row's line), and it is
used only when its format is this one and it decodes; else the game is folded from its first
event, and the snapshot rewritten by the next command that succeeds having folded
:data:`SNAPSHOT_EVERY` events or more (at once, for a game that long). The turn index's
PostgreSQL counterpart is :mod:`mortecouille.app.stored_turns` (keyframes in a table of the
store, the turns found through an index of its events).
"""

from __future__ import annotations

import contextlib
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

import msgspec

from mortecouille.core.state import EMPTY, GameState, ship_without_defaults, without_defaults
from mortecouille.events.base import Event
from mortecouille.events.codec import line_hash
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.contract import EventStore, KeepsSnapshots, events_from
from mortecouille.events.storage.errors import GameNotFound
from mortecouille.events.storage.file_log import GameLog

_log = get_logger("mortecouille")


if TYPE_CHECKING:
    # types only: what a store that keeps snapshots returns (PostgreSQL's), which a file store's
    # command never makes; and the Protocol below, which only the type checker reads (making a
    # Protocol class costs every command that imports this module: the CLI's start-up)
    from mortecouille.events.storage.stored_snapshot import StoredSnapshot

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

_SNAPSHOT_MAGIC: Final = b"mortecouille-snapshot %d\n" % FORMAT


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


def write_derived(path: Path, payload: bytes) -> bool:
    """Replace ``path`` with ``payload`` by a temporary file of its own and a rename (no fsync: a
    derived file lost in a crash is rebuilt). Never through a link; a failure is logged and
    leaves the file as it was. True when written."""
    import secrets  # only when a derived file is written: not imported by every command

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


#: The bytes of :func:`derived_digest`.
DIGEST_SIZE: Final = 4


def derived_digest(data: bytes | memoryview) -> bytes:
    """The CRC-32 of a derived file's part: it catches a damaged or cut file (a derived file is
    no defence against whoever can write the games directory: they could write the log), at a
    fraction of a cryptographic hash's cost on every command."""
    return zlib.crc32(data).to_bytes(DIGEST_SIZE, "big")


_STATE_ENCODER = msgspec.msgpack.Encoder()
_STATE_DECODER = msgspec.msgpack.Decoder(GameState)


def encode_state(state: GameState) -> bytes:
    """A state as the derived files keep it (msgpack); :func:`decode_state` gives it back equal,
    with the same ``state_hash``."""
    return _STATE_ENCODER.encode(state)


def decode_state(data: bytes | memoryview) -> GameState:
    return _STATE_DECODER.decode(data)


def encode_state_compact(state: GameState) -> bytes:
    """A state as the snapshot keeps it (and PostgreSQL's keyframes): msgpack with every field
    equal to its default left out (:func:`~mortecouille.core.state.without_defaults`), which
    :func:`decode_state` fills back in. Every read command decodes the snapshot, and a long game's
    state is mostly ships whose fields keep their defaults: fewer keys to match makes its decoding
    about a quarter cheaper, for more work when it is written, once in
    :data:`SNAPSHOT_EVERY` events. The ships, the bulk of it, are left out of their defaults by
    :func:`~mortecouille.core.state.ship_without_defaults`: the bytes without_defaults gives, in under
    half its time. The
    file turn index's keyframes, written by the thousand when it is built, keep
    :func:`encode_state`, still several times cheaper to write."""
    if not state.ships:
        return _STATE_ENCODER.encode(without_defaults(state))
    rest = without_defaults(msgspec.structs.replace(state, ships={}))
    ships = {sid: ship_without_defaults(ship) for sid, ship in state.ships.items()}
    # in field order, as without_defaults gives it: the same bytes
    body = {
        name: ships if name == "ships" else rest[name]
        for name in _STATE_FIELDS
        if name == "ships" or name in rest
    }
    return _STATE_ENCODER.encode(body)


_STATE_FIELDS: Final = GameState.__struct_fields__


# --- the snapshot --------------------------------------------------------------------------------


class _SnapshotHead(msgspec.Struct, frozen=True):
    name: str
    anchor: Anchor
    digest: bytes


_SNAPSHOT_HEAD = msgspec.msgpack.Decoder(_SnapshotHead)


def snapshot_path(log_: GameLog) -> Path:
    return log_.sibling(SNAPSHOT_SUFFIX)


def _usable_snapshot(log_: GameLog) -> tuple[Anchor, memoryview] | None:
    """The snapshot beside ``log_`` as its line and its encoded state, if it can be used: its
    format, its game, its own digest and its anchor's line in the log all check out; else None.
    The state is left encoded: :func:`read_snapshot` decodes it, :func:`write_snapshot_through`
    needs only the line. Its parts are views of the file's bytes, never copies of them: the state's
    bytes grow with the ships, and every read command reads them."""
    data = _read_derived(snapshot_path(log_))
    if data is None or not data.startswith(_SNAPSHOT_MAGIC):
        return None
    try:
        body = memoryview(data)[len(_SNAPSHOT_MAGIC) :]
        length = int.from_bytes(body[:4], "big")
        head = _SNAPSHOT_HEAD.decode(body[4 : 4 + length])
        encoded = body[4 + length :]
        if head.name != log_.name or derived_digest(encoded) != head.digest:
            return None
        if not anchor_holds(log_, head.anchor):
            return None
        return head.anchor, encoded
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        return None


def read_snapshot(log_: GameLog) -> tuple[Anchor, GameState] | None:
    """The snapshot beside ``log_`` and the line it stands on, if it can be used: its format, its
    game, its own digest and its anchor's line in the log all check out; else None."""
    found = _usable_snapshot(log_)
    if found is None:
        return None
    try:
        return found[0], decode_state(found[1])
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        return None


def write_snapshot(log_: GameLog, anchor: Anchor, state: GameState) -> bool:
    """Keep ``state``, the fold of the log through ``anchor``, beside the log."""
    encoded = encode_state_compact(state)
    head_fields = _SnapshotHead(name=log_.name, anchor=anchor, digest=derived_digest(encoded))
    head = msgspec.msgpack.encode(head_fields)
    payload = _SNAPSHOT_MAGIC + len(head).to_bytes(4, "big") + head + encoded
    return write_derived(snapshot_path(log_), payload)


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
    if anchor is not None and anchor.end == size:
        return Folded(state, anchor, 0)  # the snapshot stands on the log's last line: nothing to fold
    # imported past that return: a command that finds the snapshot current (a finished game's
    # state, a second look) folds nothing, so it never imports the fold, the rulesets' table or the
    # game's ruleset and its evolvers (the CLI's start-up)
    from mortecouille.core.game import fold

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
    files = store.as_files()
    if files is not None:
        folded = fold_log(files)
        if keep:
            keep_snapshot(files, folded)
        return folded.state
    if isinstance(store, KeepsSnapshots):
        stored = fold_stored(store)
        if keep:
            keep_stored_snapshot(store, stored)
        return stored.state
    from mortecouille.core.game import fold  # as in fold_log: imported when there is something to fold

    return fold(events_from(store, 0))


def keep_snapshot(log_: GameLog, folded: Folded) -> None:
    """Rewrite the snapshot when ``folded`` went :data:`SNAPSHOT_EVERY` or more events past it."""
    if folded.anchor is not None and folded.folded >= SNAPSHOT_EVERY:
        write_snapshot(log_, folded.anchor, folded.state)


# --- the snapshot of a line known by its seq and hash (``serve``'s keeper) ----------------------


def keeps_snapshots(store: EventStore) -> bool:
    """Whether ``store``'s game keeps a snapshot: a file log (``GAME.state`` beside it) or a store
    that keeps one itself (PostgreSQL)."""
    return store.as_files() is not None or isinstance(store, KeepsSnapshots)


def write_snapshot_through(store: EventStore, seq: int, digest: str, state: GameState) -> bool:
    """Keep ``state``, the fold of ``store``'s game through its line ``seq`` (whose hash is
    ``digest``), as the snapshot of its kind of store, only if the log still holds that line: the
    one way :mod:`~mortecouille.app.snapshot_keeper` writes a snapshot, whatever the store. True
    when written.

    A file log gets ``GAME.state`` exactly as a command that folded through that line writes it
    (:func:`write_snapshot`, on the line's :class:`Anchor`, found by :func:`anchor_of`), and never
    over a usable snapshot that stands on that line or a later one (a CLI command may have written
    one meanwhile). A store that keeps snapshots writes its own (it checks the line itself)."""
    files = store.as_files()
    if files is not None:
        anchor = anchor_of(files, seq, digest)
        if anchor is None:
            _log.info("snapshot not written: its line is not among the log's last", game=files.name, seq=seq)
            return False
        kept = _usable_snapshot(files)
        if kept is not None and kept[0].seq >= seq:
            return False  # as new or newer, and usable: ours would only set it back
        return write_snapshot(files, anchor, state)
    if isinstance(store, KeepsSnapshots):
        return store.write_snapshot(seq, digest, FORMAT, encode_state_compact(state))
    return False


def anchor_of(log_: GameLog, seq: int, digest: str) -> Anchor | None:
    """The :class:`Anchor` of the log's line ``seq`` when its hash is ``digest`` and it is intact
    (:func:`anchor_holds`), looked for backwards from the log's end (settled: an append at work
    is waited for), over at most :data:`SNAPSHOT_EVERY` lines; None when it is not found there
    (the log was cut or replaced, or has grown so far past the line that a snapshot there would be
    due again anyway). The keeper looks soon after the append that made the line, so the line
    is the log's last or nearly."""
    try:
        end = log_.settled_size()
        for _ in range(SNAPSHOT_EVERY):
            line = log_.line_ending_at(end)
            if line is None:
                return None
            found = _LINE_HEAD.decode(line).seq
            if not isinstance(found, int) or isinstance(found, bool) or found < seq:
                return None
            if found == seq:
                anchor = Anchor(seq, digest, end)
                return anchor if anchor_holds(log_, anchor) else None
            end -= len(line) + 1
    except (OSError, GameNotFound, msgspec.DecodeError, RecursionError):
        return None
    return None


# --- the snapshot a store keeps (PostgreSQL) -----------------------------------------------------


class StoreFolded(msgspec.Struct, frozen=True):
    """A game's state folded in a store that keeps snapshots: the seq and hash of the last event
    in it (None: no event), how many events were folded to reach it past the snapshot (all of
    them without a usable one), and the seq the fold started from (0 without a snapshot).

    A Struct, as :class:`Folded` is: a NamedTuple compiles code (and each of its annotations) when
    its module is imported, which every command would pay (the CLI's start-up)."""

    state: GameState
    last: tuple[int, str] | None
    folded: int
    start: int


def decoded_snapshot(found: StoredSnapshot | None) -> GameState | None:
    """The state a snapshot a store kept holds, if it can be used: the store vouched that the log
    holds its line (:class:`~mortecouille.events.storage.contract.KeepsSnapshots`), its format is
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
    from mortecouille.core.game import fold  # as in fold_log: imported when there is something to fold

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
