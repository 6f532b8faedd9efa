"""Rules F1-F3 through the real decider and reducer: purchase events, the mortecouille placement
rule and the audit over events.

Expected prices and stats are worked out from rules.md by hand, never read back from the catalogue.
"""

from __future__ import annotations

import msgspec
import pytest

from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import TableDice, seed_commitment
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.fleet.commands import BuyShip, EquipFleet, EquipShip, SealFleet
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import Command, CreateGame
from mortecouille.core.mortecouille.common import ship_stats
from mortecouille.core.state import EMPTY, GameState, state_hash
from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.board import Board
from mortecouille.events.codec import stamp
from mortecouille.events.fleet import FleetEquipped, FleetSealed, ShipBought, ShipEquipped
from mortecouille.events.game import TurnEnded
from mortecouille.events.movement import ShipPlaced
from mortecouille.replays.reading.audit import audit_events


def create(ruleset: str = "mortecouille", budget: int = 100_000) -> list[Event]:
    command = CreateGame(
        game="g",
        ruleset=ruleset,
        players=("Anne", "Bart"),
        budget=budget,
        board=Board(width=10, height=10, rocks=((4, 4),)),
        dice_mode="seeded",
        seed_sha256=seed_commitment("s"),
        rules_version=RULES_VERSION,
    )
    return decide(EMPTY, command, TableDice())


class Game:
    """A game log kept in memory: every command goes through ``decide`` and is folded.

    Events are stamped as the store would, so the audit can name their ``seq``.
    """

    def __init__(self, ruleset: str = "mortecouille", budget: int = 100_000) -> None:
        self.events: list[Event] = []
        self.state = fold(self.stamp(create(ruleset, budget)))

    def stamp(self, produced: list[Event]) -> list[Event]:
        for event in produced:
            prev = self.events[-1].hash if self.events else GENESIS_HASH
            self.events.append(stamp(event, len(self.events), prev)[0])
        return self.events[len(self.events) - len(produced) :]

    def do(self, command: Command) -> list[Event]:
        produced = self.stamp(decide(self.state, command, TableDice()))
        self.state = fold(produced, self.state)
        return [msgspec.structs.replace(e, seq=-1, prev="", hash="") for e in produced]

    def refused(self, command: Command) -> RuleViolation | BadInput:
        before = state_hash(self.state)
        with pytest.raises((RuleViolation, BadInput)) as caught:
            self.do(command)
        assert state_hash(self.state) == before
        assert isinstance(caught.value, (RuleViolation, BadInput))
        return caught.value


def rule_of(error: RuleViolation | BadInput) -> str:
    return error.rule if isinstance(error, RuleViolation) else error.field


# --- F1: buying ships ------------------------------------------------------------------------


def test_F1_a_purchase_stores_canonical_ids_the_player_and_the_price_paid() -> None:
    game = Game()
    (bought,) = game.do(
        BuyShip(player="anne", kind="Rouge small", name="  Hope ", options=("Super boulet de canon",))
    )
    assert bought == ShipBought(
        player="Anne", ship="Hope", kind="red-small", options=("super-shot",), price=10000
    )
    fleet = game.state.fleets["Anne"]
    assert (fleet.spent, fleet.money_left) == (10000, 90000)
    ship = game.state.ships["Hope"]
    assert (ship.owner, ship.kind, ship.options, ship.price, ship.at, ship.afloat) == (
        "Anne",
        "red-small",
        ("super-shot",),
        10000,
        None,
        False,
    )


def test_F1_purchases_are_for_mortecouille_games_only() -> None:
    error = Game(ruleset="blockade").refused(BuyShip(player="Anne", kind="red-small", name="Hope"))
    assert rule_of(error) == "F1" and "mortecouille" in str(error)


def test_F1_the_player_must_be_one_of_the_game() -> None:
    error = Game().refused(BuyShip(player="Zed", kind="red-small", name="Hope"))
    assert rule_of(error) == "player" and "Anne" in str(error)


def test_F1_a_ship_name_is_unique_across_the_whole_game() -> None:
    game = Game()
    game.do(BuyShip(player="Anne", kind="red-small", name="Hope"))
    error = game.refused(BuyShip(player="Bart", kind="red-small", name="HOPE"))
    assert rule_of(error) == "F1" and "already" in str(error)


def test_F1_an_unknown_kind_suggests_the_closest_id() -> None:
    error = Game().refused(BuyShip(player="Anne", kind="yelow-big", name="Hope"))
    assert rule_of(error) == "kind" and "'yellow-big'" in str(error)


