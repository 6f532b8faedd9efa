"""What ``verify`` checks past the chain: the dice, the state hashes and the turns, over a log's
events or segments, and what it gathers from the log's bytes first (:func:`gather`)."""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

import msgspec

from mortecouille.core.dice import (
    CONTRIBUTED,
    DiceForgery,
    DicePolicy,
    matches_commitment,
)
from mortecouille.core.game import fold
from mortecouille.core.limits import DICE_MODES
from mortecouille.core.state import EMPTY, GameState, state_hash, with_earlier_ships
from mortecouille.events.base import Event
from mortecouille.events.codec import LogError, decode_line
from mortecouille.events.dice import DiceContributionAbsent, DiceContributionRevealed, TurnLocked
from mortecouille.events.game import DieRolled, GameCreated, GameEnded, TurnEnded, TurnStarted
from mortecouille.events.schema import event_tag
from mortecouille.replays.reading.findings import Finding
from mortecouille.replays.reading.rederive import (
    FOLD_ERRORS,
    RawTurn,
    TurnRederiver,
    first_unfoldable,
    turn_segments,
)

MAX_TURN_LINES = 20_000

#: the bits of :attr:`Gathered.turn_marks`: which of these types' marks a line holds
_STARTED_MARK, _ENDED_MARK, _GAME_ENDED_MARK = 1, 2, 4
_EDGE_MARKS = _STARTED_MARK | _ENDED_MARK
_MARK_BITS = {
    b'"type":' + msgspec.json.encode(event_tag(cls)): bit
    for cls, bit in ((TurnStarted, _STARTED_MARK), (TurnEnded, _ENDED_MARK), (GameEnded, _GAME_ENDED_MARK))
}


def _claimed_seq(chunk: bytes, at: int) -> int | None:
    """The seq the line of ``chunk`` holding byte ``at`` claims: the digits after its ``"seq":``
    (before ``at``: in a canonical line ``seq`` sorts before ``type``); None when there are none.
    Read from the line as it claims it, unchecked: it only says where :class:`LinePass` looks for
    a turn, which it then checks (a wrong seq sends the lines the common way)."""
    begin = chunk.rfind(b"\n", 0, at) + 1
    start = chunk.find(_SEQ_KEY, begin, at)
    if start < 0:
        return None
    start += len(_SEQ_KEY)
    end = chunk.find(b",", start, at)
    digits = chunk[start:end] if end >= 0 else b""
    # (a forged line's digits could be more than ``int`` converts: no log holds that many lines)
    return int(digits) if digits.isdigit() and len(digits) <= _SEQ_DIGITS_MAX else None


_SEQ_KEY = b'"seq":'
_SEQ_DIGITS_MAX = 18


def _found(data: bytes, marks: Iterable[bytes]) -> list[tuple[int, bytes]]:
    """Where each of ``marks`` occurs in ``data``, in the order they occur (no mark holds another,
    nor overlaps one). One search of the bytes for all the marks at once (:func:`_marks_pattern`),
    rather than one per mark (rare in a log: a turn's edges, a game's end, its dice): every search
    reads the whole log, and verify makes one, for all the marks it needs (:func:`gather`; a find
    per mark took fewer instructions but more CPU time:). In a canonical line a mark's closing quote
    is followed by a comma or a brace, never by another mark, so the occurrences are those a search
    per mark finds; a line that is not canonical fails the chain check whatever is found in it."""
    return [(found.start(), found.group()) for found in _marks_pattern(tuple(marks)).finditer(data)]


@functools.cache
def _marks_pattern(marks: tuple[bytes, ...]) -> re.Pattern[bytes]:
    """A regular expression matching any of ``marks``: their common start (``"type":``), then one of
    the rests, so the search looks for that start and tries the rests only where it occurs."""
    start = marks[0]
    for mark in marks:
        while not mark.startswith(start):
            start = start[:-1]
    rests = b"|".join(re.escape(mark[len(start) :]) for mark in marks)
    return re.compile(re.escape(start) + b"(?:" + rests + b")")


