"""The replay engine: any position of a log, forward and back, at the cost of at most one fold.

Pure: events in, states out. A *position* is how many events have been applied:
position 0 is the empty state, position ``seq + 1`` the state just after event
``seq``, position ``len(events)`` the current state.

Keyframes. While folding forward the engine keeps the state every ``interval``
events, with its state hash, so that

* seeking forward folds only from the furthest keyframe (or the cursor) already
  reached: reaching the middle of a 10,000-event game from scratch costs
  exactly the events before it, i.e. never more than one fold of the log;
* stepping or seeking back starts from the nearest keyframe at or before the
  target and folds at most ``interval - 1`` events.

The hash lets a reader (``replay --json``) compare a keyframe with a turn's
recorded ``TurnEnded.state_hash`` without keeping the states.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import NamedTuple

from mortecouille.core.game import evolve
from mortecouille.core.state import EMPTY, GameState, state_hash
from mortecouille.events.base import Event
from mortecouille.events.game import TurnEnded, TurnStarted

DEFAULT_INTERVAL = 256

Evolve = Callable[[GameState, Event], GameState]


class Keyframe(NamedTuple):
    """The state at ``position`` (events applied) and that state's hash."""

    position: int
    state: GameState
    state_hash: str


class Replay:
    """A cursor over one log's positions, with keyframes every ``interval`` events."""

    def __init__(
        self, events: Sequence[Event], interval: int = DEFAULT_INTERVAL, evolve_fn: Evolve = evolve
    ) -> None:
        if interval < 1:
            raise ValueError(f"keyframe interval must be at least 1, not {interval}")
        self.events = events
        self.interval = interval
        self._evolve = evolve_fn
        self.keyframes: list[Keyframe] = [Keyframe(0, EMPTY, state_hash(EMPTY))]
        self._positions: list[int] = [0]
        self.position = 0
        self.state: GameState = EMPTY

    @property
    def end(self) -> int:
        return len(self.events)

    def seek(self, position: int) -> GameState:
        """Move the cursor to ``position`` (clamped to 0..end) and return the state there."""
        target = max(0, min(position, self.end))
        if target < self.position or target - self.position > self.interval:
            # Going back, or far ahead: the nearest keyframe may be closer than the cursor.
            nearest = self.keyframes[bisect.bisect_right(self._positions, target) - 1]
            if target < self.position or nearest.position > self.position:
                self.position, self.state = nearest.position, nearest.state
        while self.position < target:
            self.state = self._evolve(self.state, self.events[self.position])
            self.position += 1
            if self.position % self.interval == 0 and self.position > self._positions[-1]:
                self.keyframes.append(Keyframe(self.position, self.state, state_hash(self.state)))
                self._positions.append(self.position)
        return self.state

    def step(self, delta: int = 1) -> GameState:
        return self.seek(self.position + delta)

    def state_at_seq(self, seq: int) -> GameState:
        """The state just after event ``seq``."""
        return self.seek(seq + 1)

    def current_event(self) -> Event | None:
        """The event that led to the cursor's position (None at position 0)."""
        return self.events[self.position - 1] if self.position > 0 else None


def position_after_turn(events: Sequence[Event], turn: int) -> int:
    """The position as turn ``turn`` left it (0: before the first turn was resolved).

    Beyond the last resolved turn it is the current position; any command given
    after the turn's end (orders, rulings) is not part of it.
    """
    for index, event in enumerate(events):
        if isinstance(event, TurnStarted) and event.turn > turn:
            return index
        if isinstance(event, TurnEnded) and event.turn == turn:
            return index + 1
    return len(events)


def position_of_seq(events: Sequence[Event], seq: int) -> int:
    """The position just after event ``seq``; ValueError when the log has no such event."""
    if not 0 <= seq < len(events):
        raise ValueError(f"seq {seq} is not in the log (0..{len(events) - 1})")
    return seq + 1


def turn_bounds(events: Sequence[Event], turn: int) -> tuple[int, int] | None:
    """(index of TurnStarted, index of TurnEnded) of a resolved turn, or None."""
    start: int | None = None
    for index, event in enumerate(events):
        if isinstance(event, TurnStarted) and event.turn == turn:
            start = index
        elif isinstance(event, TurnEnded) and event.turn == turn and start is not None:
            return start, index
    return None


def resolved_turns(events: Sequence[Event]) -> list[int]:
    return [e.turn for e in events if isinstance(e, TurnEnded)]
