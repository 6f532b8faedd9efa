"""Rules C1-C6 as they play out in the movement and board wind phases of a turn.

F1 figures used below (own loss vs small/big, loss inflicted on small/big, structure):
red-small 5/15 3/1 38; red-big 2/10 20/5 121; blue-big 0/8 30/15 130; green-small 4/13 4/1 37;
green-big 1/9 22/8 129; yellow-big 1/5 27/11 140.
"""

from __future__ import annotations

import pytest

from mortecouille.core.mortecouille.movement import MoveIntent, board_wind_phase
from mortecouille.events.board import Board, WindTile
from mortecouille.events.game import DieRolled
from mortecouille.events.mortecouille import WindPointsChanged
from mortecouille.events.mortecouille_movement import FireshipExplosion, WreckCrossed
from mortecouille.events.movement import CollisionOccurred, Contact, DamageTaken, ShipSunk
from tests.test_mortecouille_movement import (
    advance,
    after,
    fixed_cup,
    game,
    losses,
    moved,
    of,
    run_move,
    ship,
    table_cup,
    turn,
)

ROCK_EAST_OF_B = Board(10, 10, rocks=((3, 2),))


def test_C1_a_stationary_struck_ship_takes_the_contact_toward_the_other_ship() -> None:
    # A's bow meets B's stern: +2 for A only.
    state = game(ship("A", "green-small", (2, 2), "N", wind=3), ship("B", "green-small", (2, 3), "N"))
    produced = run_move(state, [advance("A")])
    [collision] = of(produced, CollisionOccurred)
    assert collision.contacts == (Contact("A", (2, 2), "N", "N"), Contact("B", (2, 3), "N", "S"))
    assert losses(produced) == {"A": [("collision", 4 + 4 + 2)], "B": [("collision", 4 + 4)]}


def test_C1_a_quarter_turner_has_its_new_facing_in_step_2() -> None:
    # A turns right: through (2,2), then into (3,2) where B waits facing E. A faces E already: bow;
    # B is struck from the west, behind it: stern.
    state = game(ship("A", "green-big", (2, 1), "N", wind=8), ship("B", "yellow-big", (3, 2), "E"))
    produced = run_move(state, [turn("A", "1/4", "right", sailing=True)])
    [collision] = of(produced, CollisionOccurred)
    assert (collision.step, collision.rule) == (2, "M2b")
    assert collision.contacts == (Contact("A", (2, 2), "E", "E"), Contact("B", (3, 2), "E", "W"))
    assert losses(produced) == {"A": [("collision", 9 + 11 + 2)], "B": [("collision", 5 + 8)]}
    assert moved(produced)["A"] == (((2, 1), (2, 2)), "E")


def test_C2_bow_bow_costs_three_more_each() -> None:
    state = game(ship("A", "red-small", (2, 2), "N", wind=2), ship("B", "green-small", (2, 3), "S", wind=3))
    produced = run_move(state, [advance("A"), advance("B")])
    assert [c.rule for c in of(produced, CollisionOccurred)] == ["M1c"]
    assert losses(produced) == {"A": [("collision", 5 + 4 + 3)], "B": [("collision", 4 + 3 + 3)]}


def test_C2_bow_stern_costs_two_more_to_the_bow_ship() -> None:
    state = game(ship("A", "red-big", (1, 2), "E", wind=5), ship("B", "blue-big", (2, 2), "E"))
    produced = run_move(state, [advance("A")])
    assert losses(produced) == {"A": [("collision", 10 + 15 + 2)], "B": [("collision", 8 + 5)]}


@pytest.mark.parametrize("die", [1, 2, 3, 4, 5, 6])
def test_C2_bow_side_the_side_ship_capsizes_on_1_or_2(die: int) -> None:
    # The rock stops the push. On a capsize the bow ship carries on into the side ship's square.
    state = game(
        ship("A", "red-big", (1, 2), "E", wind=5),
        ship("B", "yellow-big", (2, 2), "N"),
        board=ROCK_EAST_OF_B,
    )
    produced = run_move(state, [advance("A")], fixed_cup({("B", "capsize"): [die], ("A", "crossing"): [6]}))
    assert losses(produced)["B"] == [("collision", 5 + 5 + 6)]
    folded = after(state, produced)
    if die <= 2:
        [sunk] = of(produced, ShipSunk)
        assert (sunk.ship, sunk.rules) == ("B", ("C2",))
        assert losses(produced)["A"] == [("collision", 10 + 11 + 2), ("crossing", 5)]
        assert folded.ships["A"].at == (2, 2)
    else:
        assert of(produced, ShipSunk) == [] and of(produced, WreckCrossed) == []
        assert losses(produced)["A"] == [("collision", 10 + 11 + 2)]
        assert folded.ships["A"].at == (1, 2) and folded.ships["B"].afloat


