"""The ``blockade`` ruleset: ship table and one round's pure resolution (rules P1-P3, M8).

A round (P1) is the movement of every token (M0-M6, M2f), then the wind phase
(M7, B5, B6) with its own two steps, then ram damage (P2), rock damage (P3) and
the sinking check at the end of the round (P3). Ships that sank in an earlier
round are carried along untouched: they neither move nor block.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import msgspec

from mortecouille.core.board.geometry import ORTHOGONAL_FACINGS
from mortecouille.core.board.movement import (
    Move,
    MovementResult,
    left_standing,
    resolve_moves,
    wind_phase_moves,
)
from mortecouille.core.board.movement_step import Collision, Piece
from mortecouille.core.board.terrain import board_index
from mortecouille.core.errors import BadInput
from mortecouille.core.phases import MOVE, WIND
from mortecouille.events.board import Board
from mortecouille.events.movement import Contact

#: Class names by size rank (M8): small < medium < large.
SIZE_CLASSES: Final[tuple[str, ...]] = ("small", "medium", "large")


class BlockadeKind(msgspec.Struct, frozen=True):
    """One ship type: class rank (M8), ram value (P2), rock damage and maximum damage (P3),
    all damage in small-shot equivalents."""

    name: str
    size: int
    ram: float
    rock: float
    max_damage: float


#: The 13 blockade ship types (P2, P3, M8); class ranks follow the source table (M8 ruling).
BLOCKADE_KINDS: Final[dict[str, BlockadeKind]] = {
    "sloop": BlockadeKind("Sloop", 0, 0.5, 0.5, 10.0),
    "cutter": BlockadeKind("Cutter", 0, 0.5, 0.61, 12.0),
    "dhow": BlockadeKind("Dhow", 0, 0.5, 0.5, 12.0),
    "fanchuan": BlockadeKind("Fanchuan", 0, 0.5, 0.656, 13.125),
    "longship": BlockadeKind("Longship", 1, 0.5, 0.75, 15.0),
    "baghlah": BlockadeKind("Baghlah", 1, 1.0, 1.0, 20.0),
    "merchant-brig": BlockadeKind("Merchant brig", 1, 1.0, 1.0, 20.0),
    "junk": BlockadeKind("Junk", 1, 1.5, 1.25, 25.0),
    "war-brig": BlockadeKind("War brig", 1, 2.0, 1.25, 25.0),
    "merchant-galleon": BlockadeKind("Merchant galleon", 2, 2.5, 1.5, 30.0),
    "xebec": BlockadeKind("Xebec", 2, 2.5, 1.75, 35.0),
    "war-frigate": BlockadeKind("War frigate", 2, 3.0, 2.5, 50.0),
    "grand-frigate": BlockadeKind("Grand frigate", 2, 4.0, 3.0, 60.0),
}

#: Each kind's maximum damage (P3), looked up for every ship at the end of every round.
_MAX_DAMAGE: Final[dict[str, float]] = {kind: k.max_damage for kind, k in BLOCKADE_KINDS.items()}

#: The movement tokens of P1; ``None`` is no token.
TOKENS: Final[tuple[str, ...]] = ("F", "L", "R")
#: P1: a blockade turn plays this many rounds, one token each.
ROUNDS_PER_TURN: Final = 4

PHASES: Final[tuple[str, ...]] = (MOVE.id, WIND.id)


class BlockadeShip(msgspec.Struct, frozen=True, gc=False):
    """A blockade ship: its kind id, square, facing (N/E/S/W, B2) and damage so far."""

    id: str
    kind: str
    at: tuple[int, int]
    facing: str
    damage: float = 0.0
    sunk: bool = False


class PhaseMovement(msgspec.Struct, frozen=True):
    """The full movement result of one phase of the round."""

    phase: str
    rules: tuple[str, ...]
    result: MovementResult


class ShipPath(msgspec.Struct, frozen=True, gc=False):
    """The squares a ship that moved, tried to or was pushed went through in one phase."""

    phase: str
    ship: str
    squares: tuple[tuple[int, int], ...]
    facing: str
    rules: tuple[str, ...]


class PhasePush(msgspec.Struct, frozen=True, gc=False):
    phase: str
    step: int
    pusher: str
    pushed: str
    pushed_from: tuple[int, int]
    pushed_to: tuple[int, int]
    rules: tuple[str, ...]


class PhaseCollision(msgspec.Struct, frozen=True, gc=False):
    """A collision tagged with its phase; ``rule`` is the deciding M case (see movement_step)."""

    phase: str
    step: int
    rule: str
    ships: tuple[str, ...]
    square: tuple[int, int]
    rock: tuple[int, int] | None
    contacts: tuple[Contact, ...]
    rules: tuple[str, ...]


class DamageEntry(msgspec.Struct, frozen=True, gc=False):
    """Damage one ship takes from one collision: the other's ram (P2) or its own rock value (P3)."""

    ship: str
    amount: float
    cause: str
    other: str | None
    rock: tuple[int, int] | None
    phase: str
    step: int
    rules: tuple[str, ...]


