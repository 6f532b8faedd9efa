"""The turn index of a game in a store with tables of its own (PostgreSQL), for ``replay --turn``,
``explain --turn`` and ``board --turn``: read from the store, never from a copy
of the whole game.

The file store's turn index (:mod:`mortecouille.app.turn_index`) is a file beside the log. A
game in PostgreSQL used to be mirrored whole into a temporary file for it, and the index built
there, on every command: seconds on a long game. Here the same answers come from:

* **the turn marks**, read from the events table itself (not derived: the rows are the log):
  the lines of the turns' starts and ends, the games' ends and the rulings, found through a
  partial index on just those rows (``events_turn_marks``), with the game's head, in one
  statement; each line checked against its row (``PostgresGameLog.turn_marks``);
* **keyframes**, derived: the folded state every :data:`~mortecouille.app.turn_index.KEYFRAME_EVERY`
  events, in the store's ``keyframes`` table, each standing on the line before its position (its
  seq and hash). A keyframe is used only when the log's row at that seq has that hash and its line
  hashes to it (checked in the read: ``keyframe_at_or_before``), its format is this one and its
  bytes decode; else an earlier one is used (position 0, the empty state, always is). The events
  from it to the turn are read as any read is (each line checked, chained on to the keyframe's:
  ``checked_range``), only those, and the last one read at the head checked against the head.

A fold that passes a keyframe's position the store does not have (never built, stale, refused)
notes its state, and :meth:`StoredTurnIndex.keep` (the command's success path) writes those noted:
the first turn command on a long game folds it once, as the mirror did, and the next ones read
from the keyframes. Deleting the rows changes nothing but speed; ``verify`` never reads them.
The outputs are the file index's, byte for byte (``tests/test_pg_turns.py``): the lookups are its
own (:class:`~mortecouille.app.turn_index.TurnLookups`), on the same marks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

import msgspec

import mortecouille.app.turn_index as file_turns
from mortecouille.app.snapshots import FORMAT, decode_state, encode_state_compact
from mortecouille.app.turn_index import TurnLookups, _Marks
from mortecouille.core.game import evolve
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import LogError, decode_line


class _Keyframe(Protocol):
    """A keyframe as the store gives it (``StoredKeyframe``)."""

    @property
    def position(self) -> int: ...

    @property
    def hash(self) -> str: ...

    @property
    def format(self) -> int: ...

    @property
    def state(self) -> bytes: ...


@runtime_checkable
class KeepsTurns(Protocol):
    """A game's log in a store that finds its turns and keeps its keyframes (PostgreSQL:
    ``PostgresGameLog``; see docs/stores.md, "The turn index")."""

    def turn_marks(self) -> tuple[tuple[int, str], list[tuple[int, bytes]]]: ...

    def keyframe_at_or_before(self, position: int) -> _Keyframe | None: ...

    def checked_range(self, first_seq: int, end_seq: int, prev: str) -> Iterator[tuple[int, bytes]]: ...

    def write_keyframes(self, format_: int, frames: Sequence[tuple[int, str, bytes]]) -> int: ...


class StoredTurnIndex(TurnLookups):
    """A game's turns as the store finds them, and its positions reached from the store's
    keyframes: the file turn index's answers, the game read up to the head found first (appends
    after it are not seen, as a file index covers the log up to where it was read)."""

    def __init__(self, log_: KeepsTurns) -> None:
        self.log = log_
        (next_seq, last_hash), lines = log_.turn_marks()
        self._end = next_seq
        self._last_hash = last_hash
        self.marks = _Marks()
        for seq, line in lines:
            self.marks.note(seq, decode_line(line, seq + 1), line)
        self._final: GameState | None = None
        #: keyframes folded past that the store does not have: position -> (hash, state's encoding)
        self.noted: dict[int, tuple[str, bytes]] = {}

    @property
    def end(self) -> int:
        return self._end

    @property
    def final(self) -> GameState:
        if self._final is None:
            self._final, _ = self._read(self._end, self._end)
        return self._final

    def span(self, first: int, last: int) -> tuple[GameState, list[Event]]:
        """The state at position ``first`` and the events ``first``..``last - 1``, folded from the
        keyframe at or before ``first``."""
        first = max(0, min(first, self._end))
        last = max(first, min(last, self._end))
        if first == self._end:
            return self.final, []
        return self._read(first, last)

    def _origin(self, position: int) -> tuple[int, str, GameState]:
        """The usable keyframe at or before ``position``: its position, the hash of the line before
        it, its state; (0, the genesis hash, the empty state) when there is none."""
        found = self.log.keyframe_at_or_before(position)
        while found is not None:
            if found.format == FORMAT:
                try:
                    return found.position, found.hash, decode_state(found.state)
                except (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError):
                    pass
            # not this one: an earlier one (rewritten when a fold passes it)
            found = self.log.keyframe_at_or_before(found.position - 1)
        return 0, GENESIS_HASH, EMPTY

    def _read(self, first: int, last: int) -> tuple[GameState, list[Event]]:
        every = file_turns.KEYFRAME_EVERY
        origin, prev, state = self._origin(first)
        events: list[Event] = []
        last_hash = prev
        for seq, line in self.log.checked_range(origin, last, prev):
            event = decode_line(line, seq + 1)
            last_hash = event.hash
            if seq < first:
                state = evolve(state, event)
                if (seq + 1) % every == 0:  # a keyframe's position the store had none for
                    self.noted[seq + 1] = (event.hash, encode_state_compact(state))
            else:
                events.append(event)
        if last == self._end and last > 0 and last_hash != self._last_hash:
            raise LogError(
                f"the game's head says seq {self._end - 1} with hash {self._last_hash[:12]} but its row "
                f"has hash {last_hash[:12]}: the log was rewritten",
                line=self._end,
                seq=self._end - 1,
            )
        return state, events

    def keep(self) -> None:
        """Write the keyframes a fold passed that the store did not have (derived: a failure to
        write them is logged by the store and changes nothing)."""
        if self.noted:
            frames = [(position, digest, state) for position, (digest, state) in sorted(self.noted.items())]
            self.log.write_keyframes(FORMAT, frames)
            self.noted.clear()
