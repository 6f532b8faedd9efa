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


class Submission(Body, frozen=True):
    """A player's submission, which gets a receipt: ``salt``, the submitter's own
    random salt for the receipt's commitment (32 to 128 lowercase hex digits, checked by the
    service before anything is written); absent, the service picks one."""

    salt: Short | None = None


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


class ForkBody(Body, frozen=True):
    """A what-if from a game's log: the new game's ``name``, the last seq copied (``at``, a
    command boundary) and its dice (``seeded`` or ``table``; absent, the original's). No seed:
    the fork always gets a fresh random one, which nobody (the referee included) chose."""

    name: Short
    at: int
    dice: Short | None = None


class BuyBody(Submission, frozen=True, kw_only=True):
    ship: Short
    kind: Short
    options: tuple[Short, ...] = ()


class EquipBody(Submission, frozen=True, kw_only=True):
    option: Short
    #: absent: a fleet option for the caller's whole fleet (F2)
    ship: Short | None = None


class ShipBody(Submission, frozen=True, kw_only=True):
    ship: Short


class SealBody(Submission, frozen=True, kw_only=True):
    forfeit: bool = False


class PlaceBody(Submission, frozen=True, kw_only=True):
    ship: Short
    square: Short
    facing: Short = "N"
    kind: Short | None = None
    owner: Short | None = None


class OrdersBody(Submission, frozen=True, kw_only=True):
    ship: Short
    #: the ``order`` command's grammar: ``"attack port Kraken --burst + catapult Kraken"``
    actions: Short
    replace: bool = False


class TokensBody(Submission, frozen=True, kw_only=True):
    ship: Short
    #: one per round: ``"F"``, ``"L"``, ``"R"`` or null (P1)
    tokens: Annotated[tuple[str | None, ...], msgspec.Meta(min_length=1, max_length=10)]
    replace: bool = False


class WithdrawBody(Submission, frozen=True, kw_only=True):
    """``DELETE /orders/{ship}``'s optional body: only the receipt's salt."""


class CommitBody(Submission, frozen=True, kw_only=True):
    #: SHA-256 (64 lowercase hex digits) of the contribution the page drew and keeps (D3)
    commitment: Short


class RevealBody(Submission, frozen=True, kw_only=True):
    #: the contribution committed to: 32 lowercase hex digits (D3)
    contribution: Short


class ResolveBody(Body, frozen=True):
    #: a table-dice game's dice, in the order the resolution asks for them
    dice: tuple[Annotated[int, msgspec.Meta(ge=1, le=20)], ...] | None = None
    partial: bool = False
    idle_turn: bool = False
    #: resolve a contributed turn without the reveals still missing, for this reason (D3)
    absent_reason: Short | None = None


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
