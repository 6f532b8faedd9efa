"""Simultaneous two-step movement of a whole fleet (rules M0-M8, B5, B6).

A ship's intended move (``Move``) becomes at most two unit-step claims. Step 1 is
resolved for every moving ship at once, then step 2 for the turners that did not
stop entirely, then every ship takes its final facing (M2f). The step engine is
``mortecouille.core.board.movement_step.resolve_step``; it is public so a ruleset that must act
between the steps (mortecouille sinks ships after step 1) can drive the steps
itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import msgspec

from mortecouille.core.board.geometry import FACING_VECTORS, Square, rotate
from mortecouille.core.board.movement_step import (
    Claim,
    Collision,
    Contact,
    Piece,
    Push,
    StepResult,
    collision_sort_key,
    resolve_step,
)
from mortecouille.core.board.terrain import Board, WhirlpoolPath, board_index
from mortecouille.core.errors import BadInput

__all__ = [
    "Claim",
    "Collision",
    "Contact",
    "Move",
    "MovementResult",
    "Piece",
    "Push",
    "StepResult",
    "resolve_moves",
    "resolve_step",
    "wind_phase_moves",
]

_TURN_SIDES: Final[dict[str, int]] = {"left": -2, "right": 2}


def _check_facing(piece: Piece) -> None:
    if piece.facing not in FACING_VECTORS:
        raise BadInput(f"pieces.{piece.id}.facing", f"{piece.facing!r} is not a facing (B2)")


class Move(msgspec.Struct, frozen=True, gc=False):
    """One ship's intended move: up to two unit steps, whether it pushes, and its facings.

    ``first``/``second`` are the step vectors (``None``: no claim in that step).
    ``facing_first``/``facing_second`` are the facings the ship has while step 1 and
    step 2 are resolved (C1 reads them: a quarter-turner already has its new facing
    in step 2), ``facing_after`` the facing it ends with, even if stopped (M2f).
    Build moves with the class methods, which cite the rule each one follows.
    """

    kind: str
    first: tuple[int, int] | None
    second: tuple[int, int] | None
    pushes: bool
    facing_first: str
    facing_second: str
    facing_after: str

    @classmethod
    def forward(cls, piece: Piece) -> Move:
        """One square ahead; pushes a stationary ship it bumps (M0, M3)."""
        _check_facing(piece)
        f = piece.facing
        return cls("forward", FACING_VECTORS[f], None, True, f, f, f)

    @classmethod
    def turn(cls, piece: Piece, side: str) -> Move:
        """Quarter turn while sailing: ahead, then beside on the turning side (M0).

        Never pushes (M3)."""
        _check_facing(piece)
        if side not in _TURN_SIDES:
            raise BadInput("side", f"{side!r} is neither 'left' nor 'right' (M0)")
        new = rotate(piece.facing, _TURN_SIDES[side])
        return cls("turn", FACING_VECTORS[piece.facing], FACING_VECTORS[new], False, piece.facing, new, new)

    @classmethod
    def sail_then_rotate(cls, piece: Piece, eighths: int) -> Move:
        """Mortecouille eighth or half turn while sailing: one square ahead, then the
        rotation (``eighths`` signed, clockwise positive); never pushes (M0, N)."""
        _check_facing(piece)
        new = rotate(piece.facing, eighths)
        return cls("sail-rotate", FACING_VECTORS[piece.facing], None, False, piece.facing, new, new)

    @classmethod
    def rotate_in_place(cls, piece: Piece, eighths: int) -> Move:
        """Turn at rest: claims no square, so the ship is stationary for the M rules (M0, N).
        It turns at once, so it already has its new facing in both steps."""
        _check_facing(piece)
        new = rotate(piece.facing, eighths)
        return cls("rotate", None, None, False, new, new, new)

    @classmethod
    def wind_push(cls, piece: Piece, direction: str) -> Move:
        """Pushed one square by a wind tile; acts as a forward move, facing unchanged (B5, M7)."""
        _check_facing(piece)
        if direction not in FACING_VECTORS:
            raise BadInput("dir", f"{direction!r} is not a facing (B5)")
        f = piece.facing
        return cls("wind", FACING_VECTORS[direction], None, True, f, f, f)

    @classmethod
    def whirlpool(cls, piece: Piece, board: Board) -> Move:
        """Clockwise to the opposite corner via the adjacent one, turned 90 degrees clockwise;
        acts as a turn and never pushes (B6, M7). The ship has its new facing in step 2."""
        _check_facing(piece)
        path = board_index(board).whirlpool_paths.get(piece.at)
        if path is None:
            raise BadInput(f"pieces.{piece.id}.at", f"{piece.at} is not a whirlpool square (B6)")
        return cls._around(piece, path)

    @classmethod
    def _around(cls, piece: Piece, path: WhirlpoolPath) -> Move:
        new = rotate(piece.facing, 2)
        return cls("whirlpool", path.first, path.second, False, piece.facing, new, new)


class MovementResult(msgspec.Struct, frozen=True):
    """Outcome of one simultaneous movement (both steps), everything keyed or sorted by id.

    ``paths`` gives every ship's squares in order: start, then each square entered
    (by its own move or a push). ``collisions`` are sorted by step, ships, rule.
    """

    pieces: dict[str, Piece]
    paths: dict[str, tuple[tuple[int, int], ...]]
    pushes: tuple[Push, ...]
    collisions: tuple[Collision, ...]
    steps: tuple[StepResult, StepResult]


def _with(piece: Piece, at: Square, facing: str | None) -> Piece:
    """``piece`` moved to ``at`` and turned to ``facing`` (``None``: unchanged), reused if same."""
    if facing is None:
        facing = piece.facing
    if piece.at == at and piece.facing == facing:
        return piece
    return Piece(piece.id, at, facing, piece.size)


def resolve_moves(
    board: Board,
    pieces: Mapping[str, Piece],
    moves: Mapping[str, Move],
) -> MovementResult:
    """Move every ship at once: step 1, step 2 for turners that did not stop, final facings.

    Ships absent from ``moves`` are stationary (M1-M6). A turner stopped in step 1
    makes no step 2 but still ends with its new facing (M2f, M7).
    """
    for sid, piece in pieces.items():
        if piece.id != sid:
            raise BadInput(f"pieces.{sid}.id", f"piece keyed {sid!r} has id {piece.id!r}")
    for sid in moves:
        if sid not in pieces:
            raise BadInput(f"moves.{sid}", "no such piece")

    # Only movers and pushed ships change; everyone else is carried over untouched.
    step1_pieces: dict[str, Piece] = dict(pieces)
    claims1: dict[str, Claim] = {}
    for sid, move in moves.items():
        piece = pieces[sid]
        if move.facing_first != piece.facing:
            step1_pieces[sid] = Piece(sid, piece.at, move.facing_first, piece.size)
        if move.first is not None:
            claims1[sid] = Claim(move.first, move.pushes)
    first = resolve_step(board, step1_pieces, claims1, 1)

    after1 = first.positions
    step2_pieces: dict[str, Piece] = dict(step1_pieces)
    for push in first.pushes:
        step2_pieces[push.pushed] = _with(step1_pieces[push.pushed], push.pushed_to, None)
    claims2: dict[str, Claim] = {}
    for sid, move in moves.items():
        step2_pieces[sid] = _with(step1_pieces[sid], after1[sid], move.facing_second)
    for sid in first.moved:
        second_vector = moves[sid].second
        if second_vector is not None:
            claims2[sid] = Claim(second_vector, False)
    if claims2:
        second = resolve_step(board, step2_pieces, claims2, 2)
    else:
        second = StepResult(2, after1, (), (), (), ())

    after2 = second.positions
    final: dict[str, Piece] = {}
    paths: dict[str, tuple[Square, ...]] = {}
    for sid in sorted(pieces):
        piece = pieces[sid]
        start, mid, end = piece.at, after1[sid], after2[sid]
        intended = moves.get(sid)
        final[sid] = _with(piece, end, None if intended is None else intended.facing_after)
        if mid == start:
            paths[sid] = (start,) if end == start else (start, end)
        else:
            paths[sid] = (start, mid) if end == mid else (start, mid, end)
    collisions = sorted(first.collisions + second.collisions, key=collision_sort_key)
    return MovementResult(final, paths, first.pushes + second.pushes, tuple(collisions), (first, second))


def wind_phase_moves(board: Board, pieces: Mapping[str, Piece]) -> dict[str, Move]:
    """The M7 moves of the pieces standing on a wind tile (B5) or a whirlpool square (B6)."""
    index = board_index(board)
    moves: dict[str, Move] = {}
    for sid in sorted(pieces):
        piece = pieces[sid]
        direction = index.winds.get(piece.at)
        if direction is not None:
            moves[sid] = Move.wind_push(piece, direction)
        elif piece.at in index.whirlpool_paths:
            _check_facing(piece)
            moves[sid] = Move._around(piece, index.whirlpool_paths[piece.at])
    return moves
