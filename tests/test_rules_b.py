"""Rules B1-B7: the board, its features and their validation."""

from __future__ import annotations

import msgspec
import pytest

from mortecouille.core.blockade.rounds import BlockadeShip, resolve_round
from mortecouille.core.board.geometry import FACINGS, distance, parse_facing, parse_square, square_name
from mortecouille.core.board.movement import Move, resolve_moves, wind_phase_moves
from mortecouille.core.board.movement_step import Piece
from mortecouille.core.board.terrain import BoardArea, board_index, validate_board
from mortecouille.core.errors import BadInput
from mortecouille.events.board import Board, WindTile


def test_B1_grid_origin_is_south_west_and_y_grows_north() -> None:
    assert square_name((0, 0)) == "A1"
    assert parse_square("C5") == (2, 4)
    index = board_index(Board(3, 2))
    assert index.on_board((2, 1))
    assert not index.on_board((3, 0))
    assert not index.on_board((0, 2))
    # forward to the north increases y
    result = resolve_moves(Board(3, 2), {"A": Piece("A", (0, 0), "N", 0)}, {})
    assert result.pieces["A"].at == (0, 0)
    moved = resolve_moves(
        Board(3, 2),
        {"A": Piece("A", (0, 0), "N", 0)},
        {"A": Move.forward(Piece("A", (0, 0), "N", 0))},
    )
    assert moved.pieces["A"].at == (0, 1)


def test_B1_board_smaller_than_one_square_is_refused() -> None:
    with pytest.raises(BadInput) as err:
        validate_board(Board(0, 5))
    assert err.value.field == "board.width"
    assert "B1" in err.value.message


def test_B2_blockade_ships_face_only_north_east_south_west() -> None:
    ships = {"A": BlockadeShip("A", "sloop", (1, 1), "NE")}
    with pytest.raises(BadInput) as err:
        resolve_round(Board(5, 5), ships, {})
    assert err.value.field == "ships.A.facing"


def test_B2_a_typed_facing_is_read_in_any_case_and_in_french() -> None:
    assert [parse_facing(f.lower()) for f in FACINGS] == list(FACINGS)
    french = ("N", "NE", "E", "SE", "S", "SO", "O", "NO")  # the French text's letters, in FACINGS' order
    assert [parse_facing(f) for f in french] == list(FACINGS)
    for wrong in ("", "NNE", "OE", "north"):
        with pytest.raises(ValueError, match="is not one of N, NE"):
            parse_facing(wrong)


def test_B3_distance_is_king_steps() -> None:
    assert distance((0, 0), (3, 1)) == 3
    assert distance((2, 2), (0, 5)) == 3


def test_B4_rocks_block_movement() -> None:
    board = Board(5, 5, rocks=((2, 3),))
    piece = Piece("A", (2, 2), "N", 2)
    result = resolve_moves(board, {"A": piece}, {"A": Move.forward(piece)})
    assert result.pieces["A"].at == (2, 2)
    assert [(c.rule, c.rock) for c in result.collisions] == [("M6", (2, 3))]


def test_B1_B4_one_bounds_check_for_the_grid_and_the_index() -> None:
    area = BoardArea(3, 2)
    inside = [(0, 0), (2, 0), (0, 1), (2, 1)]
    outside = [(-1, 0), (3, 0), (0, -1), (0, 2), (3, 2), (-1, -1)]
    assert all(area.on_board(square) for square in inside)
    assert not any(area.on_board(square) for square in outside)
    index = board_index(Board(3, 2, rocks=((1, 1),)))
    assert isinstance(index, BoardArea)
    # B4: the edge acts as rocks, so off the board blocks exactly like a rock.
    assert [index.blocks(square) for square in inside] == [False, False, False, False]
    assert all(index.blocks(square) for square in outside)
    assert index.blocks((1, 1)) and index.on_board((1, 1))


def test_B4_board_edge_acts_as_rock() -> None:
    piece = Piece("A", (4, 4), "E", 0)
    result = resolve_moves(Board(5, 5), {"A": piece}, {"A": Move.forward(piece)})
    assert result.pieces["A"].at == (4, 4)
    assert [(c.rule, c.rock) for c in result.collisions] == [("M6", (5, 4))]


