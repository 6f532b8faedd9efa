"""The shortcuts that make re-resolution cheaper (``verify``) give what the long way gives.

A movement nobody moves in skips the two steps' copies of the fleet; a blockade turn leaves the
wrecks out of its rounds when they would pass the round's checks. Neither may change an outcome,
nor let a forged wreck through that the rounds refused.
"""

from __future__ import annotations

import msgspec
import pytest

from mortecouille.core.blockade.commands import resolve_blockade_turn
from mortecouille.core.board.movement import Move, resolve_moves
from mortecouille.core.board.movement_step import Piece
from mortecouille.core.dice import TableDice
from mortecouille.core.errors import BadInput
from mortecouille.core.life_cycle import ResolveTurn
from mortecouille.core.state import GameState, ShipState
from mortecouille.events.board import Board
from mortecouille.events.game import TurnEnded

BOARD = Board(6, 6, rocks=((5, 5),))


def test_M1_a_movement_nobody_moves_in_is_the_two_steps_with_every_ship_at_rest() -> None:
    pieces = {
        "B": Piece("B", (2, 2), "E", 1),
        "A": Piece("A", (0, 1), "N", 0),
        "C": Piece("C", (4, 4), "S", 2),
    }
    # a turn in place by no eighth claims no square: the full two steps, with nobody moving
    at_rest = {sid: Move.rotate_in_place(piece, 0) for sid, piece in pieces.items()}
    shortcut = resolve_moves(BOARD, pieces, {})
    long_way = resolve_moves(BOARD, pieces, at_rest)
    assert msgspec.json.encode(shortcut) == msgspec.json.encode(long_way)
    assert list(shortcut.pieces) == ["A", "B", "C"]


def test_B4_a_movement_nobody_moves_in_still_refuses_a_ship_on_a_rock() -> None:
    with pytest.raises(BadInput, match=r"pieces\.A\.at"):
        resolve_moves(BOARD, {"A": Piece("A", (5, 5), "N", 0)}, {})


def _state(*ships: ShipState) -> GameState:
    return GameState(
        game="g", ruleset="blockade", players=("A",), board=BOARD, created=True,
        ships={s.id: s for s in ships},
        tokens={s.id: ("F", "L", "F", "R") for s in ships if s.afloat},
    )  # fmt: skip


def test_P3_wrecks_left_out_of_the_rounds_change_no_outcome() -> None:
    sloop = ShipState(id="S", kind="sloop", at=(1, 1), facing="N")
    brig = ShipState(id="T", kind="war-brig", at=(3, 1), facing="W")
    wreck = ShipState(id="W", kind="cutter", at=(4, 4), facing="E", damage=12.0, sunk=True)
    command = ResolveTurn(rounds=4)
    with_wreck = resolve_blockade_turn(_state(sloop, brig, wreck), command, TableDice())
    without = resolve_blockade_turn(_state(sloop, brig), command, TableDice())
    # the same moves, collisions and damage; only the state hash, which counts the wreck, differs
    assert [msgspec.json.encode(e) for e in with_wreck[:-1]] == [msgspec.json.encode(e) for e in without[:-1]]
    ended, ended_without = with_wreck[-1], without[-1]
    assert isinstance(ended, TurnEnded) and isinstance(ended_without, TurnEnded)
    assert ended.state_hash != ended_without.state_hash


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"kind": "galleon-x"}, "ships.W.kind"),
        ({"facing": "NE"}, "ships.W.facing"),
        ({"damage": -1.0}, "ships.W.damage"),
    ],
)
def test_P3_a_forged_wreck_is_refused_as_the_rounds_refuse_it(change: dict[str, object], field: str) -> None:
    sloop = ShipState(id="S", kind="sloop", at=(1, 1), facing="N")
    wreck = msgspec.structs.replace(ShipState(id="W", kind="cutter", at=(4, 4), sunk=True), **change)
    with pytest.raises(BadInput) as refused:
        resolve_blockade_turn(_state(sloop, wreck), ResolveTurn(rounds=1), TableDice())
    assert refused.value.field == field