def gather(chunks: Iterable[bytes], turn_marks: bool = False) -> Gathered:
    """:class:`Gathered` from a log's bytes (chunks of whole lines), decoding only the lines that may
    be of the types it keeps: in a canonical line an event's type is written ``"type":"<tag>"`` (a
    quote inside a string is escaped, so those bytes are never inside one), so the lines holding
    those bytes are every line of those types (and perhaps a line with a nested ``type`` key,
    which decodes to another type and is left out). What a log whose chain does not check gives
    here is never used: its chain is then the only finding.

    ``turn_marks``: also note, in the same search of the bytes, which lines hold a turn's or a game
    end's type (:attr:`Gathered.turn_marks`, by the seq each claims), where :class:`LinePass`
    looks for the turns it hands over undecoded: the log's bytes are searched once, not once here
    and again in the checked pass."""
    gathered = Gathered()
    marks = _GATHERED_AND_TURN_MARKS if turn_marks else _GATHERED_MARKS
    noted = gathered.turn_marks
    for chunk in chunks:
        gathered.batches.see(chunk)
        begun = -1
        for at, mark in _found(chunk, marks):
            bit = _MARK_BITS.get(mark) if turn_marks else None
            if bit is not None:
                seq = _claimed_seq(chunk, at)
                if seq is not None:
                    noted[seq] = noted.get(seq, 0) | bit
                if mark not in _GATHERED_MARKS:
                    continue  # a turn's edge: nothing to keep of it here (a game end is kept)
            begin = chunk.rfind(b"\n", 0, at) + 1
            if begin == begun:
                continue  # a line holding the bytes twice
            begun = begin
            try:
                event = decode_line(chunk[begin : chunk.find(b"\n", begin)], 0)
            except LogError:
                continue  # not an event: the chain or the typed pass names the line
            gathered.event(event)  # in the log's order: a later die replaces an earlier
    return gathered


class Gathered:
    """What the checks of a log need before they read it in order: its dice by identity, the seed
    it revealed as it ended (D2), the contributions it revealed (D3). Picked from a file log's
    bytes (:func:`gather`) before its one checked pass, or from the chain check's pass over bytes
    (:meth:`line`), so the log is not decoded twice."""

    def __init__(self) -> None:
        self.rolls: list[DieRolled] = []
        self.seed: str | None = None
        self.contributions: dict[int, dict[str, str]] = {}
        #: each player's turns resolved without their committed contribution (D3), in order
        self.withheld: dict[str, list[int]] = {}
        #: the lines holding a turn's or a game end's type (:func:`gather` with ``turn_marks``): the
        #: bits of the marks each holds, by the seq the line claims
        self.turn_marks: dict[int, int] = {}
        #: the batches the log's idempotency keys declare (:func:`gather`)
        self.batches = KeyedBatches()

    @classmethod
    def of(cls, events: Iterable[Event]) -> Gathered:
        gathered = cls()
        for event in events:
            gathered.event(event)
        return gathered

    def line(self, seq: int, line: bytes, body: dict[str, Any]) -> None:
        if body.get("type") in _GATHERED_TAGS:
            try:
                self.event(decode_line(line, seq + 1))
            except LogError:
                return  # not an event: the typed pass names the line

    def event(self, event: Event) -> None:
        if isinstance(event, DieRolled):
            # kept until the end: without its line's two hashes (most of its size), which no
            # check of a die reads (its seq names it)
            self.rolls.append(msgspec.structs.replace(event, prev="", hash=""))
        elif isinstance(event, GameEnded):
            if event.seed and self.seed is None:
                self.seed = event.seed
        elif isinstance(event, DiceContributionRevealed):
            self.contributions.setdefault(event.turn, {})[event.player] = event.contribution
        elif isinstance(event, DiceContributionAbsent):
            self.withheld.setdefault(event.player, []).append(event.turn)