# --- F2: options ---------------------------------------------------------------------------------


def test_F2_equip_records_the_option_on_the_ship_and_its_price() -> None:
    game = Game()
    game.do(BuyShip(player="Anne", kind="red-small", name="Hope"))
    # extra-cannons on a red small: port and starboard armed, 2 cannons added, 5000 each
    (fitted,) = game.do(EquipShip(ship="hope", option="Ajout de canons"))
    assert fitted == ShipEquipped(player="Anne", ship="Hope", option="extra-cannons", price=10000)
    assert game.state.ships["Hope"].options == ("extra-cannons",)
    assert game.state.ships["Hope"].price == 15000
    assert game.state.fleets["Anne"].money_left == 85000


def test_F2_a_fleet_option_applies_to_ships_bought_after_it() -> None:
    game = Game()
    (bought,) = game.do(EquipFleet(player="Anne", option="Super boulet de canon universel"))
    assert bought == FleetEquipped(player="Anne", option="super-shot-fleet", price=30000)
    game.do(BuyShip(player="Anne", kind="red-small", name="Hope", options=("hull-1",)))
    game.do(BuyShip(player="Bart", kind="red-small", name="Bart's"))
    game.do(SealFleet(player="Anne", forfeit=True))
    game.do(SealFleet(player="Bart", forfeit=True))
    game.do(PlaceShip(ship="Hope", at=(1, 1), facing="N"))
    game.do(PlaceShip(ship="Bart's", at=(3, 1), facing="N"))
    hope, barts = ship_stats(game.state, "Hope"), ship_stats(game.state, "Bart's")
    # red small 3/9 + super shot 5/9; hull-1: 38 + 10 structure, speed 2 + 2
    assert (hope.normal_damage, hope.burst_damage, hope.max_structure, hope.speed) == (8, 18, 48, 4)
    assert (barts.normal_damage, barts.burst_damage, barts.max_structure, barts.speed) == (3, 9, 38, 2)


@pytest.mark.parametrize(
    ("setup", "command", "rule", "words"),
    [
        ([], BuyShip(player="Anne", kind="red-small", name="Hope", options=("hull-4",)), "F2", "big"),
        (
            [BuyShip(player="Anne", kind="red-small", name="Hope", options=("catapult",))],
            EquipShip(ship="Hope", option="catapult"),
            "F2",
            "at most once",
        ),
        (
            [BuyShip(player="Anne", kind="red-small", name="Hope", options=("hull-1",))],
            EquipShip(ship="Hope", option="hull-2"),
            "F2",
            "tiers",
        ),
        (
            [BuyShip(player="Anne", kind="red-small", name="Hope", options=("slave",))],
            EquipFleet(player="Anne", option="slave-fleet"),
            "F2",
            "individual",
        ),
        (
            [EquipFleet(player="Anne", option="slave-fleet")],
            BuyShip(player="Anne", kind="red-small", name="Hope", options=("Esclave",)),
            "F2",
            "slave-fleet",
        ),
        ([], EquipFleet(player="Anne", option="siren"), "F2", "no fleet variant"),
        (
            [],
            BuyShip(player="Anne", kind="red-small", name="Hope", options=("super-shot-fleet",)),
            "F2",
            "fleet option",
        ),
        ([], EquipShip(ship="Nobody", option="siren"), "ship", "Nobody"),
        (
            [],
            BuyShip(player="Anne", kind="red-small", name="Hope", options=("sirenne",)),
            "option",
            "'siren'",
        ),
    ],
)
def test_F2_refusals_name_the_rule_and_change_nothing(
    setup: list[Command], command: Command, rule: str, words: str
) -> None:
    game = Game()
    for earlier in setup:
        game.do(earlier)
    error = game.refused(command)
    assert rule_of(error) == rule and words in str(error)


# --- F3: budget and sealing --------------------------------------------------------------------


def test_F3_a_purchase_never_exceeds_the_money_left() -> None:
    game = Game()
    game.do(BuyShip(player="Anne", kind="blue-big", name="Fury"))
    error = game.refused(BuyShip(player="Anne", kind="green-big", name="Gale"))
    assert rule_of(error) == "F3" and "45000" in str(error)
    # the budget is per player: Bart still has all of his
    game.do(BuyShip(player="Bart", kind="green-big", name="Gale"))