class Sinking(msgspec.Struct, frozen=True, gc=False):
    """A ship whose damage reached its maximum at the end of the round (P3)."""

    ship: str
    at: tuple[int, int]
    damage: float
    max_damage: float
    rules: tuple[str, ...] = ("P3",)


class RoundOutcome(msgspec.Struct, frozen=True):
    """Everything one round produced, in a deterministic order (phase, step, ships)."""

    phases: tuple[PhaseMovement, PhaseMovement]
    paths: tuple[ShipPath, ...]
    pushes: tuple[PhasePush, ...]
    collisions: tuple[PhaseCollision, ...]
    damage: tuple[DamageEntry, ...]
    sinkings: tuple[Sinking, ...]
    ships: dict[str, BlockadeShip]


def _validate(board: Board, ships: Mapping[str, BlockadeShip], tokens: Mapping[str, str | None]) -> None:
    _validate_ships(board, ships)
    _validate_tokens(ships, tokens)


def _validate_ships(board: Board, ships: Mapping[str, BlockadeShip]) -> None:
    index = board_index(board)
    # (``index.blocks`` inlined, its bounds check included: every turn checks every ship)
    width, height, rocks = index.width, index.height, index.rocks
    held: dict[tuple[int, int], str] = {}
    # (each field's name is spelled only when it is refused: every turn checks every ship)
    for sid, ship in ships.items():
        if ship.id != sid:
            raise BadInput(f"ships.{sid}.id", "ship keyed {sid!r} has id {ship!r}", sid=sid, ship=ship.id)
        if ship.kind not in BLOCKADE_KINDS:
            raise BadInput(f"ships.{sid}.kind", "unknown blockade ship kind {kind!r} (P2)", kind=ship.kind)
        if ship.facing not in ORTHOGONAL_FACINGS:
            raise BadInput(
                f"ships.{sid}.facing", "{facing!r}: blockade ships face N, E, S or W (B2)", facing=ship.facing
            )
        if not ship.damage >= 0:
            raise BadInput(f"ships.{sid}.damage", "{damage!r} is not a damage (P2, P3)", damage=ship.damage)
        if ship.sunk:
            continue
        at = ship.at
        if not (0 <= at[0] < width and 0 <= at[1] < height) or at in rocks:
            raise BadInput(f"ships.{sid}.at", "{at} is a rock or off the board (B4)", at=at)
        holder = held.setdefault(at, sid)
        if holder != sid:
            raise BadInput(f"ships.{sid}.at", "{at} already holds {holder}", at=at, holder=holder)


def _validate_tokens(ships: Mapping[str, BlockadeShip], tokens: Mapping[str, str | None]) -> None:
    for sid, token in tokens.items():
        if sid not in ships:
            raise BadInput(f"tokens.{sid}", "no such ship")
        if token is not None and token not in TOKENS:
            raise BadInput(f"tokens.{sid}", "{token!r} is not F, L, R or none (P1)", token=token)


#: The move of each (facing, token) pair: a blockade move depends on nothing else, and a round
#: builds one per ship (M0); frozen Structs, so one instance serves every ship that asks.
_MOVES: dict[tuple[str, str], Move] = {}


def _move_for(piece: Piece, token: str) -> Move:
    key = (piece.facing, token)
    move = _MOVES.get(key)
    if move is None:
        move = Move.forward(piece) if token == "F" else Move.turn(piece, "left" if token == "L" else "right")
        _MOVES[key] = move
    return move


