"""``explain``: a turn told as a story a player can check with the rulebook in hand.

Every event of the turn becomes one line through a *narrator*, a small function
registered in :data:`NARRATORS` by event type. A narrator sees the event and an
:class:`ExplainContext` (the states just before and after it), and returns the
sentence; squares are named like ``C5`` (B1) and the event's rule IDs are cited
in brackets after it. An event type without a narrator still gets a line from
:func:`narrate_fields` (its fields and rules), so a new event type is never
silently dropped; adding its narrator is one decorated function.

The narrators, their registry and what they see (:class:`ExplainContext`) are in
:mod:`mortecouille.replays.reading.narrators`, re-exported here; this module is the driver that folds the
log up to a turn and tells it event by event.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

from mortecouille.core.errors import BadInput
from mortecouille.core.game import evolve
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.game import GameEnded, TurnEnded, TurnStarted
from mortecouille.events.movement import DamageTaken
from mortecouille.replays.reading.describe import show_value
from mortecouille.replays.reading.narrators import (
    COLLISION_CASES,
    DIE_RULES,
    EV,
    NARRATORS,
    PHASE_NAMES,
    PHASE_OF_TYPE,
    ExplainContext,
    Narrator,
    contact_side,
    damage_total,
    narrator,
    num,
    on_board,
    sq,
)
from mortecouille.replays.reading.replay import turn_bounds

__all__ = [
    "COLLISION_CASES",
    "DIE_RULES",
    "EV",
    "NARRATORS",
    "PHASE_NAMES",
    "PHASE_OF_TYPE",
    "SINGLE_ROUND_NAMES",
    "ExplainContext",
    "ExplainLine",
    "Narrator",
    "Square",
    "contact_side",
    "damage_total",
    "explain_text",
    "explain_turn",
    "narrate",
    "narrate_fields",
    "narrator",
    "num",
    "on_board",
    "phase_of",
    "rules_of",
    "ships_of",
    "sq",
    "story_span",
    "turn_started_index",
]

Square = tuple[int, int]


class ExplainLine(msgspec.Struct, frozen=True):
    seq: int
    phase: str
    ships: tuple[str, ...]
    text: str
    rules: tuple[str, ...]


_SHIP_FIELDS: Final = ("ship", "ships", "pusher", "other", "target", "fireship", "wreck", "player")
#: mortecouille logs its movement phase's wind points as "movement" and its moves as "move" (T2)
SINGLE_ROUND_NAMES: Final[dict[str, str]] = {"move": "movement"}


def rules_of(event: Event) -> tuple[str, ...]:
    rules: tuple[str, ...] = tuple(getattr(event, "rules", ()) or ())
    rule = getattr(event, "rule", None)
    if isinstance(rule, str) and rule not in rules:
        rules = (*rules, rule)
    return rules


def ships_of(event: Event) -> tuple[str, ...]:
    found: list[str] = []
    for name in _SHIP_FIELDS:
        value = getattr(event, name, None)
        for ship in value if isinstance(value, tuple) else (value,):
            if isinstance(ship, str) and ship not in found:
                found.append(ship)
    for adjustment in getattr(event, "adjustments", ()):
        if adjustment.ship not in found:
            found.append(adjustment.ship)
    return tuple(found)


def phase_of(event: Event, rounds: int, default: str = "orders") -> str:
    """The event's phase; ``default`` (the phase of the line before) when it names none."""
    if type(event) in PHASE_OF_TYPE:
        return PHASE_OF_TYPE[type(event)]
    phase = getattr(event, "phase", None)
    if not isinstance(phase, str):
        return default
    if rounds > 1 and isinstance(event, DamageTaken):
        phase = "damage"  # blockade applies ram and rock damage after the wind phase (P1)
    name = PHASE_NAMES.get(phase, phase) if rounds > 1 else SINGLE_ROUND_NAMES.get(phase, phase)
    round_number = getattr(event, "round", None)
    return f"round {round_number}, {name}" if rounds > 1 and isinstance(round_number, int) else name


def narrate_fields(event: Event, ctx: ExplainContext) -> str:
    """The fallback: the event's type and fields, squares named."""
    body = msgspec.to_builtins(event)
    for key in ("seq", "prev", "hash", "v", "type", "rules", "board"):
        body.pop(key, None)
    fields = " ".join(f"{k}={show_value(k, v)}" for k, v in body.items() if v is not None)
    return f"{type(event).__struct_config__.tag}: {fields}"


def narrate(event: Event, ctx: ExplainContext, default_phase: str = "orders") -> ExplainLine:
    text = NARRATORS.get(type(event), narrate_fields)(event, ctx)
    phase = phase_of(event, ctx.rounds, default_phase)
    return ExplainLine(event.seq, phase, ships_of(event), text, rules_of(event))


def story_span(events: Sequence[Event], turn: int) -> tuple[int, int]:
    """[first, last) indexes of turn ``turn``'s story: the commands given since the previous
    turn ended (orders, tokens, rulings), the resolution, and a victory that ends it."""
    bounds = turn_bounds(events, turn)
    if bounds is None:
        done = [e.turn for e in events if isinstance(e, TurnEnded)]
        known = f"resolved turns: {done[0]}..{done[-1]}" if done else "no turn has been resolved yet"
        raise BadInput("--turn", f"turn {turn} has not been resolved ({known})")
    start, end = bounds
    first = start
    while first > 1 and not isinstance(events[first - 1], TurnEnded):
        first -= 1
    last = end + 1
    if last < len(events) and isinstance(events[last], GameEnded):
        last += 1
    return first, last


def turn_started_index(events: Sequence[Event], first: int, last: int) -> int:
    """The index of the turn-started event within a story span [first, last)."""
    return next(i for i in range(first, last) if isinstance(events[i], TurnStarted))


def explain_turn(
    events: Sequence[Event],
    turn: int,
    ship: str | None = None,
    base: GameState | None = None,
    span: tuple[int, int] | None = None,
) -> list[ExplainLine]:
    """Turn ``turn`` told event by event. ``base`` is the state before the story if the caller
    has it (a replay keyframe), else the log is folded up to there; ``span``: the turn's
    :func:`story_span` if the caller has it. ``ship`` keeps its lines."""
    first, last = span if span is not None else story_span(events, turn)
    state = base if base is not None else EMPTY
    if base is None:
        for event in events[:first]:
            state = evolve(state, event)
    started = events[turn_started_index(events, first, last)]
    rounds = started.rounds if isinstance(started, TurnStarted) else 1
    lines: list[ExplainLine] = []
    phase = "orders"
    for event in events[first:last]:
        after = evolve(state, event)
        line = narrate(event, ExplainContext(state, after, rounds), phase)
        phase = line.phase
        if ship is None or ship in line.ships:
            lines.append(line)
        state = after
    return lines


def explain_text(lines: Sequence[ExplainLine]) -> str:
    """Plain text: a heading per phase, one sentence per event with its rules in brackets."""
    out: list[str] = []
    phase = None
    for line in lines:
        if line.phase != phase:
            phase = line.phase
            out.append(f"-- {phase}")
        cited = f" [{', '.join(line.rules)}]" if line.rules else ""
        out.append(f"  {line.seq:>5}  {line.text}{cited}")
    return "\n".join(out)
