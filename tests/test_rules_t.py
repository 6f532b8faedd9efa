"""The mortecouille turn, rules T1-T3 and their rulings, through the decider."""

from __future__ import annotations

import pytest

from mortecouille.core.dice import SeededDice, TableDice
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.game import decide
from mortecouille.core.life_cycle import ResolveTurn
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.game import GameEnded, TurnEnded, TurnStarted
from mortecouille.events.mortecouille import WindPointsChanged
from mortecouille.events.movement import ShipMoved, ShipSunk
from mortecouille.events.orders import Advance, Attack, CatapultShot, Idle, Maneuver, OrderGiven
from tests.test_mortecouille_turn import SEED, game, of, order, refused, resolve, ship


def test_T1_one_action_per_turn_without_extra_crew() -> None:
    state = game(ship("A", "blue-big", (5, 5)), ship("B", "red-small", (7, 5), owner="Bart"))
    refused("T1", state, "A", Attack(position="starboard", target="B"), Advance())


def test_T1_extra_crew_two_different_actions_at_most_one_moving() -> None:
    state = game(
        ship("A", "blue-big", (5, 5), options=("extra-crew",)), ship("B", "red-small", (7, 5), owner="Bart")
    )
    ordered = order(state, "A", Attack(position="starboard", target="B"), Advance())
    assert len(ordered.orders["A"].actions) == 2
    refused("T1", state, "A", Advance(), Maneuver(turn="1/8", side="left"))
    refused("T1", state, "A", Attack(position="starboard", target="B"), Attack(position="port", target="B"))


def test_T1_ruling_idle_with_another_order_is_refused() -> None:
    state = game(
        ship("A", "blue-big", (5, 5), options=("extra-crew",)), ship("B", "red-small", (7, 5), owner="Bart")
    )
    refused("T1", state, "A", Idle(), Advance())


def test_T1_orders_are_replaced_only_on_request() -> None:
    state = game(ship("A", "blue-big", (5, 5)), ship("B", "red-small", (7, 5), owner="Bart"))
    state = order(state, "A", Advance())
    refused("T1", state, "A", Idle())
    events = decide(state, GiveOrder(ship="A", actions=(Idle(),), replace=True), TableDice())
    assert [(e.ship, e.actions, e.replaced) for e in of(events, OrderGiven)] == [("A", (Idle(),), True)]


def test_T1_doing_nothing_loses_all_wind_points_and_a_catapult_shot_alone_is_nothing() -> None:
    state = game(
        ship("A", "red-small", (5, 5), wind=1, options=("catapult",)),
        ship("B", "red-small", (5, 8), owner="Bart", wind=1),
        ship("C", "red-small", (1, 1), owner="Bart", wind=1),
    )
    state = order(order(state, "A", CatapultShot(target="B")), "B", Idle())
    produced, after = resolve(state, {("A", "catapult"): [1, 1, 1]}, wind=3)
    lost = [(w.ship, w.delta, w.rules) for w in of(produced, WindPointsChanged) if w.reason == "idle"]
    # C got no order at all (partial): it does nothing too (T1 ruling)
    assert lost == [("A", -2, ("T1",)), ("B", -2, ("T1",)), ("C", -2, ("T1",))]
    assert {s.wind for s in after.ships.values()} == {0}


def test_T1_an_action_keeps_the_wind_points_even_when_the_move_cannot_be_paid() -> None:
    state = game(ship("A", "blue-big", (5, 5), wind=2), ship("B", "red-small", (7, 5), owner="Bart", wind=0))
    state = order(order(state, "A", Attack(position="starboard", target="B")), "B", Advance())
    produced, after = resolve(state, wind=6)
    assert (after.ships["A"].wind, after.ships["B"].wind) == (3, 1)
    assert not [w for w in of(produced, WindPointsChanged) if w.reason == "idle"]


