"""A game's live stream (Server-Sent Events)."""

from __future__ import annotations

import asyncio
import weakref
from functools import partial
from typing import Any

from litestar import Controller, Request, get
from litestar.params import FromPath
from litestar.response import Stream

from mortecouille.events.base import Event
from mortecouille.web import access
from mortecouille.web.controllers.shared import service_of
from mortecouille.web.live import event_stream
from mortecouille.web.live_streams import parse_last_event_id


class StreamsController(Controller):
    path = "/api/games"
    tags = ["streams"]

    @get("/{game:str}/stream", media_type="text/event-stream")
    async def game_stream(self, request: Request[Any, Any, Any], game: FromPath[str]) -> Stream:
        """The game's events as the caller may see them, as they are appended (``text/event-stream``)."""
        service = service_of(request)
        # a place under the caps first (503 past them), before anything is read
        slot = service.hub.reserve(game, request.client.host if request.client is not None else "")
        try:
            log_ = await asyncio.to_thread(service.existing_log, game)
            authorization = request.headers.get("Authorization")
            viewer, grant = await asyncio.to_thread(access.stream_viewer, log_, authorization)
        except BaseException:
            slot.release()
            raise
        after = parse_last_event_id(request.headers.get("Last-Event-ID"))

        def line(event: Event) -> bytes | None:
            return service.lines.line(log_, event)

        body = event_stream(
            service.hub, log_, after, viewer, partial(access.SharedView, viewer, line), slot=slot, grant=grant
        )
        weakref.finalize(body, slot.release)  # a stream never started gives its place back too
        return Stream(
            body,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )
