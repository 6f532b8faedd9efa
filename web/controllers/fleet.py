"""A player's fleet: prices, buying, equipping, withdrawing, sealing, placing."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post
from litestar.params import FromPath, JSONBody

from mortecouille.app.prices import price_list
from mortecouille.app.requests.bodies import BuyRequest, EquipRequest, PlaceRequest, SealRequest, UnbuyRequest
from mortecouille.web.controllers.ownership import commanding
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
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[BuyRequest]
    ) -> dict[str, Any]:
        """Buy a ship for the caller's fleet (secret until every fleet is sealed)."""
        return submit(request, game, commanding(data), data.salt)

    @post("/games/{game:str}/equip", sync_to_thread=True, status_code=200, opt=roles("player"))
    def equip(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[EquipRequest]
    ) -> dict[str, Any]:
        """Buy an option for one of the caller's ships, or for their whole fleet."""
        return submit(request, game, commanding(data), data.salt)

    @post("/games/{game:str}/unbuy", sync_to_thread=True, status_code=200, opt=roles("player"))
    def unbuy(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[UnbuyRequest]
    ) -> dict[str, Any]:
        """Withdraw a ship bought and not sealed yet."""
        return submit(request, game, commanding(data), data.salt)

    @post("/games/{game:str}/seal", sync_to_thread=True, status_code=200, opt=roles("player"))
    def seal(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[SealRequest | None] = None
    ) -> dict[str, Any]:
        """Seal the caller's fleet (the rest of the budget forfeited if asked)."""
        body = data or SealRequest()
        return submit(request, game, commanding(body), body.salt)

    @post("/games/{game:str}/place", sync_to_thread=True, status_code=200, opt=roles("player", "referee"))
    def place(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[PlaceRequest]
    ) -> dict[str, Any]:
        """Place a ship on the board (a player their own; the referee any)."""
        return submit(request, game, commanding(data), data.salt)