class KeyedBatches:
    """The batches a log's ``idem`` members declare (docs/service.md, "Nonces and idempotency
    keys"): each the first line of a command's batch of ``events`` lines, written whole. Each line
    alone is the chain check's (:func:`~mortecouille.events.codec.envelope_problem`: the member's
    shape, a type a batch can start with); here, what takes the lines after it: no key inside the
    batch another declared, and no batch running past the log's last line. Found in the log's
    bytes, by the member's key (``"idem":`` can only be a key in a canonical line), in one search."""

    _MARK = b'"idem":'
    _LOSS = b'"type":"loss-recorded"'

    def __init__(self) -> None:
        #: (seq, declared count) of each line holding a top-level ``idem``, in the log's order
        self.declared: list[tuple[int, int]] = []
        #: the seqs of the log's ``loss-recorded`` lines: lines before one may be gone (``repair
        #: --record-loss``), the end of a batch among them, so no batch is held to run past one
        self.losses: list[int] = []

    @classmethod
    def of(cls, chunks: Iterable[bytes]) -> KeyedBatches:
        found = cls()
        for chunk in chunks:
            found.see(chunk)
        return found

    def see(self, chunk: bytes) -> None:
        """Note the keys of a chunk of whole lines (the log's next ones)."""
        at = chunk.find(self._MARK)
        while at >= 0:
            begin = chunk.rfind(b"\n", 0, at) + 1
            end = chunk.find(b"\n", at)
            end = len(chunk) if end < 0 else end
            try:
                body = msgspec.json.decode(chunk[begin:end])
            except (msgspec.DecodeError, RecursionError):
                body = None  # not a line: the chain check names it
            if isinstance(body, dict):
                seq, idem = body.get("seq"), body.get("idem")
                if type(seq) is int and isinstance(idem, dict) and type(idem.get("events")) is int:
                    self.declared.append((seq, idem["events"]))
            at = chunk.find(self._MARK, end)
        at = chunk.find(self._LOSS)
        while at >= 0:
            seq = _claimed_seq(chunk, at)
            if seq is not None:
                self.losses.append(seq)
            at = chunk.find(self._LOSS, at + 1)

    def problem(self, lines: int) -> LogError | None:
        """Why the declared batches do not fit a log of ``lines`` lines whose chain checked (None:
        they do), naming the line of the key at fault. A batch a recorded loss follows is held to
        end before that loss at the latest (its end may be among the lines lost)."""
        open_from, open_until = -1, -1
        for seq, count in self.declared:
            loss = next((at for at in self.losses if at > seq), None)
            if loss is not None and seq + count - 1 >= loss:
                count = loss - seq  # cut by the loss: the lines after it were lost
            if seq <= open_until:
                size = open_until - open_from + 1
                return LogError(
                    f"field `idem`: a command's batch starts here, inside the batch of {size} lines the "
                    f"key of seq {open_from} declares (a key was added or moved)",
                    line=seq + 1,
                    seq=seq,
                )
            open_from, open_until = seq, seq + count - 1
            if open_until >= lines:
                return LogError(
                    f"field `idem`: declares a batch of {count} lines from seq {seq}, but the log ends at "
                    f"seq {lines - 1} (lines were cut, or the key was added)",
                    line=seq + 1,
                    seq=seq,
                )
        return None


_GATHERED_TAGS = frozenset(
    event_tag(cls) for cls in (DieRolled, GameEnded, DiceContributionRevealed, DiceContributionAbsent)
)
#: how a line of those types shows its type (canonical JSON: compact, so exactly these bytes)
_GATHERED_MARKS = tuple(b'"type":' + msgspec.json.encode(tag) for tag in sorted(_GATHERED_TAGS))
#: with the marks of a turn's edges (a game end is both)
_GATHERED_AND_TURN_MARKS = tuple(dict.fromkeys((*_GATHERED_MARKS, *_MARK_BITS)))


def check_stream(
    events: Iterable[Event], gathered: Gathered, rederive_turns: bool, states: StateCheck | None = None
) -> list[Finding]:
    """Checks 2 to 4 of the module docstring over ``events`` in one pass (each stops at its first
    failure, as each did alone): the dice, every started turn ended, the state hash at every turn
    end, and (``rederive_turns``) the re-derivation of every resolved turn (:func:`check_segments`)."""
    return check_segments(turn_segments(events), gathered, rederive_turns, states)


