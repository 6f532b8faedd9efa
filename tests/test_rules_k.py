"""Catapult, rule K (mortecouille.core.mortecouille.gunnery)."""

from __future__ import annotations

import pytest

from mortecouille.core.errors import RuleViolation
from mortecouille.core.mortecouille.gunnery import (
    CatapultEffect,
    can_fire_cannons,
    catapult_dice_count,
    catapult_hit_effect,
    catapult_needed,
    countdown_end_of_turn,
    shot_hits,
)
from mortecouille.events.combat import ShotFired
from mortecouille.events.orders import Attack, CatapultShot, Idle
from tests.test_mortecouille_turn import game, of, order, refused, resolve, ship


def play(target_class: str, hits_per_turn: list[int], super_shot: bool = False) -> list[str]:
    """Turn-by-turn log: 'acts' for a turn the ship is afloat in, then 'sinks' at its end."""
    hits_total, countdown, damage, log = 0, None, 0, []
    for hits in hits_per_turn:
        log.append("acts")
        effect = catapult_hit_effect(target_class, hits_total, hits, countdown, super_shot)
        hits_total, countdown = effect.hits_total, effect.countdown
        damage += effect.structure_damage
        countdown, sinks = countdown_end_of_turn(countdown, effect.countdown_started)
        if sinks:
            log.append("sinks")
            break
    return log


def test_K_table_and_three_dice_plus_elite() -> None:
    assert [catapult_needed(d) for d in range(1, 7)] == ["miss", 9, 13, 16, 19, 25]
    assert catapult_dice_count(False) == 3
    assert catapult_dice_count(True) == 4


def test_K_beyond_six_is_out_of_range() -> None:
    with pytest.raises(RuleViolation) as refused:
        catapult_needed(7)
    assert refused.value.rule == "K"


def test_K_distance_one_is_a_miss_whatever_the_dice() -> None:
    assert not shot_hits(catapult_needed(1), [6, 6, 6, 6], 5)


def test_K_catapult_is_not_held_back_by_burst_cooldown() -> None:
    # A burst last turn: S7 refuses any cannon fire this turn, but the catapult shoots and hits.
    assert not can_fire_cannons(1, False)
    state = game(
        ship("A", "blue-big", (5, 5), bursts_in_a_row=1, options=("catapult",)),
        ship("B", "red-small", (7, 5), owner="Bart"),
    )
    refused("S7", state, "A", Attack(position="starboard", target="B"))
    state = order(order(state, "A", CatapultShot(target="B")), "B", Idle())
    produced, after = resolve(state, {("A", "catapult"): [3, 3, 3]})  # distance 2 needs 9
    assert [(s.ship, s.weapon, s.needed, s.hit) for s in of(produced, ShotFired)] == [
        ("A", "catapult", 9, True)
    ]
    assert after.ships["B"].countdown == 3


def test_K_small_ship_hit_starts_countdown_without_structure_damage() -> None:
    effect = catapult_hit_effect("small", 0, 1, None, True)
    assert effect == CatapultEffect(
        structure_damage=0, hits_total=1, countdown=3, countdown_started=True, rules=("K",)
    )


def test_K_after_first_hit_small_ship_acts_three_more_turns() -> None:
    assert play("small", [1, 0, 0, 0, 0, 0]) == ["acts", "acts", "acts", "acts", "sinks"]
    assert countdown_end_of_turn(3, True) == (3, False)
    assert countdown_end_of_turn(3, False) == (2, False)
    assert countdown_end_of_turn(1, False) == (0, True)


def test_K_four_hits_in_one_turn_sink_at_end_of_that_turn() -> None:
    assert play("small", [4]) == ["acts", "sinks"]
    effect = catapult_hit_effect("small", 0, 4, None, False)
    assert effect.countdown == 0 and effect.countdown_started
    assert countdown_end_of_turn(effect.countdown, True) == (0, True)


def test_K_each_further_hit_takes_one_off_same_turn_or_later() -> None:
    assert catapult_hit_effect("small", 0, 2, None, False).countdown == 2
    later = catapult_hit_effect("small", 1, 1, 2, False)
    assert later.countdown == 1 and not later.countdown_started
    # hit in turn 1, hit again in turn 2: sinks at the end of turn 3
    assert play("small", [1, 1, 0, 0, 0]) == ["acts", "acts", "acts", "sinks"]


def test_K_countdown_never_goes_below_zero() -> None:
    assert catapult_hit_effect("small", 0, 6, None, False).countdown == 0
    assert countdown_end_of_turn(0, False) == (0, True)


def test_K_big_ship_loses_20_per_hit_25_with_super_shot() -> None:
    assert catapult_hit_effect("big", 0, 1, None, False).structure_damage == 20
    assert catapult_hit_effect("big", 0, 2, None, True).structure_damage == 50
    assert catapult_hit_effect("big", 0, 2, None, False).countdown is None


def test_K_big_ship_third_hit_counting_earlier_turns_starts_countdown() -> None:
    effect = catapult_hit_effect("big", 2, 1, None, False)
    assert (effect.structure_damage, effect.countdown, effect.countdown_started) == (20, 3, True)
    later = catapult_hit_effect("big", 3, 1, 3, False)
    assert (later.structure_damage, later.countdown, later.countdown_started) == (20, 2, False)
    # hits on turns 1, 2, 3: countdown from turn 3, three more turns, sinks at the end of turn 6
    assert play("big", [1, 1, 1, 0, 0, 0, 0]) == ["acts"] * 6 + ["sinks"]
    # six hits in one turn: 3rd starts the countdown, 4th-6th take it to 0
    assert play("big", [6]) == ["acts", "sinks"]


def test_K_split_calls_for_super_shot_and_plain_hits_do_not_depend_on_order() -> None:
    plain_first = catapult_hit_effect("big", 1, 1, None, False)
    then_super = catapult_hit_effect("big", 2, 2, plain_first.countdown, True)
    super_first = catapult_hit_effect("big", 1, 2, None, True)
    then_plain = catapult_hit_effect("big", 3, 1, super_first.countdown, False)
    assert then_super.countdown == then_plain.countdown == 2
    total_a = plain_first.structure_damage + then_super.structure_damage
    total_b = super_first.structure_damage + then_plain.structure_damage
    assert total_a == total_b == 70
