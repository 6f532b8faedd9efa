"""A player's orders and movement tokens."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, delete, post
from litestar.params import FromPath, JSONBody

from mortecouille.app.requests.bodies import OrderRequest, TokensRequest, UnorderRequest, WithdrawRequest
from mortecouille.web.controllers.ownership import commanding
from mortecouille.web.controllers.shared import roles, submit


class OrdersController(Controller):
    path = "/api/games"
    tags = ["orders"]
    opt = roles("player")

    @post("/{game:str}/orders", sync_to_thread=True, status_code=200)
    def orders(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[OrderRequest]
    ) -> dict[str, Any]:
        """Give or replace one of the caller's ships' orders: ``actions``, a list of action objects
        tagged by ``kind`` (``{"kind": "attack", "position": "port", "target": "Kraken"}``)."""
        return submit(request, game, commanding(data), data.salt)

    @delete("/{game:str}/orders/{ship:str}", sync_to_thread=True, status_code=200)
    def unorder(
        self,
        request: Request[Any, Any, Any],
        game: FromPath[str],
        ship: FromPath[str],
        data: JSONBody[WithdrawRequest | None] = None,
    ) -> dict[str, Any]:
        """Withdraw a ship's orders for the turn."""
        salt = data.salt if data is not None else None
        return submit(request, game, commanding(UnorderRequest(ship=ship, salt=salt)), salt)

    @post("/{game:str}/tokens", sync_to_thread=True, status_code=200)
    def tokens(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[TokensRequest]
    ) -> dict[str, Any]:
        """Give a blockade ship its movement tokens, one per round (``["F", "L", null, "R"]``, P1)."""
        return submit(request, game, commanding(data), data.salt)
