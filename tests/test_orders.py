"""Giving orders (T1): what is refused at order time, with which rule or field, and how orders
are logged and read back (S1-S4, S7, K, X1, C6, T2)."""

from __future__ import annotations

import msgspec
import pytest

from mortecouille.core.dice import TableDice, seed_commitment
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import CreateGame
from mortecouille.core.mortecouille.orders import orders_this_turn
from mortecouille.core.state import EMPTY
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.board import Board
from mortecouille.events.codec import event_decoder
from mortecouille.events.movement import ShipSunk
from mortecouille.events.orders import (
    Advance,
    Attack,
    BecomeFireship,
    CatapultShot,
    Idle,
    Maneuver,
    OrderGiven,
)
from tests.test_mortecouille_turn import game, order, refused, resolve, ship


def duel() -> object:
    return game(ship("A", "red-small", (5, 5)), ship("B", "red-small", (2, 5), owner="Bart"))


def bad_input(field: str, state: object, ship_id: str, *actions: object) -> None:
    with pytest.raises(BadInput) as caught:
        decide(state, GiveOrder(ship=ship_id, actions=actions), TableDice())  # type: ignore[arg-type]
    assert caught.value.field == field, caught.value


def test_order_given_records_the_whole_set_and_reads_back_from_json() -> None:
    state = game(
        ship("A", "blue-big", (5, 5), options=("extra-crew", "catapult")),
        ship("B", "red-small", (7, 5), owner="Bart"),
    )
    actions = (
        Attack(position="starboard", target="B", mode="burst"),
        Maneuver(turn="1/4", side="left", sailing=True),
        CatapultShot(target="B"),
    )
    [event] = decide(state, GiveOrder(ship="A", actions=actions), TableDice())
    assert (
        isinstance(event, OrderGiven)
        and event.actions == actions
        and event.turn == 1
        and event.rules == ("T1",)
    )
    line = msgspec.json.encode(event)
    assert b'"order":"maneuver"' in line
    assert event_decoder().decode(line) == event
    assert orders_this_turn(fold([event], state), "A") == actions


def test_orders_of_an_earlier_turn_count_as_none() -> None:
    state = order(order(duel(), "A", Advance()), "B", Idle())  # type: ignore[arg-type]
    _, after = resolve(state)
    assert after.turn == 2 and orders_this_turn(after, "A") == ()
    order(after, "A", Idle())  # no replace needed: last turn's orders are gone


def test_unknown_ship_and_target_are_bad_input_naming_the_field() -> None:
    state = duel()
    bad_input("ship", state, "Z", Idle())
    bad_input("actions[0].target", state, "A", Attack(position="port", target="Z"))
    armed = game(
        ship("A", "red-small", (5, 5), options=("catapult",)), ship("B", "red-small", (2, 5), owner="Bart")
    )
    bad_input("actions[0].target", armed, "A", CatapultShot(target="Z"))


def test_malformed_orders_are_bad_input_naming_the_field() -> None:
    state = duel()
    bad_input("actions", state, "A")
    bad_input("actions[0].position", state, "A", Attack(position="aft", target="B"))
    bad_input("actions[0].mode", state, "A", Attack(position="port", target="B", mode="rapid"))
    bad_input("actions[0].turn", state, "A", Maneuver(turn="1/3", side="left"))
    bad_input("actions[0].side", state, "A", Maneuver(turn="1/4", side="up"))
    bad_input("actions[0]", state, "A", "advance")


def test_S1_target_off_the_line_and_the_ship_itself_are_refused() -> None:
    state = duel()
    refused("S1", state, "A", Attack(position="starboard", target="B"))
    refused("S1", state, "A", Attack(position="port", target="A"))


def test_S1_ruling_an_own_ship_may_be_targeted() -> None:
    state = game(
        ship("A", "red-small", (5, 5)),
        ship("F", "red-small", (2, 5)),
        ship("B", "red-small", (9, 9), owner="Bart"),
    )
    after = order(state, "A", Attack(position="port", target="F"))
    assert orders_this_turn(after, "A") == (Attack(position="port", target="F"),)


