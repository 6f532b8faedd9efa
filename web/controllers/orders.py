"""A player's orders and movement tokens."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, delete, post
from litestar.params import FromPath, JSONBody

from mortecouille.app.order_grammar import parse_actions_text, with_targets_named
from mortecouille.core.life_cycle import Command
from mortecouille.core.state import GameState
from mortecouille.core.turn_commands import GiveOrder, GiveTokens, WithdrawOrder
from mortecouille.web import access
from mortecouille.web.bodies import OrdersBody, TokensBody, WithdrawBody
from mortecouille.web.controllers.ownership import own_ship
from mortecouille.web.controllers.shared import roles, submit


class OrdersController(Controller):
    path = "/api/games"
    tags = ["orders"]
    opt = roles("player")

    @post("/{game:str}/orders", sync_to_thread=True, status_code=200)
    def orders(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[OrdersBody]
    ) -> dict[str, Any]:
        """Give or replace one of the caller's ships' orders: ``actions`` in the ``order`` command's
        grammar, split as a shell splits words (``"attack port 'Black Pearl' + catapult Kraken"``)."""
        actions = parse_actions_text(data.actions)

        def build(viewer: access.Viewer, state: GameState) -> Command:
            ship = own_ship(viewer, state, data.ship)
            return GiveOrder(ship=ship, actions=with_targets_named(state, actions), replace=data.replace)

        return submit(request, game, build, data.salt)

    @delete("/{game:str}/orders/{ship:str}", sync_to_thread=True, status_code=200)
    def unorder(
        self,
        request: Request[Any, Any, Any],
        game: FromPath[str],
        ship: FromPath[str],
        data: JSONBody[WithdrawBody | None] = None,
    ) -> dict[str, Any]:
        """Withdraw a ship's orders for the turn."""

        def build(viewer: access.Viewer, state: GameState) -> Command:
            return WithdrawOrder(ship=own_ship(viewer, state, ship))

        return submit(request, game, build, data.salt if data is not None else None)

    @post("/{game:str}/tokens", sync_to_thread=True, status_code=200)
    def tokens(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[TokensBody]
    ) -> dict[str, Any]:
        """Give a blockade ship its movement tokens, one per round (``["F", "L", null, "R"]``, P1)."""
        given = tuple(None if t in (None, "-") else t.upper() for t in data.tokens)

        def build(viewer: access.Viewer, state: GameState) -> Command:
            return GiveTokens(ship=own_ship(viewer, state, data.ship), tokens=given, replace=data.replace)

        return submit(request, game, build, data.salt)