def _phase_items(
    phase: str,
    result: MovementResult,
    moves: Mapping[str, Move],
    ships: Mapping[str, BlockadeShip],
) -> tuple[list[ShipPath], list[PhasePush], list[PhaseCollision], list[DamageEntry]]:
    """One phase's paths, pushes, collisions and the damage each collision does (``ships``: the
    ships afloat, whose kinds give the ram and rock values, P2, P3)."""
    lead: tuple[str, ...] = ("P1",) if phase == MOVE.id else ("P1", "M7")
    pushed = {push.pushed for push in result.pushes}
    paths: list[ShipPath] = []
    result_paths, result_pieces = result.paths, result.pieces
    # Only the ships that moved or were pushed have a path to log; walked in id order, as
    # ``result.paths`` is keyed (a round moves a few dozen of possibly many more ships).
    for sid in sorted(moves.keys() | pushed) if pushed else sorted(moves):  # movers, ships pushed
        move = moves.get(sid)
        was_pushed = sid in pushed
        key: tuple[str, str | None, bool, bool] = (
            (phase, None, False, was_pushed)
            if move is None
            else (phase, move.kind, move.second is not None, was_pushed)
        )
        rules = _PATH_RULES.get(key)
        if rules is None:
            rules = _PATH_RULES[key] = _path_rules(lead, move, was_pushed)
        paths.append(ShipPath(phase, sid, result_paths[sid], result_pieces[sid].facing, rules))
    pushes = [
        PhasePush(phase, p.step, p.pusher, p.pushed, p.pushed_from, p.pushed_to, (*lead, p.rule))
        for p in result.pushes
    ]
    collisions: list[PhaseCollision] = []
    damage: list[DamageEntry] = []
    for c in result.collisions:
        collisions.append(_tag(phase, c, (*lead, c.rule)))
        if c.rock is not None:
            sid = c.ships[0]
            rock = BLOCKADE_KINDS[ships[sid].kind].rock
            damage.append(DamageEntry(sid, rock, "rock", None, c.rock, phase, c.step, ("P3", c.rule)))
            continue
        a, b = c.ships
        for ship, other in ((a, b), (b, a)):
            damage.append(
                DamageEntry(
                    ship,
                    BLOCKADE_KINDS[ships[other].kind].ram,
                    "collision",
                    other,
                    None,
                    phase,
                    c.step,
                    ("P2", c.rule),
                )
            )
    return paths, pushes, collisions, damage


#: the rule a move follows besides M0 when it is not a sailed one (B5, B6)
_MOVE_RULE: Final[dict[str, str]] = {"wind": "B5", "whirlpool": "B6"}
#: the rules of a ship's path by (phase, whose lead rules it cites, move kind, whether it has a
#: second step, whether it was pushed): a round logs a path for each of dozens of ships, from a
#: handful of these
_PATH_RULES: dict[tuple[str, str | None, bool, bool], tuple[str, ...]] = {}


def _path_rules(lead: tuple[str, ...], move: Move | None, pushed: bool) -> tuple[str, ...]:
    """The rules a path of this phase cites: its lead, its move's (M0, B5, B6; M2f for a second
    step), M3 when pushed."""
    if move is not None:
        rules = (*lead, _MOVE_RULE.get(move.kind, "M0"))
        if move.second is not None:
            rules = (*rules, "M2f")
    else:
        rules = lead
    if pushed:
        rules = (*rules, "M3")
    return rules


def _tag(phase: str, c: Collision, rules: tuple[str, ...]) -> PhaseCollision:
    return PhaseCollision(phase, c.step, c.rule, c.ships, c.square, c.rock, c.contacts, rules)


def resolve_round(
    board: Board,
    ships: Mapping[str, BlockadeShip],
    tokens: Mapping[str, str | None],
) -> RoundOutcome:
    """Play one blockade round (P1): tokens, wind phase, ram and rock damage, sinking.

    ``tokens`` maps ship ids to ``'F'``, ``'L'``, ``'R'`` or ``None``; a ship missing
    from it has no token. Tokens of sunk ships are ignored.
    """
    _validate(board, ships, tokens)
    return _resolve_checked(board, ships, tokens)


def next_round(
    board: Board,
    previous: RoundOutcome,
    tokens: Mapping[str, str | None],
) -> RoundOutcome:
    """:func:`resolve_round` from the ships ``previous`` left, without the wrecks: a turn's next
    round. Those ships passed the checks of the round that placed them (on the board, off the
    rocks, one a square: M1-M6 keep them so), so only the tokens are checked."""
    # The pieces the last round's wind phase left are these ships' (each ship's square and facing
    # are its piece's, ``_resolve_checked``): taken as they are rather than built again, but for
    # the wrecks, which neither move nor block.
    left = previous.phases[1].result.pieces
    if previous.sinkings or len(previous.ships) != len(left):
        ships: Mapping[str, BlockadeShip] = {
            sid: ship for sid, ship in previous.ships.items() if not ship.sunk
        }
    else:
        ships = previous.ships  # (every one afloat: none sank, and no wreck was carried along)
    _validate_tokens(ships, tokens)
    pieces = {sid: left[sid] for sid in ships} if len(ships) != len(left) else left
    return _resolve_checked(board, ships, tokens, pieces)