def test_B5_wind_pushes_one_square_and_never_changes_facing() -> None:
    board = Board(5, 5, winds=(WindTile((1, 1), "NE"),))
    pieces = {"A": Piece("A", (1, 1), "W", 0), "B": Piece("B", (3, 3), "S", 0)}
    moves = wind_phase_moves(board, pieces)
    assert list(moves) == ["A"]
    result = resolve_moves(board, pieces, moves)
    assert (result.pieces["A"].at, result.pieces["A"].facing) == ((2, 2), "W")
    assert result.pieces["B"].at == (3, 3)


@pytest.mark.parametrize(
    ("start", "middle", "end"),
    [
        ((2, 2), (2, 3), (3, 3)),  # SW -> NW -> NE
        ((2, 3), (3, 3), (3, 2)),  # NW -> NE -> SE
        ((3, 3), (3, 2), (2, 2)),  # NE -> SE -> SW
        ((3, 2), (2, 2), (2, 3)),  # SE -> SW -> NW
    ],
)
def test_B6_whirlpool_path_depends_on_the_corner_not_the_facing(
    start: tuple[int, int], middle: tuple[int, int], end: tuple[int, int]
) -> None:
    board = Board(6, 6, whirlpools=((2, 2),))
    for facing in ("N", "E", "S", "W"):
        piece = Piece("A", start, facing, 0)
        result = resolve_moves(board, {"A": piece}, wind_phase_moves(board, {"A": piece}))
        assert result.paths["A"] == (start, middle, end)
        assert result.pieces["A"].facing == {"N": "E", "E": "S", "S": "W", "W": "N"}[facing]


def test_B6_four_rounds_in_whirlpool_return_to_start() -> None:
    board = Board(6, 6, whirlpools=((2, 2),))
    ships = {"A": BlockadeShip("A", "war-frigate", (3, 2), "S")}
    seen = []
    for _ in range(4):
        ships = resolve_round(board, ships, {}).ships
        seen.append((ships["A"].at, ships["A"].facing))
    assert seen == [((2, 3), "W"), ((3, 2), "N"), ((2, 3), "E"), ((3, 2), "S")]
    assert ships["A"].damage == 0


def test_B6_whirlpool_ship_is_rotated_even_if_stopped() -> None:
    board = Board(6, 6, rocks=(), whirlpools=((2, 2),))
    pieces = {"A": Piece("A", (2, 2), "N", 0), "S": Piece("S", (2, 3), "E", 2)}
    result = resolve_moves(board, pieces, wind_phase_moves(board, {"A": pieces["A"]}))
    assert (result.pieces["A"].at, result.pieces["A"].facing) == ((2, 2), "E")


@pytest.mark.parametrize(
    ("board", "field"),
    [
        (Board(6, 6, rocks=((1, 1),), winds=(WindTile((1, 1), "N"),)), "board.winds[0].at"),
        (Board(6, 6, rocks=((3, 3),), whirlpools=((2, 2),)), "board.whirlpools[0]"),
        (Board(6, 6, winds=(WindTile((2, 3), "E"),), whirlpools=((2, 2),)), "board.whirlpools[0]"),
        (Board(6, 6, whirlpools=((1, 1), (2, 2))), "board.whirlpools[1]"),
        (Board(6, 6, rocks=((1, 1), (1, 1))), "board.rocks[1]"),
    ],
)
def test_B7_one_feature_per_square(board: Board, field: str) -> None:
    with pytest.raises(BadInput) as err:
        validate_board(board)
    assert err.value.field == field
    assert "B7" in err.value.message


@pytest.mark.parametrize(
    ("board", "field", "rule"),
    [
        (Board(6, 6, rocks=((6, 0),)), "board.rocks[0]", "B4"),
        (Board(6, 6, winds=(WindTile((0, -1), "N"),)), "board.winds[0].at", "B5"),
        (Board(6, 6, winds=(WindTile((0, 1), "UP"),)), "board.winds[0].dir", "B5"),
        (Board(6, 6, whirlpools=((5, 5),)), "board.whirlpools[0]", "B6"),
    ],
)
def test_B7_features_off_the_board_or_malformed_are_refused(board: Board, field: str, rule: str) -> None:
    with pytest.raises(BadInput) as err:
        validate_board(board)
    assert err.value.field == field
    assert rule in err.value.message


def test_B7_board_round_trips_through_json_and_stays_hashable() -> None:
    board = Board(6, 6, rocks=((0, 0),), winds=(WindTile((1, 1), "E"),), whirlpools=((2, 2),))
    decoded = msgspec.json.decode(msgspec.json.encode(board), type=Board)
    assert decoded == board
    assert hash(decoded) == hash(board)
    validate_board(decoded)
