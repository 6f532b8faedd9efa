"""The legal actions of one ship (:mod:`mortecouille.app.legal_actions`), for its owner's seat or
the referee's (docs/service.md, "Legal actions")."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get
from litestar.params import FromPath

from mortecouille.app.legal_actions import ShipActions, legal_actions
from mortecouille.app.seats import Viewer
from mortecouille.app.view import public_state
from mortecouille.core.life_cycle import ship_id_typed
from mortecouille.core.state import GameState
from mortecouille.web.controllers.shared import identify, roles, service_of
from mortecouille.web.errors import Forbidden


class ActionsController(Controller):
    path = "/api/games"
    tags = ["orders"]

    @get("/{game:str}/ships/{ship:str}/actions", sync_to_thread=True, opt=roles("player", "referee"))
    def ship_actions(
        self, request: Request[Any, Any, Any], game: FromPath[str], ship: FromPath[str]
    ) -> ShipActions:
        """What ``ship`` may be ordered to do now, measured on the caller's public fold."""
        with service_of(request).session(game) as log_:
            viewer = identify(request, log_)
            events = log_.read()
        state = public_state(events, viewer)
        return legal_actions(state, asked_ship(viewer, state, ship))


def asked_ship(viewer: Viewer, state: GameState, ship: str) -> str:
    """The id of ``ship`` (case and spacing aside): any ship for the referee; for a player one of
    their own, any other name refused alike (403 naming ``ship``), theirs or nobody's."""
    ship_id = ship_id_typed(state, ship)
    if viewer.role == "referee":
        return ship_id
    found = state.ships.get(ship_id)
    if found is None or found.owner != viewer.player:
        mine = ", ".join(sorted(sid for sid, own in state.ships.items() if own.owner == viewer.player))
        raise Forbidden(
            f"{ship!r} is not one of {viewer.player}'s ships (theirs: {mine or 'none yet'})", field="ship"
        )
    return ship_id
