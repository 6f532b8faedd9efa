"""Rules M0-M8: simultaneous movement and collisions, from the source's named examples.

Ship names follow the Spanish collision document: Haughty Sawfish and
Self-Centered Blowfish are of one class; Unfriendly Grunion is smaller than
Sinking Barnacle.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from mortecouille.core.blockade.rounds import BLOCKADE_KINDS
from mortecouille.core.board.movement import (
    Move,
    MovementResult,
    play_two_steps,
    resolve_moves,
    take_positions,
    wind_phase_moves,
)
from mortecouille.core.board.movement_step import Claim, Collision, Piece, StepResult, resolve_step
from mortecouille.core.errors import BadInput
from mortecouille.events.board import Board, WindTile
from mortecouille.events.movement import Contact

OPEN = Board(10, 10)
SMALL, MEDIUM, LARGE = 0, 1, 2

MoveSpec = str | tuple[str, int]


def pieces_of(spec: Mapping[str, tuple[tuple[int, int], str, int]]) -> dict[str, Piece]:
    return {sid: Piece(sid, at, facing, size) for sid, (at, facing, size) in spec.items()}


def move_of(piece: Piece, spec: MoveSpec) -> Move:
    if spec == "F":
        return Move.forward(piece)
    if spec == "L":
        return Move.turn(piece, "left")
    if spec == "R":
        return Move.turn(piece, "right")
    assert isinstance(spec, tuple)
    kind, eighths = spec
    if kind == "sail":
        return Move.sail_then_rotate(piece, eighths)
    return Move.rotate_in_place(piece, eighths)


def play(
    spec: Mapping[str, tuple[tuple[int, int], str, int]],
    orders: Mapping[str, MoveSpec],
    board: Board = OPEN,
) -> MovementResult:
    pieces = pieces_of(spec)
    moves = {sid: move_of(pieces[sid], o) for sid, o in orders.items()}
    return resolve_moves(board, pieces, moves)


def where(result: MovementResult) -> dict[str, tuple[tuple[int, int], str]]:
    return {sid: (p.at, p.facing) for sid, p in result.pieces.items()}


def summary(result: MovementResult) -> list[tuple[int, str, tuple[str, ...]]]:
    return [(c.step, c.rule, c.ships) for c in result.collisions]


def contacts(collision: Collision) -> dict[str, tuple[tuple[int, int], str, str]]:
    return {c.ship: (c.at, c.facing, c.heading) for c in collision.contacts}


# --- M0 moves ---------------------------------------------------------------------------------


def test_M0_forward_moves_one_square_ahead() -> None:
    result = play({"A": ((2, 2), "N", SMALL)}, {"A": "F"})
    assert where(result) == {"A": ((2, 3), "N")}
    assert result.paths["A"] == ((2, 2), (2, 3))
    assert result.collisions == ()


def test_M0_quarter_turn_passes_ahead_then_beside_and_faces_new_way() -> None:
    result = play(
        {"R": ((2, 2), "N", SMALL), "L": ((6, 2), "N", SMALL), "D": ((2, 6), "NE", SMALL)},
        {"R": "R", "L": "L", "D": "R"},
    )
    assert result.paths["R"] == ((2, 2), (2, 3), (3, 3))
    assert result.paths["L"] == ((6, 2), (6, 3), (5, 3))
    # destination = start + dir(old facing) + dir(new facing), diagonals too
    assert result.paths["D"] == ((2, 6), (3, 7), (4, 6))
    assert where(result) == {"R": ((3, 3), "E"), "L": ((5, 3), "W"), "D": ((4, 6), "SE")}


def test_M0_sail_then_rotate_moves_one_square_then_turns() -> None:
    result = play(
        {"E": ((2, 2), "N", SMALL), "H": ((5, 2), "N", SMALL)},
        {"E": ("sail", 1), "H": ("sail", -4)},
    )
    assert where(result) == {"E": ((2, 3), "NE"), "H": ((5, 3), "S")}
    assert result.paths["E"] == ((2, 2), (2, 3))


def test_M0_rotate_in_place_claims_no_square_and_is_stationary() -> None:
    result = play(
        {"A": ((2, 2), "N", SMALL), "B": ((2, 1), "N", SMALL)},
        {"A": ("rot", 2), "B": "F"},
    )
    # A claimed nothing, so B's forward move bumps it like a stationary ship (M3)
    assert where(result) == {"A": ((2, 3), "E"), "B": ((2, 1), "N")}
    assert summary(result) == [(1, "M3", ("A", "B"))]
    # A turned at once, so it already faces east when struck (C1)
    assert contacts(result.collisions[0])["A"] == ((2, 2), "E", "S")


def test_M0_bad_turn_side_is_refused() -> None:
    with pytest.raises(BadInput) as err:
        Move.turn(Piece("A", (0, 0), "N", 0), "up")
    assert err.value.field == "side"


# --- M1 step 1 ---------------------------------------------------------------------------------


def test_M1a_empty_unclaimed_square_is_entered_without_collision() -> None:
    result = play({"A": ((1, 1), "E", SMALL), "B": ((1, 3), "E", SMALL)}, {"A": "F", "B": "F"})
    assert where(result) == {"A": ((2, 1), "E"), "B": ((2, 3), "E")}
    assert result.collisions == ()


def test_M1b_1b_same_class_bump_pushes_stationary_ship_back_and_pusher_stays() -> None:
    result = play(
        {"sawfish": ((3, 3), "N", MEDIUM), "blowfish": ((3, 4), "E", MEDIUM)},
        {"sawfish": "F"},
    )
    assert where(result) == {"sawfish": ((3, 3), "N"), "blowfish": ((3, 5), "E")}
    assert summary(result) == [(1, "M3", ("blowfish", "sawfish"))]
    (push,) = result.pushes
    assert (push.pusher, push.pushed, push.pushed_from, push.pushed_to, push.rule) == (
        "sawfish",
        "blowfish",
        (3, 4),
        (3, 5),
        "M3",
    )
    assert contacts(result.collisions[0]) == {
        "sawfish": ((3, 3), "N", "N"),
        "blowfish": ((3, 4), "E", "S"),
    }


def test_M1b_1b_larger_pusher_takes_the_vacated_square() -> None:
    result = play(
        {"sawfish": ((3, 3), "N", LARGE), "blowfish": ((3, 4), "E", MEDIUM)},
        {"sawfish": "F"},
    )
    assert where(result) == {"sawfish": ((3, 4), "N"), "blowfish": ((3, 5), "E")}
    assert summary(result) == [(1, "M3", ("blowfish", "sawfish"))]


def test_M1b_smaller_pusher_moves_nobody_but_collides() -> None:
    result = play(
        {"grunion": ((3, 3), "N", SMALL), "barnacle": ((3, 4), "E", LARGE)},
        {"grunion": "F"},
    )
    assert where(result) == {"grunion": ((3, 3), "N"), "barnacle": ((3, 4), "E")}
    assert summary(result) == [(1, "M3", ("barnacle", "grunion"))]
    assert result.pushes == ()


def test_M1c_1c_head_on_swap_both_stop_with_collision() -> None:
    result = play(
        {"grunion": ((3, 3), "N", SMALL), "barnacle": ((3, 4), "S", LARGE)},
        {"grunion": "F", "barnacle": "F"},
    )
    assert where(result) == {"grunion": ((3, 3), "N"), "barnacle": ((3, 4), "S")}
    assert summary(result) == [(1, "M1c", ("barnacle", "grunion"))]
    assert contacts(result.collisions[0]) == {
        "grunion": ((3, 3), "N", "N"),
        "barnacle": ((3, 4), "S", "S"),
    }


def test_M1d_1d_same_class_same_destination_both_stop() -> None:
    result = play(
        {"sawfish": ((2, 3), "E", MEDIUM), "blowfish": ((3, 2), "N", MEDIUM)},
        {"sawfish": "F", "blowfish": "F"},
    )
    assert where(result) == {"sawfish": ((2, 3), "E"), "blowfish": ((3, 2), "N")}
    assert summary(result) == [(1, "M1d", ("blowfish", "sawfish"))]
    assert result.collisions[0].square == (3, 3)
    assert contacts(result.collisions[0]) == {
        "sawfish": ((2, 3), "E", "E"),
        "blowfish": ((3, 2), "N", "N"),
    }


def test_M1e_1e_larger_claimant_takes_the_square_with_a_collision() -> None:
    result = play(
        {"grunion": ((2, 3), "E", SMALL), "barnacle": ((3, 2), "N", LARGE)},
        {"grunion": "F", "barnacle": "F"},
    )
    assert where(result) == {"grunion": ((2, 3), "E"), "barnacle": ((3, 3), "N")}
    assert summary(result) == [(1, "M1e", ("barnacle", "grunion"))]
    assert contacts(result.collisions[0]) == {
        "grunion": ((2, 3), "E", "E"),
        "barnacle": ((3, 2), "N", "N"),
    }


# --- M2 step 2 ---------------------------------------------------------------------------------


def test_M2a_no_collision_two_stage_both_reach_destinations() -> None:
    # Blowfish passes through Sawfish's destination in step 1 and leaves it in step 2.
    result = play(
        {"sawfish": ((2, 2), "N", MEDIUM), "blowfish": ((3, 2), "N", MEDIUM)},
        {"sawfish": "R", "blowfish": "R"},
    )
    assert where(result) == {"sawfish": ((3, 3), "E"), "blowfish": ((4, 3), "E")}
    assert result.paths["blowfish"] == ((3, 2), (3, 3), (4, 3))
    assert result.collisions == ()


def test_M2b_forward_vs_turn_turner_stops_against_ship_that_ended_there() -> None:
    result = play(
        {"sawfish": ((3, 2), "N", MEDIUM), "blowfish": ((2, 2), "N", MEDIUM)},
        {"sawfish": "F", "blowfish": "R"},
    )
    assert where(result) == {"sawfish": ((3, 3), "N"), "blowfish": ((2, 3), "E")}
    assert summary(result) == [(2, "M2b", ("blowfish", "sawfish"))]
    # the turner already faces east in step 2; the struck ship's contact points at it
    assert contacts(result.collisions[0]) == {
        "blowfish": ((2, 3), "E", "E"),
        "sawfish": ((3, 3), "N", "W"),
    }


def test_M2b_class_does_not_matter_small_forward_stops_large_turner() -> None:
    # Forward vs turn II: the small Grunion stops the large Barnacle.
    result = play(
        {"grunion": ((3, 2), "N", SMALL), "barnacle": ((2, 2), "N", LARGE)},
        {"grunion": "F", "barnacle": "R"},
    )
    assert where(result) == {"grunion": ((3, 3), "N"), "barnacle": ((2, 3), "E")}
    assert summary(result) == [(2, "M2b", ("barnacle", "grunion"))]
    assert result.pushes == ()


def test_M2c_head_on_turn_both_stop_after_step_one() -> None:
    result = play(
        {"grunion": ((2, 2), "N", SMALL), "barnacle": ((3, 4), "S", LARGE)},
        {"grunion": "R", "barnacle": "R"},
    )
    assert where(result) == {"grunion": ((2, 3), "E"), "barnacle": ((3, 3), "W")}
    assert summary(result) == [(2, "M2c", ("barnacle", "grunion"))]
    assert contacts(result.collisions[0]) == {
        "grunion": ((2, 3), "E", "E"),
        "barnacle": ((3, 3), "W", "W"),
    }


def test_M2d_turn_vs_turn_same_class_both_stop_one_square_ahead() -> None:
    result = play(
        {"sawfish": ((2, 2), "N", MEDIUM), "blowfish": ((4, 2), "N", MEDIUM)},
        {"sawfish": "R", "blowfish": "L"},
    )
    assert where(result) == {"sawfish": ((2, 3), "E"), "blowfish": ((4, 3), "W")}
    assert summary(result) == [(2, "M2d", ("blowfish", "sawfish"))]
    assert result.collisions[0].square == (3, 3)


def test_M2e_turn_vs_turn_larger_completes_its_turn() -> None:
    result = play(
        {"grunion": ((2, 2), "N", SMALL), "barnacle": ((4, 2), "N", LARGE)},
        {"grunion": "R", "barnacle": "L"},
    )
    assert where(result) == {"grunion": ((2, 3), "E"), "barnacle": ((3, 3), "W")}
    assert summary(result) == [(2, "M2e", ("barnacle", "grunion"))]


def test_M2f_turner_stopped_in_step_one_makes_no_step_two_but_takes_new_facing() -> None:
    result = play(
        {"A": ((3, 3), "N", SMALL), "B": ((3, 4), "S", SMALL)},
        {"A": "R", "B": "L"},
    )
    assert where(result) == {"A": ((3, 3), "E"), "B": ((3, 4), "E")}
    assert summary(result) == [(1, "M1c", ("A", "B"))]
    assert result.paths == {"A": ((3, 3),), "B": ((3, 4),)}


# --- M3 bumps ----------------------------------------------------------------------------------


def test_M3_turner_never_pushes_and_still_turns() -> None:
    result = play(
        {"T": ((3, 3), "N", LARGE), "S": ((3, 4), "N", SMALL)},
        {"T": "L"},
    )
    assert where(result) == {"T": ((3, 3), "W"), "S": ((3, 4), "N")}
    assert summary(result) == [(1, "M3", ("S", "T"))]
    assert result.pushes == ()


def test_M3_ruling_push_fails_into_rock() -> None:
    board = Board(10, 10, rocks=((3, 5),))
    result = play({"P": ((3, 3), "N", LARGE), "S": ((3, 4), "E", SMALL)}, {"P": "F"}, board)
    assert where(result) == {"P": ((3, 3), "N"), "S": ((3, 4), "E")}
    assert summary(result) == [(1, "M3", ("P", "S"))]
    assert result.pushes == ()


def test_M3_ruling_push_fails_off_the_board() -> None:
    result = play({"P": ((3, 7), "N", LARGE), "S": ((3, 8), "E", SMALL)}, {"P": "F"}, Board(10, 9))
    assert where(result) == {"P": ((3, 7), "N"), "S": ((3, 8), "E")}
    assert summary(result) == [(1, "M3", ("P", "S"))]


def test_M3_ruling_push_fails_into_square_held_at_start_of_step() -> None:
    # L leaves (3,5) in this very step; the push still fails, and L goes on its way.
    result = play(
        {"P": ((3, 3), "N", LARGE), "S": ((3, 4), "E", SMALL), "L": ((3, 5), "E", SMALL)},
        {"P": "F", "L": "F"},
    )
    assert where(result) == {"P": ((3, 3), "N"), "S": ((3, 4), "E"), "L": ((4, 5), "E")}
    assert summary(result) == [(1, "M3", ("P", "S"))]


def test_M3_ruling_no_chain_of_pushes() -> None:
    result = play(
        {"P": ((3, 3), "N", LARGE), "S": ((3, 4), "E", SMALL), "T": ((3, 5), "E", SMALL)},
        {"P": "F"},
    )
    assert where(result) == {"P": ((3, 3), "N"), "S": ((3, 4), "E"), "T": ((3, 5), "E")}


def test_M3_ruling_push_fails_into_square_claimed_by_another_ship() -> None:
    # C claims the push square (3,5); the push fails and C's claim is resolved on its own: it enters.
    result = play(
        {"P": ((3, 3), "N", LARGE), "S": ((3, 4), "E", SMALL), "C": ((2, 5), "E", SMALL)},
        {"P": "F", "C": "F"},
    )
    assert where(result) == {"P": ((3, 3), "N"), "S": ((3, 4), "E"), "C": ((3, 5), "E")}
    assert summary(result) == [(1, "M3", ("P", "S"))]


def test_M3_ruling_two_claimants_of_stationary_square_nobody_pushes() -> None:
    result = play(
        {"A": ((3, 3), "N", LARGE), "B": ((2, 4), "E", LARGE), "S": ((3, 4), "N", SMALL)},
        {"A": "F", "B": "F"},
    )
    assert where(result) == {"A": ((3, 3), "N"), "B": ((2, 4), "E"), "S": ((3, 4), "N")}
    # each claimant collides with the stationary ship only
    assert summary(result) == [(1, "M3", ("A", "S")), (1, "M3", ("B", "S"))]
    assert result.pushes == ()
    assert contacts(result.collisions[1])["S"] == ((3, 4), "N", "W")


def test_M3_ruling_two_claimants_in_step_two_collide_only_with_ship_that_ended_there() -> None:
    # F ends step 1 on (3,3); turners A and B both aim at it in step 2 (M2b).
    result = play(
        {
            "F": ((3, 2), "N", SMALL),
            "A": ((2, 2), "N", LARGE),
            "B": ((4, 4), "S", LARGE),
        },
        {"F": "F", "A": "R", "B": "R"},
    )
    assert where(result) == {"F": ((3, 3), "N"), "A": ((2, 3), "E"), "B": ((4, 3), "W")}
    assert summary(result) == [(2, "M2b", ("A", "F")), (2, "M2b", ("B", "F"))]


def test_M3_ruling_two_pushes_into_one_square_both_fail() -> None:
    result = play(
        {
            "P": ((3, 3), "N", MEDIUM),
            "S": ((3, 4), "E", MEDIUM),
            "Q": ((3, 7), "S", MEDIUM),
            "T": ((3, 6), "E", MEDIUM),
        },
        {"P": "F", "Q": "F"},
    )
    assert where(result) == {
        "P": ((3, 3), "N"),
        "S": ((3, 4), "E"),
        "Q": ((3, 7), "S"),
        "T": ((3, 6), "E"),
    }
    assert summary(result) == [(1, "M3", ("P", "S")), (1, "M3", ("Q", "T"))]


# --- M4 following ------------------------------------------------------------------------------


def test_M4_convoy_follower_enters_square_its_leader_leaves() -> None:
    result = play(
        {"A": ((3, 1), "N", SMALL), "B": ((3, 2), "N", LARGE), "C": ((3, 3), "N", SMALL)},
        {"A": "F", "B": "F", "C": "F"},
    )
    assert where(result) == {"A": ((3, 2), "N"), "B": ((3, 3), "N"), "C": ((3, 4), "N")}
    assert result.collisions == ()


def test_M4_follower_enters_square_a_turner_leaves_in_step_one() -> None:
    result = play(
        {"F": ((3, 1), "N", SMALL), "T": ((3, 2), "N", SMALL)},
        {"F": "F", "T": "R"},
    )
    assert where(result) == {"F": ((3, 2), "N"), "T": ((4, 3), "E")}
    assert result.collisions == ()


def test_M4_leader_fails_to_leave_follower_stops_with_collision() -> None:
    board = Board(10, 10, rocks=((3, 4),))
    result = play(
        {"F": ((3, 2), "N", LARGE), "L": ((3, 3), "N", SMALL)},
        {"F": "F", "L": "F"},
        board,
    )
    assert where(result) == {"F": ((3, 2), "N"), "L": ((3, 3), "N")}
    assert summary(result) == [(1, "M4", ("F", "L")), (1, "M6", ("L",))]
    # no bump: the leader tried to move; it is struck over its own square (C1)
    assert result.pushes == ()
    assert contacts(result.collisions[0]) == {
        "F": ((3, 2), "N", "N"),
        "L": ((3, 3), "N", "S"),
    }


def test_M4_ring_of_four_all_move() -> None:
    result = play(
        {
            "A": ((3, 3), "N", SMALL),
            "B": ((3, 4), "E", SMALL),
            "C": ((4, 4), "S", SMALL),
            "D": ((4, 3), "W", SMALL),
        },
        {"A": "F", "B": "F", "C": "F", "D": "F"},
    )
    assert where(result) == {
        "A": ((3, 4), "N"),
        "B": ((4, 4), "E"),
        "C": ((4, 3), "S"),
        "D": ((3, 3), "W"),
    }
    assert result.collisions == ()


def test_M4_ring_of_three_all_move() -> None:
    result = play(
        {"A": ((3, 3), "E", SMALL), "B": ((4, 3), "N", SMALL), "C": ((4, 4), "SW", SMALL)},
        {"A": "F", "B": "F", "C": "F"},
    )
    assert where(result) == {"A": ((4, 3), "E"), "B": ((4, 4), "N"), "C": ((3, 3), "SW")}
    assert result.collisions == ()


def test_M4_ring_of_two_is_a_head_on_swap() -> None:
    result = play(
        {"A": ((3, 3), "E", SMALL), "B": ((4, 3), "W", SMALL)},
        {"A": "F", "B": "F"},
    )
    assert where(result) == {"A": ((3, 3), "E"), "B": ((4, 3), "W")}
    assert summary(result) == [(1, "M1c", ("A", "B"))]


def test_M4_ring_broken_by_a_larger_outsider_stops_everyone() -> None:
    # X (large) wins D's square against ring member C; the ring then cannot turn.
    result = play(
        {
            "A": ((3, 3), "N", SMALL),
            "B": ((3, 4), "E", SMALL),
            "C": ((4, 4), "S", SMALL),
            "D": ((4, 3), "W", SMALL),
            "X": ((5, 4), "SW", LARGE),
        },
        {"A": "F", "B": "F", "C": "F", "D": "F", "X": "F"},
    )
    assert {sid: p.at for sid, p in result.pieces.items()} == {
        "A": (3, 3),
        "B": (3, 4),
        "C": (4, 4),
        "D": (4, 3),
        "X": (5, 4),
    }
    assert summary(result) == [
        (1, "M4", ("A", "B")),
        (1, "M4", ("A", "D")),
        (1, "M4", ("B", "C")),
        (1, "M1e", ("C", "X")),
        (1, "M4", ("D", "X")),
    ]


# --- M5 contests -------------------------------------------------------------------------------


def test_M5_ruling_strictly_largest_of_three_wins_and_collides_with_each_other() -> None:
    result = play(
        {"W": ((3, 2), "N", LARGE), "X": ((2, 3), "E", MEDIUM), "Y": ((4, 3), "W", MEDIUM)},
        {"W": "F", "X": "F", "Y": "F"},
    )
    assert where(result) == {"W": ((3, 3), "N"), "X": ((2, 3), "E"), "Y": ((4, 3), "W")}
    assert summary(result) == [(1, "M5", ("W", "X")), (1, "M5", ("W", "Y"))]


def test_M5_ruling_shared_largest_nobody_wins_and_every_pair_collides() -> None:
    result = play(
        {"W": ((3, 2), "N", LARGE), "X": ((2, 3), "E", LARGE), "Y": ((4, 3), "W", SMALL)},
        {"W": "F", "X": "F", "Y": "F"},
    )
    assert {sid: p.at for sid, p in result.pieces.items()} == {
        "W": (3, 2),
        "X": (2, 3),
        "Y": (4, 3),
    }
    assert summary(result) == [
        (1, "M5", ("W", "X")),
        (1, "M5", ("W", "Y")),
        (1, "M5", ("X", "Y")),
    ]


def test_M5_ruling_a_claim_counts_even_when_it_fails_for_a_head_on() -> None:
    # L wins O's square against S, but L is in a head-on with O: nobody moves.
    result = play(
        {"O": ((3, 4), "S", SMALL), "L": ((3, 3), "N", LARGE), "S": ((2, 4), "E", SMALL)},
        {"O": "F", "L": "F", "S": "F"},
    )
    assert {sid: p.at for sid, p in result.pieces.items()} == {
        "O": (3, 4),
        "L": (3, 3),
        "S": (2, 4),
    }
    assert summary(result) == [(1, "M1c", ("L", "O")), (1, "M1e", ("L", "S"))]


def test_M5_ruling_winner_enters_only_if_the_occupant_leaves() -> None:
    board = Board(10, 10, rocks=((3, 5),))
    result = play(
        {"O": ((3, 4), "N", SMALL), "W": ((3, 3), "N", LARGE), "S": ((2, 4), "E", SMALL)},
        {"O": "F", "W": "F", "S": "F"},
        board,
    )
    assert {sid: p.at for sid, p in result.pieces.items()} == {
        "O": (3, 4),
        "W": (3, 3),
        "S": (2, 4),
    }
    assert summary(result) == [
        (1, "M6", ("O",)),
        (1, "M4", ("O", "W")),
        (1, "M1e", ("S", "W")),
    ]


# --- M6 rocks and edges ------------------------------------------------------------------------


def test_M6_rock_stops_the_ship_with_a_rock_collision() -> None:
    board = Board(10, 10, rocks=((3, 4),))
    result = play({"A": ((3, 3), "N", SMALL)}, {"A": "F"}, board)
    assert where(result) == {"A": ((3, 3), "N")}
    (collision,) = result.collisions
    assert (collision.rule, collision.ships, collision.rock, collision.square) == (
        "M6",
        ("A",),
        (3, 4),
        (3, 4),
    )
    assert collision.contacts == (Contact("A", (3, 3), "N", "N"),)


def test_M6_board_edge_acts_as_rock() -> None:
    result = play({"A": ((0, 3), "W", SMALL)}, {"A": "F"})
    assert where(result) == {"A": ((0, 3), "W")}
    assert summary(result) == [(1, "M6", ("A",))]
    assert result.collisions[0].rock == (-1, 3)


def test_M6_ships_claiming_a_rock_do_not_contest_it() -> None:
    board = Board(10, 10, rocks=((3, 3),))
    result = play(
        {"A": ((3, 2), "N", SMALL), "B": ((2, 3), "E", LARGE)},
        {"A": "F", "B": "F"},
        board,
    )
    assert summary(result) == [(1, "M6", ("A",)), (1, "M6", ("B",))]


# --- M7 wind phase -----------------------------------------------------------------------------


def test_M7_wind_push_acts_as_forward_and_bumps() -> None:
    board = Board(10, 10, winds=(WindTile((3, 3), "E"),))
    pieces = pieces_of({"A": ((3, 3), "N", MEDIUM), "B": ((4, 3), "S", MEDIUM)})
    moves = wind_phase_moves(board, pieces)
    assert set(moves) == {"A"}
    result = resolve_moves(board, pieces, moves)
    # wind never changes facing; the bumped ship is pushed the wind's way
    assert where(result) == {"A": ((3, 3), "N"), "B": ((5, 3), "S")}
    assert summary(result) == [(1, "M3", ("A", "B"))]
    assert contacts(result.collisions[0])["A"] == ((3, 3), "N", "E")


def test_M7_wind_contest_is_decided_by_class_M1e() -> None:
    board = Board(10, 10, winds=(WindTile((2, 3), "E"), WindTile((3, 2), "N")))
    pieces = pieces_of({"small": ((2, 3), "N", SMALL), "big": ((3, 2), "N", LARGE)})
    result = resolve_moves(board, pieces, wind_phase_moves(board, pieces))
    assert where(result) == {"small": ((2, 3), "N"), "big": ((3, 3), "N")}
    assert summary(result) == [(1, "M1e", ("big", "small"))]


def test_M7_whirlpool_moves_to_opposite_corner_and_turns_clockwise() -> None:
    board = Board(10, 10, whirlpools=((2, 2),))
    pieces = pieces_of({"A": ((2, 2), "N", SMALL)})
    result = resolve_moves(board, pieces, wind_phase_moves(board, pieces))
    assert result.paths["A"] == ((2, 2), (2, 3), (3, 3))
    assert where(result) == {"A": ((3, 3), "E")}


def test_M7_whirlpool_move_never_pushes() -> None:
    board = Board(10, 10, whirlpools=((2, 2),))
    pieces = pieces_of({"A": ((2, 2), "S", LARGE), "S": ((2, 3), "N", SMALL)})
    # only A is driven here, so S is a stationary ship in A's way
    result = resolve_moves(board, pieces, wind_phase_moves(board, {"A": pieces["A"]}))
    assert where(result) == {"A": ((2, 2), "W"), "S": ((2, 3), "N")}
    assert summary(result) == [(1, "M3", ("A", "S"))]
    assert result.pushes == ()


def test_M7_whirlpool_ship_stopped_in_step_one_makes_no_step_two_but_is_rotated() -> None:
    board = Board(10, 10, winds=(WindTile((1, 3), "E"),), whirlpools=((2, 2),))
    pieces = pieces_of({"A": ((2, 2), "N", SMALL), "big": ((1, 3), "S", LARGE)})
    result = resolve_moves(board, pieces, wind_phase_moves(board, pieces))
    assert where(result) == {"A": ((2, 2), "E"), "big": ((2, 3), "S")}
    assert result.paths["A"] == ((2, 2),)
    assert summary(result) == [(1, "M1e", ("A", "big"))]


def test_M7_small_ship_blown_onto_square_stops_larger_whirlpool_turner_M2b() -> None:
    board = Board(10, 10, winds=(WindTile((4, 3), "W"),), whirlpools=((2, 2),))
    pieces = pieces_of({"big": ((2, 2), "N", LARGE), "small": ((4, 3), "N", SMALL)})
    result = resolve_moves(board, pieces, wind_phase_moves(board, pieces))
    assert where(result) == {"big": ((2, 3), "E"), "small": ((3, 3), "N")}
    assert summary(result) == [(2, "M2b", ("big", "small"))]


def test_M7_four_ships_in_one_whirlpool_all_turn_together() -> None:
    board = Board(10, 10, whirlpools=((2, 2),))
    pieces = pieces_of(
        {
            "sw": ((2, 2), "N", SMALL),
            "nw": ((2, 3), "N", LARGE),
            "ne": ((3, 3), "N", SMALL),
            "se": ((3, 2), "N", MEDIUM),
        }
    )
    result = resolve_moves(board, pieces, wind_phase_moves(board, pieces))
    assert where(result) == {
        "sw": ((3, 3), "E"),
        "nw": ((3, 2), "E"),
        "ne": ((2, 2), "E"),
        "se": ((2, 3), "E"),
    }
    assert result.collisions == ()


# --- M8 classes --------------------------------------------------------------------------------


def test_M8_blockade_classes_follow_the_table_grand_frigate_is_large() -> None:
    sizes = {kind: k.size for kind, k in BLOCKADE_KINDS.items()}
    assert sizes["sloop"] == sizes["fanchuan"] == 0
    assert sizes["longship"] == sizes["war-brig"] == 1
    assert sizes["grand-frigate"] == sizes["war-frigate"] == sizes["merchant-galleon"] == 2
    # two large ships of the table share the class: a contest between them has no winner
    result = play(
        {
            "grand": ((2, 3), "E", sizes["grand-frigate"]),
            "war": ((3, 2), "N", sizes["war-frigate"]),
        },
        {"grand": "F", "war": "F"},
    )
    assert summary(result) == [(1, "M1d", ("grand", "war"))]


# --- resolve_step on its own -------------------------------------------------------------------


def test_resolve_step_is_usable_alone_for_step_two() -> None:
    pieces = pieces_of({"T": ((2, 3), "E", LARGE), "F": ((3, 3), "N", SMALL)})
    result = resolve_step(OPEN, pieces, {"T": Claim((1, 0))}, 2)
    assert result.positions == {"F": (3, 3), "T": (2, 3)}
    assert result.stopped == ("T",)
    assert [(c.rule, c.ships) for c in result.collisions] == [("M2b", ("F", "T"))]


def test_resolve_step_refuses_two_ships_on_one_square() -> None:
    pieces = {"A": Piece("A", (1, 1), "N", 0), "B": Piece("B", (1, 1), "N", 0)}
    with pytest.raises(BadInput):
        resolve_step(OPEN, pieces, {}, 1)


# --- the two-step order with a ruleset acting between the steps -------------------------------


def test_play_two_steps_lets_a_hook_sink_and_carry_a_ship_between_the_steps() -> None:
    # T turns right from (2, 2): step 1 north into (2, 3), held by W; step 2 east into (3, 3), held by X.
    pieces = pieces_of({"T": ((2, 2), "N", LARGE), "W": ((2, 3), "E", SMALL), "X": ((3, 3), "N", SMALL)})
    moves = {"T": Move.turn(pieces["T"], "right")}
    seen: list[tuple[int, dict[str, str], dict[str, Claim]]] = []

    def sink_both_and_cross(
        result: StepResult, step_pieces: Mapping[str, Piece], claims: Mapping[str, Claim]
    ) -> tuple[Mapping[str, Piece], tuple[str, ...]]:
        seen.append((result.step, {sid: p.facing for sid, p in step_pieces.items()}, dict(claims)))
        after, entered = take_positions(result, step_pieces, claims)
        if result.step == 1:
            # As mortecouille's C2: W and X go down, T carries on over W's wreck into (2, 3).
            assert result.stopped == ("T",)
            del after["W"], after["X"]
            after["T"] = Piece("T", (2, 3), step_pieces["T"].facing, LARGE)
            return after, ("T", *entered)
        return after, entered

    steps = play_two_steps(OPEN, pieces, moves, sink_both_and_cross)
    # Step 1 with T's step-1 facing and a pushing-free turn claim; step 2 with its new facing.
    assert seen == [
        (1, {"T": "N", "W": "E", "X": "N"}, {"T": Claim((0, 1), False)}),
        (2, {"T": "E"}, {"T": Claim((1, 0), False)}),
    ]
    assert steps.second.moved == ("T",)
    assert {sid: (p.at, p.facing) for sid, p in steps.pieces.items()} == {"T": ((3, 3), "E")}


def test_play_two_steps_with_the_plain_hook_is_resolve_moves() -> None:
    pieces = pieces_of({"T": ((2, 2), "N", LARGE), "X": ((3, 3), "N", SMALL), "R": ((5, 5), "W", SMALL)})
    moves = {"T": Move.turn(pieces["T"], "right"), "R": Move.rotate_in_place(pieces["R"], 2)}
    steps = play_two_steps(OPEN, pieces, moves, take_positions)
    result = resolve_moves(OPEN, pieces, moves)
    assert steps.pieces == result.pieces
    assert (steps.first, steps.second) == result.steps
    # A step 2 nobody claims in is not resolved: everyone stays where step 1 left them.
    quiet = play_two_steps(OPEN, pieces, {"R": moves["R"]})
    assert quiet.second == StepResult(2, {"R": (5, 5), "T": (2, 2), "X": (3, 3)}, (), (), (), ())
    assert quiet.pieces["R"].facing == "N"


# --- the rocks a step meets are its own board's ------------------------------------------------


def test_a_claim_meets_the_rocks_of_its_own_board_whatever_boards_were_played_before() -> None:
    # nothing of one board's geometry is carried to the next: twenty boards of one size, each with
    # its rock elsewhere, played in turn twice
    pieces = {"A": Piece("A", (2, 2), "N", SMALL)}
    claims = {"A": Claim((0, 1), True)}
    boards = [Board(6, 6, rocks=((x, y),)) for x in range(5) for y in range(2, 6) if (x, y) != (2, 2)][:20]
    for _ in range(2):
        for board in boards:
            result = resolve_step(board, pieces, claims, 1)
            if board.rocks == ((2, 3),):
                assert result.moved == () and result.collisions[0].rule == "M6"
                assert result.collisions[0].rock == (2, 3)
            else:
                assert result.moved == ("A",) and result.positions == {"A": (2, 3)}
    # and off the edge of a smaller board, after the larger ones
    edge = resolve_step(Board(3, 3), {"A": Piece("A", (2, 2), "N", SMALL)}, claims, 1)
    assert edge.collisions[0].rule == "M6" and edge.collisions[0].rock == (2, 3)
