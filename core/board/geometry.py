"""Squares, facings and distances of the board (rules B1-B3).

A square is an ``(x, y)`` tuple: x grows east, y grows north, ``(0, 0)`` is the
south-west corner. People read and type squares like chess squares (``A1``,
``C5``, ``AA1``); every public surface accepts and prints that form.
"""

from __future__ import annotations

import re
from typing import Final

Square = tuple[int, int]
Vector = tuple[int, int]

#: The eight facings in clockwise order, starting north (B2).
FACINGS: Final[tuple[str, ...]] = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")

#: Unit vector of each facing (B2).
FACING_VECTORS: Final[dict[str, Vector]] = {
    "N": (0, 1),
    "NE": (1, 1),
    "E": (1, 0),
    "SE": (1, -1),
    "S": (0, -1),
    "SW": (-1, -1),
    "W": (-1, 0),
    "NW": (-1, 1),
}
VECTOR_FACINGS: Final[dict[Vector, str]] = {v: f for f, v in FACING_VECTORS.items()}

#: The facings as the French rules write them, where they differ (O for ouest, the west): typed
#: facings accept them too (B2).
FRENCH_FACINGS: Final[dict[str, str]] = {"O": "W", "SO": "SW", "NO": "NW"}

#: The facings a blockade ship may have (B2).
ORTHOGONAL_FACINGS: Final[tuple[str, ...]] = ("N", "E", "S", "W")

_SQUARE_NAME = re.compile(r"^([A-Za-z]+)([0-9]+)$")


def rotate(facing: str, eighths: int) -> str:
    """The facing after turning ``eighths`` eighths of a turn clockwise (negative: anticlockwise)."""
    return FACINGS[(FACINGS.index(facing) + eighths) % 8]


def eighths_between(a: str, b: str) -> int:
    """Smallest angle between two facings, in eighths of a turn (0..4)."""
    d = (FACINGS.index(b) - FACINGS.index(a)) % 8
    return min(d, 8 - d)


def step(square: Square, vector: Vector) -> Square:
    return (square[0] + vector[0], square[1] + vector[1])


def distance(a: Square, b: Square) -> int:
    """King-step (Chebyshev) distance between two squares (B3)."""
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


def column_name(x: int) -> str:
    """Spreadsheet-style column letters: 0 -> A, 25 -> Z, 26 -> AA.

    >>> column_name(0), column_name(25), column_name(26)
    ('A', 'Z', 'AA')
    """
    if x < 0:
        raise ValueError(f"column {x} is negative")
    letters = ""
    n = x + 1
    while n:
        n, rem = divmod(n - 1, 26)
        letters = chr(ord("A") + rem) + letters
    return letters


def square_name(square: Square) -> str:
    """``(2, 4)`` -> ``"C5"`` (B1): the column's letters, then the row counted from 1.

    >>> square_name((0, 0)), square_name((2, 4))
    ('A1', 'C5')
    """
    x, y = square
    if y < 0:
        raise ValueError(f"row {y} is negative")
    return f"{column_name(x)}{y + 1}"


def square_label(square: Square) -> str:
    """A square by name, or by coordinates when it lies past the south or west edge (B1, B4).

    >>> square_label((2, 4)), square_label((-1, 3))
    ('C5', '(-1,3)')
    """
    x, y = square
    return square_name(square) if x >= 0 and y >= 0 else f"({x},{y})"


def parse_square(text: str) -> Square:
    """Read ``"C5"``, ``"c5"`` or ``"2,4"`` as a square; raise ValueError naming the text.

    A square is ``(x, y)`` counted from 0: column C is x 2, row 5 is y 4 (B1).

    >>> parse_square("C5"), parse_square("c5"), parse_square("2,4")
    ((2, 4), (2, 4), (2, 4))
    >>> parse_square("C0")
    Traceback (most recent call last):
    ...
    ValueError: square 'C0': rows are numbered from 1
    """
    cleaned = text.strip()
    match = _SQUARE_NAME.match(cleaned)
    if match:
        letters, row = match.groups()
        x = 0
        for ch in letters.upper():
            x = x * 26 + (ord(ch) - ord("A") + 1)
        if int(row) < 1:
            raise ValueError(f"square {text!r}: rows are numbered from 1")
        return (x - 1, int(row) - 1)
    parts = cleaned.split(",")
    if len(parts) == 2 and all(p.strip().lstrip("-").isdigit() for p in parts):
        return (int(parts[0]), int(parts[1]))
    raise ValueError(f"square {text!r} is neither a name like C5 nor coordinates like 2,4")


def parse_facing(text: str) -> str:
    """A typed facing (B2), in any case, English or French:

    >>> parse_facing("ne"), parse_facing("SO"), parse_facing("o")
    ('NE', 'SW', 'W')
    """
    facing = text.strip().upper()
    facing = FRENCH_FACINGS.get(facing, facing)
    if facing not in FACING_VECTORS:
        raise ValueError(f"facing {text!r} is not one of {', '.join(FACINGS)} (French: O, SO, NO)")
    return facing