def test_F3_sealing_with_money_that_could_buy_something_needs_a_forfeit() -> None:
    game = Game()
    game.do(BuyShip(player="Anne", kind="blue-big", name="Fury"))
    error = game.refused(SealFleet(player="Anne"))
    assert rule_of(error) == "F3" and "forfeit" in str(error)
    (sealed,) = game.do(SealFleet(player="Anne", forfeit=True))
    assert sealed == FleetSealed(player="Anne", forfeited=45000, forfeit=True)
    assert game.state.fleets["Anne"].sealed


def test_F3_sealing_with_too_little_left_to_buy_anything_needs_no_forfeit() -> None:
    game = Game(budget=4000)
    (sealed,) = game.do(SealFleet(player="Bart"))
    assert sealed == FleetSealed(player="Bart", forfeited=4000, forfeit=False)


def test_F3_nothing_is_bought_after_sealing() -> None:
    game = Game()
    game.do(BuyShip(player="Anne", kind="red-small", name="Hope"))
    game.do(SealFleet(player="Anne", forfeit=True))
    for command in (
        BuyShip(player="Anne", kind="red-small", name="Other"),
        EquipShip(ship="Hope", option="siren"),
        EquipFleet(player="Anne", option="slave-fleet"),
        SealFleet(player="Anne", forfeit=True),
    ):
        error = game.refused(command)
        assert rule_of(error) == "F3" and "sealed" in str(error)


def test_F3_evolve_is_pure_and_the_log_folds_to_the_same_state() -> None:
    game = Game()
    game.do(BuyShip(player="Anne", kind="red-small", name="Hope"))
    before = game.state
    before_hash = state_hash(before)
    game.do(EquipShip(ship="Hope", option="siren"))
    game.do(EquipFleet(player="Anne", option="fireship-fleet"))
    assert state_hash(before) == before_hash and before.fleets["Anne"].ships[0].options == ()
    assert fold(game.events) == game.state


# --- placement -------------------------------------------------------------------------------


def sealed_game(*sealing: str) -> Game:
    """Anne's Hope and Bart's Kraken bought, the fleets of ``sealing`` sealed (default: both)."""
    game = Game()
    game.do(BuyShip(player="Anne", kind="red-small", name="Hope"))
    game.do(BuyShip(player="Bart", kind="yellow-big", name="Kraken"))
    for player in sealing or ("Anne", "Bart"):
        game.do(SealFleet(player=player, forfeit=True))
    return game


def test_F3_placing_a_bought_ship_records_its_kind_and_owner() -> None:
    game = sealed_game()
    (placed,) = game.do(PlaceShip(ship="hope", at=(2, 3), facing="NE"))
    assert placed == ShipPlaced(
        ship="Hope", at=(2, 3), facing="NE", kind="red-small", owner="Anne", rules=("F3", "B2")
    )
    ship = game.state.ships["Hope"]
    assert (ship.at, ship.facing, ship.afloat, ship.owner) == ((2, 3), "NE", True, "Anne")


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        (PlaceShip(ship="Ghost", at=(2, 3), facing="N"), "ship"),
        (PlaceShip(ship="Hope", at=(4, 4), facing="N"), "B4"),  # a rock
        (PlaceShip(ship="Hope", at=(10, 3), facing="N"), "B4"),  # off the board
        (PlaceShip(ship="Hope", at=(2, 3), facing="N", kind="blue-big"), "kind"),
        (PlaceShip(ship="Hope", at=(2, 3), facing="N", owner="Bart"), "owner"),
        (PlaceShip(ship="Hope", at=(2, 3), facing="N", damage=5), "damage"),
    ],
)
def test_F3_placement_refusals(command: PlaceShip, rule: str) -> None:
    assert rule_of(sealed_game().refused(command)) == rule


def test_F3_ruling_ships_are_placed_once_every_fleet_is_sealed_and_refused_alike_before() -> None:
    """Project ruling (F3): before every fleet is sealed a placement would be as secret as the
    purchases, so every placement is refused first, with one answer for any ship and square (its
    own fleet sealed or not, no such ship, a rock, a wrong kind or owner), naming who has not sealed."""
    game = sealed_game("Anne")
    commands = (
        PlaceShip(ship="Hope", at=(2, 3), facing="N"),
        PlaceShip(ship="Kraken", at=(2, 3), facing="N"),
        PlaceShip(ship="Ghost", at=(2, 3), facing="N"),
        PlaceShip(ship="Hope", at=(4, 4), facing="N"),
        PlaceShip(ship="Kraken", at=(2, 3), facing="N", kind="blue-big", owner="Anne"),
    )
    refusals = {str(game.refused(command)) for command in commands}
    assert refusals == {
        "[F3] a ship is placed once every fleet is sealed (the fleets are secret until then); not sealed yet: Bart"
    }
    game.do(SealFleet(player="Bart", forfeit=True))
    assert game.do(PlaceShip(ship="Kraken", at=(2, 3), facing="N"))