def test_T2_phases_run_in_order_upkeep_wind_combat_movement_end() -> None:
    state = game(
        ship("A", "blue-big", (5, 5), fire="1", wind=6),
        ship("B", "red-small", (7, 5), owner="Bart", wind=1),
    )
    state = order(order(state, "A", Attack(position="starboard", target="B")), "B", Advance())
    produced, _ = resolve(state, {("A", "fire"): [5]}, wind=6)
    kinds = [type(e).__name__ for e in produced if type(e).__name__ != "DieRolled"]
    assert kinds[0] == "TurnStarted" and kinds[-1] == "TurnEnded"
    order_seen = [k for k in kinds if k in ("FireChecked", "WindPointsChanged", "ShotFired", "ShipMoved")]
    assert (
        order_seen.index("FireChecked")
        < order_seen.index("WindPointsChanged")
        < order_seen.index("ShotFired")
    )
    assert order_seen.index("ShotFired") < order_seen.index("ShipMoved")
    assert isinstance(produced[0], TurnStarted) and produced[0].rounds == 1


def test_T2_ruling_a_ship_sunk_in_combat_does_not_move() -> None:
    state = game(
        ship("A", "blue-big", (5, 5)),
        ship("B", "red-small", (6, 5), owner="Bart", damage=30, wind=5),
        ship("C", "red-small", (1, 1), owner="Bart"),
    )
    state = order(
        order(order(state, "A", Attack(position="starboard", target="B")), "B", Advance()), "C", Idle()
    )
    produced, after = resolve(state)
    assert [s.ship for s in of(produced, ShipSunk)] == ["B"]
    assert not of(produced, ShipMoved) and after.ships["B"].at == (6, 5)


def test_T2_every_ship_that_can_act_needs_orders_unless_partial() -> None:
    state = game(ship("A", "blue-big", (5, 5)), ship("B", "red-small", (7, 5), owner="Bart"))
    state = order(state, "A", Idle())
    with pytest.raises(RuleViolation) as caught:
        resolve(state, partial=False)
    assert caught.value.rule == "T2" and "B" in caught.value.message
    resolve(state, partial=True)


def test_T2_rounds_other_than_one_are_refused() -> None:
    state = order(
        order(game(ship("A", "blue-big", (5, 5)), ship("B", "red-small", (7, 5), owner="Bart")), "A", Idle()),
        "B",
        Idle(),
    )
    with pytest.raises(BadInput):
        decide(state, ResolveTurn(rounds=4), TableDice())


def test_T3_last_player_afloat_wins_and_the_seed_is_revealed_after_turn_ended() -> None:
    state = game(ship("A", "blue-big", (5, 5)), ship("B", "red-small", (6, 5), owner="Bart", damage=30))
    state = order(order(state, "A", Attack(position="starboard", target="B")), "B", Idle())
    produced, after = resolve(state)
    assert isinstance(produced[-2], TurnEnded)
    ended = produced[-1]
    assert isinstance(ended, GameEnded)
    assert (ended.reason, ended.winner, ended.seed, ended.rules) == ("victory", "Anne", SEED, ("T3", "D2"))
    assert after.ended and after.revealed_seed == SEED
    with pytest.raises(RuleViolation) as caught:
        order(after, "A", Idle())
    assert caught.value.rule == "T3"


def test_T3_a_seeded_game_needs_the_right_seed_to_end() -> None:
    state = game(ship("A", "blue-big", (5, 5)), ship("B", "red-small", (6, 5), owner="Bart", damage=30))
    state = order(order(state, "A", Attack(position="starboard", target="B")), "B", Idle())
    with pytest.raises(BadInput) as missing:
        resolve(state, reveal=None)
    assert missing.value.field == "reveal_seed"
    with pytest.raises(BadInput):
        decide(state, ResolveTurn(reveal_seed="wrong"), SeededDice(SEED))


def test_T3_ruling_everyone_out_in_the_same_turn_ends_with_no_winner() -> None:
    state = game(
        ship("A", "blue-big", (5, 5), damage=112), ship("B", "blue-big", (6, 5), owner="Bart", damage=112)
    )
    state = order(
        order(state, "A", Attack(position="starboard", target="B")), "B", Attack(position="port", target="A")
    )
    produced, after = resolve(state)
    ended = produced[-1]
    assert isinstance(ended, GameEnded) and (ended.reason, ended.winner) == ("victory", None)


def test_T3_ruling_ships_of_a_single_owner_never_end_the_game() -> None:
    state = game(ship("A", "blue-big", (5, 5)), ship("B", "red-small", (6, 5), damage=30))
    state = order(order(state, "A", Attack(position="starboard", target="B")), "B", Idle())
    produced, after = resolve(state)
    assert after.ships["B"].sunk and not after.ended and not of(produced, GameEnded)
