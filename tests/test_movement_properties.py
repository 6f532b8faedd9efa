"""Property tests of the movement engine (M rules): order independence and board invariants."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from mortecouille.core.board.geometry import FACINGS
from mortecouille.core.board.movement import (
    Move,
    MovementResult,
    play_two_steps,
    resolve_moves,
    take_positions,
    wind_phase_moves,
)
from mortecouille.core.board.movement_step import Piece
from mortecouille.core.board.terrain import board_index
from mortecouille.events.board import Board, WindTile

MOVE_KINDS = ("F", "F", "F", "L", "R", "sail+1", "sail-1", "sail+4", "rot+2", "none")


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Board, dict[str, Piece], dict[str, Move]]:
    width = draw(st.integers(3, 7))
    height = draw(st.integers(3, 7))
    squares = [(x, y) for x in range(width) for y in range(height)]
    taken: set[tuple[int, int]] = set()
    whirlpools: list[tuple[int, int]] = []
    for _ in range(draw(st.integers(0, 2))):
        x, y = draw(st.integers(0, width - 2)), draw(st.integers(0, height - 2))
        block = {(x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1)}
        if not block & taken:
            taken |= block
            whirlpools.append((x, y))
    free = [s for s in squares if s not in taken]
    rocks = draw(st.lists(st.sampled_from(free), max_size=len(free) // 8, unique=True))
    taken |= set(rocks)
    free = [s for s in squares if s not in taken]
    wind_squares = draw(st.lists(st.sampled_from(free), max_size=len(free) // 3, unique=True))
    winds = tuple(WindTile(s, draw(st.sampled_from(FACINGS))) for s in wind_squares)
    board = Board(width, height, tuple(rocks), winds, tuple(whirlpools))
    open_squares = [s for s in squares if s not in set(rocks)]
    # dense fleets: collisions are what these tests are about
    count = draw(st.integers(min(4, len(open_squares)), min(12, len(open_squares))))
    at = draw(st.lists(st.sampled_from(open_squares), min_size=count, max_size=count, unique=True))
    pieces: dict[str, Piece] = {}
    moves: dict[str, Move] = {}
    for i, square in enumerate(at):
        sid = f"s{i:02d}"
        piece = Piece(sid, square, draw(st.sampled_from(FACINGS)), draw(st.integers(0, 2)))
        pieces[sid] = piece
        kind = draw(st.sampled_from(MOVE_KINDS))
        move = _move(piece, kind)
        if move is not None:
            moves[sid] = move
    return board, pieces, moves


def _move(piece: Piece, kind: str) -> Move | None:
    if kind == "F":
        return Move.forward(piece)
    if kind in ("L", "R"):
        return Move.turn(piece, "left" if kind == "L" else "right")
    if kind.startswith("sail"):
        return Move.sail_then_rotate(piece, int(kind[4:]))
    if kind.startswith("rot"):
        return Move.rotate_in_place(piece, int(kind[3:]))
    return None


def _round(board: Board, pieces: dict[str, Piece], moves: dict[str, Move]) -> list[MovementResult]:
    moved = resolve_moves(board, pieces, moves)
    blown = resolve_moves(board, moved.pieces, wind_phase_moves(board, moved.pieces))
    return [moved, blown]


def _encoded(results: list[MovementResult]) -> bytes:
    return msgspec.json.encode(results)


@settings(max_examples=200, deadline=None)
@given(scenarios(), st.randoms(use_true_random=False))
def test_outcome_is_identical_for_every_listing_order(
    scenario: tuple[Board, dict[str, Piece], dict[str, Move]], rnd: Any
) -> None:
    board, pieces, moves = scenario
    expected = _encoded(_round(board, pieces, moves))
    for _ in range(3):
        piece_keys = list(pieces)
        rnd.shuffle(piece_keys)
        move_keys = list(moves)
        rnd.shuffle(move_keys)
        shuffled_pieces = {k: pieces[k] for k in piece_keys}
        shuffled_moves = {k: moves[k] for k in move_keys}
        assert _encoded(_round(board, shuffled_pieces, shuffled_moves)) == expected


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_never_two_ships_on_one_square_nor_on_rocks_or_off_board(
    scenario: tuple[Board, dict[str, Piece], dict[str, Move]],
) -> None:
    board, pieces, moves = scenario
    index = board_index(board)
    for result in _round(board, pieces, moves):
        snapshots = [step.positions for step in result.steps]
        snapshots.append({sid: p.at for sid, p in result.pieces.items()})
        for positions in snapshots:
            squares = list(positions.values())
            assert len(set(squares)) == len(squares), positions
            assert not any(index.blocks(s) for s in squares), positions
        # every ship-ship collision is a pair; a rock collision names one ship and its rock
        for c in result.collisions:
            assert (len(c.ships) == 1) == (c.rock is not None)
            assert len(c.contacts) == len(c.ships)
            assert list(c.ships) == sorted(c.ships)
        # moves are one king step each: a path never jumps
        for path in result.paths.values():
            for a, b in zip(path, path[1:], strict=False):
                assert max(abs(a[0] - b[0]), abs(a[1] - b[1])) == 1


@settings(max_examples=100, deadline=None)
@given(scenarios())
def test_each_pair_collides_at_most_once_per_step(
    scenario: tuple[Board, dict[str, Piece], dict[str, Move]],
) -> None:
    board, pieces, moves = scenario
    for result in _round(board, pieces, moves):
        keys = [(c.step, c.ships) for c in result.collisions]
        assert len(keys) == len(set(keys))


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_a_movement_is_the_two_steps_of_the_plain_hook_whether_its_pieces_are_checked_or_not(
    scenario: tuple[Board, dict[str, Piece], dict[str, Move]],
) -> None:
    # resolve_moves walks the two steps its own way (each piece made once per change, step 2's
    # pieces not checked again, none at all when ``placed``): the order every ruleset shares
    # (play_two_steps with take_positions after each step) gives the same steps and pieces, and
    # the same paths as the steps give
    board, pieces, moves = scenario
    for phase_pieces, phase_moves in ((pieces, moves), (None, None)):
        if phase_pieces is None:  # the wind phase, from where the moves left the ships
            phase_pieces = resolve_moves(board, pieces, moves).pieces
            phase_moves = wind_phase_moves(board, phase_pieces)
        assert phase_moves is not None
        shared = play_two_steps(board, phase_pieces, phase_moves, take_positions)
        for placed in (False, True):
            result = resolve_moves(board, phase_pieces, phase_moves, placed=placed)
            if phase_moves:
                assert result.steps == (shared.first, shared.second)
                assert result.pieces == shared.pieces
            assert list(result.pieces) == sorted(phase_pieces)
            for sid, path in result.paths.items():
                squares = (phase_pieces[sid].at, *(step.positions[sid] for step in result.steps))
                assert path == tuple(
                    square for i, square in enumerate(squares) if i == 0 or square != squares[i - 1]
                )
