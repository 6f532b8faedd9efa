"""The picture of one turn of a log, as ``render --turn N --svg`` writes it and as the HTML replay
opens each turn on: one function, so the two can never disagree."""

from __future__ import annotations

from collections.abc import Sequence

from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.replays.pictures.svg import render_turn_svg
from mortecouille.replays.reading.explain import story_span, turn_started_index
from mortecouille.replays.reading.replay import Replay, position_after_turn


def turn_picture(events: Sequence[Event], turn: int, replay: Replay) -> str:
    """Turn ``turn`` of ``events`` drawn: the outcome with every path, collision and shot of the
    turn, or for turn 0 the board before the first turn. ``replay`` is a :class:`Replay` over the
    same ``events`` (a caller drawing many turns keeps one, so no turn costs a fold from the start).
    Refuses (BadInput, ``--turn``) a turn not yet resolved."""
    if turn == 0:
        return opening_picture(replay.seek(position_after_turn(events, 0)))
    first, last = story_span(events, turn)
    started = turn_started_index(events, first, last)
    before = replay.seek(started + 1)
    return outcome_picture(before, replay.seek(last), events[started:last], turn)


def opening_picture(state: GameState) -> str:
    """The board before the first turn: ``state`` is the game as set up."""
    return render_turn_svg(state, state, [], f"{state.game}: before turn 1")


def outcome_picture(before: GameState, after: GameState, turn_events: Sequence[Event], turn: int) -> str:
    """Turn ``turn``'s outcome: ``after`` on the board, with the ships' starts (``before``), paths,
    collisions and shots of ``turn_events`` (its TurnStarted to its TurnEnded)."""
    return render_turn_svg(before, after, turn_events, f"{after.game}: turn {turn}")
