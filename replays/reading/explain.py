"""``explain``: a turn told as a story a player can check with the rulebook in hand.

Every event of the turn becomes one line through a *narrator*, a small function filed by
event type in its ruleset's table (``Ruleset.narrators``, :data:`~mortecouille.core.rulesets.RULESETS`).
A narrator sees the event and an :class:`~mortecouille.core.narration.ExplainContext`
(the states just before and after it), and returns the sentence as a phrase (a template key
and its parameters), which :func:`narrate` says in the language of its ``translate``; squares are named
like ``C5`` (B1) and the event's rule IDs are cited in brackets after it. An event
type without a narrator still gets a line from :func:`narrate_fields` (its fields and
rules), so a new event type is never silently dropped.

The narrators live in core, next to the rules they tell (:mod:`mortecouille.core.narration`
and each ruleset's ``narrators`` module); this module is the driver that folds the log
up to a turn and tells it event by event.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

import msgspec

from mortecouille.core.errors import BadInput, Phrase, phrase
from mortecouille.core.game import evolve
from mortecouille.core.limits import shown
from mortecouille.core.narration import ExplainContext
from mortecouille.core.phases import DAMAGE, ORDERS, Phase, phase_name
from mortecouille.core.rulesets import ruleset_named
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.game import GameEnded, TurnEnded, TurnStarted
from mortecouille.events.movement import DamageTaken
from mortecouille.replays.reading.describe import show_value
from mortecouille.replays.reading.replay import turn_bounds


class ExplainLine(msgspec.Struct, frozen=True):
    seq: int
    phase: str
    ships: tuple[str, ...]
    text: str
    rules: tuple[str, ...]


_SHIP_FIELDS: Final = ("ship", "ships", "pusher", "other", "target", "fireship", "wreck", "player")


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


def phase_of(
    event: Event, rounds: int, phases: Mapping[type[Event], Phase], default: str = ORDERS.name
) -> str:
    """The event's phase as a reader sees it: from ``phases`` (its ruleset's phase of event
    types), else its own ``phase`` field, else ``default`` (the phase of the line before)."""
    if type(event) in phases:
        return phases[type(event)].name
    phase = getattr(event, "phase", None)
    if not isinstance(phase, str):
        return default
    if rounds > 1 and isinstance(event, DamageTaken):
        phase = DAMAGE.id  # blockade applies ram and rock damage after the wind phase (P1)
    name = phase_name(phase, rounds)
    round_number = getattr(event, "round", None)
    return f"round {round_number}, {name}" if rounds > 1 and isinstance(round_number, int) else name


def narrate_fields(event: Event, ctx: ExplainContext) -> Phrase:
    """The fallback: the event's type and fields, squares named."""
    body = msgspec.to_builtins(event)
    for key in ("seq", "prev", "hash", "v", "type", "rules", "board"):
        body.pop(key, None)
    fields = " ".join(f"{k}={show_value(k, v)}" for k, v in body.items() if v is not None)
    return phrase("{tag}: {fields}", tag=type(event).__struct_config__.tag, fields=fields)


def narrate(
    event: Event,
    ctx: ExplainContext,
    ruleset: str,
    default_phase: str = ORDERS.name,
    translate: Callable[[str], str] | None = None,
) -> ExplainLine:
    """``event`` of a ``ruleset`` game as one line of the story, in the language of ``translate``
    (a catalogue's lookup; English by default)."""
    rules = ruleset_named(ruleset)
    text = rules.narrators.get(type(event), narrate_fields)(event, ctx).render(translate)
    phase = phase_of(event, ctx.rounds, rules.phases, default_phase)
    return ExplainLine(event.seq, phase, ships_of(event), text, rules_of(event))


def story_span(events: Sequence[Event], turn: int) -> tuple[int, int]:
    """[first, last) indexes of turn ``turn``'s story: the commands given since the previous
    turn ended (orders, tokens, rulings), the resolution, and a victory that ends it."""
    bounds = turn_bounds(events, turn)
    if bounds is None:
        done = [e.turn for e in events if isinstance(e, TurnEnded)]
        known = f"resolved turns: {done[0]}..{done[-1]}" if done else "no turn has been resolved yet"
        raise BadInput("turn", "turn {turn} has not been resolved ({known})", turn=turn, known=known)
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
    translate: Callable[[str], str] | None = None,
) -> list[ExplainLine]:
    """Turn ``turn`` told event by event (in the language of ``translate``). ``base`` is the state
    before the story if the caller has it (a replay keyframe), else the log is folded up to there;
    ``span``: the turn's :func:`story_span` if the caller has it. ``ship`` keeps its lines."""
    first, last = span if span is not None else story_span(events, turn)
    state = base if base is not None else EMPTY
    if base is None:
        for event in events[:first]:
            state = evolve(state, event)
    started = events[turn_started_index(events, first, last)]
    rounds = started.rounds if isinstance(started, TurnStarted) else 1
    lines: list[ExplainLine] = []
    phase = ORDERS.name
    for event in events[first:last]:
        after = evolve(state, event)
        line = narrate(event, ExplainContext(state, after, rounds), state.ruleset, phase, translate)
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
        out.append(shown(f"  {line.seq:>5}  {line.text}{cited}"))
    return "\n".join(out)
