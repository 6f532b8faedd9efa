"""``serve --access-log``: one line per request, written by the service itself (uvicorn's own
access log is never on: it writes the query string, and at the level ``serve`` runs uvicorn it
wrote nothing). Plain ASGI and ``logging`` only, so the command can name it without loading the
web framework.

A line is ``CLIENT "METHOD PATH" STATUS DURATION ms``: the client's address and port, the path
without its query string (a fragment never reaches a server), every character that is not
printable ASCII percent-escaped (a path cannot start a line of its own or drive a terminal), the
status sent (``-`` if none was: the client left first), and the time from the request to the end
of the answer (of a stream: when it closed). Never a header, so never a token.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote

#: The logger of the lines, written to the service's stderr.
ACCESS_LOGGER = "mortecouille.access"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
#: An ASGI application (Litestar's is typed with its own scopes and messages)
ASGIApp = Callable[..., Awaitable[None]]

#: What a logged path keeps as it is; anything else is percent-escaped.
_PATH_SAFE = "/!$&'()*+,;=:@-._~%"


def access_line(scope: Scope, status: int | None, seconds: float) -> str:
    """The line of one request.

    >>> access_line({"client": ("127.0.0.1", 5123), "method": "GET",
    ...              "path": "/api/games/le port/view\\n"}, 200, 0.0031)
    '127.0.0.1:5123 "GET /api/games/le%20port/view%0A" 200 3.1 ms'
    """
    client = scope.get("client")
    who = f"{client[0]}:{client[1]}" if client else "-"
    path = quote(str(scope.get("path", "")), safe=_PATH_SAFE)
    method = quote(str(scope.get("method", "-")), safe="")
    return f'{who} "{method} {path}" {status if status is not None else "-"} {seconds * 1000:.1f} ms'


class AccessLog:
    """``app`` with one line logged per HTTP request (:func:`access_line`), once its answer ended
    (or failed); every other kind of ASGI message (the lifespan) passes through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.log = logging.getLogger(ACCESS_LOGGER)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        status: int | None = None

        async def sending(message: Message) -> None:
            nonlocal status
            if message.get("type") == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self.log.info(access_line(scope, status, time.perf_counter() - began))


class _Lines(logging.StreamHandler):  # type: ignore[type-arg]
    """Where the lines go: this process's stderr, each after its time."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.setFormatter(logging.Formatter("%(asctime)s %(message)s"))


def write_access_log() -> None:
    """Have the lines of :class:`AccessLog` written to this process's stderr (once)."""
    log = logging.getLogger(ACCESS_LOGGER)
    log.setLevel(logging.INFO)
    log.propagate = False
    if not any(isinstance(handler, _Lines) for handler in log.handlers):
        log.addHandler(_Lines())
