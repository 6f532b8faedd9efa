"""``verify``: everything a log can prove about itself.

1. the hash chain (canonical form, seq, prev, hash of every line);
2. the dice: a revealed seed matches the first event's commitment (D2); every
   die comes from the source the game's dice mode allows, shows 1..6 and lies in
   its turn's resolution; in a contributed game (D3), each die's turn was locked
   first; once revealed, the seed (with each turn's revealed contributions, D3)
   gives every seeded roll; every turn that started ended;
3. the state hash recorded at every turn end matches a fresh fold;
4. re-derivation: every registered re-deriver re-runs the rules over the
   logged inputs and compares the outcomes (added by the rulesets);
5. what players kept, when given: each receipt's submission is in the log at its seq,
   unchanged, and the log passes through its head; the log passes through each head code noted
   and each head a page witnessed. These are checked even when the chain is broken, so each
   player learns which of theirs hold.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Generator, Iterable, Iterator, Sequence

from mortecouille.core.state import GameState
from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import LogError, check_lines, decode_block, decode_line, decode_lines
from mortecouille.events.game import TurnStarted
from mortecouille.events.storage.chain import Head, check_head
from mortecouille.events.storage.contract import EventStore
from mortecouille.events.storage.file_log import GameLog
from mortecouille.events.storage.file_stream import CheckedStream
from mortecouille.replays.reading.findings import Finding, Report
from mortecouille.replays.reading.receipts import (
    Malformed,
    NotedCode,
    Receipt,
    check_head_code,
    log_lines,
    verify_receipts,
)
from mortecouille.replays.reading.rederive import (
    RawTurn,
    Segmenter,
)
from mortecouille.replays.reading.verify_checks import (
    _EDGE_MARKS,
    _ENDED_MARK,
    _GAME_ENDED_MARK,
    _STARTED_MARK,
    MAX_TURN_LINES,
    Gathered,
    KeyedBatches,
    StateCheck,
    check_segments,
    check_stream,
    gather,
)
from mortecouille.replays.reading.witness import Witness, check_witness


def verify_log(
    log: EventStore,
    rederive_turns: bool = True,
    data: bytes | None = None,
    events: list[Event] | None = None,
    *,
    receipts: Sequence[tuple[str, Sequence[Receipt | Malformed]]] = (),
    head_codes: Sequence[NotedCode] = (),
    witnesses: Sequence[tuple[str, Witness]] = (),
) -> Report:
    """Every check of the module docstring; ``rederive_turns=False`` skips the re-derivation (the
    costliest: it resolves every turn again). ``data``/``events``: the log as the caller already
    read and decoded it, so it is not read twice. ``receipts`` (each receipts file's name and
    entries), ``head_codes`` (codes noted at the table) and ``witnesses`` (each witness file's name
    and heads) add one finding each, after the log's own checks."""
    if data is None and (receipts or head_codes or witnesses):
        try:
            data = log.read_bytes()
        except LogError as error:
            return Report(game=log.name, findings=[Finding("chain", False, str(error), error.seq)])
    report = verify_own(log, rederive_turns, data, events)
    if receipts or head_codes or witnesses:
        assert data is not None
        report.findings.extend(check_kept(data, receipts, head_codes, witnesses))
    return report


def verify_folded(
    log: GameLog, data: bytes, events: list[Event], rederive_turns: bool = False
) -> tuple[Report, GameState | None]:
    """:func:`verify_log` of a file log as the caller read (``data``) and decoded (``events``) it,
    and the state its checks folded the events to: the state of the whole log when every event
    folded (None otherwise). A caller that needs the final state besides the report (the
    archive's rows of the game and its ships) does not fold the log a second time."""
    states = StateCheck()
    report = verify_own(log, rederive_turns, data, events, states)
    return report, states.state if states.unfoldable is None else None


