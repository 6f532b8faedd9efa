"""The referee's decisions: rulings and the end of a game."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, post
from litestar.params import FromPath, JSONBody

from mortecouille.app.commands import ending
from mortecouille.app.requests.bodies import EndRequest, RulingRequest
from mortecouille.web.controllers.ownership import commanding
from mortecouille.web.controllers.shared import command, roles, service_of


class RefereeController(Controller):
    path = "/api/games"
    tags = ["referee"]
    opt = roles("referee")

    @post("/{game:str}/rulings", sync_to_thread=True, status_code=200)
    def rulings(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[RulingRequest]
    ) -> dict[str, Any]:
        """Record a ruling, with the adjustments it makes to ships."""
        return command(request, game, commanding(data))

    @post("/{game:str}/end", sync_to_thread=True, status_code=200)
    def end(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[EndRequest | None] = None
    ) -> dict[str, Any]:
        """End the game (its seed revealed, D2)."""
        body = data or EndRequest()
        make = ending(service_of(request).existing_log(game), winner=body.winner, reason=body.reason)
        return command(request, game, lambda viewer, state: make(state))
