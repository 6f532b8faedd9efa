"""The game service locks a contributed turn by itself once everything is in (D3).

In a game of contributed dice the players' pages commit to a contribution of their own and reveal
it only after the turn is locked (``turn-locked``). Someone has to lock: the referee may
(``resolve --lock``, ``POST /lock``), the deadline does (:mod:`mortecouille.app.deadlines`), and
the service does as soon as the table waits for nobody: every ship that takes orders has them
(tokens in blockade) and every player with such a ship has committed. Waiting for the commitments
too is what keeps a page from being locked out by the last order arriving just before its
commitment; a player whose page takes no part (the CLI, an old page) never commits, so such a
turn is locked by the referee or the deadline, never by this.

Locking here means a player who submitted can no longer change their orders once the last player
has submitted and committed: the turn's inputs are final then, which is what makes the reveals
safe to send.
"""

from __future__ import annotations

from mortecouille.app.commands import Outcome, run_command
from mortecouille.core.contributions import LockTurn, contributed, current_round
from mortecouille.core.errors import RuleViolation
from mortecouille.core.questions import asked_of
from mortecouille.core.readiness import check_table_resolve
from mortecouille.core.state import GameState
from mortecouille.core.waiting import acting_players, players_awaiting_orders
from mortecouille.events.storage.contract import EventStore


def all_in(state: GameState) -> bool:
    """Whether a contributed turn not locked yet waits for nobody: the game is being played (fleets
    ready, some ship with orders), no ship waits for orders, and every player with a ship to order
    has committed to a contribution (D3)."""
    if not contributed(state) or not state.created or state.ended:
        return False
    now = current_round(state)
    if now.locked or not now.commitments or players_awaiting_orders(state):
        return False
    try:
        check_table_resolve(state, asked_of(state), idle_turn=False)
    except RuleViolation:
        return False
    return acting_players(state) <= now.commitments.keys()


def lock_when_all_in(log_: EventStore) -> Outcome | None:
    """Lock the current turn if :func:`all_in` (checked under the game's lock, on the log as it is
    then); None, and nothing written, otherwise."""

    def command(state: GameState) -> LockTurn:
        if not all_in(state):
            raise _NotAllIn()
        return LockTurn()

    try:
        return run_command(log_, command)
    except _NotAllIn:
        return None


class _NotAllIn(Exception):
    """The turn still waits for someone: nothing to lock, nothing written."""
