"""What every controller does the same way: find the service, identify the caller and check
their role (declared once per route, :func:`roles`, checked by :func:`identify`), read the
request's ``If-Match`` and ``Idempotency-Key``, and answer with what a command appended as the
caller may see it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from litestar import Request

from mortecouille.app.commands import CommandOptions, Outcome
from mortecouille.app.creation_retry import KEY_HEADER
from mortecouille.app.games import game_log
from mortecouille.app.idempotency import REFEREE_SEAT, player_seat
from mortecouille.app.service import KeyConflict as CreationKeyConflict
from mortecouille.app.service import check_receipt_salt
from mortecouille.core.errors import BadInput
from mortecouille.core.life_cycle import Command, check_game_name
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.storage.contract import EventStore, GameStore
from mortecouille.web import access
from mortecouille.web.access import builtins
from mortecouille.web.controllers.service import Service
from mortecouille.web.errors import Forbidden

#: The roles that may use a route, in its ``opt`` (:func:`roles`).
ROLES = "roles"

#: Builds a command from the caller and the locked state.
Build = Callable[[access.Viewer, GameState], Command]


def roles(*names: str) -> dict[str, Any]:
    """A route's ``opt`` naming the roles (``player``, ``referee``) that may use it."""
    return {ROLES: names}


def service_of(request: Request[Any, Any, Any]) -> Service:
    """The service the application was built with."""
    return cast(Service, request.app.state.service)


def allow(viewer: access.Viewer, allowed: tuple[str, ...]) -> None:
    """Refuse (403) a viewer whose role may not use the endpoint."""
    if viewer.role not in allowed:
        who = "a spectator" if viewer.role == "spectator" else f"the {viewer.role}"
        raise Forbidden(f"{who} may not do this; it is for the {' or '.join(allowed)}")


def identify(request: Request[Any, Any, Any], log_: EventStore) -> access.Viewer:
    """The caller (401 for a token that opens no seat of the game), refused (403) unless their
    role is one the route allows (:func:`roles`; a route naming none allows every viewer)."""
    viewer = access.viewer_for(log_, request.headers.get("Authorization"))
    allowed: tuple[str, ...] | None = request.route_handler.opt.get(ROLES)
    if allowed is not None:
        allow(viewer, allowed)
    return viewer


def if_match(request: Request[Any, Any, Any]) -> int | None:
    """``If-Match: SEQ`` (the CLI's ``--expect-seq``): the seq the first new event must get."""
    header = request.headers.get("If-Match")
    if header is None:
        return None
    try:
        return int(header.strip().strip('"'))
    except ValueError:
        raise BadInput("If-Match", "{header!r} is not a seq", header=header) from None


def options(request: Request[Any, Any, Any], viewer: access.Viewer) -> CommandOptions:
    """The request's ``If-Match`` and its ``Idempotency-Key`` scoped to the caller's seat."""
    seat = player_seat(viewer.player) if viewer.player is not None else REFEREE_SEAT
    key = request.headers.get(KEY_HEADER)
    return CommandOptions(
        expected_seq=if_match(request), idempotency=service_of(request).idempotency(seat, key)
    )


def answer(viewer: access.Viewer, events: list[Event], outcome: Outcome) -> dict[str, Any]:
    """``{seq, events, lines}``: the appended events as ``viewer`` may see them."""
    return access.answer(events, viewer, outcome.events)


def command(request: Request[Any, Any, Any], game: str, build: Build) -> dict[str, Any]:
    """Identify the caller, check their role, run ``build``'s command and answer with what it
    appended, as the caller may see it."""
    service = service_of(request)
    with service.session(game) as log_:
        viewer = identify(request, log_)
        seen = service.run(log_, lambda state: build(viewer, state), options(request, viewer))
        return answer(viewer, seen.events, seen.outcome)


def submit(request: Request[Any, Any, Any], game: str, build: Build, salt: str | None) -> dict[str, Any]:
    """A player's submission (or the referee's, for a player): :func:`command`'s answer with the
    submission's ``receipt``, salted with ``salt`` (checked before anything is read)."""
    check_receipt_salt(salt)
    service = service_of(request)
    with service.session(game) as log_:
        viewer = identify(request, log_)
        submitted = service.submit(
            log_,
            lambda state: build(viewer, state),
            options(request, viewer),
            salt=salt,
            key=request.headers.get(KEY_HEADER),
        )
        answered = answer(viewer, submitted.events, submitted.outcome)
        answered["receipt"] = builtins(submitted.receipt) if submitted.receipt is not None else None
        return answered


class KeyConflict(Forbidden):
    """A creation's ``Idempotency-Key`` that cannot be answered again (409, naming the header)."""

    status = 409
    code = 3

    @classmethod
    def of(cls, error: CreationKeyConflict) -> KeyConflict:
        return cls(str(error), field=error.field)


def fork_target(store: GameStore, name: str) -> EventStore:
    """The fork's log, its name checked first so a bad one is refused naming ``name`` (the body's
    field; the command path would name the CLI's ``GAME``, here the game forked from)."""
    try:
        check_game_name(name)
        return game_log(store, name)
    except BadInput as error:
        raise BadInput("name", error.message) from None