def check_kept(
    data: bytes,
    receipts: Sequence[tuple[str, Sequence[Receipt | Malformed]]],
    head_codes: Sequence[NotedCode],
    witnesses: Sequence[tuple[str, Witness]] = (),
) -> list[Finding]:
    """One finding per receipt (of each file, named), per head code and per witness file, checked
    against the log's lines as written."""
    lines = log_lines(data)
    findings = []
    for name, entries in receipts:
        for check in verify_receipts(lines, entries):
            problem = f"{check.problem}: " if check.problem else ""
            detail = f"{name}: receipt {check.index}: {problem}{check.detail}"
            findings.append(Finding("receipt", check.ok, detail, check.seq))
    hashes = [str(line.get("hash", "")) for line in lines]
    for noted in head_codes:
        checked = check_head_code(hashes, noted)
        findings.append(Finding("headcode", checked.ok, checked.detail, noted.seq))
    for name, witness in witnesses:
        seen = check_witness(lines, witness, name)
        findings.append(Finding("witness", seen.ok, seen.detail, seen.seq))
    return findings


def verify_own(
    log: EventStore,
    rederive_turns: bool,
    data: bytes | None,
    events: list[Event] | None,
    states: StateCheck | None = None,
) -> Report:
    """The log's own checks (1 to 4 of the module docstring). A file log read here is checked in
    one streaming pass (:func:`verify_streaming`); bytes or events the caller gives, or another
    store, in two: the chain (which also gathers the dice and the revealed seed the other checks
    need first), then every other check over the typed events, one fold shared by the state
    hashes and the re-derivation. No pass holds the decoded log; ``data``/``events``
    given by the caller are used as they are."""
    file_log = log.as_files()
    if file_log is not None and data is None and events is None and states is None:
        return verify_streaming(file_log, rederive_turns)
    report = Report(game=log.name)
    gathered = Gathered()
    try:
        if file_log is None and data is None:
            data = log.read_bytes()  # decoded below: read once
        if file_log is not None and events is not None:  # each line proved by its own event
            report.events = file_log.verify_chain(data, events=events)
        else:
            report.events = log.verify_chain(data, on_line=None if events is not None else gathered.line)
    except LogError as error:
        report.findings.append(Finding("chain", False, str(error), error.seq))
        return report
    if data is not None:
        keyed = KeyedBatches.of([data]).problem(report.events)
        if keyed is not None:
            report.findings.append(Finding("chain", False, str(keyed), keyed.seq))
            return report
    status = log.head_status(report.events)
    report.findings.append(Finding("chain", True, f"{report.events} lines chained; {status}"))
    typed: list[Event]
    if events is not None:
        typed = events
    else:
        assert data is not None  # read above when not given
        try:
            typed = decode_lines(data)
        except LogError as error:
            report.findings.append(Finding("decode", False, str(error), error.seq))
            return report
    if events is not None:
        gathered = Gathered.of(typed)
    try:
        report.findings.extend(check_stream(typed, gathered, rederive_turns, states))
    except LogError as error:  # only decoding raises it here: the checks report their own
        report.findings.append(Finding("decode", False, str(error), error.seq))
    return report


class _ChainBroken(Exception):
    """The chain check of :func:`verify_streaming` failed (its LogError in ``error``)."""

    def __init__(self, error: LogError) -> None:
        super().__init__(str(error))
        self.error = error


def verify_streaming(log: GameLog, rederive_turns: bool) -> Report:
    """The log's own checks in one streaming pass over a file log: every line's chain is checked
    as it is decoded (:class:`LinePass`) and its event goes on to the other checks at once, so the
    log is read and decoded once; a resolved turn the rules re-derive to exactly its
    lines is not even decoded (:class:`~mortecouille.replays.reading.rederive.RawTurn`). Only what
    those checks need before reading the log in order (its dice, revealed seed and
    contributions: :func:`gather`) is picked from its bytes first, by the lines' type alone.

    The report is the one the chain check first, then the other checks, would give: a broken
    chain (wherever it breaks) is the only finding; a line that does not decode ends the checks
    with a ``decode`` finding after the chain's."""
    report = Report(game=log.name)
    try:
        stream = log.checked_stream()
        gathered = gather(stream.chunks(), turn_marks=rederive_turns)
    except LogError as error:
        report.findings.append(Finding("chain", False, str(error), error.seq))
        return report
    lines = LinePass(stream, raw_turns=rederive_turns, turn_marks=gathered.turn_marks)

    def vouched() -> Iterator[list[Event] | RawTurn]:
        try:
            yield from lines.items()
        except LogError as error:
            raise _ChainBroken(error) from None

    try:
        findings = check_segments(_segments(vouched()), gathered, rederive_turns)
    except _ChainBroken as broken:
        report.findings.append(Finding("chain", False, str(broken.error), broken.error.seq))
        return report
    report.events = lines.lines
    keyed = gathered.batches.problem(report.events)
    if keyed is not None:
        report.findings.append(Finding("chain", False, str(keyed), keyed.seq))
        return report
    status = log.head_status(report.events)
    report.findings.append(Finding("chain", True, f"{report.events} lines chained; {status}"))
    undecodable = lines.decode_error
    if undecodable is not None:
        report.findings.append(Finding("decode", False, str(undecodable), undecodable.seq))
        return report
    report.findings.extend(findings)
    return report


