"""Every refusal of the service as one JSON shape (docs/service.md, "Errors"):

``{"error": {"status": S, "code": C, "field": F?, "rule": R?, "message": M}}``

``code`` is the exit code the CLI gives for the same refusal, ``field`` the body field (or header)
at fault, ``rule`` the rule ID of a rules refusal. The engine's own errors map to HTTP statuses
here, in one table, so every endpoint refuses alike; nothing here ever echoes a token.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from mortecouille.app.problems import RETRY_AFTER_SECONDS, problem_text, transient
from mortecouille.core.errors import BadInput, MortecouilleError, RuleViolation
from mortecouille.events.codec import LogError
from mortecouille.events.storage.errors import Conflict, GameNotFound, StoreError, Unwritable

_log = structlog.get_logger("mortecouille.web")


#: Sent with every answer, refusals included: no inline script runs and nothing loads from
#: elsewhere, no URL (and so no token) leaves in a Referer, no type is sniffed, nothing is cached.
HEADERS: dict[str, str] = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


class ErrorBody(msgspec.Struct, omit_defaults=True):
    status: int
    code: int
    message: str
    field: str | None = None
    rule: str | None = None


class Refused(Exception):
    """A refusal of the service itself, with its status; ``field``: the body field (or header)
    at fault, if any."""

    status = 400
    code = 2

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class Unauthorized(Refused):
    """A token that is not one of this game's (401). The message never holds the token."""

    status = 401


class Forbidden(Refused):
    """A role acting outside its part (403): a player on another fleet, a spectator commanding.
    ``field``: the body field naming what is not theirs (``ship``), if any."""

    status = 403


def error_response(status: int, code: int, message: str, *, field: str | None = None,
                   rule: str | None = None) -> Response[Any]:  # fmt: skip
    body = ErrorBody(status=status, code=code, message=message, field=field, rule=rule)
    headers = {**HEADERS, "Retry-After": str(RETRY_AFTER_SECONDS)} if status == 503 else HEADERS
    return Response({"error": body}, status_code=status, media_type="application/json", headers=headers)


#: The CLI's argument and option names as they appear in BadInput, to the body fields they are.
_FIELD_NAMES = {
    "--expect-seq": "If-Match",
    "SQUARE": "square",
    "SHIP": "ship",
    "GAME": "game",
    "PLAYER": "player",
    "SHIP|PLAYER": "ship",
}


def body_field(name: str) -> str:
    """A BadInput's field as the API's client named it: ``--facing`` -> ``facing``,
    ``SHIP`` -> ``ship``, ``ACTION[2]`` -> ``actions[2]``."""
    if name in _FIELD_NAMES:
        return _FIELD_NAMES[name]
    if name.startswith("ACTION["):
        return "actions" + name.removeprefix("ACTION")
    return name.removeprefix("--").replace("-", "_") if name.startswith("--") else name


def engine_error(request: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    """The engine's deliberate errors, each to its status (docs/service.md). A log or a store
    that fails is told by :func:`~mortecouille.app.problems.problem_text` (never a log's bytes, a
    path or the store's address; those go to the server's own log); no other message names a
    path of the games directory."""
    code = int(getattr(error, "exit_code", 1))
    if isinstance(error, LogError | Unwritable | StoreError):
        read, written = games_of(request)
        game = written if isinstance(error, Unwritable) and written is not None else read
        _log.warning("game unavailable", game=game, problem=str(error))
        status = 503 if transient(error) else 500
        return error_response(status, code, problem_text(error, game))
    message = without_paths(request, str(error))
    if isinstance(error, RuleViolation):
        return error_response(422, code, message, rule=error.rule)
    if isinstance(error, BadInput):  # the message names the field as the client sent it too
        field = body_field(error.field)
        return error_response(400, code, f"{field}: {without_paths(request, error.message)}", field=field)
    if isinstance(error, GameNotFound):
        return error_response(404, code, message)
    if isinstance(error, Conflict):
        return error_response(409, code, message)
    if isinstance(error, Refused):
        return error_response(error.status, error.code, message, field=error.field)
    if isinstance(error, MortecouilleError):  # a refusal of the command path (table dice unconfirmed)
        return error_response(422, code, message)
    _log.error("unexpected error", error_type=type(error).__name__, exc_info=error)
    return error_response(500, 1, f"unexpected {type(error).__name__} (a bug: please report it)")


def games_of(request: Request[Any, Any, Any]) -> tuple[str | None, str | None]:
    """The game a request reads (its path's) and the one it creates (a creation's or a fork's
    ``name``, which the handler notes as ``request.state.creating``), for a message."""
    read = request.path_params.get("game")
    written = getattr(request.state, "creating", None)
    return (read if isinstance(read, str) else written), (written if isinstance(written, str) else read)


def without_paths(request: Request[Any, Any, Any], message: str) -> str:
    """``message`` without the games directory's path: a file beside a log is named by its own
    name (``duel.seats``), never where the server keeps it."""
    service = getattr(request.app.state, "service", None)
    store = getattr(service, "store", None)
    folder = store.folder() if store is not None else None
    if folder is None:
        return message
    for directory in {str(folder), str(folder.resolve())}:
        message = message.replace(directory.rstrip("/") + "/", "")
    return message


def validation_error(_: Request[Any, Any, Any], error: ValidationException) -> Response[Any]:
    """A body Litestar could not read as the endpoint's Struct: 400 naming the first field."""
    details = error.extra if isinstance(error.extra, list) else []
    first = details[0] if details and isinstance(details[0], dict) else {}
    message = str(first.get("message") or error.detail)
    key = str(first["key"]) if first.get("key") not in (None, "data") else None
    named = _field_in(message)
    # Litestar gives the path to the object (``board``), msgspec's message the field in it (``siz``)
    field = f"{key}.{named}" if key and named and _NAMED.search(message) else key or named
    text = f"{field}: {message}" if field else f"malformed body: {message}"
    return error_response(400, 2, text, field=field)


_AT_PATH = re.compile(r"at `\$\.([^`]+)`")
_NAMED = re.compile(r"(?:unknown|required) field `([^`]+)`")


def _field_in(message: str) -> str | None:
    """The body field msgspec's message names: ``... - at `$.board.size``` -> ``board.size``,
    ``Object missing required field `ship``` -> ``ship``."""
    found = _NAMED.search(message)
    path = _AT_PATH.search(message)
    if found is not None:
        return f"{path.group(1)}.{found.group(1)}" if path is not None else found.group(1)
    return path.group(1) if path is not None else None


def http_error(_: Request[Any, Any, Any], error: HTTPException) -> Response[Any]:
    """Litestar's own refusals (a body over the limit: 413, an unknown path: 404) in our shape."""
    status = error.status_code
    message = "the body is over 64 KB" if status == 413 else str(error.detail)
    return error_response(status, 2, message)


EXCEPTION_HANDLERS: dict[type[Exception] | int, Any] = {
    ValidationException: validation_error,
    HTTPException: http_error,
    MortecouilleError: engine_error,
    LogError: engine_error,
    Conflict: engine_error,
    GameNotFound: engine_error,
    Unwritable: engine_error,
    StoreError: engine_error,
    Refused: engine_error,
    Exception: engine_error,
}