def test_F3_placement_onto_another_ship_is_refused() -> None:
    game = sealed_game()
    game.do(PlaceShip(ship="Kraken", at=(2, 3), facing="S"))
    assert rule_of(game.refused(PlaceShip(ship="Hope", at=(2, 3), facing="N"))) == "M"


def test_T2_a_ship_may_be_moved_before_turn_1_but_not_placed_once_it_is_resolved() -> None:
    game = sealed_game()
    game.do(PlaceShip(ship="Hope", at=(2, 3), facing="N"))
    game.do(PlaceShip(ship="Hope", at=(5, 5), facing="S"))
    assert game.state.ships["Hope"].at == (5, 5)
    game.state = fold([TurnEnded(turn=1, state_hash="-")], game.state)
    assert rule_of(game.refused(PlaceShip(ship="Hope", at=(1, 1), facing="N"))) == "T2"
    assert rule_of(game.refused(BuyShip(player="Bart", kind="red-small", name="Late"))) == "F3"


# --- audit -------------------------------------------------------------------------------------


def bought_game() -> Game:
    game = Game()
    game.do(BuyShip(player="Anne", kind="red-small", name="Hope", options=("super-shot",)))
    game.do(EquipShip(ship="Hope", option="extra-cannons"))
    game.do(EquipFleet(player="Anne", option="fireship-fleet"))
    game.do(SealFleet(player="Anne", forfeit=True))
    return game


def test_F3_audit_of_a_faithful_log_agrees_with_the_price_list() -> None:
    report = audit_events(bought_game().events)
    assert report.ok and report.rules_version == RULES_VERSION
    (anne,) = report.fleets
    # 5000 ship + 5000 super shot + 10000 extra cannons (2 sides) + 20000 fleet fireship
    assert (anne.recorded, anne.recomputed, anne.forfeited) == (40000, 40000, 60000)


def edited(events: list[Event], seq: int, **changes: object) -> list[Event]:
    return [msgspec.structs.replace(e, **changes) if e.seq == seq else e for e in events]


@pytest.mark.parametrize(
    ("seq", "changes", "words"),
    [
        (1, {"price": 5000}, f"recorded at 5000, the {RULES_VERSION} price list says 10000"),
        (2, {"price": 5000}, "recorded at 5000"),
        (3, {"price": 2000}, "fleet option fireship-fleet recorded at 2000"),
        (4, {"forfeited": 90000}, "leaves 60000"),
        (1, {"kind": "galleon"}, f"not on the {RULES_VERSION} price list"),
    ],
)
def test_F3_audit_catches_an_edited_purchase(seq: int, changes: dict[str, object], words: str) -> None:
    report = audit_events(edited(bought_game().events, seq, **changes))
    assert not report.ok
    assert any(words in finding.detail and finding.seq == seq for finding in report.findings), report.findings


def test_F3_audit_catches_spending_beyond_the_budget() -> None:
    events = Game(budget=10000).events
    events.append(ShipBought(seq=1, player="Anne", ship="Fury", kind="blue-big", price=55000))
    report = audit_events(events)
    assert [f.detail for f in report.findings] == ["55000 paid exceeds the budget of 10000"]


def test_F3_audit_of_a_game_without_purchases_is_ok_whatever_its_rules_version() -> None:
    events = create()
    assert audit_events(events).ok
    unknown = [msgspec.structs.replace(events[0], rules_version="1999")]
    assert audit_events(unknown).ok
    unknown.append(ShipBought(player="Anne", ship="Fury", kind="blue-big", price=55000))
    assert "unknown rules version" in audit_events(unknown).findings[0].detail


def test_F3_a_game_state_holds_each_fleet_as_bought() -> None:
    state: GameState = bought_game().state
    anne = state.fleets["Anne"]
    assert (anne.spent, anne.money_left, anne.sealed, anne.fleet_options) == (
        40000,
        60000,
        True,
        ("fireship-fleet",),
    )
    assert anne.ships[0].options == ("super-shot", "extra-cannons")
    assert "Bart" not in state.fleets