def check_segments(
    segments: Iterable[tuple[bool, list[Event]] | RawTurn],
    gathered: Gathered,
    rederive_turns: bool,
    states: StateCheck | None = None,
) -> list[Finding]:
    """:func:`check_stream` of the events cut into segments (:func:`turn_segments`); a
    :class:`RawTurn` among them is vouched for when the rules re-derive it to exactly its lines
    (:meth:`TurnRederiver.turn_lines`), else left to come back decoded.

    One fold serves the state hashes and the re-derivation. A turn the rules re-derive to exactly
    the logged events needs no hash of its own: the rules computed the hash its TurnEnded records
    from the state they folded from the same state with the same events (evolvers never read the
    envelope), so that hash was checked by the comparison; only a turn not re-derived is hashed.
    """
    dice = DiceCheck(gathered)
    turns = TurnsClosedCheck()
    # the caller's own, when it wants the state the checks folded the log to (verify_folded)
    states = StateCheck() if states is None else states
    rederiver: TurnRederiver | None = None
    started = False
    for item in segments:
        if isinstance(item, RawTurn):
            if rederiver is not None and rederiver.failure is None and states.unfoldable is None:
                turn = rederiver.turn_lines(states.state, item)
                if turn is not None:
                    for event in turn:
                        if type(event) in _WATCHED:
                            dice.see(event)
                            turns.see(event)
                    assert rederiver.settled is not None
                    states.settle(turn, rederiver.settled)
            continue
        resolved, segment = item
        if not started:  # the first event: every check sees it, whatever its type
            started = True
            first = segment[0]
            if rederive_turns and isinstance(first, GameCreated):
                rederiver = TurnRederiver(first, gathered.rolls, gathered.seed, gathered.contributions)
            dice.see(first)
            turns.see(first)
            watched: Iterable[Event] = itertools.islice(segment, 1, None)
        else:
            watched = segment
        for event in watched:
            if type(event) in _WATCHED:  # the few kinds the dice and turn checks look at (no subclasses)
                dice.see(event)
                turns.see(event)
        vouched = False
        if resolved and rederiver is not None and rederiver.failure is None:
            if states.unfoldable is not None:  # the log does not fold up to this turn
                rederiver.unfoldable(*states.unfoldable)
            else:
                vouched = rederiver.turn(states.state, segment)
        if vouched and rederiver is not None and rederiver.settled is not None:
            states.settle(segment, rederiver.settled)
        else:
            states.fold(segment, vouched)
    findings = [dice.finding(), turns.finding(), states.finding()]
    if rederiver is not None:
        findings.append(rederiver.finding())
    return findings


#: the events :class:`DiceCheck` and :class:`TurnsClosedCheck` act on (after the first)
_WATCHED: frozenset[type[Event]] = frozenset((TurnLocked, TurnStarted, TurnEnded, DieRolled))


