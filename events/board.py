"""The board as a log records it (rules B1-B6): plain data inside ``GameCreated`` and scenario files.

Only the fields live here, so that the log schema stands alone; what the rules do with a board
(validation, the lookup index the movement engine uses) is in :mod:`mortecouille.core.board.terrain`.
"""

import msgspec


class WindTile(msgspec.Struct, frozen=True):
    """A wind tile (B5): a ship starting the wind phase here is pushed one square ``dir``."""

    at: tuple[int, int]
    dir: str


class Board(msgspec.Struct, frozen=True):
    """A W x H board (B1) with rocks (B4), wind tiles (B5) and 2x2 whirlpools (B6).

    A whirlpool is given by its south-west square and covers the 2x2 block above
    and to the east of it.
    """

    width: int
    height: int
    rocks: tuple[tuple[int, int], ...] = ()
    winds: tuple[WindTile, ...] = ()
    whirlpools: tuple[tuple[int, int], ...] = ()
