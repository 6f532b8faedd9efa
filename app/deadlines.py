"""Turn deadlines on the command path (issue 14.7): set one, find the one in force, pass it.

The clock is the caller's (``now``, an aware datetime): the game service passes its own, tests a
fake one. Setting a deadline appends ``deadline-set``; passing it appends ``deadline-passed``
naming the ships without orders and, in a seeded-dice game, the turn's resolution in the same
append (ships without orders do nothing, as ``resolve --idle-turn``). A table-dice turn is not
resolved by the clock (its dice are rolled at the table): the deadline's passing is recorded and
the referee resolves. Once every player has submitted, the referee may resolve before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from mortecouille.app.commands import Idempotency, Outcome, revealed_seed, run_command
from mortecouille.core.deadlines import PassDeadline, SetDeadline, parse_time
from mortecouille.core.errors import RuleViolation
from mortecouille.core.readiness import check_table_resolve
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.deadlines import DeadlinePassed, DeadlineSet
from mortecouille.events.store import GameLog


def iso(moment: datetime) -> str:
    """``moment`` in UTC, to the second, as the log keeps times (``2026-12-01T14:00:00+00:00``)."""
    return moment.astimezone(UTC).replace(microsecond=0).isoformat()


def deadline_in_force(events: Sequence[Event], turn: int) -> DeadlineSet | None:
    """The last deadline set for ``turn``, unless its passing is already recorded."""
    current: DeadlineSet | None = None
    for event in events:
        if isinstance(event, DeadlineSet) and event.turn == turn:
            current = event
        elif isinstance(event, DeadlinePassed) and event.turn == turn:
            current = None
    return current


def deadline_passed(events: Sequence[Event], turn: int) -> DeadlinePassed | None:
    """The recorded passing of ``turn``'s deadline, if any (a table-dice turn waiting for its dice)."""
    return next((e for e in reversed(events) if isinstance(e, DeadlinePassed) and e.turn == turn), None)


def set_deadline(
    log_: GameLog,
    seconds: int,
    now: datetime,
    *,
    expected_seq: int | None = None,
    idempotency: Idempotency | None = None,
) -> Outcome:
    """Set the current turn's deadline to ``seconds`` after ``now`` (replacing one set before)."""
    at = iso(now + timedelta(seconds=seconds))
    return run_command(
        log_,
        lambda state: SetDeadline(turn=state.turn, at=at),
        expected_seq=expected_seq,
        idempotency=idempotency,
    )


def pass_deadline_if_due(log_: GameLog, now: datetime) -> Outcome | None:
    """If the current turn's deadline has passed at ``now``, record it (and resolve a seeded-dice
    turn); None when no deadline is due. Decided under the game's lock from the log as it is then,
    so a deadline moved or a turn resolved meanwhile is seen."""

    def command(state: GameState) -> PassDeadline:
        deadline = deadline_in_force(log_.read(), state.turn) if state.created and not state.ended else None
        if deadline is None or parse_time("at", deadline.at) > now:
            raise _NotDue()
        resolve = state.dice_mode == "seeded"
        if resolve:
            try:
                check_table_resolve(state, idle_turn=True)
            except RuleViolation:  # fleets not ready before turn 1: the referee sees to it
                resolve = False
        return PassDeadline(
            turn=state.turn,
            at=deadline.at,
            now=iso(now),
            resolve=resolve,
            reveal_seed=revealed_seed(log_, state) if resolve else None,
        )

    try:
        return run_command(log_, command)
    except _NotDue:
        return None


class _NotDue(Exception):
    """No deadline is due: nothing to decide, nothing written."""