@pytest.mark.parametrize(("die", "three_d6", "lost"), [(4, [], 5), (2, [6, 5, 4], 5 + 15)])
def test_C2_crossing_the_sunk_side_ship_costs_five_and_3d6_more_on_1_or_2(
    die: int, three_d6: list[int], lost: int
) -> None:
    # red-small loses 15 + 30 + 6 = 51 of its 38 and sinks: no capsize die, blue-big crosses.
    state = game(
        ship("A", "blue-big", (1, 2), "E", wind=7),
        ship("B", "red-small", (2, 2), "N"),
        board=ROCK_EAST_OF_B,
    )
    dice: dict[tuple[str | None, str], list[int]] = {
        ("A", "crossing"): [die],
        ("A", "crossing-damage"): three_d6,
    }
    produced = run_move(state, [advance("A")], fixed_cup(dice))
    [sunk] = of(produced, ShipSunk)
    assert (sunk.ship, sunk.rules) == ("B", ("W3",))
    [crossed] = of(produced, WreckCrossed)
    assert (crossed.ship, crossed.wreck, crossed.entered) == ("A", "B", (2, 2))
    assert losses(produced)["A"] == [("collision", 0 + 1 + 2), ("crossing", lost)]
    rolls = [(r.purpose, r.value) for r in of(produced, DieRolled)]
    assert rolls == [("crossing", die)] + [("crossing-damage", v) for v in three_d6]
    # every crossing die comes after the wreck is crossed and before the crossing loss
    kinds = [type(e).__name__ for e in produced]
    first_die = kinds.index("DieRolled")
    assert kinds[first_die - 1] == "WreckCrossed"
    assert kinds[first_die + len(rolls)] == "DamageTaken"
    assert moved(produced)["A"] == (((1, 2), (2, 2)), "E")


def test_C2_a_turner_that_crosses_a_wreck_goes_on_with_its_step_2() -> None:
    state = game(ship("A", "blue-big", (2, 1), "N", wind=9), ship("B", "red-small", (2, 2), "E"))
    produced = run_move(state, [turn("A", "1/4", "right", sailing=True)], fixed_cup({("A", "crossing"): [4]}))
    assert [s.ship for s in of(produced, ShipSunk)] == ["B"]
    assert moved(produced)["A"] == (((2, 1), (2, 2), (3, 2)), "E")
    assert losses(produced)["A"] == [("collision", 0 + 1 + 2), ("crossing", 5)]


@pytest.mark.parametrize(("dice", "a_lost", "b_lost"), [((4, 3), 4 + 3 + 2, 5 + 4 + 2), ((4, 5), 0, 0)])
def test_C2_ruling_side_side_costs_two_each_on_a_1_to_3_and_nothing_at_all_otherwise(
    dice: tuple[int, int], a_lost: int, b_lost: int
) -> None:
    # The wind pushes A sideways into B's side; both face north.
    board = Board(10, 10, winds=(WindTile((2, 2), "E"),))
    state = game(ship("A", "green-small", (2, 2), "N"), ship("B", "red-small", (3, 2), "N"), board=board)
    produced = board_wind_phase(
        state, fixed_cup({("A", "side-contact"): [dice[0]], ("B", "side-contact"): [dice[1]]})
    )
    rolls = of(produced, DieRolled)
    assert [(r.ship, r.purpose, r.phase) for r in rolls] == [
        ("A", "side-contact", "wind-phase"),
        ("B", "side-contact", "wind-phase"),
    ]
    assert losses(produced) == {"A": [("collision", a_lost)], "B": [("collision", b_lost)]}
    kinds = [type(e).__name__ for e in produced]
    assert kinds[kinds.index("DieRolled") : kinds.index("DieRolled") + 4] == [
        "DieRolled",
        "DieRolled",
        "DamageTaken",
        "DamageTaken",
    ]


def test_C2_other_pairs_cost_no_extra() -> None:
    # side (A, pushed east while facing north) against stern (B faces east, struck from behind).
    board = Board(10, 10, winds=(WindTile((2, 2), "E"),))
    state = game(ship("A", "green-small", (2, 2), "N"), ship("B", "red-small", (3, 2), "E"), board=board)
    produced = board_wind_phase(state, table_cup())
    assert losses(produced) == {"A": [("collision", 4 + 3)], "B": [("collision", 5 + 4)]}
    assert of(produced, DieRolled) == []


