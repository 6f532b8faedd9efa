"""The request bodies of the API (docs/service.md), as msgspec Structs: Litestar validates each
body against its Struct before a handler runs, so a malformed body is refused (400, naming the
field) before any game is read. Unknown fields are refused too: a misspelt ``replce`` would
otherwise be silently ignored."""

from __future__ import annotations

from typing import Annotated

import msgspec

#: Names, kinds, squares and texts stay short; the rules check them again (core.limits).
Short = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
Text = Annotated[str, msgspec.Meta(max_length=4000)]


class Body(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """Every body: unknown fields refused."""


class BoardBody(Body, frozen=True):
    """A new game's board: its size and terrain, squares as on the board (``C5``)."""

    size: Short = "20x20"
    rocks: tuple[Short, ...] = ()
    #: wind tiles as ``SQUARE:DIR`` (``D4:E``)
    winds: tuple[Short, ...] = ()
    whirlpools: tuple[Short, ...] = ()


class NewGameBody(Body, frozen=True):
    name: Short
    players: Annotated[tuple[Short, ...], msgspec.Meta(min_length=1, max_length=16)]
    ruleset: Short = "mortecouille"
    budget: Annotated[int, msgspec.Meta(ge=0, le=1_000_000)] = 0
    board: BoardBody = BoardBody()
    dice: Short = "seeded"
    seed: Short | None = None


class BuyBody(Body, frozen=True):
    ship: Short
    kind: Short
    options: tuple[Short, ...] = ()


class EquipBody(Body, frozen=True):
    option: Short
    #: absent: a fleet option for the caller's whole fleet (F2)
    ship: Short | None = None


class ShipBody(Body, frozen=True):
    ship: Short


class SealBody(Body, frozen=True):
    forfeit: bool = False


class PlaceBody(Body, frozen=True):
    ship: Short
    square: Short
    facing: Short = "N"
    kind: Short | None = None
    owner: Short | None = None


class OrdersBody(Body, frozen=True):
    ship: Short
    #: the ``order`` command's grammar: ``"attack port Kraken --burst + catapult Kraken"``
    actions: Short
    replace: bool = False


class TokensBody(Body, frozen=True):
    ship: Short
    #: one per round: ``"F"``, ``"L"``, ``"R"`` or null (P1)
    tokens: Annotated[tuple[str | None, ...], msgspec.Meta(min_length=1, max_length=10)]
    replace: bool = False


class ResolveBody(Body, frozen=True):
    #: a table-dice game's dice, in the order the resolution asks for them
    dice: tuple[Annotated[int, msgspec.Meta(ge=1, le=20)], ...] | None = None
    partial: bool = False
    idle_turn: bool = False


class Adjust(Body, frozen=True):
    ship: Short
    #: ``ruling --adjust``'s changes: ``"damage=+2,position=C5"``
    changes: Short


class RulingBody(Body, frozen=True):
    rule: Short
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=4000)]
    adjust: tuple[Adjust, ...] = ()


class EndBody(Body, frozen=True):
    winner: Short | None = None
    reason: Short = "referee"


class DeadlineBody(Body, frozen=True):
    #: from now; a deadline already set is replaced (extended or brought forward)
    seconds: Annotated[int, msgspec.Meta(ge=1, le=7 * 24 * 3600)]
