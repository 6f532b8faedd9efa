"""Three rule corrections from a second reading of the French rules, and the
rules editions that keep every game re-deriving with the rules it was created with.

- K: four catapult hits in one turn sink a small ship at once ("coule immédiatement"), in combat;
- C6: a fireship's barrels explode on its first impact only; it sails on until sunk or off the board;
- S4: continuous-burst is sold only for a ship with a position holding 3 or more cannons.

K and C6 change outcomes, so they apply from the 2026.2 edition (new games); a game created under
2026.1 keeps the old outcomes. The purchase refusal changes no log and applies to every edition.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from mortecouille.app.games import load
from mortecouille.core.dice import TableDice
from mortecouille.core.editions import EDITIONS, edition_for
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.fleet.catalogue import CATALOGUES, RULES_VERSION, OptionSpec, catalogue_for
from mortecouille.core.fleet.commands import BuyShip, EquipFleet, EquipShip
from mortecouille.core.fleet.purchase import apply_buy_ship, check_buy_ship, check_equip_fleet, new_fleet
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import ResolveTurn
from mortecouille.core.mortecouille.gunnery import MIN_BURST_CANNONS
from mortecouille.core.mortecouille.movement import MoveIntent
from mortecouille.core.state import GameState
from mortecouille.events.combat import CatapultHitsTaken, CountdownChanged
from mortecouille.events.fleet import ShipBought
from mortecouille.events.mortecouille_movement import FireshipExplosion
from mortecouille.events.movement import CollisionOccurred, ShipMoved, ShipSunk
from mortecouille.events.orders import Advance, CatapultShot, Idle
from mortecouille.events.storage.file_log import GameLog
from tests import test_mortecouille_movement as movement
from tests.cli_helpers import run
from tests.forgery import log_bodies
from tests.golden.make_golden import anchor, rechain_lines
from tests.helpers import GOLDEN
from tests.test_fleet_game import Game
from tests.test_mortecouille_turn import game, of, order, resolve, ship

OLD = "2026.1"
NEW = RULES_VERSION


# --- the editions ---------------------------------------------------------------------------------


def test_every_rules_version_the_engine_prices_is_an_edition_and_new_games_get_every_correction() -> None:
    assert set(EDITIONS) == set(CATALOGUES)
    assert NEW == "2026.2" and edition_for(NEW).corrections == (
        "immediate_catapult_sinking",
        "fireship_survives_impact",
    )
    assert edition_for(OLD).corrections == ()


def test_an_unknown_rules_version_is_refused_naming_the_field_and_the_known_ones() -> None:
    with pytest.raises(BadInput) as caught:
        edition_for("2099.1")
    assert caught.value.field == "rules_version"
    assert "'2099.1'" in str(caught.value) and "2026.1, 2026.2" in str(caught.value)
    state = game(ship("A", "red-small", (1, 1)), ship("B", "red-small", (5, 5), owner="Bart"))
    unknown = msgspec.structs.replace(state, rules_version="2099.1")
    with pytest.raises(BadInput) as resolving:
        decide(unknown, ResolveTurn(partial=True), TableDice())
    assert resolving.value.field == "rules_version"


# --- K: four catapult hits sink at once -----------------------------------------------------------


def four_catapults_on_b(rules_version: str) -> GameState:
    """Four catapult ships aim at the small B, which is ordered to advance into C (it has the wind
    points to): whether B rams C this turn is the question."""
    shooters = [ship(f"A{i}", "red-small", (1 + i, 1), options=("catapult",)) for i in range(4)]
    state = game(
        *shooters,
        ship("B", "red-small", (3, 4), owner="Bart", wind=2),
        ship("C", "red-small", (3, 5), owner="Bart"),
        rules_version=rules_version,
    )
    for i in range(4):
        state = order(state, f"A{i}", CatapultShot(target="B"))
    return order(order(state, "B", Advance()), "C", Idle())


HITS = {(f"A{i}", "catapult"): [6, 6, 6] for i in range(4)}


def test_K_four_catapult_hits_sink_a_small_ship_at_once() -> None:
    produced, after = resolve(four_catapults_on_b(NEW), HITS)
    assert [(h.ship, h.hits, h.countdown) for h in of(produced, CatapultHitsTaken)] == [("B", 4, 0)]
    [sunk] = of(produced, ShipSunk)
    assert (sunk.ship, sunk.how, sunk.phase, sunk.rules) == ("B", "sunk", "combat", ("K",))
    # sunk in combat: it neither moves nor rams C, and no countdown is left to tick
    assert of(produced, CollisionOccurred) == [] and "B" not in {m.ship for m in of(produced, ShipMoved)}
    assert of(produced, CountdownChanged) == []
    assert after.ships["B"].sunk and after.ships["B"].at == (3, 4) and after.ships["C"].afloat


def test_K_edition_2026_1_four_hits_let_the_small_ship_sail_and_ram_before_its_crew_jumps() -> None:
    produced, after = resolve(four_catapults_on_b(OLD), HITS)
    assert [(h.ship, h.countdown) for h in of(produced, CatapultHitsTaken)] == [("B", 0)]
    assert [c.ships for c in of(produced, CollisionOccurred)] == [("B", "C")]
    assert [(s.ship, s.how, s.phase, s.rules) for s in of(produced, ShipSunk)] == [
        ("B", "lost", "end", ("K",))
    ]


def test_K_a_big_ship_in_countdown_sinks_at_once_when_a_hit_takes_it_to_0() -> None:
    state = game(
        ship("A", "red-small", (1, 1), options=("catapult",)),
        ship("B", "blue-big", (2, 4), owner="Bart", catapult_hits=5, countdown=1),
        rules_version=NEW,
    )
    state = order(order(state, "A", CatapultShot(target="B")), "B", Idle())
    produced, after = resolve(state, {("A", "catapult"): [6, 6, 6]})
    assert [(h.hits_total, h.countdown) for h in of(produced, CatapultHitsTaken)] == [(6, 0)]
    assert [(s.ship, s.how, s.phase, s.rules) for s in of(produced, ShipSunk)] == [
        ("B", "sunk", "combat", ("K",))
    ]


def test_K_a_countdown_ticked_to_0_at_the_end_of_the_turn_still_leaves_then() -> None:
    state = game(
        ship("A", "red-small", (1, 1)),
        ship("B", "red-small", (2, 4), owner="Bart", catapult_hits=1, countdown=1),
        rules_version=NEW,
    )
    state = order(order(state, "A", Idle()), "B", Idle())
    produced, after = resolve(state)
    assert [(c.ship, c.countdown) for c in of(produced, CountdownChanged)] == [("B", 0)]
    assert [(s.ship, s.how, s.phase) for s in of(produced, ShipSunk)] == [("B", "lost", "end")]


# --- C6: the fireship explodes once and sails on --------------------------------------------------


def test_C6_fireship_explodes_once_and_sails_on() -> None:
    # F's bow meets Y's stern: F loses 8 + 11 + 2 and 30 for the blast (51 of 130), Y 5 + 15 and 30,
    # and Y is pushed one square on (M3, same class).
    state = movement.game(
        movement.ship("F", "blue-big", (1, 2), "E", fireship=True),
        movement.ship("Y", "yellow-big", (2, 2), "E"),
        rules_version=NEW,
    )
    first = movement.run_move(state, [MoveIntent("F", "fireship")])
    assert movement.losses(first) == {
        "F": [("collision", 21), ("explosion", 30)],
        "Y": [("collision", 20), ("explosion", 30)],
    }
    [explosion] = of(first, FireshipExplosion)
    assert (explosion.fireship, explosion.ship, explosion.rules) == ("F", "Y", ("C6",))
    assert of(first, ShipSunk) == []  # the explosion alone does not sink it
    state = movement.after(state, first)
    assert state.ships["F"].afloat and state.ships["F"].fireship and state.ships["F"].barrels_spent
    assert (state.ships["F"].at, state.ships["Y"].at) == ((1, 2), (3, 2))
    # it sails straight on, by itself, into the square Y left...
    second = movement.run_move(state, [MoveIntent("F", "fireship")])
    assert movement.moved(second) == {"F": (((1, 2), (2, 2)), "E")}
    state = movement.after(state, second)
    # ...and meets Y again: an ordinary collision now, the barrels are spent
    third = movement.run_move(state, [MoveIntent("F", "fireship")])
    assert len(of(third, CollisionOccurred)) == 1 and of(third, FireshipExplosion) == []
    assert movement.losses(third) == {"F": [("collision", 21)], "Y": [("collision", 20)]}
    assert of(third, ShipSunk) == []


def test_C6_two_fireships_meeting_both_explode_and_neither_sinks_by_it() -> None:
    state = movement.game(
        movement.ship("F", "blue-big", (1, 2), "E", fireship=True),
        movement.ship("G", "yellow-big", (3, 2), "W", fireship=True),
        rules_version=NEW,
    )
    produced = movement.run_move(state, [MoveIntent("F", "fireship"), MoveIntent("G", "fireship")])
    assert {(e.fireship, e.ship) for e in of(produced, FireshipExplosion)} == {("F", "G"), ("G", "F")}
    assert {
        sid: [a for c, a in lost if c == "explosion"] for sid, lost in movement.losses(produced).items()
    } == {
        "F": [60],
        "G": [60],
    }
    assert of(produced, ShipSunk) == []
    folded = movement.after(state, produced)
    assert folded.ships["F"].barrels_spent and folded.ships["G"].barrels_spent


def test_C6_a_spent_fireship_still_sinks_when_its_structure_is_gone() -> None:
    # W3 still applies: the green-small (37) rams a yellow-big's side: 13 + 27 + 2 and 30, sunk.
    state = movement.game(
        movement.ship("F", "green-small", (1, 2), "E", fireship=True),
        movement.ship("Y", "yellow-big", (2, 2), "N"),
        rules_version=NEW,
    )
    produced = movement.run_move(
        state, [MoveIntent("F", "fireship")], movement.fixed_cup({("Y", "capsize"): [6]})
    )
    assert [(s.ship, s.how, s.rules) for s in of(produced, ShipSunk)] == [("F", "sunk", ("W3",))]


# --- S4: continuous-burst needs a position with three cannons ------------------------------------


@pytest.mark.parametrize("rules_version", [OLD, NEW])
def test_S_continuous_burst_needs_a_position_with_three_cannons(rules_version: str) -> None:
    fleet = new_fleet("Anne", 200_000, rules_version)
    # red-small: 2 cannons a side; yellow-small: 2 a side and 1 at the bow
    for kind in ("red-small", "yellow-small"):
        with pytest.raises(RuleViolation) as caught:
            check_buy_ship(fleet, kind, "Hope", ("continuous-burst",))
        assert caught.value.rule == "S4"
        assert "3 or more cannons" in str(caught.value) and "at most 2" in str(caught.value)
        assert "soit 3 et plus" in str(caught.value) and "extra-cannons" in str(caught.value)
    # blue-small has 3 a side; extra-cannons gives the red-small 3 a side
    assert check_buy_ship(fleet, "blue-small", "Skiff", ("continuous-burst",)) == 20_000
    assert check_buy_ship(fleet, "red-small", "Hope", ("extra-cannons", "continuous-burst")) == 25_000


def test_S_equipping_continuous_burst_is_refused_too_and_changes_nothing() -> None:
    game_ = Game()
    game_.do(BuyShip(player="Anne", kind="red-small", name="Hope"))
    error = game_.refused(EquipShip(ship="Hope", option="Rafale continue"))
    assert isinstance(error, RuleViolation) and error.rule == "S4" and "'Hope'" in str(error)
    game_.do(EquipShip(ship="Hope", option="extra-cannons"))
    game_.do(EquipShip(ship="Hope", option="continuous-burst"))
    assert game_.state.ships["Hope"].options == ("extra-cannons", "continuous-burst")
    # a fleet option that cannot cover a ship is refused the same way (the price list has none that
    # needs cannons: checked against a variant of it below)
    assert isinstance(game_.refused(EquipFleet(player="Anne", option="continuous-burst")), RuleViolation)


def test_S_a_fleet_variant_is_refused_for_the_ships_it_would_cover_then_and_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    current = catalogue_for(NEW)
    fleet_burst = OptionSpec(
        id="continuous-burst-fleet", french_names=("Rafale continue universelle",), english_name="x",
        price=40_000, scope="fleet", family="continuous-burst", effect="", effect_rule="S7",
        counterpart="continuous-burst", min_cannons_on_a_position=3,
    )  # fmt: skip
    options = {**current.options, fleet_burst.id: fleet_burst}
    variant = msgspec.structs.replace(current, version="test-fleet-burst", options=options)
    monkeypatch.setitem(CATALOGUES, "test-fleet-burst", variant)
    fleet = new_fleet("Anne", 500_000, "test-fleet-burst")
    skiff = apply_buy_ship(fleet, "blue-small", "Skiff", (), 10_000)
    with_hope = apply_buy_ship(skiff, "red-small", "Hope", (), 5_000)
    with pytest.raises(RuleViolation) as at_purchase:
        check_equip_fleet(with_hope, "continuous-burst-fleet")
    assert at_purchase.value.rule == "S4" and "'Hope'" in str(at_purchase.value)
    assert check_equip_fleet(skiff, "continuous-burst-fleet") == 40_000
    owned = msgspec.structs.replace(skiff, fleet_options=("continuous-burst-fleet",))
    with pytest.raises(RuleViolation) as later:
        check_buy_ship(owned, "red-small", "Hope")
    assert later.value.rule == "S4" and "fleet's continuous-burst-fleet" in str(later.value)
    assert check_buy_ship(owned, "green-small", "Grace") == 10_000


def test_S_the_requirement_is_the_burst_minimum_of_S4() -> None:
    for version in CATALOGUES:
        assert (
            catalogue_for(version).options["continuous-burst"].min_cannons_on_a_position == MIN_BURST_CANNONS
        )


def test_S_an_old_log_holding_such_a_purchase_still_folds() -> None:
    # Bought before the refusal existed: evolve never re-checks a purchase.
    bought = ShipBought(
        player="Anne", ship="Hope", kind="red-small", options=("continuous-burst",), price=15_000
    )
    state = fold([bought], Game().state)
    assert state.ships["Hope"].options == ("continuous-burst",)
    assert state.fleets["Anne"].spent == 15_000


# --- the golden game of the 2026.2 edition ------------------------------------------------------


def test_the_2026_2_golden_game_pins_both_corrections() -> None:
    lines = log_bodies(GOLDEN / "mortecouille_2026_2.jsonl")
    assert lines[0]["rules_version"] == "2026.2"
    sunk = [
        (line["ship"], line["phase"], line["how"], line["rules"])
        for line in lines
        if line["type"] == "ship-sunk"
    ]
    assert sunk == [("Minnow", "combat", "sunk", ["K"])]
    assert [(line["fireship"], line["turn"]) for line in lines if line["type"] == "fireship-explosion"] == [
        ("Torch", 3)
    ]
    collisions = [line["turn"] for line in lines if line["type"] == "collision"]
    assert collisions == [3, 4]  # Minnow never rams; Torch rams twice, explodes once
    _, state = load(GameLog(GOLDEN / "mortecouille_2026_2.jsonl"))
    torch = state.ships["Torch"]
    assert torch.afloat and torch.fireship and torch.barrels_spent


def test_the_golden_logs_written_before_2026_2_keep_their_edition() -> None:
    for name in ("mortecouille.jsonl", "mortecouille_seeded.jsonl", "mortecouille_scenario.jsonl"):
        assert log_bodies(GOLDEN / name)[0]["rules_version"] == "2026.1"
    # ...and the 2026.1 game still has its fireship sink in its explosion and its countdown run out
    # at the end of a turn (tests/test_schema_evolution.py re-derives every turn of it)
    lines = log_bodies(GOLDEN / "mortecouille.jsonl")
    sunk = {
        (line["ship"], line["phase"], line["how"], tuple(line["rules"]))
        for line in lines
        if line["type"] == "ship-sunk"
    }
    assert ("Torch", "move", "sunk", ("C6", "W3")) in sunk and ("Minnow", "end", "lost", ("K",)) in sunk


def test_verify_refuses_a_log_of_an_unknown_rules_version_naming_it(tmp_path: Path) -> None:
    bodies = log_bodies(GOLDEN / "mortecouille_2026_2.jsonl")
    bodies[0] |= {"rules_version": "2099.1", "game": "u"}
    path = tmp_path / "u.jsonl"
    path.write_bytes(rechain_lines(bodies))
    anchor(path)
    before = path.read_bytes()
    result = run(tmp_path, "verify", "u")
    assert result.exit_code == 2, result.output
    assert "rules_version" in result.output and "'2099.1'" in result.output and "2026.2" in result.output
    assert path.read_bytes() == before
