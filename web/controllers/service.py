"""The games service as the HTTP shell holds it: the application's
:class:`~mortecouille.app.service.GamesService`, with the live push, the links' base and the
lines the pages witness."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from litestar import Request

from mortecouille.app.service import GamesService
from mortecouille.app.service_clock import REVEAL_GRACE_SECONDS, Clock, system_clock
from mortecouille.events.storage.contract import EventStore, GameStore
from mortecouille.web import access
from mortecouille.web.live import AppendedRow, LiveHub
from mortecouille.web.live_streams import HEARTBEAT_SECONDS, POLL_SECONDS, SEAT_CHECK_SECONDS, StreamLimits
from mortecouille.web.log_lines import LogLines


class Service(GamesService):
    """What the handlers share: the games service, the watchers, the links' base."""

    def __init__(
        self,
        store: GameStore,
        base_url: str | None = None,
        clock: Clock = system_clock,
        poll: float = POLL_SECONDS,
        heartbeat: float = HEARTBEAT_SECONDS,
        *,
        reveal_grace: timedelta = timedelta(seconds=REVEAL_GRACE_SECONDS),
        lock_when_all_in: bool = True,
        streams: StreamLimits | None = None,
        seat_check: float = SEAT_CHECK_SECONDS,
    ) -> None:
        super().__init__(store, clock, reveal_grace=reveal_grace, lock_when_all_in=lock_when_all_in)
        self.appended = self.wake
        self.base_url = base_url
        self.heartbeat = heartbeat
        self.hub = LiveHub(
            poll, heartbeat=heartbeat, seat_check=seat_check, limits=streams, revoked=access.revoked_grants
        )
        #: whether a change feed hands this service every append of the store (build_app sets it)
        self.followed = False
        #: each game's lines as the log holds them, for the chain the pages witness
        #: (docs/service.md, "Phones as witnesses")
        self.lines = LogLines()

    def wake(self, log_: EventStore) -> None:
        """Push what this service appended to ``log_`` (with a change feed, it comes back through it)."""
        if not self.followed:
            self.hub.wake(log_)

    def base(self, request: Request[Any, Any, Any]) -> str:
        """The URL the links start with: the one ``serve`` was given, else the request's own."""
        return self.base_url or str(request.base_url).rstrip("/")

    def changed(self, rows: Sequence[AppendedRow]) -> None:
        """Rows appended to the store by any process, from its change feed (in the feed's thread):
        hand each game's new lines to its watcher (live push in every process, without reading the
        game again), and note again the deadline of each game whose new rows may change it, so
        that the clock of every process knows every deadline in force."""
        games = list(dict.fromkeys(row.game for row in rows))
        for game in games:
            self.hub.offer_lines(game, [(row.seq, row.line) for row in rows if row.game == game])
        to_note = self.games_to_note(games, lambda game: (row.type for row in rows if row.game == game))
        loop = self.hub.loop
        for game in to_note:
            if loop is not None:
                asyncio.run_coroutine_threadsafe(asyncio.to_thread(self.note_deadline, game), loop)
