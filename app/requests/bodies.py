"""The application's commands as typed values: one Struct per thing a seat may ask for.

These Structs are the HTTP bodies (``JSONBody[...]``: a 400 names the JSON path at fault) and what
the CLI parses its text into, so both shells hand the application one value. Field names are the
domain's; a square is ``"C7"`` or ``[x, y]`` (from 0). Unknown fields are refused: a misspelt
``replce`` would otherwise be silently ignored. The limits stated here read :mod:`core.limits`;
the rules check every value again below the shells.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from mortecouille.core.limits import (
    BUDGET_MAX,
    DEADLINE_MAX_SECONDS,
    DIE_FACES_MAX,
    NAME_MAX,
    PLAYERS_MAX,
    TEXT_MAX,
)
from mortecouille.core.rulings import ADJUSTMENT_MAX

#: A name as typed (game, player, ship, kind, option): the rules refuse the unsafe ones.
Name = Annotated[str, msgspec.Meta(max_length=NAME_MAX)]
#: A word of the rules (a facing, a gun position, a rule ID, a salt, a commitment).
Word = Annotated[str, msgspec.Meta(max_length=NAME_MAX * 2)]
Text = Annotated[str, msgspec.Meta(max_length=TEXT_MAX)]
#: A square: its name on the board (``"C7"``), or ``[x, y]`` counted from 0. Its text is not
#: bounded here (msgspec 0.23 crashes collecting a union of a constrained str and an array):
#: ``square_of`` refuses a long one.
Square = str | tuple[int, int]
#: A ruling's change of damage or wind points, either way.
Change = Annotated[int, msgspec.Meta(ge=-ADJUSTMENT_MAX, le=ADJUSTMENT_MAX)]


class Request(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """Every command of a seat: unknown fields refused."""


class Submission(Request, frozen=True, kw_only=True):
    """A player's submission, answered with a receipt: ``salt``, the submitter's own random salt
    for the receipt's commitment (32 to 128 lowercase hex digits); absent, the service picks one."""

    salt: Word | None = None


# --------------------------------------------------------------------- a new game


class Wind(Request, frozen=True):
    """A wind tile (B5): a ship starting the wind phase on ``square`` is pushed ``direction``."""

    square: Square
    direction: Word


class BoardRequest(Request, frozen=True):
    """A new game's board (B1-B7): ``{width, height, rocks: [square], winds: [{square,
    direction}], whirlpools: [square]}``, a whirlpool by its south-west square."""

    width: int = 20
    height: int = 20
    rocks: tuple[Square, ...] = ()
    winds: tuple[Wind, ...] = ()
    whirlpools: tuple[Square, ...] = ()


class CreateRequest(Request, frozen=True):
    """A new game (T3): its ``name``, ``players`` (2 or more for mortecouille), ``ruleset``,
    each player's ``budget`` (F3), ``board`` and ``dice`` (``seeded`` or ``table``, D1-D2)."""

    name: Name
    players: Annotated[tuple[Name, ...], msgspec.Meta(max_length=PLAYERS_MAX)]
    ruleset: Word = "mortecouille"
    budget: Annotated[int, msgspec.Meta(le=BUDGET_MAX)] = 0
    board: BoardRequest = BoardRequest()
    dice: Word = "seeded"
    seed: Text | None = None


class ForkRequest(Request, frozen=True):
    """A what-if from a game's log: the new game's ``name``, the last seq copied (``at``, a
    command boundary) and its ``dice`` (``seeded`` or ``table``; absent, the original's). No seed:
    a fork always gets a fresh random one, which nobody (the referee included) chose."""

    name: Name
    at: int
    dice: Word | None = None


# --------------------------------------------------------------------- fleets (F1-F3)


class BuyRequest(Submission, frozen=True, kw_only=True):
    """Buy a ship of ``kind`` named ``ship``, with ``options`` (F1-F3)."""

    ship: Name
    kind: Name
    options: tuple[Name, ...] = ()


class EquipRequest(Submission, frozen=True, kw_only=True):
    """Buy ``option`` for ``ship``; without a ship, a fleet option for the whole fleet (F2)."""

    option: Name
    ship: Name | None = None


class UnbuyRequest(Submission, frozen=True, kw_only=True):
    """Withdraw the purchase of ``ship`` before the fleet is sealed (F3)."""

    ship: Name


class SealRequest(Submission, frozen=True, kw_only=True):
    """Seal the caller's fleet; ``forfeit``: even though money left could still buy something."""

    forfeit: bool = False


class PlaceRequest(Submission, frozen=True, kw_only=True):
    """Place ``ship`` on ``square`` facing ``facing`` (M0); a new blockade ship takes its
    ``kind`` (and its ``owner``: the caller, for a player)."""

    ship: Name
    square: Square
    facing: Word = "N"
    kind: Name | None = None
    owner: Name | None = None


