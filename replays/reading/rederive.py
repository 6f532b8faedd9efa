"""Re-derivation: the log proves its own outcomes (architecture.md, ``verify``).

For every resolved turn, fold the log up to the turn's first outcome event,
run the same decider again over the logged inputs with the dice the log
recorded, and compare what it produces with what the log holds, event by
event (envelopes aside). The first divergence is reported with both versions.

The turns are taken one at a time as a stream of events reaches them (:func:`turn_segments`,
:class:`TurnRederiver`), so ``verify`` never holds more of a log than one turn (issue 16).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import msgspec

from mortecouille.core.dice import DiceForgery, DicePolicy, LoggedDice, revealed_contributions
from mortecouille.core.errors import MortecouilleError
from mortecouille.core.game import fold, play_turn
from mortecouille.core.life_cycle import ResolveTurn
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.codec import CorruptLine
from mortecouille.events.game import DieRolled, GameCreated, GameEnded, TurnEnded, TurnStarted
from mortecouille.replays.reading.findings import Finding

_ENVELOPE = ("seq", "prev", "hash")
_replace = msgspec.structs.replace

#: what folding a forged log may raise (a real one never does): reported, never a crash
FOLD_ERRORS: tuple[type[Exception], ...] = (CorruptLine, KeyError, ValueError, TypeError, AttributeError)


def content(event: Event) -> dict[str, Any]:
    body: dict[str, Any] = msgspec.to_builtins(event)
    for key in _ENVELOPE:
        body.pop(key, None)
    return body


def same_content(again: Event, recorded: Event) -> bool:
    """Whether the rules' event and the logged one say the same, envelopes aside.

    Equal Structs once the envelope is copied over are equal in :func:`content` too (the common
    case, compared in C); anything else is compared as plain values, which also equates a tuple
    and a list of the same items, as the log's JSON does."""
    if type(again) is type(recorded):
        envelope = _replace(again, seq=recorded.seq, prev=recorded.prev, hash=recorded.hash)
        if envelope == recorded:
            return True
    return content(again) == content(recorded)


def _exactly_same(produced: Sequence[Event], logged: Sequence[Event]) -> bool:
    """Whether each rules' event, with the logged one's envelope copied over, equals it (as many
    of each): equal Structs, field by field, all at once in C (a turn holds hundreds of events and
    verify compares every one). The common case of :func:`same_content` of every pair; when it
    fails, the pairs are compared one by one, as plain values where they differ."""
    replace = _replace
    enveloped = [
        replace(again, seq=recorded.seq, prev=recorded.prev, hash=recorded.hash)
        if type(again) is type(recorded)
        else again
        for again, recorded in zip(produced, logged, strict=True)
    ]
    return enveloped == list(logged)


def turn_segments(events: Iterable[Event], flush_every: int = 4096) -> Iterator[tuple[bool, list[Event]]]:
    """The events in order, cut into resolved turns and what lies between them: ``(True, span)``
    for a resolved turn (TurnStarted .. TurnEnded, plus a GameEnded that directly follows it
    with reason ``victory``: a victory is part of the turn's outcome), ``(False, run)`` for the
    rest. A turn started again before it ended counts as no resolved turn (its events are of the
    runs between). Holds at most one turn and ``flush_every`` events besides."""
    between: list[Event] = []
    opened: list[Event] | None = None
    ended: list[Event] | None = None  # a resolved turn, waiting to see whether a victory follows
    # ``type(...) is``: no event class has a subclass, and this runs for every event of a log
    for event in events:
        kind = type(event)
        if ended is not None:
            if kind is GameEnded and event.reason == "victory":  # type: ignore[attr-defined]
                ended.append(event)
                yield True, ended
                ended = None
                continue
            yield True, ended
            ended = None
        if kind is TurnStarted:
            if opened is not None:
                between.extend(opened)
            opened = [event]
        elif opened is not None:
            opened.append(event)
            if kind is TurnEnded:
                if between:
                    yield False, between
                    between = []
                ended, opened = opened, None
        else:
            between.append(event)
            if len(between) >= flush_every:
                yield False, between
                between = []
    if ended is not None:
        yield True, ended
    if opened is not None:
        between.extend(opened)
    if between:
        yield False, between


def turn_spans(events: list[Event]) -> list[tuple[int, int]]:
    """(first, last) indexes of every resolved turn (see :func:`turn_segments`)."""
    spans = []
    position = 0
    for resolved, segment in turn_segments(events):
        if resolved:
            spans.append((position, position + len(segment) - 1))
        position += len(segment)
    return spans


def revealed_seed(events: Iterable[Event]) -> str | None:
    """The seed a game revealed as it ended (D2), if it has."""
    return next((e.seed for e in events if isinstance(e, GameEnded) and e.seed), None)


