"""A new game's board from the body of ``POST /api/games`` (docs/service.md), checked by the
same rules as the CLI's ``new`` (B1-B7: ``core.board.terrain.validate_board``); each refusal names
the body field as sent (``board.rocks[1]``)."""

from __future__ import annotations

from mortecouille.core.board.geometry import parse_facing, parse_square
from mortecouille.core.board.terrain import validate_board
from mortecouille.core.errors import BadInput
from mortecouille.events.board import Board, WindTile
from mortecouille.web.bodies import BoardBody


def _square(field: str, text: str) -> tuple[int, int]:
    try:
        return parse_square(text)
    except ValueError as error:
        raise BadInput(field, str(error)) from None


def board_from(body: BoardBody) -> Board:
    """The board ``body`` describes, or BadInput naming its field."""
    try:
        width_text, height_text = body.size.lower().split("x")
        width, height = int(width_text), int(height_text)
    except ValueError:
        raise BadInput("board.size", f"{body.size!r} is not WIDTHxHEIGHT, e.g. 20x36") from None
    winds = []
    for index, wind in enumerate(body.winds):
        field = f"board.winds[{index}]"
        square_text, _, direction = wind.partition(":")
        try:
            winds.append(WindTile(at=_square(field, square_text), dir=parse_facing(direction)))
        except ValueError as error:
            raise BadInput(field, f"{wind!r}: {error}; write SQUARE:DIR, e.g. D4:E") from None
    board = Board(
        width=width,
        height=height,
        rocks=tuple(_square(f"board.rocks[{i}]", r) for i, r in enumerate(body.rocks)),
        winds=tuple(winds),
        whirlpools=tuple(_square(f"board.whirlpools[{i}]", p) for i, p in enumerate(body.whirlpools)),
    )
    validate_board(board)  # its fields are named board.rocks[0] and so on already
    return board
