"""Seats: a new link for a player's seat or for the referee's own."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, post
from litestar.params import FromPath

from mortecouille.app.games import load
from mortecouille.core.errors import BadInput
from mortecouille.core.limits import name_key
from mortecouille.web import access
from mortecouille.web.controllers.shared import identify, roles, service_of


class SeatsController(Controller):
    path = "/api/games"
    tags = ["seats"]
    opt = roles("referee")

    @post("/{game:str}/seats/{player:str}", sync_to_thread=True, status_code=200)
    def seats(
        self, request: Request[Any, Any, Any], game: FromPath[str], player: FromPath[str]
    ) -> dict[str, Any]:
        """A new link for the seat of the player named exactly ``player`` (one called ``referee``
        included: the referee's seat has its own path); the old link stops working."""
        service = service_of(request)
        log_ = service.existing_log(game)
        identify(request, log_)
        players = load(log_)[1].players
        if player not in players:
            key = "{player!r} is not a player of {game!r} (players: {players})"
            if name_key(player) == "referee":
                key += "; the referee's own seat is POST /api/games/{game}/referee-seat"
            raise BadInput("player", key, player=player, game=game, players=", ".join(players))
        answered = access.reissue_seat(log_, service.base(request), access.Viewer.of_player(player))
        service.hub.seats_changed(game)  # the old link's streams close now
        return answered

    @post("/{game:str}/referee-seat", sync_to_thread=True, status_code=200)
    def referee_seat(self, request: Request[Any, Any, Any], game: FromPath[str]) -> dict[str, Any]:
        """A new link for the referee's own seat: the token the request came with stops working."""
        service = service_of(request)
        log_ = service.existing_log(game)
        identify(request, log_)
        answered = access.reissue_seat(log_, service.base(request), access.REFEREE)
        service.hub.seats_changed(game)  # the old link's streams close now
        return answered