def _segments(items: Iterable[list[Event] | RawTurn]) -> Iterator[tuple[bool, list[Event]] | RawTurn]:
    """:func:`~mortecouille.replays.reading.rederive.turn_segments` of a stream of event batches
    and undecoded turns: each :class:`RawTurn` is given as it is, after what its TurnStarted closes."""
    segmenter = Segmenter()
    for item in items:
        if isinstance(item, RawTurn):
            yield from segmenter.cut()
            yield item
        else:
            yield from segmenter.feed(item)
    yield from segmenter.cut()


class LinePass:
    """A file log's lines checked in order, in one pass, a block at a time (never the whole log):
    what :class:`~mortecouille.events.storage.file_log.CheckedStream` checks (canonical form, seq, prev and
    hash of every line, then the tail against the head anchor, raising the same LogError at the
    same line) and yields (the typed events, a decoding error kept in :attr:`decode_error`, the
    chain checked to the end), save that a resolved turn's lines may be handed over undecoded
    (:meth:`items`).

    A turn is found by its lines' type, as :func:`gather` finds lines (and notes, in its one search
    of the log's bytes, by the seq each line claims: ``turn_marks``): a line holding
    ``"type":"turn-started"`` up to the next holding ``"type":"turn-ended"``, no other TurnStarted
    between, no GameEnded right after (a victory belongs to the turn: such a turn is decoded).
    Its first line is decoded and checked; if it is a TurnStarted, the rest goes to the checks as
    a :class:`RawTurn`; the checks either vouch for its lines (``stamped``: the rules' events with
    the lines' envelopes, the lines their exact encoding, so every check of them holds) or leave
    them, and they are then decoded and checked as any other lines. A line found by mistake (a
    nested ``type`` key), missed (a line not canonical) or placed wrong (a seq it claims falsely)
    only takes the common way: neither the types nor the seqs are taken on those bytes' word."""

    def __init__(
        self, stream: CheckedStream, raw_turns: bool, turn_marks: dict[int, int] | None = None
    ) -> None:
        self.stream = stream
        self.raw_turns = raw_turns
        #: where to look for turns: (seq, bits) of the lines :func:`gather` noted, in seq order
        self.turn_marks = sorted((turn_marks or {}).items())
        head = stream.head
        self.anchored_seq = head.seq if isinstance(head, Head) else -1
        self.prev = GENESIS_HASH
        self.at_anchor: str | None = None
        self.count = 0
        self.lines = 0
        self.decode_error: LogError | None = None
        self.crashed: Exception | None = None

    def items(self) -> Iterator[list[Event] | RawTurn]:
        """The events a batch at a time, and resolved turns as :class:`RawTurn`, in the log's order;
        raises the chain's LogError where the chain check raises it."""
        carry: list[bytes] = []
        carried: dict[int, int] = {}
        noted = self.turn_marks
        noted_seqs = [seq for seq, _ in noted]
        before = 0  # the lines of the blocks before this one
        for _, lines in self.stream.line_blocks():
            marks: dict[int, int] = {}
            if self.raw_turns:
                # the marks of this block's lines, by their index once the carry is put before them
                first = len(carry) - before
                low = bisect.bisect_left(noted_seqs, before)
                high = bisect.bisect_left(noted_seqs, before + len(lines), low)
                marks = {seq + first: bits for seq, bits in itertools.islice(noted, low, high)}
            before += len(lines)
            if carry:
                marks.update(carried)
                lines = carry + lines
            left = yield from self._window(lines, marks, last=False)
            carry = lines[left:]
            carried = {index - left: kinds for index, kinds in marks.items() if index >= left}
        if carry:
            yield from self._window(carry, carried, last=True)
        head = self.stream.head
        if isinstance(head, LogError):
            raise head
        check_head(head, self.count, self.at_anchor)
        self.lines = self.count
        if self.crashed is not None:
            raise self.crashed

    def _window(
        self, lines: list[bytes], marks: dict[int, int], last: bool
    ) -> Generator[list[Event] | RawTurn, None, int]:
        """Check ``lines`` (their marks by index) from the first on, handing over the resolved turns;
        return the index of the first line left for the next block (a turn it may end), ``len``
        when none is left (``last``: the log's last lines, none left)."""
        done = 0
        end = len(lines)
        if self.raw_turns:
            marked = sorted(marks)
            for place, start in enumerate(marked):
                if start < done or not marks[start] & _STARTED_MARK:
                    continue
                stop = next((index for index in marked[place + 1 :] if marks[index] & _EDGE_MARKS), None)
                carry = not last and end - start <= MAX_TURN_LINES  # held for the next block, never more
                if stop is None or not marks[stop] & _ENDED_MARK or marks[stop] & _STARTED_MARK:
                    if stop is None and carry:
                        yield from self._common(lines[done:start])
                        return start  # the turn may end in the next block
                    continue
                if stop + 1 >= end and carry:
                    yield from self._common(lines[done:start])
                    return start  # whether a GameEnded follows is in the next block
                if stop + 1 >= end and not last:
                    continue  # a turn longer than any game plays: the common way
                if marks.get(stop + 1, 0) & _GAME_ENDED_MARK:
                    continue
                yield from self._common(lines[done:start])
                yield from self._turn(lines[start : stop + 1])
                done = stop + 1
        yield from self._common(lines[done:])
        return end

    def _turn(self, lines: list[bytes]) -> Iterator[list[Event] | RawTurn]:
        """A resolved turn's lines (see the class): handed over as a :class:`RawTurn`, or checked
        as any others when the checks do not vouch for them."""
        started: Event | None = None
        if self.decode_error is None and self.crashed is None:
            try:
                started = decode_line(lines[0], self.count + 1)
            except Exception:  # noqa: BLE001 - the common way meets it again, and says it
                started = None
        if type(started) is not TurnStarted:
            yield from self._common(lines)
            return
        self._check(lines[:1], [started])
        raw = RawTurn(started, lines[1:], self.count, self.prev)
        yield raw
        stamped = raw.stamped
        if stamped is None:
            events = self._decoded(raw.lines)
            self._check(raw.lines, events)
            if events is not None:
                yield [started, *events]
            return
        anchored = self.anchored_seq - self.count
        if 0 <= anchored < len(stamped):
            self.at_anchor = stamped[anchored].hash
        self.prev = stamped[-1].hash
        self.count += len(stamped)

    def _common(self, lines: list[bytes]) -> Iterator[list[Event]]:
        """Lines decoded and checked as :class:`~mortecouille.events.storage.file_log.CheckedStream` does."""
        if not lines:
            return
        events = self._decoded(lines)
        self._check(lines, events)
        if events:
            yield events

    def _decoded(self, lines: list[bytes]) -> list[Event] | None:
        if self.decode_error is not None or self.crashed is not None or not lines:
            return None
        try:
            return decode_block(b"".join([b"\n".join(lines), b"\n"]), self.count + 1)
        except LogError as error:
            self.decode_error = error
        except Exception as error:  # noqa: BLE001 - raised once the chain is checked, as before
            self.crashed = error
        return None

    def _check(self, lines: list[bytes], events: list[Event] | None) -> None:
        self.prev, found = check_lines(lines, events, self.count, self.prev, self.anchored_seq)
        if found is not None:
            self.at_anchor = found
        self.count += len(lines)


#: the most lines :class:`LinePass` holds back for a turn that may end in the next block, far more
#: than a turn of the largest fleet logs (SHIPS_MAX ships, four rounds): a longer one (a forged log
#: whose turn never ends) takes the common way, so the pass never holds more than a block and that
#: many lines
