"""Which ships a caller may command: a player only their own (docs/service.md, "Roles")."""

from __future__ import annotations

from mortecouille.core.board.geometry import parse_facing, parse_square
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.errors import BadInput
from mortecouille.core.limits import name_key
from mortecouille.core.state import GameState
from mortecouille.web import access
from mortecouille.web.bodies import PlaceBody
from mortecouille.web.errors import Forbidden


def own_ship(viewer: access.Viewer, state: GameState, ship: str) -> str:
    """The id of the calling player's ship ``ship`` (placed, or bought and not yet placed; case and
    spacing aside, as the CLI matches names), or 403 naming ``ship``.

    Only the caller's own ships are searched, and any other name is refused alike, whether another
    player's ship or none: a refusal that told them apart, or a "did you mean" over every fleet,
    would reveal a purchase still secret (F3)."""
    player = caller(viewer)
    folded = name_key(ship)
    placed = [sid for sid, placed_ship in state.ships.items() if placed_ship.owner == player]
    bought = [purchase.name for purchase in state.fleets[player].ships] if player in state.fleets else []
    for name in (*placed, *bought):
        if name == ship or name_key(name) == folded:
            return name
    mine = ", ".join(sorted({*placed, *bought})) or "none yet"
    raise Forbidden(f"{ship!r} is not one of {player}'s ships (theirs: {mine})", field="ship")


def caller(viewer: access.Viewer) -> str:
    """The calling player's name (the route lets only players through)."""
    assert viewer.player is not None  # the route's roles let only players through
    return viewer.player


def placing(viewer: access.Viewer, state: GameState, body: PlaceBody) -> PlaceShip:
    """The PlaceShip of ``body``: a player places only their own ships (a new blockade ship is
    theirs: ``owner`` defaults to them and may name nobody else), checked first, so another
    player's ship and no ship get one answer; the referee places any. In a mortecouille game
    ``kind`` never makes a new ship: every ship there is bought (F1)."""
    try:
        at = parse_square(body.square)
    except ValueError as error:
        raise BadInput("square", str(error)) from None
    try:
        facing = parse_facing(body.facing)
    except ValueError as error:
        raise BadInput("facing", str(error)) from None
    owner, ship = body.owner, body.ship
    if viewer.role == "player":
        player = caller(viewer)
        if owner is not None and owner != player:
            raise Forbidden(f"{player} may place only their own ships, not {owner}'s")
        if body.kind is not None and state.ruleset == "blockade" and body.ship not in state.ships:
            owner = player  # a new blockade ship, theirs (a name taken is the rules' refusal)
        else:
            ship = own_ship(viewer, state, body.ship)
    return PlaceShip(ship=ship, at=at, facing=facing, kind=body.kind, owner=owner)
