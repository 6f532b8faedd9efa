"""Turn deadlines on the command path: set one, find the one in force, pass it.

The clock is the caller's (``now``, an aware datetime): the game service passes its own, tests a
fake one. Setting a deadline appends ``deadline-set``; passing it appends ``deadline-passed``
naming the ships without orders and, in a seeded-dice game, the turn's resolution in the same
append (ships without orders do nothing, as ``resolve --idle-turn``). A table-dice turn is not
resolved by the clock (its dice are rolled at the table): the deadline's passing is recorded and
the referee resolves. Once every player has submitted, the referee may resolve before it.

In a game of contributed dice (D3) whose players committed contributions of their own, the turn
cannot be resolved at the deadline: the contributions are revealed only after the lock. The
deadline then locks the turn (``turn-locked``) and records its passing (``deadline-passed``,
not resolved), in that order; the turn *waits for its reveals* (:func:`reveal_wait`) and
:func:`resolve_after_deadline` resolves it once every reveal is in, or, when the caller's grace
period is over, without the reveals still missing, naming the deadline as the reason. The clock
never raises a rules refusal out of these: what cannot be done now is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from mortecouille.app.commands import Idempotency, Outcome, revealed_seed, run_command
from mortecouille.core.contributions import LockTurn, awaited_reveals, contributed, current_round
from mortecouille.core.deadlines import PassDeadline, SetDeadline, parse_time
from mortecouille.core.errors import RuleViolation
from mortecouille.core.life_cycle import Command, ResolveTurn
from mortecouille.core.questions import asked_of
from mortecouille.core.readiness import check_table_resolve
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.deadlines import DeadlinePassed, DeadlineSet
from mortecouille.events.dice import TurnLocked
from mortecouille.events.storage.contract import EventStore


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
    log_: EventStore,
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


def pass_deadline_if_due(log_: EventStore, now: datetime) -> Outcome | None:
    """If the current turn's deadline has passed at ``now``, record it (and resolve a seeded-dice
    turn); None when no deadline is due. Decided under the game's lock from the log as it is then,
    so a deadline moved or a turn resolved meanwhile is seen.

    A contributed turn (D3) that waits for contributions the players committed themselves is not
    resolved: it is locked (unless it already is), then the passing is recorded, not resolved, and
    the turn waits for its reveals (:func:`reveal_wait`). Both appends are checked again under the
    lock, so a crash between them leaves a locked turn whose deadline passes at the next look."""

    def due(state: GameState) -> DeadlineSet:
        deadline = deadline_in_force(log_.read(), state.turn) if state.created and not state.ended else None
        if deadline is None or parse_time("at", deadline.at) > now:
            raise _NotDue()
        return deadline

    def lock(state: GameState) -> Command:
        due(state)
        if not _resolvable(state) or not _waits_for_reveals(state) or current_round(state).locked:
            raise _NotDue()
        return LockTurn()

    def command(state: GameState) -> PassDeadline:
        deadline = due(state)
        resolve = state.dice_mode == "seeded" and _resolvable(state) and not _waits_for_reveals(state)
        return PassDeadline(
            turn=state.turn,
            at=deadline.at,
            now=iso(now),
            resolve=resolve,
            reveal_seed=revealed_seed(log_, state) if resolve else None,
        )

    locked = _run_unless_not_due(log_, lock)
    passed = _run_unless_not_due(log_, command)
    if locked is None or passed is None:
        return passed
    return Outcome([*locked.events, *passed.events], passed.state)


def _resolvable(state: GameState) -> bool:
    """Whether the clock may resolve this turn, ships without orders idle: not before turn 1 with
    fleets not ready (the referee sees to it)."""
    try:
        check_table_resolve(state, asked_of(state), idle_turn=True)
    except RuleViolation:
        return False
    return True


def _waits_for_reveals(state: GameState) -> bool:
    """A contributed turn with contributions its players committed and have not revealed: it
    cannot be resolved before they are (D3), and they reveal only after the lock."""
    return contributed(state) and bool(awaited_reveals(state))


class RevealWait(NamedTuple):
    """A contributed turn locked at its deadline and waiting for its reveals (D3): the deadline's
    time as set (``at``) and the players whose reveal is still missing (``awaited``; empty: the
    turn can be resolved now)."""

    turn: int
    at: str
    awaited: tuple[str, ...]


def reveal_wait(events: Sequence[Event], state: GameState) -> RevealWait | None:
    """The reveal wait of ``state``'s turn (``events`` its log), or None: the turn's deadline
    passed without resolving it, the turn was locked before the passing was recorded (as the
    clock locks it, or by the referee before the deadline), and it can be resolved with ships
    without orders idle. A turn locked by the referee after its passing was recorded (table dice,
    fleets not ready) is the referee's to resolve, not the clock's."""
    if not contributed(state) or state.ended or not current_round(state).locked or not _resolvable(state):
        return None
    passed = deadline_passed(events, state.turn)
    if passed is None or passed.resolved:
        return None
    locked = next(e for e in reversed(events) if isinstance(e, TurnLocked) and e.turn == state.turn)
    if locked.seq > passed.seq:
        return None
    return RevealWait(turn=state.turn, at=passed.at, awaited=tuple(awaited_reveals(state)))


def resolve_after_deadline(log_: EventStore, *, absent_reason: str | None = None) -> Outcome | None:
    """Resolve a turn waiting for its reveals after its deadline (:func:`reveal_wait`), ships
    without orders idle: once every reveal is in, or, given ``absent_reason``, without the reveals
    still missing (each logged absent with that reason). None, and nothing written, when the turn
    does not wait (resolved meanwhile, or never waiting) or still waits for a reveal and no reason
    is given. Decided under the game's lock from the log as it is then."""

    def command(state: GameState) -> ResolveTurn:
        wait = reveal_wait(log_.read(), state)
        if wait is None or (wait.awaited and absent_reason is None):
            raise _NotDue()
        return ResolveTurn(
            partial=True,
            reveal_seed=revealed_seed(log_, state),
            absent_reason=absent_reason if wait.awaited else None,
        )

    return _run_unless_not_due(log_, command)


def _run_unless_not_due(log_: EventStore, make_command: Callable[[GameState], Command]) -> Outcome | None:
    try:
        return run_command(log_, make_command)
    except _NotDue:
        return None


class _NotDue(Exception):
    """Nothing is due: nothing to decide, nothing written."""