def _resolve_checked(
    board: Board,
    ships: Mapping[str, BlockadeShip],
    tokens: Mapping[str, str | None],
    ship_pieces: dict[str, Piece] | None = None,
) -> RoundOutcome:
    """:func:`resolve_round` once its input is checked; ``ship_pieces``: the ships afloat as
    pieces when the caller has them (the previous round's, :func:`next_round`), never changed."""
    # one pass over the ships for what the round needs of each (this runs for every round of
    # every turn, and ``verify`` runs every turn again); a later round's ships are all
    # afloat, their pieces given
    if ship_pieces is None:
        afloat: Mapping[str, BlockadeShip] = {sid: ship for sid, ship in ships.items() if not ship.sunk}
        pieces = {
            sid: Piece(sid, (ship.at[0], ship.at[1]), ship.facing, BLOCKADE_KINDS[ship.kind].size)
            for sid, ship in afloat.items()
        }
    else:
        afloat = ships
        pieces = ship_pieces
    moves: dict[str, Move] = {}
    for sid, token in tokens.items():
        if token is not None:
            piece = pieces.get(sid)
            if piece is not None:
                move = _MOVES.get((piece.facing, token))
                moves[sid] = move if move is not None else _move_for(piece, token)
    # the pieces stand on the board, off the rocks, one a square: the caller checked the ships
    # (``_validate``) or a round left them so (M1-M6), and so does a movement
    moved = resolve_moves(board, pieces, moves, placed=True)
    wind_moves = wind_phase_moves(board, moved.pieces)
    blown = (
        resolve_moves(board, moved.pieces, wind_moves, placed=True) if wind_moves else left_standing(moved)
    )

    paths, pushes, collisions, damage = _phase_items(MOVE.id, moved, moves, afloat)
    if wind_moves:
        # (a wind phase in which nobody moves has no path, push, collision or damage to log)
        p, u, c, d = _phase_items(WIND.id, blown, wind_moves, afloat)
        paths += p
        pushes += u
        collisions += c
        damage += d

    # each damaged ship's damage, its entries added in order to what it had (P2, P3)
    total: dict[str, float] = {}
    for entry in damage:
        hit = entry.ship
        total[hit] = total.get(hit, afloat[hit].damage) + entry.amount
    after: dict[str, BlockadeShip] = {}
    sinkings: list[Sinking] = []
    left = blown.pieces
    # A ship of a later round (``ship_pieces`` given) ended the round before below its maximum, so
    # only a hit can sink it; in a turn's first round a ruling may have left a ship at its maximum,
    # to sink at the end of this one (P3).
    unhit_stay_afloat = ship_pieces is not None
    # in id order: when no wreck came along the pieces the round left are the ships, keyed so (as
    # every movement's outcome is), else the ships are sorted
    for sid in left if len(left) == len(ships) else sorted(ships):
        ship = ships[sid]
        if ship.sunk:
            after[sid] = ship
            continue
        piece = left[sid]
        damage_now = total.get(sid)
        if damage_now is None:  # not hit this round
            damage_now = ship.damage
            if unhit_stay_afloat or damage_now < _MAX_DAMAGE[ship.kind]:
                if piece.at == ship.at and piece.facing == ship.facing:
                    after[sid] = ship  # as it was (frozen): no new ship for one that stayed unharmed
                else:
                    after[sid] = BlockadeShip(sid, ship.kind, piece.at, piece.facing, damage_now, False)
                continue
        max_damage = _MAX_DAMAGE[ship.kind]
        sunk = damage_now >= max_damage
        if sunk:
            sinkings.append(Sinking(sid, piece.at, damage_now, max_damage))
        elif piece.at == ship.at and piece.facing == ship.facing and damage_now == ship.damage:
            after[sid] = ship
            continue
        after[sid] = BlockadeShip(sid, ship.kind, piece.at, piece.facing, damage_now, sunk)
    phases = (
        PhaseMovement(MOVE.id, ("P1", "M1", "M2", "M2f"), moved),
        PhaseMovement(WIND.id, ("P1", "M7"), blown),
    )
    return RoundOutcome(
        phases, tuple(paths), tuple(pushes), tuple(collisions), tuple(damage), tuple(sinkings), after
    )
