"""The mortecouille turn at the turn level (T2): wind A1-A2, shots S, catapults K, fire X, wear W,
fireships C6, dice D1-D2. Also the kit the other turn tests build their games with.

Games are built from real events (GameCreated, ShipSetUp), orders go through
the decider, and every die is scripted: a test that needs a die it did not
list fails, so each test states exactly the dice its rule uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import pytest

from mortecouille.core.dice import RollIdentity, SeededDice, TableDice, seed_commitment
from mortecouille.core.errors import RuleViolation
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import CreateGame, ResolveTurn
from mortecouille.core.state import EMPTY, GameState, state_hash
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.combat import (
    BecameFireship,
    BurstStreakChanged,
    CatapultHitsTaken,
    CountdownChanged,
    FireChecked,
    FireScheduled,
    ShotFired,
)
from mortecouille.events.game import DieRolled, TurnEnded
from mortecouille.events.mortecouille import ShipSetUp, WindPointsChanged
from mortecouille.events.mortecouille_movement import FireshipExplosion, MoveUnaffordable
from mortecouille.events.movement import DamageTaken, ShipMoved, ShipSunk
from mortecouille.events.orders import Advance, Attack, BecomeFireship, CatapultShot, Idle, Order

SEED = "turn-seed"
E = TypeVar("E", bound=Event)


# --- the kit ------------------------------------------------------------------------------------


def ship(
    ship_id: str, kind: str, at: tuple[int, int], facing: str = "N", owner: str = "Anne", **kw: Any
) -> ShipSetUp:
    return ShipSetUp(ship=ship_id, kind=kind, owner=owner, at=at, facing=facing, **kw)


def game(
    *ships: ShipSetUp,
    board: Board | None = None,
    players: Sequence[str] = ("Anne", "Bart"),
    rules_version: str = "2026.1",
) -> GameState:
    """A game of ``ships`` set up on the board. The turn tests were written for the 2026.1 edition
    and keep it; a test of a later correction names its edition (tests/test_rules_editions.py)."""
    created = decide(
        EMPTY,
        CreateGame(
            game="t",
            ruleset="mortecouille",
            players=tuple(players),
            budget=0,
            board=board or Board(width=12, height=12),
            seed_sha256=seed_commitment(SEED),
            rules_version=rules_version,
        ),
        TableDice(),
    )
    return fold([*created, *ships])


def order(state: GameState, ship_id: str, *actions: Order, replace: bool = False) -> GameState:
    return fold(decide(state, GiveOrder(ship=ship_id, actions=actions, replace=replace), TableDice()), state)


class Script:
    """Dice by (ship, purpose), in order; wind dice default to ``wind``; any other die fails."""

    def __init__(self, dice: Mapping[tuple[str, str], Sequence[int]], wind: int) -> None:
        self.queues = {key: list(values) for key, values in dice.items()}
        self.wind = wind

    def value(self, identity: RollIdentity, label: str) -> tuple[int, str]:
        queue = self.queues.get((identity.ship or "", identity.purpose))
        if queue:
            return queue.pop(0), "fixed"
        if identity.purpose == "wind":
            return self.wind, "fixed"
        raise AssertionError(f"unscripted die: {label}")


def resolve(
    state: GameState,
    dice: Mapping[tuple[str, str], Sequence[int]] | None = None,
    wind: int = 1,
    partial: bool = True,
    reveal: str | None = SEED,
) -> tuple[list[Event], GameState]:
    produced = decide(state, ResolveTurn(partial=partial, reveal_seed=reveal), Script(dice or {}, wind))
    return produced, fold(produced, state)


def of(produced: Sequence[Event], kind: type[E]) -> list[E]:
    return [event for event in produced if isinstance(event, kind)]


def refused(rule: str, state: GameState, ship_id: str, *actions: Order) -> None:
    with pytest.raises(RuleViolation) as caught:
        order(state, ship_id, *actions)
    assert caught.value.rule == rule, caught.value


# --- A: wind points ---------------------------------------------------------------------------


def test_A1_wind_die_3_to_6_gives_one_point_1_2_none() -> None:
    state = game(ship("A", "red-small", (1, 1)), ship("B", "red-small", (5, 5), owner="Bart"))
    state = order(order(state, "A", Advance()), "B", Advance())
    produced, after = resolve(state, {("A", "wind"): [3], ("B", "wind"): [2]})
    gained = [
        (e.ship, e.delta, e.points, e.rules) for e in of(produced, WindPointsChanged) if e.reason == "wind"
    ]
    assert gained == [("A", 1, 1, ("A1",))]
    assert (after.ships["A"].wind, after.ships["B"].wind) == (1, 0)
    assert [(d.ship, d.purpose, d.phase) for d in of(produced, DieRolled)] == [
        ("A", "wind", "wind"),
        ("B", "wind", "wind"),
    ]


def test_A1_slave_rerolls_a_failed_wind_die_once() -> None:
    state = game(
        ship("A", "red-small", (1, 1), options=("slave",)), ship("B", "red-small", (5, 5), owner="Bart")
    )
    state = order(order(state, "A", Advance()), "B", Advance())
    produced, after = resolve(state, {("A", "wind"): [2], ("A", "wind-reroll"): [4], ("B", "wind"): [1]})
    rolls = [(d.ship, d.purpose, d.value) for d in of(produced, DieRolled)]
    assert rolls == [("A", "wind", 2), ("A", "wind-reroll", 4), ("B", "wind", 1)]
    assert after.ships["A"].wind == 1 and after.ships["B"].wind == 0


def test_A1_slave_reroll_that_fails_again_gives_nothing_and_success_is_not_rerolled() -> None:
    state = game(
        ship("A", "red-small", (1, 1), options=("slave",)), ship("B", "red-small", (5, 5), owner="Bart")
    )
    state = order(order(state, "A", Advance()), "B", Advance())
    produced, after = resolve(state, {("A", "wind"): [1], ("A", "wind-reroll"): [2], ("B", "wind"): [6]})
    assert [(d.ship, d.purpose) for d in of(produced, DieRolled)] == [
        ("A", "wind"),
        ("A", "wind-reroll"),
        ("B", "wind"),
    ]
    assert after.ships["A"].wind == 0


def test_A2_speed_at_movement_counts_this_turns_combat_damage() -> None:
    # B (red-small, speed 2, 38 structure) holds exactly 2 points: enough before the shot.
    # A blue-big burst (25) makes it lose half its structure: speed 3, so it cannot advance.
    state = game(
        ship("A", "blue-big", (1, 5), facing="N"),
        ship("B", "red-small", (4, 5), facing="N", owner="Bart", wind=1),
    )
    state = order(order(state, "A", Attack(position="starboard", target="B", mode="burst")), "B", Advance())
    produced, after = resolve(state, {("B", "wind"): [6]})
    unaffordable = of(produced, MoveUnaffordable)
    assert [(u.ship, u.points, u.cost) for u in unaffordable] == [("B", 2, 3)]
    assert after.ships["B"].at == (4, 5) and after.ships["B"].wind == 2  # kept (A3)


def test_A3_advance_spends_speed_and_moves_one_square() -> None:
    state = game(ship("A", "red-small", (1, 1), wind=1), ship("B", "red-small", (8, 8), owner="Bart"))
    state = order(order(state, "A", Advance()), "B", Idle())
    produced, after = resolve(state, {("A", "wind"): [5]})
    assert after.ships["A"].at == (1, 2) and after.ships["A"].wind == 0
    assert of(produced, ShipMoved)[0].ship == "A"


# --- S: cannon fire ---------------------------------------------------------------------------


def test_S1_S3_shot_needs_the_table_number_on_the_line() -> None:
    # red-small, 2 cannons to port (west when facing N), distance 3: needs 12 on 3d6.
    state = game(ship("A", "red-small", (5, 5)), ship("B", "red-small", (2, 5), owner="Bart"))
    state = order(order(state, "A", Attack(position="port", target="B")), "B", Idle())
    produced, after = resolve(state, {("A", "shot"): [4, 4, 4]})
    shot = of(produced, ShotFired)[0]
    assert (shot.distance, shot.cannons, shot.needed, shot.dice, shot.hit, shot.damage) == (
        3,
        2,
        12,
        (4, 4, 4),
        True,
        3,
    )
    assert "S1" in shot.rules and "S3" in shot.rules
    assert after.ships["B"].damage == 3
    state2 = order(
        order(
            game(ship("A", "red-small", (5, 5)), ship("B", "red-small", (2, 5), owner="Bart")),
            "A",
            Attack(position="port", target="B"),
        ),
        "B",
        Idle(),
    )
    produced, after = resolve(state2, {("A", "shot"): [4, 4, 3]})
    assert not of(produced, ShotFired)[0].hit and after.ships["B"].damage == 0


def test_S2_five_cannons_throw_4d6_and_elite_gunner_adds_one() -> None:
    # blue-big with extra-cannons: 5 a side; at distance 5 normal fire needs 13.
    state = game(
        ship("A", "blue-big", (5, 5), options=("extra-cannons", "elite-gunner")),
        ship("B", "blue-big", (10, 5), owner="Bart"),
    )
    state = order(order(state, "A", Attack(position="starboard", target="B")), "B", Idle())
    produced, _ = resolve(state, {("A", "shot"): [1, 1, 1, 1, 1]})
    shot = of(produced, ShotFired)[0]
    assert (shot.cannons, len(shot.dice), shot.needed, shot.hit) == (5, 5, 13, False)
    assert [d.purpose for d in of(produced, DieRolled) if d.ship == "A" and d.purpose != "wind"] == [
        "shot"
    ] * 5


def test_S2_automatic_hit_throws_no_dice() -> None:
    state = game(ship("A", "blue-big", (5, 5)), ship("B", "red-small", (6, 5), owner="Bart"))
    state = order(order(state, "A", Attack(position="starboard", target="B")), "B", Idle())
    produced, after = resolve(state)
    shot = of(produced, ShotFired)[0]
    assert (shot.needed, shot.dice, shot.hit, shot.damage) == ("hit", (), True, 16)
    assert after.ships["B"].damage == 16


def test_S5_damage_at_distance_7_is_halved_and_super_shot_adds() -> None:
    state = game(
        ship("A", "blue-big", (1, 5), options=("extra-cannons", "super-shot", "elite-gunner")),
        ship("B", "blue-big", (8, 5), owner="Bart"),
    )
    state = order(order(state, "A", Attack(position="starboard", target="B")), "B", Idle())
    produced, after = resolve(state, {("A", "shot"): [6, 6, 6, 6, 6]})
    shot = of(produced, ShotFired)[0]
    # (16 normal + 4 extra-cannons + 5 super-shot) // 2 at distance 7
    assert (shot.distance, shot.needed, shot.damage) == (7, 28, 12)
    assert after.ships["B"].damage == 12


def test_S6_cannons_plus_catapult_of_one_ship_count_once() -> None:
    # A: port at distance 3 (needs 12) and its catapult at distance 3 (needs 13): one ship, no bonus.
    state = game(
        ship("A", "red-small", (5, 5), options=("catapult",)), ship("B", "red-small", (2, 5), owner="Bart")
    )
    state = order(
        order(state, "A", Attack(position="port", target="B"), CatapultShot(target="B")), "B", Idle()
    )
    produced, _ = resolve(state, {("A", "shot"): [4, 4, 3], ("A", "catapult"): [4, 4, 4]})
    shots = [(s.ship, s.weapon, s.bonus, s.hit) for s in of(produced, ShotFired)]
    assert shots == [("A", "port", 0, False), ("A", "catapult", 0, False)]


def test_S6_k_ships_on_one_target_each_add_k_minus_1_even_a_shot_that_cannot_hit() -> None:
    # C's catapult is next to B: distance 1, an automatic miss (K) that throws no dice, yet it counts,
    # so k = 2 and A's 11 and 12 reach the 12 and 13 they need only with the +1.
    state = game(
        ship("A", "red-small", (5, 5), options=("catapult",)),
        ship("C", "red-small", (2, 4), options=("catapult",)),
        ship("B", "red-small", (2, 5), owner="Bart"),
    )
    state = order(state, "A", Attack(position="port", target="B"), CatapultShot(target="B"))
    state = order(order(state, "C", CatapultShot(target="B")), "B", Idle())
    dice = {("A", "shot"): [4, 4, 3], ("A", "catapult"): [4, 4, 4]}
    produced, _ = resolve(state, dice)
    assert [(s.ship, s.weapon, s.bonus, s.needed, s.dice, s.hit) for s in of(produced, ShotFired)] == [
        ("A", "port", 1, 12, (4, 4, 3), True),
        ("A", "catapult", 1, 13, (4, 4, 4), True),
        ("C", "catapult", 1, "miss", (), False),
    ]
    assert all("S6" in s.rules for s in of(produced, ShotFired))


def test_S7_burst_starts_a_cooldown_and_the_next_turn_refuses_cannon_fire() -> None:
    state = game(ship("A", "blue-big", (5, 5)), ship("B", "blue-big", (7, 5), owner="Bart"))
    state = order(order(state, "A", Attack(position="starboard", target="B", mode="burst")), "B", Idle())
    produced, after = resolve(state)
    assert [(e.ship, e.bursts_in_a_row) for e in of(produced, BurstStreakChanged)] == [("A", 1)]
    refused("S7", after, "A", Attack(position="starboard", target="B"))
    after = order(order(after, "A", Idle()), "B", Idle())
    produced, later = resolve(after)
    assert [(e.ship, e.bursts_in_a_row) for e in of(produced, BurstStreakChanged)] == [("A", 0)]
    order(later, "A", Attack(position="starboard", target="B", mode="burst"))


def test_S7_continuous_burst_allows_two_bursts_in_a_row_then_a_rest() -> None:
    state = game(
        ship("A", "blue-big", (5, 5), options=("continuous-burst",)),
        ship("B", "blue-big", (7, 5), owner="Bart"),
    )
    for expected in (1, 2):
        state = order(order(state, "A", Attack(position="starboard", target="B", mode="burst")), "B", Idle())
        produced, state = resolve(state)
        assert state.ships["A"].bursts_in_a_row == expected
    refused("S7", state, "A", Attack(position="starboard", target="B"))


# --- K: catapult ----------------------------------------------------------------------------


def test_K_small_target_countdown_starts_at_3_ticks_and_the_crew_jumps_at_0() -> None:
    state = game(
        ship("A", "red-small", (1, 1), options=("catapult",)), ship("B", "red-small", (1, 4), owner="Bart")
    )
    state = order(order(state, "A", CatapultShot(target="B")), "B", Idle())
    produced, state = resolve(state, {("A", "catapult"): [5, 4, 4]})  # distance 3 needs 13
    hits = of(produced, CatapultHitsTaken)
    assert [(h.ship, h.hits, h.countdown, h.countdown_started) for h in hits] == [("B", 1, 3, True)]
    assert state.ships["B"].countdown == 3 and state.ships["B"].damage == 0
    assert not of(produced, CountdownChanged)  # no tick in the turn it started
    for left in (2, 1):
        state = order(order(state, "A", Idle()), "B", Idle())
        produced, state = resolve(state)
        assert [c.countdown for c in of(produced, CountdownChanged)] == [left]
    state = order(order(state, "A", Idle()), "B", Idle())
    produced, state = resolve(state)
    sunk = of(produced, ShipSunk)
    assert [(s.ship, s.how, s.rules) for s in sunk] == [("B", "lost", ("K",))]
    assert state.ended and state.winner == "Anne"


def test_K_edition_2026_1_four_hits_in_one_turn_sink_a_small_ship_at_the_end_of_that_turn() -> None:
    ships = [ship(f"A{i}", "red-small", (1 + i, 1), options=("catapult",)) for i in range(4)]
    state = game(
        *ships, ship("B", "red-small", (3, 4), owner="Bart"), ship("C", "red-small", (11, 11), owner="Bart")
    )
    for i in range(4):
        state = order(state, f"A{i}", CatapultShot(target="B"))
    state = order(order(state, "B", Idle()), "C", Idle())
    dice = {(f"A{i}", "catapult"): [6, 6, 6] for i in range(4)}
    produced, state = resolve(state, dice)
    assert [(h.hits, h.countdown) for h in of(produced, CatapultHitsTaken)] == [(4, 0)]
    assert [(s.ship, s.how, s.phase) for s in of(produced, ShipSunk)] == [("B", "lost", "end")]


def test_K_big_target_loses_20_a_hit_and_its_third_hit_starts_the_countdown() -> None:
    state = game(
        ship("A", "red-small", (1, 1), options=("catapult",)),
        ship("S", "red-small", (2, 1), options=("catapult", "super-shot")),
        ship("B", "blue-big", (2, 4), owner="Bart", catapult_hits=1),
    )
    state = order(
        order(order(state, "A", CatapultShot(target="B")), "S", CatapultShot(target="B")), "B", Idle()
    )
    produced, state = resolve(state, {("A", "catapult"): [6, 6, 6], ("S", "catapult"): [6, 6, 6]})
    assert sorted(d.amount for d in of(produced, DamageTaken) if d.cause == "catapult") == [20, 25]
    assert [(h.hits_total, h.countdown) for h in of(produced, CatapultHitsTaken)] == [(3, 3)]


def test_K_catapult_refused_beyond_6_and_more_shots_than_catapults() -> None:
    state = game(
        ship("A", "red-small", (1, 1), options=("catapult",)), ship("B", "red-small", (8, 1), owner="Bart")
    )
    refused("K", state, "A", CatapultShot(target="B"))
    near = game(
        ship("A", "red-small", (1, 1), options=("catapult",)), ship("B", "red-small", (4, 1), owner="Bart")
    )
    refused("K", near, "A", CatapultShot(target="B"), CatapultShot(target="B"))
    refused(
        "K",
        game(ship("A", "red-small", (1, 1)), ship("B", "red-small", (4, 1), owner="Bart")),
        "A",
        CatapultShot(target="B"),
    )


# --- X: fire on board --------------------------------------------------------------------------


def test_X1_fire_check_at_upkeep_damages_and_moves_to_the_next_phase() -> None:
    state = game(ship("A", "red-small", (1, 1), fire="1"), ship("B", "red-small", (8, 8), owner="Bart"))
    state = order(order(state, "A", Idle()), "B", Idle())
    produced, after = resolve(state, {("A", "fire"): [2]})
    first = produced[1]
    assert isinstance(first, DieRolled) and (first.purpose, first.phase, first.value) == ("fire", "upkeep", 2)
    check = of(produced, FireChecked)[0]
    assert (check.phase, check.out, check.damage, check.next_phase) == ("1", False, 8, "2a")
    assert after.ships["A"].fire == "2a" and after.ships["A"].damage == 8


def test_X1_phase_2b_failure_abandons_the_ship_before_anything_else() -> None:
    state = game(
        ship("A", "red-small", (1, 1), fire="2b"),
        ship("B", "red-small", (8, 8), owner="Bart"),
        ship("C", "red-small", (5, 8)),
    )
    state = order(order(order(state, "A", Idle()), "B", Idle()), "C", Idle())
    produced, after = resolve(state, {("A", "fire"): [4]})
    assert [(s.ship, s.how, s.phase) for s in of(produced, ShipSunk)] == [("A", "lost", "upkeep")]
    assert after.ships["A"].lost and not any(
        d.ship == "A" and d.purpose == "wind" for d in of(produced, DieRolled)
    )


def test_X1_phase_3_ship_can_do_nothing_and_loses_its_wind_points() -> None:
    state = game(
        ship("A", "red-small", (1, 1), fire="3", wind=3), ship("B", "red-small", (1, 4), owner="Bart")
    )
    refused("X1", state, "A", Advance())
    refused("X1", state, "A", Attack(position="port", target="B"))
    state = order(state, "B", Idle())
    produced, after = resolve(state, {("A", "fire"): [6]})  # out, but still a lost turn
    assert after.ships["A"].fire is None and after.ships["A"].wind == 0
    assert [(w.ship, w.reason) for w in of(produced, WindPointsChanged) if w.delta < 0] == [("A", "idle")]


def test_X1_a_flaming_hit_schedules_phase_1_for_next_turn() -> None:
    state = game(
        ship("A", "blue-big", (5, 5), options=("flaming-shot",)), ship("B", "blue-big", (6, 5), owner="Bart")
    )
    state = order(order(state, "A", Attack(position="starboard", target="B")), "B", Idle())
    produced, after = resolve(state)
    assert [(f.ship, f.phase, f.hitters, f.rules) for f in of(produced, FireScheduled)] == [
        ("B", "1", ("A",), ("X1",))
    ]
    assert after.ships["B"].fire == "1"


def test_X2_two_flaming_ships_start_at_phase_2a_three_at_2b() -> None:
    for count, phase in ((2, "2a"), (3, "2b")):
        # shooters around B, each with B on its starboard line at distance 1
        around = [((4, 5), "N"), ((6, 6), "SE"), ((5, 4), "W")][:count]
        ships = [
            ship(f"A{i}", "blue-big", at, facing=f, options=("flaming-shot",))
            for i, (at, f) in enumerate(around)
        ]
        state = game(*ships, ship("B", "blue-big", (5, 5), owner="Bart"))
        for i in range(count):
            state = order(state, f"A{i}", Attack(position="starboard", target="B"))
        produced, after = resolve(order(state, "B", Idle()))
        scheduled = of(produced, FireScheduled)[0]
        assert (scheduled.phase, scheduled.rules) == (phase, ("X2",))
        assert after.ships["B"].fire == phase


def test_X3_failed_phase_1_and_hit_again_goes_to_2b() -> None:
    state = game(
        ship("A", "blue-big", (4, 5), options=("flaming-shot",)),
        ship("B", "blue-big", (5, 5), owner="Bart", fire="1"),
    )
    state = order(order(state, "A", Attack(position="starboard", target="B")), "B", Idle())
    produced, after = resolve(state, {("B", "fire"): [1]})
    assert [(f.phase, f.rules) for f in of(produced, FireScheduled)] == [("2b", ("X3",))]
    assert after.ships["B"].fire == "2b"


def test_X3_ruling_other_hits_on_a_burning_ship_keep_its_phase() -> None:
    state = game(
        ship("A", "blue-big", (4, 5), options=("flaming-shot",)),
        ship("B", "blue-big", (5, 5), owner="Bart", fire="2a"),
    )
    state = order(order(state, "A", Attack(position="starboard", target="B")), "B", Idle())
    produced, after = resolve(state, {("B", "fire"): [1]})  # 2a fails: phase 3 next turn
    assert [(f.phase, f.rules) for f in of(produced, FireScheduled)] == [("3", ("X3",))]
    assert after.ships["B"].fire == "3"


# --- W: wear --------------------------------------------------------------------------------


def test_W1_half_lost_wears_1_a_turn_computed_after_the_fire_damage() -> None:
    # red-small 38: 12 lost + 8 fire = 20 >= 19: half lost by the fire, so it wears 1 this same turn.
    state = game(
        ship("A", "red-small", (1, 1), damage=12, fire="1"), ship("B", "red-small", (8, 8), owner="Bart")
    )
    state = order(order(state, "A", Idle()), "B", Idle())
    produced, after = resolve(state, {("A", "fire"): [1]})
    wear = [d for d in of(produced, DamageTaken) if d.cause == "wear"]
    assert [(w.ship, w.amount, w.rules) for w in wear] == [("A", 1, ("W1",))]
    assert after.ships["A"].damage == 21


def test_W2_three_quarters_lost_wears_3() -> None:
    state = game(ship("A", "red-small", (1, 1), damage=29), ship("B", "red-small", (8, 8), owner="Bart"))
    produced, after = resolve(order(order(state, "A", Idle()), "B", Idle()))
    assert [(d.amount, d.rules) for d in of(produced, DamageTaken) if d.cause == "wear"] == [(3, ("W2",))]


def test_W3_wear_to_zero_sinks_at_upkeep_before_the_wind_dice() -> None:
    state = game(
        ship("A", "red-small", (1, 1), damage=36),
        ship("B", "red-small", (8, 8), owner="Bart"),
        ship("C", "red-small", (4, 8)),
    )
    state = order(order(order(state, "A", Idle()), "B", Idle()), "C", Idle())
    produced, after = resolve(state)
    assert [(s.ship, s.how, s.phase, s.rules) for s in of(produced, ShipSunk)] == [
        ("A", "sunk", "upkeep", ("W3",))
    ]
    assert [d.ship for d in of(produced, DieRolled)] == ["B", "C"]


def test_W3_combat_damage_sinks_after_all_shots_and_the_sunk_ship_still_fires() -> None:
    # Both blue-bigs are down to 15 structure after wear: each one's 16-point hit sinks the other.
    state = game(
        ship("A", "blue-big", (5, 5), damage=112),
        ship("B", "blue-big", (6, 5), owner="Bart", damage=112),
        ship("C", "red-small", (1, 1), owner="Bart"),
    )
    state = order(
        order(state, "A", Attack(position="starboard", target="B")), "B", Attack(position="port", target="A")
    )
    produced, after = resolve(order(state, "C", Idle()))
    assert [(s.ship, s.hit) for s in of(produced, ShotFired)] == [("A", True), ("B", True)]
    assert [(s.ship, s.how, s.phase, s.rules) for s in of(produced, ShipSunk)] == [
        ("A", "sunk", "combat", ("W3",)),
        ("B", "sunk", "combat", ("W3",)),
    ]
    assert after.ended and after.winner == "Bart"


# --- C6: fireships ----------------------------------------------------------------------------


def test_C6_a_ship_with_the_option_becomes_a_fireship_next_turn_and_sails_by_itself() -> None:
    state = game(
        ship("A", "red-small", (5, 1), options=("fireship",)), ship("B", "red-small", (5, 8), owner="Bart")
    )
    refused(
        "C6",
        game(ship("A", "red-small", (5, 1)), ship("B", "red-small", (5, 8), owner="Bart")),
        "A",
        BecomeFireship(),
    )
    state = order(order(state, "A", BecomeFireship()), "B", Idle())
    produced, state = resolve(state)
    assert [(e.ship, e.rules) for e in of(produced, BecameFireship)] == [("A", ("C6",))]
    assert state.ships["A"].fireship and state.ships["A"].at == (5, 1)
    refused("C6", state, "A", Advance())
    produced, state = resolve(order(state, "B", Idle()), partial=False)
    assert state.ships["A"].at == (5, 2)
    assert not [d for d in of(produced, DieRolled) if d.ship == "A"]  # no wind die for a fireship


def test_C6_explosion_schedules_the_struck_ships_fire_check() -> None:
    state = game(
        ship("F", "red-small", (5, 4), owner="Anne", fireship=True),
        ship("A", "blue-big", (1, 1), owner="Anne"),
        ship("B", "blue-big", (5, 5), owner="Bart", facing="E"),
    )
    state = order(order(state, "A", Idle()), "B", Idle())
    produced, after = resolve(state, {("B", "capsize"): [6], ("F", "capsize"): [6]}, wind=1)
    explosions = of(produced, FireshipExplosion)
    assert [(x.fireship, x.ship) for x in explosions] == [("F", "B")]
    scheduled = of(produced, FireScheduled)
    assert [(f.ship, f.phase, f.hitters) for f in scheduled] == [("B", "1", ("F",))]
    assert "C6" in scheduled[0].rules and after.ships["B"].fire == "1"


# --- D: dice ----------------------------------------------------------------------------------


def test_D1_every_die_is_logged_right_before_the_outcome_that_uses_it() -> None:
    state = game(ship("A", "red-small", (5, 5), fire="1"), ship("B", "red-small", (2, 5), owner="Bart"))
    state = order(order(state, "A", Attack(position="port", target="B")), "B", Idle())
    produced, _ = resolve(state, {("A", "fire"): [6], ("A", "shot"): [1, 2, 3]})
    kinds = [type(e).__name__ for e in produced]
    fire_at = kinds.index("FireChecked")
    shot_at = kinds.index("ShotFired")
    assert kinds[fire_at - 1] == "DieRolled" and kinds[shot_at - 3 : shot_at] == ["DieRolled"] * 3


def test_D2_resolution_does_not_depend_on_the_order_ships_are_listed_in() -> None:
    setups = [
        ship("A", "blue-big", (5, 5), options=("flaming-shot", "catapult")),
        ship("B", "red-small", (2, 5), owner="Bart"),
        ship("C", "green-small", (5, 8), owner="Bart", wind=2),
    ]

    def play(ordered: list[ShipSetUp]) -> tuple[list[Event], str]:
        state = game(*ordered)
        state = order(state, "A", Attack(position="port", target="B"), CatapultShot(target="C"))
        state = order(order(state, "C", Advance()), "B", Idle())
        produced = decide(state, ResolveTurn(reveal_seed=SEED), SeededDice(SEED))
        return produced, state_hash(fold(produced, state))

    forward, hash_forward = play(setups)
    backward, hash_backward = play(list(reversed(setups)))
    assert forward == backward and hash_forward == hash_backward


def test_T2_turn_ended_carries_the_hash_of_the_position_it_leaves() -> None:
    state = game(ship("A", "red-small", (1, 1)), ship("B", "red-small", (8, 8), owner="Bart"))
    state = order(order(state, "A", Advance()), "B", Idle())
    produced, after = resolve(state, wind=6)
    ended = produced[-1]
    assert isinstance(ended, TurnEnded) and ended.rules == ("T2",)
    assert ended.state_hash == state_hash(fold(produced[:-1], state))
    assert after.turn == 2