class StateCheck:
    """The state hash recorded at every turn end matches a fresh fold (check 3); the fold itself,
    shared with the re-derivation."""

    def __init__(self) -> None:
        self.state: GameState = EMPTY
        #: the state last hashed (at the previous turn end): the ships a turn left equal to its
        #: ships are given back as those objects before the next hash (:meth:`fold`)
        self.hashed: GameState = EMPTY
        self.checked = 0
        self.failure: Finding | None = None
        #: the first event the fold could not apply, with its error: nothing is folded after it
        self.unfoldable: tuple[Event, Exception] | None = None

    def fold(self, events: list[Event], vouched: bool) -> None:
        """Fold ``events``; check the hash before each TurnEnded among them unless ``vouched``
        (a turn re-derived exactly: its one TurnEnded's hash came from the rules, see
        :func:`check_stream`)."""
        if self.unfoldable is not None:
            return
        if vouched or self.failure is not None:
            if vouched and self.failure is None:
                self.checked += 1
            self._apply(events)
            return
        start = 0
        for index, event in enumerate(events):
            if type(event) is TurnEnded:
                if not self._apply(events[start:index]):
                    return
                start = index
                # an equal state (the same hash, the same fold from here on) whose ships equal to
                # the last hashed state's are those objects again, whose canonical bytes the hash
                # keeps (a turn leaves most ships of a blockade game where it found them): the
                # hash does not convert them again (the rules do the same for their own)
                self.state = with_earlier_ships(self.state, self.hashed)
                self.hashed = self.state
                actual = state_hash(self.state)
                if actual != event.state_hash:
                    detail = (
                        f"seq {event.seq}: turn {event.turn} ends in state {actual[:12]}, "
                        f"the log says {event.state_hash[:12]}"
                    )
                    self.failure = Finding("state", False, detail, event.seq)
                    self._apply(events[start:])
                    return
                self.checked += 1
        self._apply(events[start:])

    def settle(self, turn: list[Event], settled: GameState) -> None:
        """:meth:`fold` of a turn re-derived exactly, whose events up to its TurnEnded the rules
        folded to ``settled`` (:attr:`TurnRederiver.settled`): the fold goes on from there, with
        its TurnEnded and what follows it (the victory's GameEnded), as folding the whole turn
        would (the same events from the same state: evolvers are pure); its hash was checked by the
        comparison, as for any turn vouched."""
        if self.unfoldable is not None or self.failure is not None:
            self.fold(turn, vouched=True)
            return
        end = len(turn) - 1 if type(turn[-1]) is TurnEnded else len(turn) - 2
        self.checked += 1
        self.state = settled
        self._apply(turn[end:])

    def _apply(self, events: list[Event]) -> bool:
        try:
            self.state = fold(events, self.state)
            return True
        except FOLD_ERRORS:
            self.unfoldable = first_unfoldable(events, self.state)
            if self.unfoldable is None:  # the batch failed but no event alone: never in a real fold
                raise
        if self.failure is None:
            self.failure = inapplicable(*self.unfoldable)
        return False

    def finding(self) -> Finding:
        if self.failure is not None:
            return self.failure
        return Finding("state", True, f"{self.checked} turn-end state hashes match")


class DiceCheck:
    """Every die in the log is one the game could have rolled: from the source its dice mode
    (fixed by game-created) allows, showing 1..6, during its turn's resolution, and once the
    seed is revealed the seed's value for its identity (D1-D2). Which dice the rules asked for,
    in order, is re-derivation's part. Fed one event at a time (:meth:`see`)."""

    def __init__(self, gathered: Gathered) -> None:
        self.gathered = gathered
        self.policy: DicePolicy | None = None
        self.created: GameCreated | None = None
        self.failure: Finding | None = None
        self.counts: Counter[str] = Counter()
        self.resolving: int | None = None
        self.locked: set[int] = set()
        self.started = False

    def see(self, event: Event) -> None:
        if self.failure is not None:
            return
        if not self.started:
            self.started = True
            self._start(event)
            if self.failure is not None:
                return
        policy = self.policy
        assert policy is not None
        if isinstance(event, TurnLocked):
            self.locked.add(event.turn)
        elif isinstance(event, TurnStarted):
            own_turn = event.seq > policy.copied_up_to  # a fork's copied turns were checked in its original
            if policy.dice_scheme == CONTRIBUTED and event.turn not in self.locked and own_turn:
                detail = f"seq {event.seq}: turn {event.turn} resolved before it was locked"
                self.failure = Finding("dice", False, f"{detail}: its dice could be foreseen (D3)", event.seq)
                return
            self.resolving = event.turn
        elif isinstance(event, TurnEnded):
            self.resolving = None
        elif isinstance(event, DieRolled):
            if event.turn != self.resolving:
                detail = f"seq {event.seq}: a die of turn {event.turn} outside that turn's resolution"
                self.failure = Finding("dice", False, f"{detail}: no rule rolls it (D2)", event.seq)
                return
            try:
                policy.check(event)
            except DiceForgery as error:
                self.failure = Finding("dice", False, str(error), error.seq)
                return
            self.counts["copied" if policy.copied(event) else event.source] += 1

    def _start(self, first: Event) -> None:
        if not isinstance(first, GameCreated):
            self.failure = Finding("dice", False, "the first event is not game-created", 0)
            return
        self.created = first
        if first.dice_mode not in DICE_MODES:
            self.failure = Finding("dice", False, f"seq 0: unknown dice mode {first.dice_mode!r} (D2)", 0)
            return
        revealed = self.gathered.seed if first.dice_mode == "seeded" else None
        if revealed is not None and not matches_commitment(revealed, first):
            self.failure = Finding("dice", False, "the revealed seed does not match the commitment (D2)")
            return
        self.policy = DicePolicy.of(first, revealed, self.gathered.contributions)

    def finding(self) -> Finding:
        if not self.started:
            return Finding("dice", False, "the first event is not game-created", 0)
        if self.failure is not None:
            return self.failure
        assert self.created is not None and self.policy is not None
        summary = dice_summary(self.created, self.policy, self.counts)
        if self.policy.dice_scheme == CONTRIBUTED:
            shown = sum(len(players) for players in self.gathered.contributions.values())
            summary += f"; each turn keyed by the players' contributions (D3): {shown} revealed"
            summary += withheld_summary(self.gathered.withheld)
        return Finding("dice", True, summary)


