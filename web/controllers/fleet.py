"""A player's fleet: prices, buying, equipping, withdrawing, sealing, placing."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post
from litestar.params import FromPath, JSONBody

from mortecouille.app.prices import price_list
from mortecouille.core.fleet.commands import BuyShip, EquipFleet, EquipShip, SealFleet, WithdrawShip
from mortecouille.core.life_cycle import Command
from mortecouille.core.state import GameState
from mortecouille.web import access
from mortecouille.web.bodies import BuyBody, EquipBody, PlaceBody, SealBody, ShipBody
from mortecouille.web.controllers.ownership import caller, own_ship, placing
from mortecouille.web.controllers.shared import roles, submit


class FleetController(Controller):
    path = "/api"
    tags = ["fleet"]

    @get("/prices", sync_to_thread=False)
    def prices(self) -> dict[str, Any]:
        """The price list, as ``prices --json`` prints it (ship kinds and options, French and
        English names)."""
        return price_list()

    @post("/games/{game:str}/buy", sync_to_thread=True, status_code=200, opt=roles("player"))
    def buy(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[BuyBody]
    ) -> dict[str, Any]:
        """Buy a ship for the caller's fleet (secret until every fleet is sealed)."""

        def build(viewer: access.Viewer, state: GameState) -> Command:
            return BuyShip(player=caller(viewer), kind=data.kind, name=data.ship, options=data.options)

        return submit(request, game, build, data.salt)

    @post("/games/{game:str}/equip", sync_to_thread=True, status_code=200, opt=roles("player"))
    def equip(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[EquipBody]
    ) -> dict[str, Any]:
        """Buy an option for one of the caller's ships, or for their whole fleet."""

        def build(viewer: access.Viewer, state: GameState) -> Command:
            if data.ship is None:
                return EquipFleet(player=caller(viewer), option=data.option)
            return EquipShip(ship=own_ship(viewer, state, data.ship), option=data.option)

        return submit(request, game, build, data.salt)

    @post("/games/{game:str}/unbuy", sync_to_thread=True, status_code=200, opt=roles("player"))
    def unbuy(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[ShipBody]
    ) -> dict[str, Any]:
        """Withdraw a ship bought and not sealed yet."""

        def build(viewer: access.Viewer, state: GameState) -> Command:
            return WithdrawShip(ship=own_ship(viewer, state, data.ship))

        return submit(request, game, build, data.salt)

    @post("/games/{game:str}/seal", sync_to_thread=True, status_code=200, opt=roles("player"))
    def seal(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[SealBody | None] = None
    ) -> dict[str, Any]:
        """Seal the caller's fleet (the rest of the budget forfeited if asked)."""
        body = data or SealBody()

        def build(viewer: access.Viewer, state: GameState) -> Command:
            return SealFleet(player=caller(viewer), forfeit=body.forfeit)

        return submit(request, game, build, body.salt)

    @post("/games/{game:str}/place", sync_to_thread=True, status_code=200, opt=roles("player", "referee"))
    def place(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[PlaceBody]
    ) -> dict[str, Any]:
        """Place a ship on the board (a player their own; the referee any)."""

        def build(viewer: access.Viewer, state: GameState) -> Command:
            return placing(viewer, state, data)

        return submit(request, game, build, data.salt)
