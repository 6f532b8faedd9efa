"""``verify``: everything a log can prove about itself.

1. the hash chain (canonical form, seq, prev, hash of every line);
2. the dice: a revealed seed matches the first event's commitment (D2), and
   every seeded roll is exactly the value that seed gives for its identity;
3. the state hash recorded at every turn end matches a fresh fold;
4. re-derivation: every registered re-deriver re-runs the rules over the
   logged inputs and compares the outcomes (added by the rulesets).
"""

from __future__ import annotations

from mortecouille.core.dice import RollIdentity, seed_commitment, seeded_value
from mortecouille.core.game import evolve
from mortecouille.core.life_cycle import UnappliableEvent
from mortecouille.core.state import EMPTY, GameState, state_hash
from mortecouille.events.base import Event
from mortecouille.events.codec import LogError, decode_lines
from mortecouille.events.game import DieRolled, GameCreated, GameEnded, TurnEnded
from mortecouille.events.store import GameLog
from mortecouille.replays.reading.findings import Finding, Report
from mortecouille.replays.reading.rederive import rederive


def verify_log(
    log: GameLog, rederive_turns: bool = True, data: bytes | None = None, events: list[Event] | None = None
) -> Report:
    """Every check of the module docstring; ``rederive_turns=False`` skips the re-derivation (the
    costliest: it resolves every turn again). ``data``/``events``: the log as the caller already
    read and decoded it, so it is not read twice."""
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
    report.findings.append(Finding("chain", True, f"{report.events} lines chained; {log.head_status()}"))
    if events is None:
        try:
            events = decode_lines(data)
        except LogError as error:
            report.findings.append(Finding("decode", False, str(error), error.seq))
            return report
    report.findings.extend(check_dice(events))
    report.findings.extend(check_turn_hashes(events))
    if rederive_turns:
        report.findings.extend(rederive(events))
    return report


def check_dice(events: list[Event]) -> list[Finding]:
    if not events or not isinstance(events[0], GameCreated):
        return [Finding("dice", False, "the first event is not game-created", 0)]
    created = events[0]
    if created.dice_mode != "seeded":
        table = sum(1 for e in events if isinstance(e, DieRolled))
        return [Finding("dice", True, f"table dice: {table} values typed by the referee")]
    revealed = next((e.seed for e in events if isinstance(e, GameEnded) and e.seed), None)
    if revealed is None:
        return [Finding("dice", True, "seed not revealed yet: seeded rolls checkable once the game ends")]
    if seed_commitment(revealed) != created.seed_sha256:
        return [Finding("dice", False, "the revealed seed does not match the commitment (D2)")]
    checked = copied = 0
    # A fork's copied rolls were derived from the original game's seed and id (replays/fork.py).
    copied_up_to = created.forked_at_seq if created.forked_at_seq is not None else -1
    for event in events:
        if isinstance(event, DieRolled) and event.source == "seeded" and event.seq <= copied_up_to:
            copied += 1
        elif isinstance(event, DieRolled) and event.source == "seeded":
            identity = RollIdentity(
                created.game,
                event.turn,
                event.phase,
                event.ship,
                event.purpose,
                event.index,
                event.sides,
            )
            expected = seeded_value(revealed, identity)
            if expected != event.value:
                return [
                    Finding(
                        "dice",
                        False,
                        f"seq {event.seq}: {identity.describe()} shows {event.value}, "
                        f"the seed gives {expected} (D2)",
                        event.seq,
                    )
                ]
            checked += 1
    from_fork = f"; {copied} copied from {created.forked_from} not re-derived" if copied else ""
    return [
        Finding("dice", True, f"seed matches its commitment; {checked} seeded rolls reproduced{from_fork}")
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