# --------------------------------------------------------------------- orders (T1)


class Advance(Request, frozen=True, tag="advance", tag_field="kind"):
    """``{"kind": "advance"}``: one square ahead (A3)."""


class Idle(Request, frozen=True, tag="idle", tag_field="kind"):
    """``{"kind": "idle"}``: nothing this turn (T1)."""


class Fireship(Request, frozen=True, tag="fireship", tag_field="kind"):
    """``{"kind": "fireship"}``: become a fireship from next turn (C6)."""


class Maneuver(Request, frozen=True, tag="maneuver", tag_field="kind"):
    """``{"kind": "maneuver", "angle": "1/4", "side": "left", "sailing": true}`` (N)."""

    angle: Word
    side: Word
    sailing: bool = False


class Attack(Request, frozen=True, tag="attack", tag_field="kind"):
    """``{"kind": "attack", "position": "port", "target": "Kraken", "burst": true}`` (S1-S7)."""

    position: Word
    target: Name
    burst: bool = False


class Catapult(Request, frozen=True, tag="catapult", tag_field="kind"):
    """``{"kind": "catapult", "target": "Kraken"}``: one catapult shot (K)."""

    target: Name


Action = Advance | Idle | Fireship | Maneuver | Attack | Catapult


class OrderRequest(Submission, frozen=True, kw_only=True):
    """``ship``'s orders for the turn (T1): its ``actions``, tagged by ``kind``; ``replace``: in
    place of orders already given."""

    ship: Name
    actions: Annotated[tuple[Action, ...], msgspec.Meta(min_length=1, max_length=16)]
    replace: bool = False


class WithdrawRequest(Submission, frozen=True, kw_only=True):
    """Withdraw a ship's orders (the ship is the path's): only the receipt's salt."""


class TokensRequest(Submission, frozen=True, kw_only=True):
    """``ship``'s maneuver tokens for the turn, one per round: ``"F"``, ``"L"``, ``"R"`` or
    null (P1); ``replace``: in place of tokens already given."""

    ship: Name
    tokens: Annotated[tuple[Word | None, ...], msgspec.Meta(min_length=1, max_length=10)]
    replace: bool = False


# --------------------------------------------------------------------- contributed dice (D3)


class CommitRequest(Submission, frozen=True, kw_only=True):
    """The SHA-256 (64 lowercase hex digits) of the contribution the page drew and keeps (D3)."""

    commitment: Word


class RevealRequest(Submission, frozen=True, kw_only=True):
    """The contribution committed to: 32 lowercase hex digits (D3)."""

    contribution: Word


# --------------------------------------------------------------------- the referee


class ResolveRequest(Request, frozen=True):
    """Resolve the turn: a table-dice game's ``dice`` in the order the resolution asks for them;
    ``partial``: ships without orders do nothing; ``idle_turn``: no ship needs to act;
    ``absent_reason``: resolve a contributed turn without the reveals still missing (D3)."""

    dice: tuple[Annotated[int, msgspec.Meta(ge=1, le=DIE_FACES_MAX)], ...] | None = None
    partial: bool = False
    idle_turn: bool = False
    absent_reason: Text | None = None


class LockRequest(Request, frozen=True):
    """Lock a contributed turn (D3): no order or commitment changes after it."""


class AdjustmentRequest(Request, frozen=True):
    """A ruling's change to one ship: ``{ship, damage: +2, position: "C5"}``; ``damage`` and
    ``wind`` are changes (+2, -1), ``position``, ``facing`` and ``sunk`` new values."""

    ship: Name
    damage: Change | None = None
    position: Square | None = None
    facing: Word | None = None
    wind: Change | None = None
    sunk: bool | None = None


class RulingRequest(Request, frozen=True):
    """A referee's ruling under ``rule`` (a rules.md ID), its ``text`` and its ``adjust``ments."""

    rule: Word
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=TEXT_MAX)]
    adjust: tuple[AdjustmentRequest, ...] = ()


class EndRequest(Request, frozen=True):
    """End the game (T3): its ``winner``, if any, and the ``reason``."""

    winner: Name | None = None
    reason: Text = "referee"


class DeadlineRequest(Request, frozen=True):
    """A deadline ``seconds`` from now; a deadline already set is replaced."""

    seconds: Annotated[int, msgspec.Meta(ge=1, le=DEADLINE_MAX_SECONDS)]


class UnorderRequest(Submission, frozen=True, kw_only=True):
    """Withdraw ``ship``'s orders for the turn (T1): it has no orders again."""

    ship: Name
