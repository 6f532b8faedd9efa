"""Deadlines: the referee may give a turn a deadline; when it passes, ships without
orders do nothing (T1: they lose their wind points), and a seeded-dice turn is resolved at once.

The rules never read a clock: the shell (the game service) passes the times in as data, the
deadline it sets (``SetDeadline.at``) and the time it saw it pass (``PassDeadline.now``), both
ISO 8601 in UTC. The events these produce change no state (``core.ruleset.SHARED_IGNORED``).
"""

from __future__ import annotations

from datetime import datetime

from mortecouille.core.dice import DiceSource
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.life_cycle import Command, Decide, ResolveTurn
from mortecouille.core.questions import Questions
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.deadlines import DeadlinePassed, DeadlineSet


class SetDeadline(Command, frozen=True, kw_only=True):
    """Set (or move) the deadline of ``turn``, the current one, to ``at``."""

    turn: int
    at: str


class PassDeadline(Command, frozen=True, kw_only=True):
    """Record that the deadline ``at`` of ``turn`` passed at ``now``; ``resolve``: resolve the turn
    in the same append, ships without orders doing nothing (as ``resolve --idle-turn``)."""

    turn: int
    at: str
    now: str
    resolve: bool = False
    reveal_seed: str | None = None


def parse_time(field: str, text: str) -> datetime:
    """An ISO 8601 time with its offset (``2026-12-01T14:00:00+00:00``), or BadInput naming ``field``."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise BadInput(field, "{text!r} is not an ISO 8601 time", text=text) from None
    if moment.tzinfo is None:
        raise BadInput(field, "{text!r} has no time zone; give it in UTC", text=text)
    return moment


def _check_turn(state: GameState, turn: int) -> None:
    if turn != state.turn:
        raise RuleViolation(
            "T1",
            "the deadline is for turn {turn}, but {game!r} is at turn {current}",
            turn=turn,
            game=state.game,
            current=state.turn,
        )


def decide_set_deadline(state: GameState, command: SetDeadline, dice: DiceSource) -> list[Event]:
    _check_turn(state, command.turn)
    parse_time("at", command.at)
    return [DeadlineSet(turn=command.turn, at=command.at)]


def passing_with(resolve_turn: Decide, asked: Questions) -> Decide:
    """The decider of PassDeadline for a ruleset whose turns ``resolve_turn`` resolves and whose
    turns wait for the ships ``asked`` names."""

    def decide_pass_deadline(state: GameState, command: PassDeadline, dice: DiceSource) -> list[Event]:
        _check_turn(state, command.turn)
        if parse_time("now", command.now) < parse_time("at", command.at):
            raise RuleViolation(
                "T1", "the deadline of turn {turn} ({at}) has not passed", turn=command.turn, at=command.at
            )
        passed = DeadlinePassed(
            turn=command.turn, at=command.at, idle=asked.ships_awaited(state), resolved=command.resolve
        )
        if not command.resolve:
            return [passed]
        resolve = ResolveTurn(partial=True, reveal_seed=command.reveal_seed)
        return [passed, *resolve_turn(state, resolve, dice)]

    return decide_pass_deadline
