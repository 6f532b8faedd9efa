"""The game service's HTTP application (docs/service.md).

:func:`build_app` makes the Litestar application for a store of games: the controllers of
:mod:`mortecouille.web.controllers` on the games service of the application layer
(:class:`~mortecouille.app.service.GamesService`, the very command path the CLI takes, so the
rules, the refusals and the log are the same, and the game's lock is shared with any CLI command
running on the same games meanwhile). ``mortecouille serve`` runs it under uvicorn and the tests
drive it with Litestar's test client. The OpenAPI document of the API is served at
``/schema/openapi.json``.

Handlers that touch a log run in a worker thread (``sync_to_thread=True``): a command takes the
game's lock and fsyncs, which must not block the event loop. A command's answer is sent after
it was appended, that is after the fsync: no 2xx ever precedes the events on disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import structlog
from litestar import Litestar, Request, Response
from litestar.datastructures import ResponseHeader
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.openapi.spec import OpenAPIType, Schema
from litestar.params import BodyKwarg, ParameterKwarg
from litestar.plugins import OpenAPISchemaPlugin
from litestar.typing import FieldDefinition

from mortecouille import __version__
from mortecouille.app.service_clock import REVEAL_GRACE_SECONDS, Clock, system_clock
from mortecouille.events.storage.contract import FileStore, GameStore
from mortecouille.web.access_log import AccessLog, ASGIApp, write_access_log
from mortecouille.web.controllers import CONTROLLERS
from mortecouille.web.controllers.service import Service
from mortecouille.web.errors import EXCEPTION_HANDLERS, HEADERS, error_response
from mortecouille.web.guards import HostPolicy, RequestGuard
from mortecouille.web.live import ChangeFeed, FeedMaker, feed_for
from mortecouille.web.live_streams import (
    HEARTBEAT_SECONDS,
    POLL_SECONDS,
    SEAT_CHECK_SECONDS,
    StreamLimits,
    StreamsFull,
)

if TYPE_CHECKING:
    from litestar._openapi.schema_generation import SchemaCreator

_log = structlog.get_logger("mortecouille.web")

#: The largest request body the service reads (413 beyond): an order is a few hundred bytes.
MAX_BODY_BYTES = 64 * 1024

#: Sent with every answer: no inline script runs, no URL (and so no token) leaves in a Referer.
SECURITY_HEADERS = tuple(ResponseHeader(name=name, value=value) for name, value in HEADERS.items())

#: Where the OpenAPI document is served, as JSON: ``/schema`` and ``/schema/openapi.json``. Only the
#: document: a page rendering it would load scripts the pages' Content-Security-Policy forbids.
SCHEMA_PATH = "/schema"


class VariadicTuples(OpenAPISchemaPlugin):
    """``tuple[X, ...]`` as an array of X, its length bounds kept (Litestar's own schema of a
    constrained one allows any value for its items)."""

    @staticmethod
    def is_plugin_supported_type(value: Any) -> bool:
        return False

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        inner = field_definition.inner_types
        return field_definition.origin is tuple and len(inner) == 2 and inner[1].annotation is Ellipsis

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: SchemaCreator) -> Schema:
        items = schema_creator.for_field_definition(field_definition.inner_types[0])
        schema = Schema(type=OpenAPIType.ARRAY, items=items)
        bounds = field_definition.kwarg_definition
        if isinstance(bounds, BodyKwarg | ParameterKwarg):
            schema.min_items, schema.max_items = bounds.min_items, bounds.max_items
        return schema


def openapi_config() -> OpenAPIConfig:
    """The API's OpenAPI document, generated from the controllers' typed bodies."""
    return OpenAPIConfig(
        title="Mortecouille game service",
        version=__version__,
        path=SCHEMA_PATH,
        render_plugins=[JsonRenderPlugin()],
        use_handler_docstrings=True,
        create_examples=False,
    )


def build_app(
    games: GameStore | Path,
    *,
    base_url: str | None = None,
    clock: Clock = system_clock,
    poll_seconds: float = POLL_SECONDS,
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
    deadline_seconds: float | None = 1.0,
    reveal_grace_seconds: float = REVEAL_GRACE_SECONDS,
    lock_when_all_in: bool = True,
    cut_torn_tails: bool = True,
    change_feed: FeedMaker | None = None,
    close_store: bool = False,
    streams: StreamLimits | None = None,
    seat_check_seconds: float = SEAT_CHECK_SECONDS,
    hosts: HostPolicy | None = None,
    debug: bool = False,
) -> Litestar:
    """The game service on ``games``: a store of games (``app.commands.open_games``), or a games
    directory (its file store).

    ``base_url``: what links start with (default: the URL each request came to). ``clock``: the
    deadlines' time (tests pass a fake one). ``poll_seconds``: how often the live push looks at
    each watched log; ``heartbeat_seconds``: the stream's comment when idle. ``deadline_seconds``:
    how often deadlines are checked (None: never on their own; tests call
    ``app.state.service.check_deadlines()``). ``cut_torn_tails``: at start, cut the torn tail a
    crash mid-append left on a log (:meth:`Service.cut_torn_tails`), so the service serves the game
    again; an append cut so was never acknowledged. ``reveal_grace_seconds``: how long a
    contributed turn locked at its deadline waits for its reveals before it is resolved without
    them. ``lock_when_all_in``: lock a contributed turn as soon as every order and every
    commitment is in (:mod:`mortecouille.app.auto_lock`). ``change_feed``: makes the store's feed
    of every append by any process (PostgreSQL: ``events.storage.postgres_feed.PostgresFeed``), started
    with the service: live push and deadlines then follow other processes' appends at once
    (default: the store's own, if it has one). ``close_store``: close the store when the service
    stops (a store it opened itself). ``streams``: the caps on the live streams (``StreamLimits``:
    per game, per client address, in all; a 503 past them) and how far one may fall behind;
    ``seat_check_seconds``: how often the seats of a game are read again while streams opened with
    a seat's token follow it (a new link closes them). ``hosts``: the names the service answers to
    (``Host``; 421 for any other, against DNS rebinding: :mod:`mortecouille.web.guards`); ``serve``
    always gives them; None (an application a test drives) checks no ``Host``. ``Origin`` and
    ``Content-Type`` are checked either way.
    """
    store = FileStore(games) if isinstance(games, Path) else games
    if change_feed is None:
        change_feed = feed_for(store)
    service = Service(
        store,
        base_url,
        clock,
        poll_seconds,
        heartbeat_seconds,
        reveal_grace=timedelta(seconds=reveal_grace_seconds),
        lock_when_all_in=lock_when_all_in,
        streams=streams,
        seat_check=seat_check_seconds,
    )
    # with a feed, every append wakes its game's watcher: a store watcher need not tick as well
    service.hub.store_interval = None if change_feed is not None else poll_seconds
    service.followed = change_feed is not None
    lifespan = Lifespan(service, change_feed, cut_torn_tails, deadline_seconds, close_store)
    app = Litestar(
        route_handlers=list(CONTROLLERS),
        exception_handlers={**EXCEPTION_HANDLERS, StreamsFull: streams_full},
        before_request=RequestGuard(hosts),
        response_headers=list(SECURITY_HEADERS),
        request_max_body_size=MAX_BODY_BYTES,
        lifespan=[lifespan.run],
        openapi_config=openapi_config(),
        plugins=[VariadicTuples()],
        debug=debug,
    )
    app.state.service = service
    return app


class Lifespan:
    """What the service does as it starts (torn tails cut, the change feed started, deadlines
    read, the clock ticking) and as it stops (in the reverse order, the snapshots due written)."""

    def __init__(
        self,
        service: Service,
        change_feed: FeedMaker | None,
        cut_torn_tails: bool,
        deadline_seconds: float | None,
        close_store: bool,
    ) -> None:
        self.service = service
        self.change_feed = change_feed
        self.cut_torn_tails = cut_torn_tails
        self.deadline_seconds = deadline_seconds
        self.close_store = close_store

    @contextlib.asynccontextmanager
    async def run(self, app: Litestar) -> AsyncIterator[None]:
        service = self.service
        service.hub.loop = asyncio.get_running_loop()
        if self.cut_torn_tails:
            await asyncio.to_thread(service.cut_torn_tails)
        feed: ChangeFeed | None = self.change_feed(service.changed) if self.change_feed is not None else None
        if feed is not None:  # listening before the deadlines are read: none set meanwhile is missed
            await asyncio.to_thread(feed.start)
        await asyncio.to_thread(service.find_deadlines)
        every = self.deadline_seconds
        ticker = asyncio.create_task(deadline_ticker(service, every)) if every else None
        try:
            yield
        finally:
            if feed is not None:
                await asyncio.to_thread(feed.stop)
            await asyncio.to_thread(service.close)  # the snapshots due, before the store closes
            if self.close_store:
                await asyncio.to_thread(service.store.close)
            if ticker is not None:
                ticker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await ticker
            await service.hub.close()


def streams_full(_: Request[Any, Any, Any], error: StreamsFull) -> Response[Any]:
    """A stream past a cap: 503, the service's error shape, and when to try again."""
    refused = error_response(error.status, error.code, str(error))
    refused.set_header("Retry-After", str(error.retry_after))
    return refused


# ------------------------------------------------------------------- several processes

#: Where ``serve --workers N`` tells its workers the store's URL, the links' base URL, the
#: address it listens on (the names it answers to, :class:`~mortecouille.web.guards.HostPolicy`)
#: and whether to write the access log.
SERVE_STORE_VARIABLE = "MORTECOUILLE_SERVE_STORE"
SERVE_BASE_URL_VARIABLE = "MORTECOUILLE_SERVE_BASE_URL"
#: ... and the caps on its live streams (``StreamLimits`` as JSON; each worker has them all)
SERVE_STREAMS_VARIABLE = "MORTECOUILLE_SERVE_STREAMS"
SERVE_HOST_VARIABLE = "MORTECOUILLE_SERVE_HOST"
SERVE_ACCESS_LOG_VARIABLE = "MORTECOUILLE_SERVE_ACCESS_LOG"


def worker_app() -> ASGIApp:
    """The service of one worker process of ``serve --workers N`` (uvicorn calls it in each
    worker): the store named by :data:`SERVE_STORE_VARIABLE`, opened by this process, closed
    when it stops; the links' base URL from :data:`SERVE_BASE_URL_VARIABLE` (empty: each
    request's own); the caps on its streams from :data:`SERVE_STREAMS_VARIABLE`; the names it answers
    to from :data:`SERVE_HOST_VARIABLE` and the base URL; one access log line per request when
    :data:`SERVE_ACCESS_LOG_VARIABLE` is ``1``."""
    from mortecouille.app.games import open_games

    url = os.environ.get(SERVE_STORE_VARIABLE)
    host = os.environ.get(SERVE_HOST_VARIABLE)
    if not url or host is None:
        raise RuntimeError(
            f"${SERVE_STORE_VARIABLE} or ${SERVE_HOST_VARIABLE} is not set: "
            "run the workers through serve --workers"
        )
    base_url = os.environ.get(SERVE_BASE_URL_VARIABLE) or None
    caps = os.environ.get(SERVE_STREAMS_VARIABLE)
    streams = msgspec.json.decode(caps, type=StreamLimits) if caps else None
    hosts = HostPolicy.serving(host, base_url)
    app = build_app(open_games(url), base_url=base_url, close_store=True, hosts=hosts, streams=streams)
    if os.environ.get(SERVE_ACCESS_LOG_VARIABLE) != "1":
        return app
    write_access_log()
    return AccessLog(app)


async def deadline_ticker(service: Service, every: float) -> None:
    """Check the deadlines every ``every`` seconds, in a worker thread (passing one writes)."""
    while True:
        await asyncio.sleep(every)
        passed = await asyncio.to_thread(service.check_deadlines)
        if passed:
            _log.info("deadlines passed", games=passed)
