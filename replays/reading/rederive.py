"""Re-derivation: the log proves its own outcomes (architecture.md, ``verify``).

For every resolved turn, fold the log up to the turn's first outcome event,
run the same decider again over the logged inputs with the dice the log
recorded, and compare what it produces with what the log holds, event by
event (envelopes aside). The first divergence is reported with both versions.

The turns are taken one at a time as a stream of events reaches them (:func:`turn_segments`,
:class:`TurnRederiver`), so ``verify`` never holds more of a log than one turn.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import msgspec

from mortecouille.core.dice import DiceForgery, DicePolicy, LoggedDice, revealed_contributions
from mortecouille.core.errors import MortecouilleError
from mortecouille.core.game import fold, play_turn
from mortecouille.core.life_cycle import ResolveTurn
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.codec import CorruptLine, encode_canonical_lines, hash_members_first
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
    segmenter = Segmenter(flush_every)
    yield from segmenter.feed(events)
    yield from segmenter.cut()  # what is left once every event was fed


class Segmenter:
    """:func:`turn_segments` fed a batch of events at a time (:meth:`feed`), so a stream can also
    hand over a turn that is not to be decoded (``verify``'s :class:`RawTurn`): :meth:`cut` first
    gives what a TurnStarted would close before it."""

    __slots__ = ("between", "opened", "ended", "flush_every")

    def __init__(self, flush_every: int = 4096) -> None:
        self.between: list[Event] = []
        self.opened: list[Event] | None = None
        self.ended: list[Event] | None = None  # a resolved turn, waiting to see whether a victory follows
        self.flush_every = flush_every

    def feed(self, events: Iterable[Event]) -> Iterator[tuple[bool, list[Event]]]:
        """The segments ``events`` complete, after those of the batches fed before."""
        between, opened, ended, flush_every = self.between, self.opened, self.ended, self.flush_every
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
        self.between, self.opened, self.ended = between, opened, ended

    def cut(self) -> Iterator[tuple[bool, list[Event]]]:
        """What feeding a TurnStarted next would complete: the turn waiting for a victory (none
        follows), and the run before it, with a turn left open (a turn started again is no turn).
        The run is given now rather than with the next turn: a run cut in two is folded and
        checked as it would be whole (one event after another). At the end of the events, what
        is left."""
        if self.ended is not None:
            yield True, self.ended
            self.ended = None
        if self.opened is not None:
            self.between.extend(self.opened)
            self.opened = None
        if self.between:
            yield False, self.between
            self.between = []


class RawTurn:
    """A resolved turn as a file log holds it, handed to the checks undecoded: its TurnStarted
    (decoded, its line's chain checked), the lines after it up to its TurnEnded (``lines``, the
    seq of the first ``first_seq``, chained after ``prev``), not yet checked. When the rules give
    exactly those lines (:meth:`TurnRederiver.turn_lines`), ``stamped`` holds the rules' events as
    those lines hold them; else the stream decodes and checks the lines as any others."""

    __slots__ = ("started", "lines", "first_seq", "prev", "stamped")

    def __init__(self, started: TurnStarted, lines: list[bytes], first_seq: int, prev: str) -> None:
        self.started = started
        self.lines = lines
        self.first_seq = first_seq
        self.prev = prev
        self.stamped: list[Event] | None = None


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


#: how a line's top-level hash member starts, its value a string (a quote inside a string is
#: escaped, so these bytes are always a key and the start of its value); a SHA-256 hex digest and
#: the quote and comma after it follow (``hash`` is never an event's last key: ``prev``, ``seq``,
#: ``type`` and ``v`` sort after it)
_HASH_MEMBER = b'"hash":"'
_DIGEST_AND_COMMA = 64 + 2


def _as_logged(produced: Sequence[Event], raw: RawTurn) -> list[Event] | None:
    """The rules' events after a turn's TurnStarted (``produced[1:]``) with the envelopes of the
    turn's lines (``raw``), when those lines are exactly what the chain check accepts for them:
    each line is the canonical encoding of its event with seq ``raw.first_seq`` on, ``prev`` the
    previous line's hash (the first's ``raw.prev``) and its own hash, the SHA-256 of the line
    with that hash member cut out (what :func:`~mortecouille.events.codec.check_line` checks).
    None at the first doubt.

    With as few steps per line as can be, one line at a time as long as it is in the
    cache: each line is cut where its first hash member starts (``"hash":"``, 64 digits, a quote
    and a comma cut out), what is left hashed, and the rules' event stamped with that digest (and
    the seq and prev it chains to); the lines are then compared with those events' encoding as one
    block (in C). When equal, each line is its event's encoding, whose top-level hash member is a
    digest, and the member cut from it is that one: no field sorted before ``hash`` in its type
    can hold a ``hash`` key (:func:`~mortecouille.events.codec.hash_member_first`), or else the turn's
    lines hold as many members as there are lines, one each. What was cut is that member, whose
    value is the digest of the line without it. Every line then checks as
    :func:`~mortecouille.events.codec.check_line` wants it, and decodes to the rules' event, so
    they also say the same (the comparison of :meth:`TurnRederiver.turn`)."""
    lines = raw.lines
    count = len(lines)
    sha256 = hashlib.sha256
    replace = _replace
    seq = raw.first_seq
    prev = raw.prev
    enveloped: list[Event] = []
    append = enveloped.append
    for event, line in zip(itertools.islice(produced, 1, None), lines, strict=False):
        before, _, rest = line.partition(_HASH_MEMBER)
        digest = sha256(before + rest[_DIGEST_AND_COMMA:]).hexdigest()
        append(replace(event, seq=seq, prev=prev, hash=digest))
        prev = digest
        seq += 1
    payload = b"".join([b"\n".join(lines), b"\n"])
    if len(enveloped) != count or encode_canonical_lines(enveloped) != payload:
        return None
    if not hash_members_first(enveloped) and payload.count(_HASH_MEMBER) != count:
        return None
    return enveloped


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
        #: what :meth:`turn_lines` played last: (state, TurnStarted, events, settled state), for
        #: :meth:`turn` when the same turn comes back decoded (its lines differ from the rules')
        self._played: tuple[GameState, Event, list[Event], GameState] | None = None

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
        played, self._played = self._played, None
        try:
            if played is not None and played[0] is state and played[1] is started and reveal is None:
                produced, settled = played[2], played[3]  # the same turn from the same state
            else:
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

    def turn_lines(self, state: GameState, raw: RawTurn) -> list[Event] | None:
        """:meth:`turn` of a turn still in its lines (:class:`RawTurn`), when the rules give exactly
        those lines (:func:`_as_logged`): the chain check of those lines, their typed decoding
        and the comparison of :meth:`turn` at once, with no line decoded. The turn's
        events (the TurnStarted and the rules' others, with their lines' envelopes) are returned
        and kept in ``raw.stamped``; None, with nothing reported, when they are not exactly the
        lines (a line with an envelope extra, another outcome, a forged line...): the caller then
        decodes and checks the lines as any others and hands the turn to :meth:`turn`, which
        reports what differs (and reuses this turn's resolution)."""
        started = raw.started
        command = ResolveTurn(partial=True, rounds=started.rounds, reveal_seed=None)
        self.settled = None
        try:
            produced, settled = play_turn(state, command, self.dice)
        except (MortecouilleError, CorruptLine, KeyError, ValueError, TypeError, AttributeError):
            return None  # reported by turn(), which meets it again (DiceForgery is a MortecouilleError)
        self._played = (state, started, produced, settled)
        if len(produced) != len(raw.lines) + 1 or not _exactly_same(produced[:1], (started,)):
            return None
        stamped = _as_logged(produced, raw)
        if stamped is None:
            return None
        self._played = None
        self.settled = settled
        self.turns += 1
        raw.stamped = stamped
        return [started, *stamped]

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
