"""Every refusal of the service as one JSON shape (docs/service.md, "Errors"):

``{"error": {"status": S, "code": C, "field": F?, "rule": R?, "key": K, "params": P, "message": M}}``

``code`` is the exit code the CLI gives for the same refusal, ``field`` the command's field path
(or header) at fault, ``rule`` the rule ID of a rules refusal, ``key`` the message's template (its
English text, the catalogue's key) and ``params`` the values it is filled with, so a page can say
the refusal in its reader's language; ``message`` is it said in English. The engine's own errors
map to HTTP statuses here, in one table, so every endpoint refuses alike; nothing here ever echoes
a token.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from mortecouille.app.problems import RETRY_AFTER_SECONDS, problem_text, transient
from mortecouille.app.requests.commands import problem_of
from mortecouille.core.errors import BadInput, MortecouilleError, Phrase, RuleViolation, fill
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


#: A value a refusal's params may hold in JSON.
Param = str | int | float | bool | None | list[Any]


class ErrorBody(msgspec.Struct, omit_defaults=True):
    status: int
    code: int
    message: str
    key: str
    params: dict[str, Param]
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
                   rule: str | None = None, key: str | None = None,
                   params: dict[str, Param] | None = None) -> Response[Any]:  # fmt: skip
    """The refusal's answer; a message of the service's own is its own key, with no params."""
    key = message.replace("{", "{{").replace("}", "}}") if key is None else key
    body = ErrorBody(
        status=status, code=code, message=message, field=field, rule=rule, key=key, params=params or {}
    )
    return body_response(body)


def body_response(body: ErrorBody) -> Response[Any]:
    status = body.status
    headers = {**HEADERS, "Retry-After": str(RETRY_AFTER_SECONDS)} if status == 503 else HEADERS
    return Response({"error": body}, status_code=status, media_type="application/json", headers=headers)


def refusal_body(
    error: MortecouilleError, status: int, translate: Callable[[str], str] | None = None,
    clean: Callable[[str], str] = str,
) -> ErrorBody:  # fmt: skip
    """A refusal of the engine as the API says it: its field path as is, its key and params, and
    its message in the language of ``translate`` (English by default); ``clean`` takes out of the
    message and the params what must not leave the server (a directory's path)."""
    message = clean(fill(error.key, error.params, translate))
    if isinstance(error, RuleViolation):
        where = f"{error.field}: " if error.field else ""
        message = f"[{error.rule}] {where}{message}"
    elif isinstance(error, BadInput):
        message = f"{error.field}: {message}"
    params = {name: json_param(value, translate, clean) for name, value in error.params.items()}
    return ErrorBody(
        status=status, code=int(error.exit_code), message=message, field=error.field, rule=error.rule,
        key=error.key, params=params,
    )  # fmt: skip


def json_param(value: object, translate: Callable[[str], str] | None, clean: Callable[[str], str]) -> Param:
    """A parameter as JSON holds it: numbers, booleans and text as they are, a phrase in words,
    a list item by item, anything else (a path) as its text."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if type(value) is Phrase:
        return clean(value.render(translate))
    if isinstance(value, list | tuple) and not isinstance(value, Mapping):
        return [json_param(item, translate, clean) for item in value]
    return clean(str(value))


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
    if isinstance(error, MortecouilleError):
        return body_response(
            refusal_body(error, _status_of(error), clean=lambda text: without_paths(request, text))
        )
    message = without_paths(request, str(error))
    if isinstance(error, GameNotFound):
        return error_response(404, code, message)
    if isinstance(error, Conflict):
        return error_response(409, code, message)
    if isinstance(error, Refused):
        return error_response(error.status, error.code, message, field=error.field)
    _log.error("unexpected error", error_type=type(error).__name__, exc_info=error)
    return error_response(500, 1, f"unexpected {type(error).__name__} (a bug: please report it)")


def _status_of(error: MortecouilleError) -> int:
    """A rule's refusal is 422, bad input 400; another refusal (table dice unconfirmed) 422, or
    the status its class declares (``status``: an unknown token 401, a key used since 409)."""
    if isinstance(error, BadInput):
        return 400
    return int(getattr(error, "status", 422))


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
    problem = problem_of(message)
    said = problem.render()
    text = f"{field}: {said}" if field else f"malformed body: {said}"
    return error_response(400, 2, text, field=field, key=problem.key, params=dict(problem.params))  # type: ignore[arg-type]


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
