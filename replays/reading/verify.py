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
5. what players kept (issue 15), when given: each receipt's submission is in the log at its seq,
   unchanged, and the log passes through its head; the log passes through each head code noted.
   These are checked even when the chain is broken, so each player learns which of theirs hold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from mortecouille.core.dice import (
    CONTRIBUTED,
    DiceForgery,
    DicePolicy,
    matches_commitment,
    revealed_contributions,
)
from mortecouille.core.game import evolve
from mortecouille.core.life_cycle import DICE_MODES, UnappliableEvent
from mortecouille.core.state import EMPTY, GameState, state_hash
from mortecouille.events.base import Event
from mortecouille.events.codec import LogError, decode_lines
from mortecouille.events.dice import TurnLocked
from mortecouille.events.game import DieRolled, GameCreated, TurnEnded, TurnStarted
from mortecouille.events.store import GameLog
from mortecouille.events.stores import EventStore
from mortecouille.replays.reading.findings import Finding, Report
from mortecouille.replays.reading.receipts import (
    Malformed,
    Receipt,
    check_head_code,
    log_lines,
    verify_receipts,
)
from mortecouille.replays.reading.rederive import rederive, revealed_seed


def verify_log(
    log: EventStore,
    rederive_turns: bool = True,
    data: bytes | None = None,
    events: list[Event] | None = None,
    *,
    receipts: Sequence[Receipt | Malformed] = (),
    head_codes: Sequence[tuple[int, str]] = (),
) -> Report:
    """Every check of the module docstring; ``rederive_turns=False`` skips the re-derivation (the
    costliest: it resolves every turn again). ``data``/``events``: the log as the caller already
    read and decoded it, so it is not read twice. ``receipts`` (a receipts file's entries) and
    ``head_codes`` (``(seq, code)`` pairs) add one finding each, after the log's own checks."""
    if data is None and (receipts or head_codes):
        try:
            data = log.read_bytes()
        except LogError as error:
            return Report(game=log.name, findings=[Finding("chain", False, str(error), error.seq)])
    report = verify_own(log, rederive_turns, data, events)
    if receipts or head_codes:
        assert data is not None
        report.findings.extend(check_kept(data, receipts, head_codes))
    return report


def check_kept(
    data: bytes, receipts: Sequence[Receipt | Malformed], head_codes: Sequence[tuple[int, str]]
) -> list[Finding]:
    """One finding per receipt and per head code, checked against the log's lines as written."""
    lines = log_lines(data)
    findings = []
    for check in verify_receipts(lines, receipts):
        problem = f"{check.problem}: " if check.problem else ""
        detail = f"receipt {check.index}: {problem}{check.detail}"
        findings.append(Finding("receipt", check.ok, detail, check.seq))
    hashes = [str(line.get("hash", "")) for line in lines]
    for seq, code in head_codes:
        checked = check_head_code(hashes, seq, code)
        findings.append(Finding("headcode", checked.ok, checked.detail, seq))
    return findings


def verify_own(
    log: EventStore, rederive_turns: bool, data: bytes | None, events: list[Event] | None
) -> Report:
    """The log's own checks (1 to 4 of the module docstring)."""
    report = Report(game=log.name)
    if data is None:
        try:
            data = log.read_bytes()
        except LogError as error:
            report.findings.append(Finding("chain", False, str(error), error.seq))
            return report
    try:
        report.events = log.verify_chain(data)
    except LogError as error:
        report.findings.append(Finding("chain", False, str(error), error.seq))
        return report
    last = report.events - 1
    status = log.head_status() if isinstance(log, GameLog) else f"store head at seq {last} matches"
    report.findings.append(Finding("chain", True, f"{report.events} lines chained; {status}"))
    if events is None:
        try:
            events = decode_lines(data)
        except LogError as error:
            report.findings.append(Finding("decode", False, str(error), error.seq))
            return report
    report.findings.extend(check_dice(events))
    report.findings.extend(check_turns_closed(events))
    report.findings.extend(check_turn_hashes(events))
    if rederive_turns:
        report.findings.extend(rederive(events))
    return report


