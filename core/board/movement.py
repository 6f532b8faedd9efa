"""Simultaneous two-step movement of a whole fleet (rules M0-M8, B5, B6).

A ship's intended move (``Move``) becomes at most two unit-step claims. Step 1 is
resolved for every moving ship at once, then step 2 for the turners that did not
stop entirely, then every ship takes its final facing (M2f). That order is
:func:`play_two_steps`, the one definition every ruleset uses: a ruleset that must
act between the steps (mortecouille sinks ships after step 1) passes it an
:class:`AfterStep`. One step is ``mortecouille.core.board.movement_step.resolve_step``.
:func:`resolve_moves`, which acts on nothing between the steps, walks the same order its own
quicker way (``_two_plain_steps``), checked against :func:`play_two_steps` by the property tests.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Mapping
from typing import Final, NamedTuple, Protocol

import msgspec

from mortecouille.core.board.geometry import FACING_VECTORS, Square, rotate
from mortecouille.core.board.movement_step import (
    Claim,
    Collision,
    Piece,
    Push,
    StepResult,
    collision_sort_key,
    resolve_step,
)
from mortecouille.core.board.terrain import WhirlpoolPath, board_index
from mortecouille.core.errors import BadInput
from mortecouille.events.board import Board

_TURN_SIDES: Final[dict[str, int]] = {"left": -2, "right": 2}


def _check_facing(piece: Piece) -> None:
    if piece.facing not in FACING_VECTORS:
        raise BadInput(f"pieces.{piece.id}.facing", "{facing!r} is not a facing (B2)", facing=piece.facing)


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
            raise BadInput("side", "{side!r} is neither 'left' nor 'right' (M0)", side=side)
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
            raise BadInput("dir", "{direction!r} is not a facing (B5)", direction=direction)
        f = piece.facing
        return cls("wind", FACING_VECTORS[direction], None, True, f, f, f)

    @classmethod
    def _around(cls, piece: Piece, path: WhirlpoolPath) -> Move:
        """Clockwise to the opposite corner via the adjacent one, turned 90 degrees clockwise;
        acts as a turn and never pushes (B6, M7). The ship has its new facing in step 2."""
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


class TwoSteps(NamedTuple):
    """What :func:`play_two_steps` returns: each step's outcome and the ships in play after both,
    where they stand, each mover with the facing it ends with (M2f)."""

    first: StepResult
    second: StepResult
    pieces: dict[str, Piece]


class AfterStep(Protocol):
    """What a ruleset does right after each step, before the next one is claimed.

    It gets the step's outcome, the pieces as they stood during the step (with the facing each
    had then) and the step's claims. It returns the ships still in play, where they stand now,
    and the ships that entered the square they claimed (only step 1's count: they make step 2).
    """

    def __call__(
        self, result: StepResult, step_pieces: Mapping[str, Piece], claims: Mapping[str, Claim]
    ) -> tuple[Mapping[str, Piece], Collection[str]]: ...


def take_positions(
    result: StepResult, step_pieces: Mapping[str, Piece], claims: Mapping[str, Claim]
) -> tuple[dict[str, Piece], tuple[str, ...]]:
    """The plain :class:`AfterStep`: every ship stays in play where the step left it."""
    after = dict(step_pieces)
    positions = result.positions
    # Only the ships that moved and those pushed changed square; everyone else is carried over.
    # (``_with`` inlined: this runs for every mover of every step.)
    for sid in result.moved:
        piece = step_pieces[sid]
        at = positions[sid]
        if piece.at != at:
            after[sid] = Piece(piece.id, at, piece.facing, piece.size)
    for push in result.pushes:
        after[push.pushed] = _with(step_pieces[push.pushed], push.pushed_to, None)
    return after, result.moved


def play_two_steps(
    board: Board,
    pieces: Mapping[str, Piece],
    moves: Mapping[str, Move],
    after_step: AfterStep = take_positions,
) -> TwoSteps:
    """The order of a simultaneous movement (M1-M6, M2f), for every ruleset.

    Step 1: every mover claims its first square (pushing if its move pushes, M3), with the
    facing it has in step 1. Step 2: the movers still in play that entered their first square
    and have a second one claim it, never pushing, with their step-2 facing. Then every mover
    still in play takes its final facing, even if it stopped (M2f, M7). ``after_step`` runs
    after each step (mortecouille sinks ships and crosses wrecks there); a step 2 nobody
    claims in is not resolved, its outcome leaves every ship where it stands. Ships absent
    from ``moves`` are stationary.
    """
    step1 = _step_pieces(pieces, moves, first=True)
    claims1 = {sid: Claim(move.first, move.pushes) for sid, move in moves.items() if move.first is not None}
    first = resolve_step(board, step1, claims1, 1)
    in_play, entered_first = after_step(first, step1, claims1)
    entered = frozenset(entered_first)  # a hook may return a tuple: keep the lookups below O(1)

    step2 = _step_pieces(in_play, moves, first=False)
    claims2 = {
        sid: Claim(move.second, False)
        for sid, move in moves.items()
        if move.second is not None and sid in entered and sid in in_play
    }
    second = _second_step(board, step2, claims2)
    in_play, _ = after_step(second, step2, claims2)

    final = dict(in_play)
    for sid, move in moves.items():
        piece = final.get(sid)
        if piece is not None and piece.facing != move.facing_after:
            final[sid] = Piece(piece.id, piece.at, move.facing_after, piece.size)
    return TwoSteps(first, second, final)


def _second_step(board: Board, step2: dict[str, Piece], claims2: dict[str, Claim]) -> StepResult:
    if claims2:
        return resolve_step(board, step2, claims2, 2)
    # Sorted by id, as resolve_step sorts its outcome.
    return StepResult(2, {sid: step2[sid].at for sid in sorted(step2)}, (), (), (), ())


def _step_pieces(in_play: Mapping[str, Piece], moves: Mapping[str, Move], *, first: bool) -> dict[str, Piece]:
    """Every ship in play, each mover with the facing it has while this step is resolved (C1)."""
    pieces = dict(in_play)
    get = in_play.get
    # ``_with`` inlined (only a changed facing makes a new piece): this runs for every mover twice a phase
    for sid, move in moves.items():
        piece = get(sid)
        if piece is not None:
            facing = move.facing_first if first else move.facing_second
            if piece.facing != facing:
                pieces[sid] = Piece(piece.id, piece.at, facing, piece.size)
    return pieces


def resolve_moves(
    board: Board,
    pieces: Mapping[str, Piece],
    moves: Mapping[str, Move],
    *,
    placed: bool = False,
) -> MovementResult:
    """Move every ship at once (:func:`play_two_steps`), with every ship's path.

    Ships absent from ``moves`` are stationary (M1-M6). A turner stopped in step 1
    makes no step 2 but still ends with its new facing (M2f, M7). ``placed``: the pieces are
    known to be keyed by their ids and to stand on the board, off the rocks, one a square (ships a
    round checked, or that a movement left: M1-M6 keep them so), which is then not checked again.
    """
    if not placed:
        for sid, piece in pieces.items():
            if piece.id != sid:
                raise BadInput(
                    f"pieces.{sid}.id", "piece keyed {sid!r} has id {piece!r}", sid=sid, piece=piece.id
                )
    # (each move's piece is looked up, and a move of no piece refused, by _two_plain_steps)
    if not moves:
        return _standing_still(board, pieces, placed)
    first, second, after = _two_plain_steps(board, pieces, moves, placed)
    after1, after2 = first.positions, second.positions
    order = sorted(pieces)
    # (the pieces a movement left, and so every later round's, are keyed in id order already; then
    # the ships where both steps left them are that order too, a dict made for this outcome alone)
    final: dict[str, Piece] = after if order == list(after) else {sid: after[sid] for sid in order}
    paths: dict[str, tuple[Square, ...]] = {}
    for sid in order:
        start, mid, end = pieces[sid].at, after1[sid], after2[sid]
        if mid == start:
            paths[sid] = (start,) if end == start else (start, end)
        else:
            paths[sid] = (start, mid) if end == mid else (start, mid, end)
    collisions = sorted(first.collisions + second.collisions, key=collision_sort_key)
    return MovementResult(final, paths, first.pushes + second.pushes, tuple(collisions), (first, second))


def _two_plain_steps(
    board: Board, pieces: Mapping[str, Piece], moves: Mapping[str, Move], placed: bool
) -> TwoSteps:
    """:func:`play_two_steps` with :func:`take_positions` after each step (the same steps, claims and
    pieces, so the same outcome: tests/test_rules_m.py compares them), each mover's pieces and
    claims made in one walk over the moves per step rather than several, and a piece made once per
    change (where it stands and the facing it has next), not once for its square and again for its
    facing: every round of every turn moves the whole fleet this way. A move of no
    piece is refused (BadInput), before any step. Step 2's pieces are where step 1 left them (M1-M6 keep
    them on the board, off the rocks, one a square), so they are not checked again."""
    turned: dict[str, Piece] | None = None  # the pieces, copied once a mover's facing differs
    claims1: dict[str, Claim] = {}
    for sid, move in moves.items():
        try:
            piece = pieces[sid]
        except KeyError:
            raise BadInput(f"moves.{sid}", "no such piece") from None
        if piece.facing != move.facing_first:
            if turned is None:
                turned = dict(pieces)
            turned[sid] = Piece(piece.id, piece.at, move.facing_first, piece.size)
        if move.first is not None:
            claims1[sid] = Claim(move.first, move.pushes)
    step1 = pieces if turned is None else turned
    first = resolve_step(board, step1, claims1, 1, placed=placed)

    # step 2: every ship where step 1 left it, every mover with its step-2 facing; the movers that
    # entered their first square claim their second
    step2 = _left_by(first, step1, moves, _FACING_SECOND)
    entered = frozenset(first.moved)
    claims2 = {
        sid: Claim(move.second, False)
        for sid, move in moves.items()
        if move.second is not None and sid in entered
    }
    second = (
        resolve_step(board, step2, claims2, 2, placed=True, positions=first.positions)
        if claims2
        else StepResult(2, {sid: step2[sid].at for sid in sorted(step2)}, (), (), (), ())
    )
    # after both: where step 2 left each ship, every mover with the facing it ends with (M2f)
    return TwoSteps(first, second, _left_by(second, step2, moves, _FACING_AFTER))


_FACING_SECOND: Final = operator.attrgetter("facing_second")
_FACING_AFTER: Final = operator.attrgetter("facing_after")


def _left_by(
    step: StepResult, pieces: Mapping[str, Piece], moves: Mapping[str, Move], facing: Callable[[Move], str]
) -> dict[str, Piece]:
    """``pieces`` where ``step`` left them: each ship it pushed where it was pushed to, each mover
    where it stands with the facing ``facing`` gives it next (a piece made once per change)."""
    left = dict(pieces)
    for push in step.pushes:
        pushed = pieces[push.pushed]
        left[push.pushed] = Piece(pushed.id, push.pushed_to, pushed.facing, pushed.size)
    positions = step.positions
    for sid, move in moves.items():
        piece = left[sid]
        at = positions[sid]
        turned = facing(move)
        if piece.at != at or piece.facing != turned:
            left[sid] = Piece(piece.id, at, turned, piece.size)
    return left


def _standing_still(board: Board, pieces: Mapping[str, Piece], placed: bool) -> MovementResult:
    """:func:`resolve_moves` when nobody moves (a wind phase with no ship on a wind tile or a
    whirlpool, B5-B6): what :func:`play_two_steps` gives then, without its copies of the fleet.
    Step 1 is still resolved, with no claim: it checks the pieces (B4, unless ``placed``) and lists
    where each stands."""
    first = resolve_step(board, pieces, {}, 1, placed=placed)
    second = StepResult(2, dict(first.positions), (), (), (), ())
    final = {sid: pieces[sid] for sid in first.positions}  # sorted by id, as resolve_step sorts
    paths: dict[str, tuple[Square, ...]] = {sid: (at,) for sid, at in first.positions.items()}
    return MovementResult(final, paths, (), (), (first, second))


def left_standing(moved: MovementResult) -> MovementResult:
    """What :func:`resolve_moves` gives, with no move, for the ships ``moved`` left: the outcome of a
    phase in which nobody moves right after a movement (a wind phase with no ship on a wind tile
    or a whirlpool, B5-B6), without checking its pieces again, which that movement left on the
    board, off the rocks and one a square (M1-M6 keep them so). ``moved.pieces`` is keyed in id
    order, as every movement's outcome is, and stand where its step 2's positions say."""
    # Where ``moved``'s step 2 left the ships is where they stand: both steps' positions, and the
    # pieces, are the dicts ``moved`` holds (never changed: a movement's outcome is a value), not
    # copies of the fleet made again for a phase in which nothing happens.
    positions = moved.steps[1].positions
    first = StepResult(1, positions, (), (), (), ())
    second = StepResult(2, positions, (), (), (), ())
    paths: dict[str, tuple[Square, ...]] = {sid: (at,) for sid, at in positions.items()}
    return MovementResult(moved.pieces, paths, (), (), (first, second))


def wind_phase_moves(board: Board, pieces: Mapping[str, Piece]) -> dict[str, Move]:
    """The M7 moves of the pieces standing on a wind tile (B5) or a whirlpool square (B6)."""
    index = board_index(board)
    moves: dict[str, Move] = {}
    if not index.winds and not index.whirlpool_paths:
        return moves  # nothing on the board moves a ship (the common case)
    for sid in sorted(pieces):
        piece = pieces[sid]
        direction = index.winds.get(piece.at)
        if direction is not None:
            moves[sid] = Move.wind_push(piece, direction)
        elif piece.at in index.whirlpool_paths:
            _check_facing(piece)
            moves[sid] = Move._around(piece, index.whirlpool_paths[piece.at])
    return moves
