"""The mortecouille movement phase and board wind phase (A2, A3, N, M7, W3, T2, D1).

Collision damage during these phases is tested in ``test_rules_c_turn.py``; the
helpers here build game states directly and fix the dice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mortecouille.core.dice import DiceCup, FixedDice, SeededDice, TableDice
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.game import fold
from mortecouille.core.mortecouille.movement import MoveIntent, board_wind_phase, movement_phase
from mortecouille.core.state import GameState, ShipState
from mortecouille.events.base import Event
from mortecouille.events.board import Board, WindTile
from mortecouille.events.codec import decode_lines
from mortecouille.events.game import DieRolled
from mortecouille.events.mortecouille import WindPointsChanged
from mortecouille.events.mortecouille_movement import MoveUnaffordable
from mortecouille.events.movement import CollisionOccurred, DamageTaken, ShipMoved, ShipPushed, ShipSunk
from tests.forgery import chained_lines

OPEN = Board(10, 10)
E = TypeVar("E", bound=Event)


# --- helpers (also used by test_rules_c_turn.py) ----------------------------------------------------


def ship(
    sid: str,
    kind: str,
    at: tuple[int, int],
    facing: str,
    *,
    wind: int = 0,
    damage: float = 0.0,
    options: tuple[str, ...] = (),
    fireship: bool = False,
) -> ShipState:
    return ShipState(
        id=sid,
        kind=kind,
        owner=None,
        at=at,
        facing=facing,
        wind=wind,
        damage=damage,
        options=options,
        fireship=fireship,
    )


def game(*ships: ShipState, board: Board = OPEN, rules_version: str = RULES_VERSION) -> GameState:
    return GameState(
        game="g",
        ruleset="mortecouille",
        players=("Anne", "Bart"),
        board=board,
        rules_version=rules_version,
        created=True,
        fleets={},
        ships={s.id: s for s in ships},
    )


def table_cup(*values: int) -> DiceCup:
    """Dice the referee typed, in order; asking for one more fails the test."""
    return DiceCup(TableDice(values), "g", 1)


def fixed_cup(fixed: Mapping[tuple[str | None, str], Sequence[int]]) -> DiceCup:
    """Dice per (ship, purpose); any other die fails the test."""
    return DiceCup(FixedDice(fixed, TableDice()), "g", 1)


def advance(sid: str) -> MoveIntent:
    return MoveIntent(sid, "advance")


def turn(sid: str, which: str, side: str | None, *, sailing: bool) -> MoveIntent:
    return MoveIntent(sid, "maneuver", which, side, sailing)


def of(log: Sequence[Event], kind: type[E]) -> list[E]:
    return [e for e in log if isinstance(e, kind)]


def moved(log: Sequence[Event]) -> dict[str, tuple[tuple[tuple[int, int], ...], str]]:
    return {e.ship: (e.path, e.facing) for e in of(log, ShipMoved)}


def losses(log: Sequence[Event]) -> dict[str, list[tuple[str, float]]]:
    table: dict[str, list[tuple[str, float]]] = {}
    for e in of(log, DamageTaken):
        table.setdefault(e.ship, []).append((e.cause, e.amount))
    return table


def run_move(state: GameState, intents: Sequence[MoveIntent], cup: DiceCup | None = None) -> list[Event]:
    return movement_phase(state, {i.ship: i for i in intents}, cup or table_cup())


def after(state: GameState, produced: Sequence[Event]) -> GameState:
    return fold(produced, state)


# --- A3 advance -------------------------------------------------------------------------------------


def test_A3_advance_with_enough_points_moves_one_square_and_spends_speed() -> None:
    state = game(ship("A", "red-small", (2, 2), "N", wind=3))
    produced = run_move(state, [advance("A")])
    spend = of(produced, WindPointsChanged)
    assert [(w.ship, w.delta, w.points, w.phase) for w in spend] == [("A", -2, 1, "movement")]
    assert "A3" in spend[0].rules
    assert moved(produced) == {"A": (((2, 2), (2, 3)), "N")}
    folded = after(state, produced).ships["A"]
    assert (folded.at, folded.wind) == ((2, 3), 1)


def test_A3_advance_without_enough_points_keeps_them_and_does_not_move() -> None:
    state = game(ship("A", "blue-small", (2, 2), "N", wind=3))
    produced = run_move(state, [advance("A")])
    assert of(produced, WindPointsChanged) == []
    assert of(produced, ShipMoved) == []
    [short] = of(produced, MoveUnaffordable)
    assert (short.ship, short.points, short.cost, short.intent) == ("A", 3, 4, "advance")
    assert "A3" in short.rules
    assert after(state, produced).ships["A"] == state.ships["A"]


def test_A3_a_ship_short_of_points_is_stationary_and_can_be_bumped() -> None:
    state = game(
        ship("A", "green-small", (2, 2), "N", wind=3),
        ship("B", "green-small", (2, 3), "N", wind=0),
    )
    produced = run_move(state, [advance("A"), advance("B")])
    [push] = of(produced, ShipPushed)
    assert (push.pusher, push.ship, push.pushed_from, push.pushed_to) == ("A", "B", (2, 3), (2, 4))
    [collision] = of(produced, CollisionOccurred)
    assert (collision.rule, collision.ships) == ("M3", ("A", "B"))
    folded = after(state, produced)
    assert (folded.ships["A"].at, folded.ships["B"].at) == ((2, 2), (2, 4))


def test_A3_points_are_spent_even_when_a_collision_stops_the_ship() -> None:
    state = game(ship("A", "red-small", (2, 2), "N", wind=2), board=Board(10, 10, rocks=((2, 3),)))
    produced = run_move(state, [advance("A")])
    assert [(w.delta, w.points) for w in of(produced, WindPointsChanged)] == [(-2, 0)]
    assert [c.rule for c in of(produced, CollisionOccurred)] == ["M6"]
    assert moved(produced) == {"A": (((2, 2),), "N")}


def test_A2_speed_counts_the_structure_lost_so_far() -> None:
    # red-small: 38 structure, speed 2; half of it lost makes the speed 3.
    state = game(ship("A", "red-small", (2, 2), "N", wind=2, damage=19))
    [short] = of(run_move(state, [advance("A")]), MoveUnaffordable)
    assert short.cost == 3


# --- N manoeuvres -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "which", "cost", "facing"),
    [
        ("red-small", "1/8", 1, "NE"),
        ("red-small", "1/4", 2, "E"),
        ("red-small", "1/2", 4, "S"),
        ("red-big", "1/8", 2, "NE"),
        ("red-big", "1/4", 3, "E"),
        ("red-big", "1/2", 6, "S"),
    ],
)
def test_N_at_rest_turns_in_place_for_its_fixed_cost(kind: str, which: str, cost: int, facing: str) -> None:
    state = game(ship("A", kind, (2, 2), "N", wind=cost))
    produced = run_move(state, [turn("A", which, "right", sailing=False)])
    [spend] = of(produced, WindPointsChanged)
    assert (spend.delta, spend.points) == (-cost, 0)
    assert "N" in spend.rules
    assert moved(produced) == {"A": (((2, 2),), facing)}


@pytest.mark.parametrize(
    ("kind", "which", "cost", "path", "facing"),
    [
        # red-small speed 2: eighth +0, quarter +1, half +2
        ("red-small", "1/8", 2, ((2, 2), (2, 3)), "NE"),
        ("red-small", "1/4", 3, ((2, 2), (2, 3), (3, 3)), "E"),
        ("red-small", "1/2", 4, ((2, 2), (2, 3)), "S"),
        # red-big speed 5: eighth +1, quarter +2, half +4 (the ruling reads the source's "4 dice")
        ("red-big", "1/8", 6, ((2, 2), (2, 3)), "NE"),
        ("red-big", "1/4", 7, ((2, 2), (2, 3), (3, 3)), "E"),
        ("red-big", "1/2", 9, ((2, 2), (2, 3)), "S"),
    ],
)
def test_N_sailing_costs_speed_plus_extra_and_follows_its_path(
    kind: str, which: str, cost: int, path: tuple[tuple[int, int], ...], facing: str
) -> None:
    state = game(ship("A", kind, (2, 2), "N", wind=cost))
    produced = run_move(state, [turn("A", which, "right", sailing=True)])
    assert [w.delta for w in of(produced, WindPointsChanged)] == [-cost]
    assert moved(produced) == {"A": (path, facing)}


def test_N_left_turns_anticlockwise() -> None:
    state = game(ship("A", "red-small", (2, 2), "N", wind=3))
    produced = run_move(state, [turn("A", "1/4", "left", sailing=True)])
    assert moved(produced) == {"A": (((2, 2), (2, 3), (1, 3)), "W")}


def test_N_turning_in_place_claims_no_square() -> None:
    # B enters the square ahead of A while A turns in place: no contest, no collision.
    state = game(
        ship("A", "red-small", (2, 2), "N", wind=1),
        ship("B", "red-small", (1, 3), "E", wind=2),
    )
    produced = run_move(state, [turn("A", "1/8", "left", sailing=False), advance("B")])
    assert of(produced, CollisionOccurred) == []
    assert moved(produced) == {"A": (((2, 2),), "NW"), "B": (((1, 3), (2, 3)), "E")}


def test_N_a_ship_turning_in_place_is_stationary_and_can_be_bumped() -> None:
    state = game(
        ship("A", "red-small", (2, 3), "N", wind=2),
        ship("B", "red-small", (2, 2), "N", wind=2),
    )
    # A already faces E when B's bow strikes its side: A rolls to capsize (6: stays afloat).
    produced = run_move(state, [turn("A", "1/4", "right", sailing=False), advance("B")], table_cup(6))
    [push] = of(produced, ShipPushed)
    assert (push.ship, push.pushed_to) == ("A", (2, 4))
    assert moved(produced)["A"] == (((2, 3), (2, 4)), "E")


def test_N_a_sailing_manoeuvre_never_pushes() -> None:
    # Same class, so a forward move would push B; A's bow strikes B's side (B rolls 6).
    state = game(
        ship("A", "red-big", (2, 2), "N", wind=6),
        ship("B", "yellow-big", (2, 3), "E"),
    )
    produced = run_move(state, [turn("A", "1/8", "right", sailing=True)], table_cup(6))
    assert of(produced, ShipPushed) == []
    [collision] = of(produced, CollisionOccurred)
    assert collision.rule == "M3"
    folded = after(state, produced)
    assert (folded.ships["A"].at, folded.ships["A"].facing) == ((2, 2), "NE")
    assert folded.ships["B"].at == (2, 3)
    assert folded.ships["A"].wind == 0  # spent although the collision stopped it


def test_N_without_enough_points_the_manoeuvre_does_not_happen() -> None:
    state = game(ship("A", "red-big", (2, 2), "N", wind=6))
    produced = run_move(state, [turn("A", "1/4", "right", sailing=True)])
    [short] = of(produced, MoveUnaffordable)
    assert (short.cost, short.points, short.intent) == (7, 6, "maneuver 1/4 right sailing")
    assert of(produced, ShipMoved) == [] and of(produced, WindPointsChanged) == []


def test_N_malformed_or_unfitting_intents_are_refused() -> None:
    state = game(
        ship("A", "red-small", (2, 2), "N", wind=9), ship("F", "red-small", (5, 5), "N", fireship=True)
    )
    with pytest.raises(BadInput):
        run_move(state, [turn("A", "1/3", "right", sailing=True)])
    with pytest.raises(BadInput):
        run_move(state, [turn("A", "1/4", None, sailing=True)])
    with pytest.raises(BadInput):
        movement_phase(state, {"A": advance("B")}, table_cup())
    with pytest.raises(RuleViolation):
        run_move(state, [MoveIntent("A", "fireship")])
    with pytest.raises(RuleViolation):
        run_move(state, [advance("F")])


def test_T2_a_ship_no_longer_afloat_does_not_move() -> None:
    sunk = msgspec.structs.replace(ship("A", "red-small", (2, 2), "N", wind=9), sunk=True)
    assert run_move(game(sunk), [advance("A")]) == []
    burnt = msgspec.structs.replace(ship("F", "red-small", (2, 2), "N", fireship=True), lost=True)
    assert run_move(game(burnt), [MoveIntent("F", "fireship")]) == []


def test_D1_the_phase_events_survive_the_log_format() -> None:
    state, intents = _crowded()
    produced = movement_phase(state, intents, DiceCup(SeededDice("s"), "g", 1))
    produced += board_wind_phase(after(state, produced), DiceCup(SeededDice("s"), "g", 1))
    decoded = [
        msgspec.structs.replace(e, seq=-1, prev="", hash="") for e in decode_lines(chained_lines(produced))
    ]
    assert decoded == produced
    assert after(state, decoded) == after(state, produced)


# --- W3 and T2: sinking between the steps -----------------------------------------------------------


def test_W3_a_ship_sunk_in_step_1_does_not_block_step_2() -> None:
    # X (blue-big) rams S's stern in step 1: S (red-small, 38) loses 15 + 30 and sinks at once;
    # the rock behind S stops the push. T's quarter turn then enters S's square in step 2.
    state = game(
        ship("S", "red-small", (3, 3), "N"),
        ship("X", "blue-big", (3, 2), "N", wind=7),
        ship("T", "green-small", (2, 2), "N", wind=4),
        board=Board(10, 10, rocks=((3, 4),)),
    )
    produced = run_move(state, [advance("X"), turn("T", "1/4", "right", sailing=True)])
    [sunk] = of(produced, ShipSunk)
    assert (sunk.ship, sunk.how, sunk.at, sunk.rules) == ("S", "sunk", (3, 3), ("W3",))
    assert moved(produced)["T"] == (((2, 2), (2, 3), (3, 3)), "E")
    assert [c.step for c in of(produced, CollisionOccurred)] == [1]
    folded = after(state, produced)
    assert folded.ships["S"].sunk and not folded.ships["S"].afloat
    assert folded.ships["T"].at == (3, 3)


# --- M7 board wind phase ------------------------------------------------------------------------------


def test_M7_wind_tiles_push_and_whirlpools_turn() -> None:
    board = Board(10, 10, winds=(WindTile((2, 2), "E"),), whirlpools=((6, 6),))
    state = game(
        ship("A", "red-small", (2, 2), "N"),
        ship("W", "red-small", (6, 6), "N"),
        board=board,
    )
    produced = board_wind_phase(state, table_cup())
    assert moved(produced) == {"A": (((2, 2), (3, 2)), "N"), "W": (((6, 6), (6, 7), (7, 7)), "E")}
    assert all(e.phase == "wind" for e in of(produced, ShipMoved))
    assert of(produced, WindPointsChanged) == []


def test_M7_no_wind_tiles_or_whirlpools_means_no_events() -> None:
    assert board_wind_phase(game(ship("A", "red-small", (2, 2), "N")), table_cup()) == []


def test_M7_a_wind_push_bumps_like_a_forward_move() -> None:
    board = Board(10, 10, winds=(WindTile((2, 2), "N"),))
    state = game(ship("A", "red-big", (2, 2), "N"), ship("B", "red-small", (2, 3), "S"), board=board)
    produced = board_wind_phase(state, table_cup())
    [push] = of(produced, ShipPushed)
    assert (push.pusher, push.ship, push.pushed_to) == ("A", "B", (2, 4))
    # bow-bow: red-big 2 + 1 + 3, red-small 15 + 20 + 3 = 38, all it has: it sinks where pushed.
    assert losses(produced) == {"A": [("collision", 2 + 1 + 3)], "B": [("collision", 15 + 20 + 3)]}
    [sunk] = of(produced, ShipSunk)
    assert (sunk.ship, sunk.at, sunk.phase) == ("B", (2, 4), "wind")
    assert moved(produced)["A"] == (((2, 2), (2, 3)), "N")


def test_M7_whirlpool_collisions_never_push_and_cost_damage() -> None:
    # Step 1: the wind pushes P onto the whirlpool's NE corner, W goes SW -> NW. Step 2: W's
    # turn to NE meets P, which ended its move there (M2b). W already faces E: bow; P faces N
    # and is struck from the W: side. P rolls to capsize (4: stays afloat); nobody is pushed.
    board = Board(10, 10, winds=(WindTile((6, 5), "W"),), whirlpools=((4, 4),))
    state = game(ship("W", "red-big", (4, 4), "N"), ship("P", "yellow-big", (6, 5), "N"), board=board)
    produced = board_wind_phase(state, fixed_cup({("P", "capsize"): [4]}))
    assert of(produced, ShipPushed) == []
    assert [(c.step, c.rule) for c in of(produced, CollisionOccurred)] == [(2, "M2b")]
    assert losses(produced) == {"W": [("collision", 10 + 11 + 2)], "P": [("collision", 5 + 5 + 6)]}
    rolls = of(produced, DieRolled)
    assert [(r.ship, r.purpose, r.phase) for r in rolls] == [("P", "capsize", "wind-phase")]
    assert moved(produced) == {"W": (((4, 4), (4, 5)), "E"), "P": (((6, 5), (5, 5)), "N")}


# --- order independence, purity, dice placement ---------------------------------------------------------


def _crowded() -> tuple[GameState, dict[str, MoveIntent]]:
    board = Board(
        8, 8, rocks=((5, 5),), winds=(WindTile((1, 1), "N"), WindTile((3, 2), "N")), whirlpools=((6, 2),)
    )
    ships = [
        ship("a", "red-small", (2, 2), "E", wind=9),
        ship("b", "yellow-big", (3, 2), "N", wind=9),
        ship("c", "blue-big", (3, 1), "N", wind=9),
        ship("d", "green-small", (4, 3), "W", wind=9),
        ship("e", "red-big", (5, 4), "N", wind=9),
        ship("f", "red-small", (1, 1), "E", wind=9, fireship=True),
        ship("g", "blue-small", (0, 0), "S", wind=9),
        ship("h", "green-big", (6, 2), "W"),
    ]
    intents = {
        "a": advance("a"),
        "c": turn("c", "1/4", "left", sailing=True),
        "d": advance("d"),
        "e": advance("e"),
        "f": MoveIntent("f", "fireship"),
        "g": advance("g"),
    }
    return game(*ships, board=board), intents


def _reordered(state: GameState, order: Sequence[str]) -> GameState:
    return msgspec.structs.replace(state, ships={sid: state.ships[sid] for sid in order})


@settings(max_examples=40, deadline=None)
@given(st.permutations(list("abcdefgh")), st.permutations(list("acdefg")))
def test_T2_order_of_ships_and_intents_never_changes_the_events(
    ship_order: list[str], intent_order: list[str]
) -> None:
    state, intents = _crowded()
    expected_move = movement_phase(state, intents, DiceCup(SeededDice("s"), "g", 1))
    shuffled = _reordered(state, ship_order)
    got_move = movement_phase(
        shuffled, {sid: intents[sid] for sid in intent_order}, DiceCup(SeededDice("s"), "g", 1)
    )
    assert msgspec.json.encode(got_move) == msgspec.json.encode(expected_move)
    expected_wind = board_wind_phase(after(state, expected_move), DiceCup(SeededDice("s"), "g", 1))
    got_wind = board_wind_phase(after(shuffled, got_move), DiceCup(SeededDice("s"), "g", 1))
    assert msgspec.json.encode(got_wind) == msgspec.json.encode(expected_wind)


def test_T2_the_phases_are_pure() -> None:
    state, intents = _crowded()
    before = msgspec.json.encode(state)
    first = movement_phase(state, intents, DiceCup(SeededDice("s"), "g", 1))
    second = movement_phase(state, intents, DiceCup(SeededDice("s"), "g", 1))
    assert msgspec.json.encode(first) == msgspec.json.encode(second)
    assert msgspec.json.encode(state) == before
    assert of(first, CollisionOccurred), "the crowded scene is meant to collide"
    wind = board_wind_phase(after(state, first), DiceCup(SeededDice("s"), "g", 1))
    assert of(wind, ShipPushed) and moved(wind)["h"][0] == ((6, 2), (6, 3), (7, 3))


def test_D1_every_die_comes_right_before_the_outcome_that_used_it() -> None:
    # red-small's bow into yellow-big's side (C3): yellow-big's capsize die, then its sinking.
    state = game(ship("R", "red-small", (1, 2), "E", wind=2), ship("Y", "yellow-big", (2, 2), "N"))
    produced = run_move(state, [advance("R")], fixed_cup({("Y", "capsize"): [1]}))
    roll = next(i for i, e in enumerate(produced) if isinstance(e, DieRolled))
    outcome = produced[roll + 1]
    assert isinstance(outcome, ShipSunk) and outcome.ship == "Y"
    assert max(i for i, e in enumerate(produced) if isinstance(e, DamageTaken)) < roll
    die = produced[roll]
    assert isinstance(die, DieRolled)
    assert (die.ship, die.purpose, die.phase, die.turn) == ("Y", "capsize", "movement", 1)
