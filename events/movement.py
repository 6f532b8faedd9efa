"""Events of ships on the board, shared by both rulesets: placement, moves, pushes,
collisions, damage and sinking (rules B, M, P, C, W3)."""

import msgspec

from mortecouille.events.base import Event

Square = tuple[int, int]


class Contact(msgspec.Struct, frozen=True, gc=False):
    """One ship's side of a collision (C1): where it stood, its facing, the contact direction.

    Plain data of ``CollisionOccurred``; the movement engine
    (:mod:`mortecouille.core.board.movement_step`) builds it.
    """

    ship: str
    at: tuple[int, int]
    facing: str
    heading: str


class ShipPlaced(Event, tag="ship-placed", frozen=True):
    """A ship put on the board. Blockade ships are placed without buying (P1)."""

    ship: str
    at: Square
    facing: str
    kind: str | None = None
    owner: str | None = None
    damage: float = 0
    rules: tuple[str, ...] = ()


class ShipMoved(Event, tag="ship-moved", frozen=True):
    """Where a ship went in one movement or wind phase: the squares it passed and where it ended."""

    turn: int
    round: int
    phase: str
    ship: str
    path: tuple[Square, ...]
    at: Square
    facing: str
    rules: tuple[str, ...] = ()


class ShipPushed(Event, tag="ship-pushed", frozen=True):
    """A bump that moved a stationary ship one square (M3)."""

    turn: int
    round: int
    phase: str
    step: int
    pusher: str
    ship: str
    pushed_from: Square
    pushed_to: Square
    rules: tuple[str, ...] = ("M3",)


class CollisionOccurred(Event, tag="collision", frozen=True):
    """A collision of two ships, or of one ship with a rock or the board's edge (``rock``)."""

    turn: int
    round: int
    phase: str
    step: int
    rule: str
    ships: tuple[str, ...]
    square: Square
    rock: Square | None
    contacts: tuple[Contact, ...]
    rules: tuple[str, ...] = ()


class DamageTaken(Event, tag="damage", frozen=True):
    """Damage to one ship: small shots in blockade (P2, P3), structure in mortecouille."""

    turn: int
    round: int
    phase: str
    step: int
    ship: str
    amount: float
    cause: str
    other: str | None = None
    rules: tuple[str, ...] = ()


class ShipSunk(Event, tag="ship-sunk", frozen=True):
    """A ship leaves the game: sunk (P3, W3), abandoned (X) or gone off the board."""

    turn: int
    round: int
    phase: str
    ship: str
    at: Square
    how: str = "sunk"
    rules: tuple[str, ...] = ()