def withheld_summary(withheld: dict[str, list[int]]) -> str:
    """Each player's committed contributions a turn was resolved without (D3), counted: a player
    who withholds, told the dice by whoever holds the seed, chooses between two outcomes of the
    turn (README, "Dice nobody can foresee"), so the count is what the table watches."""
    if not withheld:
        return ""
    counted = ", ".join(
        f"{player} {len(turns)} (turn{'s' if len(turns) > 1 else ''} {', '.join(map(str, turns))})"
        for player, turns in sorted(withheld.items())
    )
    return f"; resolved without a committed contribution, withheld: {counted}"


def check_dice(events: list[Event]) -> list[Finding]:
    """:class:`DiceCheck` over a whole decoded log."""
    check = DiceCheck(Gathered.of(events))
    for event in events:
        check.see(event)
    return [check.finding()]


def dice_summary(created: GameCreated, policy: DicePolicy, counts: Counter[str]) -> str:
    parts = []
    if created.dice_mode == "table":
        parts.append(f"table dice: {counts['table']} values typed by the referee")
    elif policy.seed is None:
        parts.append("seed not revealed yet: seeded rolls checkable once the game ends")
    else:
        parts.append(f"seed matches its commitment; {counts['seeded']} seeded rolls reproduced")
    if counts["fixed"]:
        parts.append(f"{counts['fixed']} fixed by the scenario")
    if counts["copied"]:
        # A fork's copied rolls were derived from the original game's dice (app/fork.py).
        parts.append(f"{counts['copied']} copied from {created.forked_from} not re-derived")
    return "; ".join(parts)


class TurnsClosedCheck:
    """Every turn that started also ended: a turn is appended in one write (TurnStarted to
    TurnEnded), so a log that stops inside one was cut and re-anchored, or forged. Fed one event
    at a time (:meth:`see`)."""

    def __init__(self) -> None:
        self.opened: TurnStarted | None = None
        self.done = False

    def see(self, event: Event) -> None:
        if self.done:
            return
        if isinstance(event, TurnStarted):
            if self.opened is not None:
                self.done = True
                return
            self.opened = event
        elif isinstance(event, TurnEnded):
            self.opened = None

    def finding(self) -> Finding:
        opened = self.opened
        if opened is None:
            return Finding("turns", True, "every turn that started ended")
        detail = f"seq {opened.seq}: turn {opened.turn} started but never ended (a cut or forged log)"
        return Finding("turns", False, detail, opened.seq)


def check_turns_closed(events: list[Event]) -> list[Finding]:
    """:class:`TurnsClosedCheck` over a whole decoded log."""
    check = TurnsClosedCheck()
    for event in events:
        check.see(event)
    return [check.finding()]


def check_turn_hashes(events: list[Event]) -> list[Finding]:
    """The state hash at every turn end of a whole decoded log (:class:`StateCheck`)."""
    check = StateCheck()
    check.fold(events, vouched=False)
    return [check.finding()]


def inapplicable(event: Event, error: Exception) -> Finding:
    """A well-formed event that cannot happen in the game as it stands (a forged or edited log)."""
    tag = type(event).__struct_config__.tag
    return Finding(
        "state",
        False,
        f"seq {event.seq}: {tag} does not apply to the game at that point ({error!r})",
        event.seq,
    )
