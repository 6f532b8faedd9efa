"""The board: its size, rocks, wind tiles and whirlpools (rules B1-B7).

``Board`` is a plain frozen msgspec Struct so it can travel inside events and
scenario files: its fields are part of the log schema, so it is defined there
(:mod:`mortecouille.events.board`), and the rules import it from there. The lookups
the movement engine needs on its hot path live in a ``BoardIndex`` built once per
board (``board_index`` caches it on the hashable frozen board) and validated at the
same time (B7).
"""

from __future__ import annotations

import functools
from typing import Final, NamedTuple

from mortecouille.core.board.geometry import FACING_VECTORS, Square, Vector, square_label
from mortecouille.core.errors import BadInput
from mortecouille.core.limits import BOARD_MAX
from mortecouille.events.board import Board


class WhirlpoolPath(NamedTuple):
    """Where a ship on one whirlpool square goes (B6): two unit steps, clockwise."""

    origin: Square
    first: Vector
    second: Vector


#: Clockwise order of a whirlpool's corners as offsets from its south-west square:
#: SW -> NW -> NE -> SE -> SW (B6).
_CLOCKWISE_CORNERS: Final[tuple[Vector, ...]] = ((0, 0), (0, 1), (1, 1), (1, 0))


def _whirlpool_paths(origin: Square) -> dict[Square, WhirlpoolPath]:
    """The two-step clockwise path from each corner of the whirlpool at ``origin`` (B6)."""
    ox, oy = origin
    paths: dict[Square, WhirlpoolPath] = {}
    for i, (cx, cy) in enumerate(_CLOCKWISE_CORNERS):
        nx, ny = _CLOCKWISE_CORNERS[(i + 1) % 4]
        fx, fy = _CLOCKWISE_CORNERS[(i + 2) % 4]
        paths[(ox + cx, oy + cy)] = WhirlpoolPath(origin, (nx - cx, ny - cy), (fx - nx, fy - ny))
    return paths


class BoardArea:
    """The W x H grid of a board (B1), features aside: the one home of the bounds check.

    ``validate_board`` checks squares against it before the board's index can be built.
    """

    __slots__ = ("width", "height")

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height

    def on_board(self, square: Square) -> bool:
        """True for a square of the grid: x from 0 to W-1, y from 0 to H-1 (B1)."""
        return 0 <= square[0] < self.width and 0 <= square[1] < self.height


class BoardIndex(BoardArea):
    """Set and dict lookups over one validated board, for the movement hot path."""

    __slots__ = ("rocks", "winds", "whirlpool_paths")

    def __init__(self, board: Board) -> None:
        super().__init__(board.width, board.height)
        self.rocks: frozenset[Square] = frozenset((r[0], r[1]) for r in board.rocks)
        self.winds: dict[Square, str] = {(w.at[0], w.at[1]): w.dir for w in board.winds}
        self.whirlpool_paths: dict[Square, WhirlpoolPath] = {}
        for origin in board.whirlpools:
            self.whirlpool_paths.update(_whirlpool_paths((origin[0], origin[1])))

    def blocks(self, square: Square) -> bool:
        """True for a rock or a square off the board: the edge acts as rocks (B4)."""
        return not self.on_board(square) or square in self.rocks


def _field_square(field: str, value: object, rule: str) -> Square:
    if (
        not isinstance(value, tuple | list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise BadInput(field, "{value!r} is not an (x, y) square ({rule_id})", value=value, rule_id=rule)
    return (value[0], value[1])


def validate_board(board: Board) -> None:
    """Refuse a malformed board, naming the field and the rule.

    Size from 1 by 1 to BOARD_MAX by BOARD_MAX (B1); every rock (B4), wind tile (B5) and whirlpool
    square (B6) on the board; wind directions among the eight facings (B2, B5);
    no square with two features, or listed twice (B7).
    """
    for name, size in (("width", board.width), ("height", board.height)):
        if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= BOARD_MAX:
            raise BadInput(
                f"board.{name}",
                "must be an integer from 1 to {board_max}, got {size!r} (B1)",
                board_max=BOARD_MAX,
                size=size,
            )

    area = BoardArea(board.width, board.height)
    feature_at: dict[Square, str] = {}

    # squares by name (Z99), features by kind: the referee typed those, not coordinates or fields
    def claim(square: Square, field: str, rule: str, what: str) -> None:
        name = square_label(square)
        if not area.on_board(square):
            raise BadInput(
                field,
                "{name} is off the {width}x{height} board ({rule_id})",
                name=name,
                width=board.width,
                height=board.height,
                rule_id=rule,
            )
        if square in feature_at:
            raise BadInput(
                field,
                "{name} already holds {feature_at}: one feature per square (B7)",
                name=name,
                feature_at=feature_at[square],
            )
        feature_at[square] = what

    for i, rock in enumerate(board.rocks):
        field = f"board.rocks[{i}]"
        claim(_field_square(field, rock, "B4"), field, "B4", "a rock")
    for i, wind in enumerate(board.winds):
        field = f"board.winds[{i}]"
        if wind.dir not in FACING_VECTORS:
            raise BadInput(
                f"{field}.dir", "{dir!r} is not one of N, NE, E, SE, S, SW, W, NW (B5)", dir=wind.dir
            )
        claim(_field_square(f"{field}.at", wind.at, "B5"), f"{field}.at", "B5", "a wind tile")
    for i, origin in enumerate(board.whirlpools):
        field = f"board.whirlpools[{i}]"
        ox, oy = _field_square(field, origin, "B6")
        for dx, dy in _CLOCKWISE_CORNERS:
            claim((ox + dx, oy + dy), field, "B6", "a whirlpool")


@functools.lru_cache(maxsize=256)
def _cached_index(board: Board) -> BoardIndex:
    validate_board(board)
    return BoardIndex(board)


def board_index(board: Board) -> BoardIndex:
    """The validated lookup index of ``board``, built once per distinct board."""
    try:
        return _cached_index(board)
    except TypeError:
        # A board built by hand with lists inside is unhashable: index it uncached.
        validate_board(board)
        return BoardIndex(board)