def check_dice(events: list[Event]) -> list[Finding]:
    """Every die in the log is one the game could have rolled: from the source its dice mode
    (fixed by game-created) allows, showing 1..6, during its turn's resolution, and once the
    seed is revealed the seed's value for its identity (D1-D2). Which dice the rules asked for,
    in order, is re-derivation's part."""
    if not events or not isinstance(events[0], GameCreated):
        return [Finding("dice", False, "the first event is not game-created", 0)]
    created = events[0]
    if created.dice_mode not in DICE_MODES:
        return [Finding("dice", False, f"seq 0: unknown dice mode {created.dice_mode!r} (D2)", 0)]
    revealed = revealed_seed(events) if created.dice_mode == "seeded" else None
    if revealed is not None and not matches_commitment(revealed, created):
        return [Finding("dice", False, "the revealed seed does not match the commitment (D2)")]
    contributions = revealed_contributions(events)
    policy = DicePolicy.of(created, revealed, contributions)
    counts: Counter[str] = Counter()
    resolving: int | None = None
    locked: set[int] = set()
    for event in events:
        if isinstance(event, TurnLocked):
            locked.add(event.turn)
        elif isinstance(event, TurnStarted):
            own_turn = event.seq > policy.copied_up_to  # a fork's copied turns were checked in its original
            if policy.dice_scheme == CONTRIBUTED and event.turn not in locked and own_turn:
                detail = f"seq {event.seq}: turn {event.turn} resolved before it was locked"
                return [Finding("dice", False, f"{detail}: its dice could be foreseen (D3)", event.seq)]
            resolving = event.turn
        elif isinstance(event, TurnEnded):
            resolving = None
        elif isinstance(event, DieRolled):
            if event.turn != resolving:
                detail = f"seq {event.seq}: a die of turn {event.turn} outside that turn's resolution"
                return [Finding("dice", False, f"{detail}: no rule rolls it (D2)", event.seq)]
            try:
                policy.check(event)
            except DiceForgery as error:
                return [Finding("dice", False, str(error), error.seq)]
            counts["copied" if policy.copied(event) else event.source] += 1
    summary = dice_summary(created, policy, counts)
    if policy.dice_scheme == CONTRIBUTED:
        shown = sum(len(players) for players in contributions.values())
        summary += f"; each turn keyed by the players' contributions (D3): {shown} revealed"
    return [Finding("dice", True, summary)]


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


def check_turns_closed(events: list[Event]) -> list[Finding]:
    """Every turn that started also ended: a turn is appended in one write (TurnStarted to
    TurnEnded), so a log that stops inside one was cut and re-anchored, or forged."""
    opened: TurnStarted | None = None
    for event in events:
        if isinstance(event, TurnStarted) and opened is not None:
            break
        if isinstance(event, TurnStarted):
            opened = event
        elif isinstance(event, TurnEnded):
            opened = None
    if opened is None:
        return [Finding("turns", True, "every turn that started ended")]
    return [
        Finding(
            "turns",
            False,
            f"seq {opened.seq}: turn {opened.turn} started but never ended (a cut or forged log)",
            opened.seq,
        )
    ]


def check_turn_hashes(events: list[Event]) -> list[Finding]:
    state: GameState = EMPTY
    checked = 0
    for event in events:
        if isinstance(event, TurnEnded):
            actual = state_hash(state)
            if actual != event.state_hash:
                return [
                    Finding(
                        "state",
                        False,
                        f"seq {event.seq}: turn {event.turn} ends in state {actual[:12]}, "
                        f"the log says {event.state_hash[:12]}",
                        event.seq,
                    )
                ]
            checked += 1
        try:
            state = evolve(state, event)
        except (UnappliableEvent, KeyError, ValueError, TypeError, AttributeError) as error:
            return [inapplicable(event, error)]
    return [Finding("state", True, f"{checked} turn-end state hashes match")]


def inapplicable(event: Event, error: Exception) -> Finding:
    """A well-formed event that cannot happen in the game as it stands (a forged or edited log)."""
    tag = type(event).__struct_config__.tag
    return Finding(
        "state",
        False,
        f"seq {event.seq}: {tag} does not apply to the game at that point ({error!r})",
        event.seq,
    )