class TurnRederiver:
    """Re-derives resolved turns one at a time: the dice of the whole log are looked up by
    identity (collected once, before), each turn from the state the log reaches before it."""

    def __init__(
        self,
        created: GameCreated,
        rolls: Iterable[DieRolled],
        seed: str | None,
        contributions: Mapping[int, dict[str, str]],
    ) -> None:
        # a contributed game's dice (D3) are re-derived from the seed and each turn's revealed contributions
        self.dice = LoggedDice(rolls, DicePolicy.of(created, seed, dict(contributions)))
        self.turns = 0
        self.failure: Finding | None = None
        #: the state the last turn re-derived exactly settled on before its TurnEnded, as the rules
        #: folded it (:func:`~mortecouille.core.game.play_turn`); None when not given
        self.settled: GameState | None = None

    def turn(self, state: GameState, logged: Sequence[Event]) -> bool:
        """Resolve the turn ``logged`` (a span of :func:`turn_segments`) again from ``state``, the
        state before it; True when the rules give exactly the logged events. The first divergence
        (or a turn the rules cannot resolve) is kept in :attr:`failure`."""
        started = logged[0]
        assert isinstance(started, TurnStarted)
        ending = logged[-1]
        reveal = ending.seed if isinstance(ending, GameEnded) else None
        command = ResolveTurn(partial=True, rounds=started.rounds, reveal_seed=reveal)
        self.settled = None
        try:
            produced, settled = play_turn(state, command, self.dice)
        except DiceForgery as error:
            self.failure = Finding("rederive", False, str(error), error.seq)
            return False
        except (MortecouilleError, CorruptLine, KeyError, ValueError, TypeError, AttributeError) as error:
            # a forged state can make the rules fail in ways a real game never does: report, never crash
            detail = f"turn {started.turn}: the rules cannot resolve it again: {error!r}"
            self.failure = Finding("rederive", False, detail, started.seq)
            return False
        if len(produced) == len(logged):
            if _exactly_same(produced, logged):
                # the logged events are the rules' (envelopes aside, which no evolver reads), so they
                # lead to the state the rules folded them to
                self.settled = settled
                self.turns += 1
                return True
            if all(same_content(again, recorded) for again, recorded in zip(produced, logged, strict=True)):
                self.turns += 1
                return True
        for index in range(max(len(produced), len(logged))):
            again = content(produced[index]) if index < len(produced) else None
            recorded = content(logged[index]) if index < len(logged) else None
            if again != recorded:
                # past the logged span, the divergence is the line the rules expected next
                seq = logged[index].seq if index < len(logged) else logged[-1].seq + 1
                detail = (
                    f"seq {seq}: the log says {msgspec.json.encode(recorded).decode()}; "
                    f"the rules give {msgspec.json.encode(again).decode()}"
                )
                self.failure = Finding("rederive", False, detail, seq)
                return False
        self.turns += 1  # equal as plain values (a tuple for a list)
        return True

    def unfoldable(self, event: Event, error: Exception) -> None:
        """The log cannot be folded up to a turn to re-derive: ``event`` does not apply."""
        tag = type(event).__struct_config__.tag
        detail = f"seq {event.seq}: {tag} does not apply to the game ({error!r})"
        self.failure = Finding("rederive", False, detail, event.seq)

    def finding(self) -> Finding:
        if self.failure is not None:
            return self.failure
        if not self.turns:
            return Finding("rederive", True, "no resolved turn to re-derive")
        detail = f"{self.turns} turns re-derived: every outcome follows from the inputs"
        return Finding("rederive", True, detail)


def first_unfoldable(events: Sequence[Event], state: GameState) -> tuple[Event, Exception] | None:
    """The first of ``events`` that does not apply from ``state`` on, with its error; None if all do.
    (A fold raises at the first such event but does not say which; this finds it, one at a time.)"""
    for event in events:
        try:
            state = fold((event,), state)
        except FOLD_ERRORS as error:
            return event, error
    return None


def rederive(events: list[Event]) -> list[Finding]:
    """Re-derive every resolved turn of ``events`` (a whole log, decoded)."""
    if not events or not isinstance(events[0], GameCreated):
        return []
    rolls = [e for e in events if isinstance(e, DieRolled)]
    rederiver = TurnRederiver(events[0], rolls, revealed_seed(events), revealed_contributions(events))
    state: GameState = EMPTY
    failed: tuple[Event, Exception] | None = None
    for resolved, segment in turn_segments(events):
        if resolved:
            if failed is not None:  # the log does not fold up to this turn
                rederiver.unfoldable(*failed)
                break
            if not rederiver.turn(state, segment):
                break
        if failed is None:
            try:
                state = fold(segment, state)
            except FOLD_ERRORS:
                failed = first_unfoldable(segment, state)
                if failed is None:  # the batch failed but no event alone: never in a real fold
                    raise
    return [rederiver.finding()]