def test_S2_a_position_without_cannons_cannot_fire() -> None:
    state = game(ship("A", "red-small", (5, 5)), ship("B", "red-small", (5, 7), owner="Bart"))
    refused("S2", state, "A", Attack(position="bow", target="B"))


def test_S3_normal_fire_beyond_the_table_is_refused_but_an_automatic_miss_is_allowed() -> None:
    far = game(ship("A", "blue-big", (0, 5)), ship("B", "red-small", (8, 5), owner="Bart"))
    refused("S3", far, "A", Attack(position="starboard", target="B"))
    miss = game(ship("A", "red-small", (0, 5)), ship("B", "red-small", (6, 5), owner="Bart"))
    order(miss, "A", Attack(position="starboard", target="B"))  # 2 cannons at 6: "-", still an attack


def test_S4_burst_needs_three_cannons_and_a_target_within_its_table() -> None:
    refused("S4", duel(), "A", Attack(position="port", target="B", mode="burst"))
    far = game(ship("A", "blue-big", (0, 5)), ship("B", "red-small", (9, 5), owner="Bart"))
    refused("S4", far, "A", Attack(position="starboard", target="B", mode="burst"))


def test_S7_no_cannon_fire_during_the_cooldown_but_the_catapult_may_shoot() -> None:
    state = game(
        ship("A", "blue-big", (5, 5), bursts_in_a_row=1, options=("catapult",)),
        ship("B", "red-small", (7, 5), owner="Bart"),
    )
    refused("S7", state, "A", Attack(position="starboard", target="B"))
    order(state, "A", CatapultShot(target="B"))


def test_K_catapult_without_a_catapult_beyond_range_or_one_shot_too_many_is_refused() -> None:
    refused("K", duel(), "A", CatapultShot(target="B"))
    big = game(
        ship("A", "blue-big", (0, 0), options=("catapult", "catapult")),
        ship("B", "red-small", (7, 0), owner="Bart"),
    )
    refused("K", big, "A", CatapultShot(target="B"))
    near = fold([ship("B", "red-small", (3, 0), owner="Bart")], big)
    order(near, "A", CatapultShot(target="B"), CatapultShot(target="B"))
    refused("K", near, "A", CatapultShot(target="B"), CatapultShot(target="B"), CatapultShot(target="B"))


def test_X1_a_ship_in_fire_phase_3_can_only_idle() -> None:
    state = game(
        ship("A", "red-small", (5, 5), fire="3", options=("catapult",)),
        ship("B", "red-small", (2, 5), owner="Bart"),
    )
    refused("X1", state, "A", Attack(position="port", target="B"))
    refused("X1", state, "A", CatapultShot(target="B"))
    order(state, "A", Idle())


def test_T2_a_ship_that_left_the_game_takes_no_orders_and_cannot_be_targeted() -> None:
    state = duel()
    sunk = fold([ShipSunk(turn=1, round=1, phase="combat", ship="B", at=(2, 5))], state)  # type: ignore[list-item]
    refused("T2", sunk, "B", Idle())
    refused("T2", sunk, "A", Attack(position="port", target="B"))


def test_C6_fireship_needs_the_option_and_a_fireship_takes_no_orders() -> None:
    refused("C6", duel(), "A", BecomeFireship())
    fireship = game(
        ship("A", "red-small", (5, 5), fireship=True), ship("B", "red-small", (2, 5), owner="Bart")
    )
    refused("C6", fireship, "A", Idle())


def test_orders_are_for_mortecouille_games_only() -> None:
    created = decide(
        EMPTY,
        CreateGame(
            game="b",
            ruleset="blockade",
            players=("Anne", "Bart"),
            budget=0,
            board=Board(width=5, height=5),
            seed_sha256=seed_commitment("s"),
        ),
        TableDice(),
    )
    with pytest.raises(RuleViolation) as caught:
        decide(fold(created), GiveOrder(ship="A", actions=(Advance(),)), TableDice())
    assert caught.value.rule == "T1"