def test_C3_worked_example_red_small_bow_into_yellow_big_side() -> None:
    state = game(ship("R", "red-small", (1, 2), "E", wind=2), ship("Y", "yellow-big", (2, 2), "N"))
    produced = run_move(state, [advance("R")], fixed_cup({("Y", "capsize"): [3]}))
    assert losses(produced) == {"R": [("collision", 15 + 27 + 2)], "Y": [("collision", 1 + 1 + 6)]}
    assert losses(produced)["R"] == [("collision", 44)] and losses(produced)["Y"] == [("collision", 8)]
    [sunk] = of(produced, ShipSunk)
    assert (sunk.ship, sunk.how, sunk.rules) == ("R", "sunk", ("W3",))
    assert [(r.ship, r.purpose, r.value) for r in of(produced, DieRolled)] == [("Y", "capsize", 3)]
    folded = after(state, produced)
    assert folded.ships["R"].sunk and folded.ships["Y"].afloat and folded.ships["Y"].damage == 8


def test_C4_siren_bow_loses_six_less_and_costs_the_other_eight_more() -> None:
    state = game(
        ship("R", "red-small", (1, 2), "E", wind=2, options=("siren",)),
        ship("Y", "yellow-big", (2, 2), "N"),
    )
    produced = run_move(state, [advance("R")], fixed_cup({("Y", "capsize"): [6]}))
    assert losses(produced) == {"R": [("collision", 44 - 6)], "Y": [("collision", 8 + 8)]}
    damage = {e.ship: e.rules for e in of(produced, DamageTaken)}
    assert "C4" in damage["R"] and "C4" in damage["Y"]
    # 38 lost of 38: a ship at 0 structure sinks (W3)
    assert [(s.ship, s.rules) for s in of(produced, ShipSunk)] == [("R", ("W3",))]


def test_C5_rocks_and_the_edge_stop_a_ship_without_damage() -> None:
    state = game(
        ship("A", "red-small", (2, 2), "N", wind=2),
        ship("B", "red-small", (0, 5), "W", wind=2),
        board=Board(10, 10, rocks=((2, 3),)),
    )
    produced = run_move(state, [advance("A"), advance("B")])
    collisions = of(produced, CollisionOccurred)
    assert [(c.ships, c.rock, c.rule) for c in collisions] == [
        (("A",), (2, 3), "M6"),
        (("B",), (-1, 5), "M6"),
    ]
    assert all("C5" in c.rules for c in collisions)
    assert of(produced, DamageTaken) == [] and of(produced, ShipSunk) == []
    assert moved(produced) == {"A": (((2, 2),), "N"), "B": (((0, 5),), "W")}


def test_C6_edition_2026_1_a_fireship_explodes_sinks_and_sets_the_other_ship_on_fire() -> None:
    # The 2026.1 edition, which games created before the C6 correction keep: the blast sinks the
    # fireship. The fireship's bow meets Y's stern: 8 + 11 + 2 and 5 + 15, plus 30 each for the blast.
    state = game(
        ship("F", "blue-big", (1, 2), "E", fireship=True),
        ship("Y", "yellow-big", (2, 2), "E"),
        rules_version="2026.1",
    )
    produced = run_move(state, [MoveIntent("F", "fireship")])
    assert of(produced, WindPointsChanged) == []
    assert losses(produced) == {
        "F": [("collision", 8 + 11 + 2), ("explosion", 30)],
        "Y": [("collision", 5 + 15), ("explosion", 30)],
    }
    [explosion] = of(produced, FireshipExplosion)
    assert (explosion.fireship, explosion.ship, explosion.rules) == ("F", "Y", ("C6",))
    [sunk] = of(produced, ShipSunk)
    assert (sunk.ship, sunk.how, sunk.rules) == ("F", "sunk", ("C6",))  # 51 of 130: the blast, not W3
    folded = after(state, produced)
    assert folded.ships["F"].sunk and folded.ships["Y"].afloat and folded.ships["Y"].at == (3, 2)


def test_C6_a_fireship_leaving_the_board_is_gone_and_frees_its_square() -> None:
    state = game(
        ship("F", "red-small", (9, 5), "E", fireship=True),
        ship("G", "red-small", (8, 5), "E", wind=2),
    )
    produced = run_move(state, [MoveIntent("F", "fireship"), advance("G")])
    assert of(produced, CollisionOccurred) == [] and of(produced, DamageTaken) == []
    [gone] = of(produced, ShipSunk)
    assert (gone.ship, gone.how, gone.at) == ("F", "gone", (9, 5))
    assert "C6" in gone.rules
    assert moved(produced) == {"G": (((8, 5), (9, 5)), "E")}
    folded = after(state, produced)
    assert folded.ships["F"].gone and not folded.ships["F"].afloat


def test_C6_an_ordinary_ship_stops_at_the_edge() -> None:
    state = game(ship("A", "red-small", (9, 5), "E", wind=2))
    produced = run_move(state, [advance("A")])
    assert [c.rule for c in of(produced, CollisionOccurred)] == ["M6"]
    assert of(produced, ShipSunk) == []
