"""The games service's deadline clock (docs/service.md, "Deadlines"): which games have a deadline
in force or a turn waiting for its reveals, and passing or settling them when the clock says so.

The clock is the caller's (:data:`Clock`): ``serve`` passes the system's, tests a fake one. Every
method is thread-safe: request threads, the change feed's thread and the ticker call them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta

import msgspec

from mortecouille.app.deadlines import (
    deadline_in_force,
    pass_deadline_if_due,
    resolve_after_deadline,
    reveal_wait,
)
from mortecouille.app.games import game_log, load
from mortecouille.core.deadlines import parse_time
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.contract import GameStore

_log = get_logger("mortecouille.service")

#: How long a turn locked at its deadline waits for its players' reveals before it is resolved
#: without those still missing (D3): time for every page to see the lock and send its reveal.
REVEAL_GRACE_SECONDS = 30.0

#: The event types after which a game's deadline (or its reveal wait) may have changed.
DEADLINE_TYPES = frozenset({"deadline-set", "deadline-passed", "turn-locked"})

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    """Now, in UTC."""
    return datetime.now(UTC)


class Wait(msgspec.Struct, frozen=True, kw_only=True):
    """A turn locked at its deadline, waiting for its reveals until ``until`` (D3)."""

    turn: int
    deadline: str
    until: datetime


class DeadlineClock:
    """The deadlines in force and the reveal waits of a store's games, and acting on them."""

    def __init__(
        self,
        store: GameStore,
        clock: Clock = system_clock,
        *,
        reveal_grace: timedelta = timedelta(seconds=REVEAL_GRACE_SECONDS),
    ) -> None:
        self.store = store
        self.clock = clock
        self.reveal_grace = reveal_grace
        #: the deadline in force of each game that has one (the only games the clock looks at)
        self.pending: dict[str, datetime] = {}
        #: each game whose turn, locked at its deadline, waits for its reveals (D3): the turn, its
        #: deadline as set, and when the wait ends (the grace counted from when this service first
        #: saw the turn waiting, so a restart gives the pages the whole grace again)
        self.waits: dict[str, Wait] = {}
        self.pending_guard = threading.Lock()

    def find_deadlines(self) -> None:
        """Note every game's deadline in force (at start: deadlines outlive a restart)."""
        for game in self.store.names():
            self.note_deadline(game)

    def games_to_note(self, games: Iterable[str], types: Callable[[str], Iterable[str]]) -> list[str]:
        """Of ``games`` just appended to (``types(game)``: the types of their new rows), those whose
        deadline may have changed: a deadline set, passed or a turn locked, or any append to a
        game with a deadline or a reveal wait noted."""
        with self.pending_guard:
            watched = set(self.pending) | set(self.waits)
        return [game for game in games if game in watched or not DEADLINE_TYPES.isdisjoint(types(game))]

    def note_deadline(self, game: str) -> None:
        """Note ``game``'s deadline in force as its log says, or forget it if it has none; and
        whether its turn waits for its reveals after its deadline (:attr:`waits`)."""
        try:
            events, state = load(game_log(self.store, game))
        except Exception:  # noqa: BLE001 - a log that cannot be read has no deadline to keep
            with self.pending_guard:
                self.pending.pop(game, None)
                self.waits.pop(game, None)
            return
        deadline = deadline_in_force(events, state.turn) if not state.ended else None
        with self.pending_guard:
            if deadline is None:
                self.pending.pop(game, None)
            else:
                self.pending[game] = parse_time("at", deadline.at)
        self.note_wait(game, events, state)

    def note_wait(self, game: str, events: list[Event], state: GameState) -> Wait | None:
        """Note (or forget) ``game``'s reveal wait as ``events`` (its log, folded: ``state``) say;
        a wait already noted for the same turn keeps the end it was given."""
        found = reveal_wait(events, state)
        with self.pending_guard:
            if found is None:
                self.waits.pop(game, None)
                return None
            noted = self.waits.get(game)
            if noted is None or noted.turn != found.turn:
                noted = Wait(turn=found.turn, deadline=found.at, until=self.clock() + self.reveal_grace)
                self.waits[game] = noted
            return noted

    def check_deadlines(self) -> list[str]:
        """Pass every noted deadline the clock has reached (resolving a seeded-dice turn, or locking
        a contributed one whose players committed), and resolve every turn waiting for its reveals
        once they are in or its grace is over; return the games the clock wrote to. Only games with
        a deadline due or a turn waiting are read, under their lock. Never raises: a game's problem
        is logged and never stops the others'."""
        now = self.clock()
        acted = set()
        with self.pending_guard:
            noted = sorted(self.pending.items())
        for game, at in noted:
            if at > now:
                continue
            try:
                if pass_deadline_if_due(game_log(self.store, game), now) is not None:
                    acted.add(game)
            except Exception:  # noqa: BLE001 - one game's problem never stops the others' deadlines
                _log.warning("deadline not passed", game=game, exc_info=True)
            self.note_deadline(game)  # passed, or moved meanwhile: the log says which
        with self.pending_guard:
            waiting = sorted(self.waits)
        for game in waiting:
            if self.settle(game, now):
                acted.add(game)
        return sorted(acted)

    def settle(self, game: str, now: datetime | None = None) -> bool:
        """Resolve ``game``'s turn if it waits for its reveals after its deadline and they are all
        in, or its grace is over at ``now`` (default: the clock's; then without the reveals still
        missing, the reason naming the deadline); whether it was resolved. Never raises (logged)."""
        with self.pending_guard:
            wait = self.waits.get(game)
        if wait is None:
            return False
        now = self.clock() if now is None else now
        reason = (
            f"deadline {wait.deadline} passed and no reveal came within "
            f"{self.reveal_grace.total_seconds():g} s of the lock"
            if now >= wait.until
            else None
        )
        try:
            resolved = resolve_after_deadline(game_log(self.store, game), absent_reason=reason)
        except Exception:  # noqa: BLE001 - the clock's thread, or a reveal already answered
            _log.warning("turn waiting for its reveals not resolved", game=game, exc_info=True)
            resolved = None
        self.note_deadline(game)
        if resolved is not None:
            _log.info("turn resolved after its deadline", game=game, without_reveals=reason is not None)
        return resolved is not None
