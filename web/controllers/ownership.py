"""Which ships a caller may command: a player only their own (docs/service.md, "Roles"); the
rules' command of a typed request, built by the application (:mod:`mortecouille.app.requests`)."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from mortecouille.app.requests.commands import Caller, NotYours, command_for
from mortecouille.core.life_cycle import Command
from mortecouille.core.state import GameState
from mortecouille.web import access
from mortecouille.web.errors import Forbidden


def caller(viewer: access.Viewer) -> Caller:
    """The seat a request speaks for, as the application reads ships for it."""
    return Caller(player=viewer.player, referee=viewer.role == "referee")


def commanding(request: msgspec.Struct) -> Callable[[access.Viewer, GameState], Command]:
    """The rules' command of ``request`` for whoever sends it: a ship that is not the caller's
    own is 403 naming ``ship``, whether another player's ship or none (F3)."""

    def build(viewer: access.Viewer, state: GameState) -> Command:
        try:
            return command_for(state, caller(viewer), request)
        except NotYours as error:
            raise Forbidden(str(error), field=error.field) from None

    return build
