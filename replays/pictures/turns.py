"""The picture of one turn of a log, as ``render --turn N --svg`` writes it and as the HTML replay
opens each turn on: one function, so the two can never disagree.

Both read the log as a stream, once, front to back (:class:`TurnStories`): a turn's story (the
commands given since the previous turn ended, its resolution, and a victory that ends it) is
kept only until it has been drawn, so the cost is linear in the log and the memory bounded by
the longest turn, never by the whole log.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from mortecouille.core.errors import BadInput
from mortecouille.core.game import evolve
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.game import GameEnded, TurnEnded, TurnStarted
from mortecouille.replays.pictures.svg import render_turn_svg


class TurnStory(NamedTuple):
    """One resolved turn's story, as :func:`~mortecouille.replays.reading.explain.story_span`
    cuts it: ``events`` from the first command after the previous turn's end to the turn's end
    (and a game-ended that follows it); ``states[i]`` is the state just after ``events[i]``,
    ``base`` the one before ``events[0]``; ``started`` the index of its turn-started."""

    turn: int
    base: GameState
    events: list[Event]
    states: list[GameState]
    started: int

    def state_before(self, index: int) -> GameState:
        """The state just before ``events[index]``."""
        return self.states[index - 1] if index > 0 else self.base


class TurnStories:
    """A log read once, front to back, cut into its resolved turns' stories.

    Iterating yields each :class:`TurnStory` as soon as its turn (and a game-ended right after
    it) has been read; afterwards ``final`` is the state the whole log leads to and ``opening``
    the board before the first turn (the state :func:`position_after_turn` gives for turn 0).
    The same cuts as :func:`~mortecouille.replays.reading.explain.story_span` on a well-formed
    log (one turn-started then one turn-ended per turn, as every log the engine writes).
    """

    def __init__(self, events: Iterable[Event]) -> None:
        self._events = iter(events)
        self.final: GameState = EMPTY
        self._opening: GameState | None = None
        self.count = 0
        self.resolved: list[int] = []

    @property
    def opening(self) -> GameState:
        """The state before the first turn was resolved (read at least up to the first turn)."""
        return self._opening if self._opening is not None else self.final

    def __iter__(self) -> Iterator[TurnStory]:
        state = EMPTY
        base = EMPTY
        story: list[Event] = []
        states: list[GameState] = []
        started: int | None = None
        ended: TurnEnded | None = None
        for event in self._events:
            if ended is not None:
                # A game-ended right after the turn's end is the last line of its story (the
                # victory); it also opens the next story, as story_span cuts it.
                closes = isinstance(event, GameEnded)
                if closes:
                    story.append(event)
                    states.append(evolve(state, event))
                yield TurnStory(ended.turn, base, story, states, started if started is not None else 0)
                if closes:
                    story, states = [event], [states[-1]]
                else:
                    story, states = [], []
                base, ended, started = state, None, None
                if closes:
                    state = states[-1]
                    self.count += 1
                    continue
            if self._opening is None and isinstance(event, TurnStarted) and event.turn > 0:
                self._opening = state
            after = evolve(state, event)
            self.count += 1
            if self.count == 1:
                # the game-created line is in no story: the first one starts after it
                base, state = after, after
                continue
            story.append(event)
            states.append(after)
            if isinstance(event, TurnStarted) and started is None:
                started = len(story) - 1
            elif isinstance(event, TurnEnded):
                ended = event
                self.resolved.append(event.turn)
                if self._opening is None and event.turn == 0:
                    self._opening = after
            state = after
        if ended is not None:
            yield TurnStory(ended.turn, base, story, states, started if started is not None else 0)
        self.final = state


def turn_picture(events: Iterable[Event], turn: int) -> str:
    """Turn ``turn`` of ``events`` drawn: the outcome with every path, collision and shot of the
    turn, or for turn 0 the board before the first turn. Reads the log only as far as that turn
    (and the line after it). Refuses (BadInput, ``--turn``) a turn not yet resolved."""
    stories = TurnStories(events)
    walk = iter(stories)
    if turn == 0:
        next(walk, None)  # read up to the first turn's end: the opening is known by then
        return opening_picture(stories.opening)
    for story in walk:
        if story.turn == turn:
            before = story.states[story.started]
            return outcome_picture(before, story.states[-1], story.events[story.started :], turn)
    done = stories.resolved
    known = f"resolved turns: {done[0]}..{done[-1]}" if done else "no turn has been resolved yet"
    raise BadInput("turn", "turn {turn} has not been resolved ({known})", turn=turn, known=known)


def opening_picture(state: GameState) -> str:
    """The board before the first turn: ``state`` is the game as set up."""
    return render_turn_svg(state, state, [], f"{state.game}: before turn 1")


def outcome_picture(before: GameState, after: GameState, turn_events: Sequence[Event], turn: int) -> str:
    """Turn ``turn``'s outcome: ``after`` on the board, with the ships' starts (``before``), paths,
    collisions and shots of ``turn_events`` (its TurnStarted to its TurnEnded)."""
    return render_turn_svg(before, after, turn_events, f"{after.game}: turn {turn}")
