"""Rules F1-F4: the ship and option tables, purchases, sealing, audit and the status sheet.

Every expected number is copied from rules.md, never read back from the catalogue.
"""

from __future__ import annotations

import ast
import inspect

import msgspec
import pytest

from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.fleet import stats as fleet_stats
from mortecouille.core.fleet.catalogue import (
    CATALOGUES,
    RULES_VERSION,
    Cannons,
    catalogue_for,
    resolve_option,
    resolve_ship_kind,
)
from mortecouille.core.fleet.purchase import (
    CheapestPurchase,
    Fleet,
    ShipPurchase,
    apply_buy_ship,
    apply_equip,
    apply_equip_fleet,
    apply_seal,
    cheapest_legal_purchase,
    check_buy_ship,
    check_equip,
    check_equip_fleet,
    check_seal,
    cost_of_fleet,
    new_fleet,
    status_sheet,
)
from mortecouille.core.fleet.stats import derive_stats, ship_cost

# rules.md F1, column by column: id, French, class, struct, normal, burst,
# (side each, bow, stern), price, speed, own loss small/big, inflicted small/big
F1Row = tuple[str, str, str, int, int, int, tuple[int, int, int], int, int, tuple[int, int], tuple[int, int]]
F1_ROWS: list[F1Row] = [
    ("red-small", "Rouge small", "small", 38, 3, 9, (2, 0, 0), 5000, 2, (5, 15), (3, 1)),
    ("red-big", "Rouge big", "big", 121, 12, 18, (4, 0, 0), 35000, 5, (2, 10), (20, 5)),
    ("blue-small", "Bleu small", "small", 35, 6, 16, (3, 1, 0), 10000, 4, (7, 25), (2, 0)),
    ("blue-big", "Bleu big", "big", 130, 16, 25, (4, 2, 2), 55000, 7, (0, 8), (30, 15)),
    ("green-small", "Vert small", "small", 37, 4, 12, (3, 0, 0), 10000, 3, (4, 13), (4, 1)),
    ("green-big", "Vert big", "big", 129, 16, 23, (4, 1, 0), 50000, 6, (1, 9), (22, 8)),
    ("yellow-small", "Jaune small", "small", 44, 5, 13, (2, 1, 0), 15000, 3, (5, 15), (3, 0)),
    ("yellow-big", "Jaune big", "big", 140, 17, 21, (3, 2, 2), 50000, 5, (1, 5), (27, 11)),
]

# rules.md F2: id, French name, price, scope
F2_PRICES: list[tuple[str, str, int, str]] = [
    ("slave", "Esclave individuel", 5000, "ship"),
    ("slave-fleet", "Esclave universel", 30000, "fleet"),
    ("hull-1", "Perfectionnement de coque niv 1", 5000, "ship"),
    ("hull-2", "Perfectionnement de coque niv 2", 10000, "ship"),
    ("hull-3", "Perfectionnement de coque niv 3", 20000, "ship"),
    ("hull-4", "Perfectionnement de coque niv 4", 50000, "ship"),
    ("flaming-shot", "Boulet enflammé", 10000, "ship"),
    ("extra-sail", "Ajout de voile", 5000, "ship"),
    ("super-shot", "Super boulet de canon", 5000, "ship"),
    ("super-shot-fleet", "Super boulet de canon universel", 30000, "fleet"),
    ("siren", "Sirène", 5000, "ship"),
    ("extra-crew", "Supplément de personnel", 10000, "ship"),
    ("catapult", "Catapulte embarquée et pivotante", 30000, "ship"),
    ("continuous-burst", "Rafale continue", 10000, "ship"),
    ("fireship", "Tentative suicide individuel", 5000, "ship"),
    ("fireship-fleet", "Tentative suicide universel", 20000, "fleet"),
    ("elite-gunner", "Canonnier d'élite", 10000, "ship"),
    ("elite-gunner-fleet", "Canonnier d'élite universel", 60000, "fleet"),
]


def fleet_with(budget: int = 500_000, **changes: object) -> Fleet:
    return msgspec.structs.replace(new_fleet("anne", budget), **changes)


def buy(fleet: Fleet, kind: str, name: str, *options: str) -> Fleet:
    price = check_buy_ship(fleet, kind, name, options)
    return apply_buy_ship(fleet, kind, name, options, price)


# --- F1 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("row", F1_ROWS, ids=[row[0] for row in F1_ROWS])
def test_F1_ship_table_row(row: F1Row) -> None:
    kind, french, ship_class, structure, normal, burst, layout, price, speed, own, inflicted = row
    ship = catalogue_for().ships[kind]
    assert (ship.french_name, ship.ship_class, ship.structure) == (french, ship_class, structure)
    assert (ship.normal_damage, ship.burst_damage, ship.price, ship.speed) == (
        normal,
        burst,
        price,
        speed,
    )
    side, bow, stern = layout
    assert ship.cannons == Cannons(port=side, starboard=side, bow=bow, stern=stern)
    assert (ship.own_loss_against("small"), ship.own_loss_against("big")) == own
    assert (ship.inflicted_on("small"), ship.inflicted_on("big")) == inflicted


@pytest.mark.parametrize("row", F1_ROWS, ids=[row[0] for row in F1_ROWS])
def test_F1_bare_ship_costs_its_table_price_and_derives_table_stats(row: F1Row) -> None:
    kind, _, _, structure, normal, burst, layout, price, speed, _, _ = row
    assert check_buy_ship(fleet_with(), kind, "Hope", ()) == price
    stats = derive_stats(kind)
    assert (stats.max_structure, stats.structure, stats.speed) == (structure, structure, speed)
    assert (stats.normal_damage, stats.burst_damage) == (normal, burst)
    assert (stats.cannons.port, stats.cannons.bow, stats.cannons.stern) == layout


def test_F1_catalogue_has_exactly_the_eight_ships() -> None:
    assert sorted(catalogue_for().ships) == sorted(row[0] for row in F1_ROWS)


@pytest.mark.parametrize("row", F1_ROWS, ids=[row[0] for row in F1_ROWS])
def test_F1_french_name_resolves_to_ship_id(row: F1Row) -> None:
    assert resolve_ship_kind(row[1]) == row[0]
    assert resolve_ship_kind(row[1].upper()) == row[0]


def test_F1_unknown_kind_suggests_closest_id() -> None:
    with pytest.raises(BadInput, match="did you mean 'yellow-big'") as refusal:
        resolve_ship_kind("yelow-bigg")
    assert refusal.value.field == "kind"
    with pytest.raises(BadInput, match="did you mean 'green-small'"):
        check_buy_ship(fleet_with(), "vert smal", "Hope", ())


def test_F1_name_already_used_in_game_is_refused() -> None:
    with pytest.raises(RuleViolation, match="already in the game") as refusal:
        check_buy_ship(fleet_with(), "red-small", "Hope", (), names_in_game={"Hope"})
    assert refusal.value.rule == "F1"


def test_F1_name_used_in_own_fleet_is_refused_case_insensitively() -> None:
    fleet = buy(fleet_with(), "red-small", "Hope")
    with pytest.raises(RuleViolation, match="already in the game"):
        check_buy_ship(fleet, "red-big", "  HOPE ", ())


def test_F1_empty_name_is_bad_input() -> None:
    with pytest.raises(BadInput):
        check_buy_ship(fleet_with(), "red-small", "  ", ())


# --- F2 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("row", F2_PRICES, ids=[row[0] for row in F2_PRICES])
def test_F2_option_price_scope_and_french_name(row: tuple[str, str, int, str]) -> None:
    option, french, price, scope = row
    spec = catalogue_for().options[option]
    assert (spec.price, spec.scope) == (price, scope)
    assert resolve_option(french) == option


def test_F2_catalogue_has_every_option_id() -> None:
    expected = {row[0] for row in F2_PRICES} | {"extra-cannons"}
    assert set(catalogue_for().options) == expected


def test_F2_counterparts_link_individual_and_fleet_variants() -> None:
    options = catalogue_for().options
    pairs = [("slave", "slave-fleet"), ("super-shot", "super-shot-fleet")]
    pairs += [("fireship", "fireship-fleet"), ("elite-gunner", "elite-gunner-fleet")]
    for individual, fleet in pairs:
        assert options[individual].counterpart == fleet
        assert options[fleet].counterpart == individual
    assert options["siren"].counterpart is None


@pytest.mark.parametrize(
    ("kind", "price", "added"),
    [
        ("red-small", 10000, (3, 0, 0)),  # sides only
        ("green-small", 10000, (4, 0, 0)),
        ("red-big", 10000, (5, 0, 0)),
        ("blue-small", 15000, (4, 2, 0)),  # sides + bow
        ("yellow-small", 15000, (3, 2, 0)),
        ("green-big", 15000, (5, 2, 0)),
        ("blue-big", 20000, (5, 3, 3)),  # sides + bow + stern
        ("yellow-big", 20000, (4, 3, 3)),
    ],
)
def test_F2_extra_cannons_priced_by_layout(kind: str, price: int, added: tuple[int, int, int]) -> None:
    assert catalogue_for().option_price("extra-cannons", kind) == price
    bare = catalogue_for().ships[kind].price
    assert check_buy_ship(fleet_with(), kind, "Hope", ("extra-cannons",)) == bare + price
    stats = derive_stats(kind, ("extra-cannons",))
    assert (stats.cannons.port, stats.cannons.bow, stats.cannons.stern) == added
    assert stats.cannons.starboard == added[0]


def test_F2_extra_cannons_add_4_normal_6_burst() -> None:
    stats = derive_stats("green-big", ("extra-cannons",))
    assert (stats.normal_damage, stats.burst_damage) == (16 + 4, 23 + 6)


def test_F2_super_shot_adds_5_normal_9_burst() -> None:
    stats = derive_stats("red-big", ("super-shot",))
    assert (stats.normal_damage, stats.burst_damage) == (12 + 5, 18 + 9)
    assert stats.super_shot


def test_F2_super_shot_and_extra_cannons_stack() -> None:
    stats = derive_stats("red-small", ("super-shot", "extra-cannons"))
    assert (stats.normal_damage, stats.burst_damage) == (3 + 5 + 4, 9 + 9 + 6)


@pytest.mark.parametrize(
    ("option", "small", "big"),
    [("hull-1", 38 + 10, 121 + 20), ("hull-2", 38 + 11, 121 + 20), ("hull-3", 38 + 15, 121 + 22)],
)
def test_F2_hull_tier_structure_bonus(option: str, small: int, big: int) -> None:
    assert derive_stats("red-small", (option,)).max_structure == small
    assert derive_stats("red-big", (option,)).max_structure == big


def test_F2_hull_4_adds_45_on_big_ship() -> None:
    assert derive_stats("yellow-big", ("hull-4",)).max_structure == 140 + 45
    assert check_buy_ship(fleet_with(), "yellow-big", "Hope", ("hull-4",)) == 50000 + 50000


def test_F2_hull_4_refused_on_small_ship() -> None:
    with pytest.raises(RuleViolation, match="big ships only") as refusal:
        check_buy_ship(fleet_with(), "yellow-small", "Hope", ("hull-4",))
    assert refusal.value.rule == "F2"
    fleet = buy(fleet_with(), "yellow-small", "Hope")
    with pytest.raises(RuleViolation, match="big ships only"):
        check_equip(fleet, "Hope", "hull-4")


def test_F2_one_hull_tier_per_ship_at_purchase() -> None:
    with pytest.raises(RuleViolation, match="one per ship") as refusal:
        check_buy_ship(fleet_with(), "red-big", "Hope", ("hull-1", "hull-3"))
    assert refusal.value.rule == "F2"


def test_F2_one_hull_tier_per_ship_when_equipping() -> None:
    fleet = buy(fleet_with(), "red-big", "Hope", "hull-1")
    with pytest.raises(RuleViolation, match="hull-1 and hull-2"):
        check_equip(fleet, "Hope", "hull-2")


@pytest.mark.parametrize(
    ("option", "flag"),
    [
        ("flaming-shot", "flaming_shot"),
        ("siren", "siren"),
        ("extra-crew", "extra_crew"),
        ("continuous-burst", "continuous_burst"),
        ("slave", "slave"),
        ("fireship", "fireship_allowed"),
        ("elite-gunner", "elite_gunner"),
    ],
)
def test_F2_individual_option_sets_its_flag(option: str, flag: str) -> None:
    assert getattr(derive_stats("blue-small", (option,)), flag) is True
    assert getattr(derive_stats("blue-small"), flag) is False


@pytest.mark.parametrize(
    ("option", "flag"),
    [
        ("slave-fleet", "slave"),
        ("fireship-fleet", "fireship_allowed"),
        ("elite-gunner-fleet", "elite_gunner"),
        ("super-shot-fleet", "super_shot"),
    ],
)
def test_F2_fleet_option_sets_flag_on_every_ship(option: str, flag: str) -> None:
    assert getattr(derive_stats("blue-small", (), (option,)), flag) is True


def test_F2_fleet_super_shot_applies_damage_once_even_with_individual() -> None:
    stats = derive_stats("red-big", ("super-shot",), ("super-shot-fleet",))
    assert (stats.normal_damage, stats.burst_damage) == (12 + 5, 18 + 9)


def test_F2_catapult_limit_one_on_small_ship() -> None:
    assert check_buy_ship(fleet_with(), "red-small", "Hope", ("catapult",)) == 5000 + 30000
    with pytest.raises(RuleViolation, match="at most once") as refusal:
        check_buy_ship(fleet_with(), "red-small", "Hope", ("catapult", "catapult"))
    assert refusal.value.rule == "F2"


def test_F2_catapult_limit_two_on_big_ship() -> None:
    fleet = buy(fleet_with(), "blue-big", "Hope", "catapult", "catapult")
    assert derive_stats("blue-big", fleet.ships[0].options).catapults == 2
    assert fleet.spent == 55000 + 2 * 30000
    with pytest.raises(RuleViolation, match="at most 2 times"):
        check_equip(fleet, "Hope", "catapult")


def test_F2_individual_option_at_most_once_per_ship() -> None:
    with pytest.raises(RuleViolation, match="at most once"):
        check_buy_ship(fleet_with(), "red-big", "Hope", ("siren", "siren"))
    fleet = buy(fleet_with(), "red-big", "Hope", "flaming-shot")
    with pytest.raises(RuleViolation, match="at most once") as refusal:
        check_equip(fleet, "Hope", "flaming-shot")
    assert refusal.value.rule == "F2"


def test_F2_same_option_on_two_ships_is_fine() -> None:
    fleet = buy(buy(fleet_with(), "red-small", "A", "siren"), "red-small", "B")
    assert check_equip(fleet, "B", "siren") == 5000


def test_F2_individual_refused_where_fleet_variant_owned() -> None:
    fleet = fleet_with()
    fleet = apply_equip_fleet(fleet, "super-shot-fleet", check_equip_fleet(fleet, "super-shot-fleet"))
    with pytest.raises(RuleViolation, match="already owns super-shot-fleet") as refusal:
        check_buy_ship(fleet, "red-small", "Hope", ("super-shot",))
    assert refusal.value.rule == "F2"
    fleet = buy(fleet, "red-small", "Hope")
    with pytest.raises(RuleViolation, match="already owns super-shot-fleet"):
        check_equip(fleet, "Hope", "super-shot")


def test_F2_fleet_variant_refused_where_individual_owned() -> None:
    fleet = buy(fleet_with(), "red-small", "Hope", "elite-gunner")
    with pytest.raises(RuleViolation, match="already carries elite-gunner") as refusal:
        check_equip_fleet(fleet, "elite-gunner-fleet")
    assert refusal.value.rule == "F2"


def test_F2_fleet_option_bought_once() -> None:
    fleet = apply_equip_fleet(fleet_with(), "slave-fleet", 30000)
    with pytest.raises(RuleViolation, match="already owns slave-fleet"):
        check_equip_fleet(fleet, "slave-fleet")


def test_F2_fleet_option_cannot_be_fitted_to_one_ship() -> None:
    with pytest.raises(RuleViolation, match="fleet option") as refusal:
        check_buy_ship(fleet_with(), "red-small", "Hope", ("slave-fleet",))
    assert refusal.value.rule == "F2"
    fleet = buy(fleet_with(), "red-small", "Hope")
    with pytest.raises(RuleViolation, match="fleet option"):
        check_equip(fleet, "Hope", "Esclave universel")


def test_F2_individual_option_cannot_be_bought_for_the_fleet() -> None:
    with pytest.raises(RuleViolation, match="fleet variant is super-shot-fleet"):
        check_equip_fleet(fleet_with(), "super-shot")
    with pytest.raises(RuleViolation, match="no fleet variant") as refusal:
        check_equip_fleet(fleet_with(), "siren")
    assert refusal.value.rule == "F2"


def test_F2_fleet_prices() -> None:
    assert check_equip_fleet(fleet_with(), "Esclave universel") == 30000
    assert check_equip_fleet(fleet_with(), "elite-gunner-fleet") == 60000


def test_F2_fleet_option_applies_to_ships_bought_later() -> None:
    fleet = apply_equip_fleet(fleet_with(), "super-shot-fleet", 30000)
    fleet = buy(fleet, "green-small", "Later")
    assert fleet.ships[0].options == ()
    sheet = status_sheet(fleet)
    assert (sheet.ships[0].normal_damage, sheet.ships[0].burst_damage) == (4 + 5, 12 + 9)
    stats = derive_stats("green-small", fleet.ships[0].options, fleet.fleet_options)
    assert stats.super_shot


def test_F2_unknown_option_suggests_closest_id() -> None:
    with pytest.raises(BadInput, match="did you mean 'super-shot'") as refusal:
        check_buy_ship(fleet_with(), "red-small", "Hope", ("supershot",))
    assert refusal.value.field == "option"
    with pytest.raises(BadInput, match="did you mean 'catapult'"):
        resolve_option("catapulte pivotante")


@pytest.mark.parametrize(
    ("text", "option"),
    [
        ("Super boulet de canon", "super-shot"),
        ("Esclave universel", "slave-fleet"),
        ("Perfectionnement de coque niv 2", "hull-2"),
        ("Boulet enflammé", "flaming-shot"),
        ("boulet enflamme", "flaming-shot"),
        ("Canonnier d'élite", "elite-gunner"),
        ("CANONNIER D’ELITE UNIVERSEL", "elite-gunner-fleet"),
        ("Ajout de canons", "extra-cannons"),
        ("extra cannons", "extra-cannons"),
        ("Sirene", "siren"),
    ],
)
def test_F2_french_and_loose_aliases(text: str, option: str) -> None:
    assert resolve_option(text) == option


def test_F2_equip_unknown_ship_suggests_name() -> None:
    fleet = buy(fleet_with(), "red-small", "Hope")
    with pytest.raises(BadInput, match="did you mean 'Hope'"):
        check_equip(fleet, "Hop", "siren")


# --- F3 ----------------------------------------------------------------------------------------


def test_F3_ship_over_budget_is_refused() -> None:
    with pytest.raises(RuleViolation, match="only 50000 left") as refusal:
        check_buy_ship(fleet_with(budget=50000), "blue-big", "Hope", ())
    assert refusal.value.rule == "F3"


def test_F3_options_count_toward_the_budget() -> None:
    assert check_buy_ship(fleet_with(budget=40000), "red-small", "Hope", ("catapult",)) == 35000
    with pytest.raises(RuleViolation, match="costs 40000"):
        check_buy_ship(fleet_with(budget=39999), "red-small", "Hope", ("catapult", "siren"))


def test_F3_equip_and_fleet_option_over_budget_are_refused() -> None:
    fleet = buy(fleet_with(budget=14000), "red-small", "Hope")
    with pytest.raises(RuleViolation, match="only 9000 left") as refusal:
        check_equip(fleet, "Hope", "flaming-shot")
    assert refusal.value.rule == "F3"
    with pytest.raises(RuleViolation, match="only 9000 left"):
        check_equip_fleet(fleet, "fireship-fleet")


def test_F3_exact_budget_is_allowed() -> None:
    fleet = buy(fleet_with(budget=35000), "red-big", "Hope")
    assert fleet.money_left == 0
    check_seal(fleet)


def test_F3_purchase_after_sealing_is_refused() -> None:
    fleet = apply_seal(buy(fleet_with(budget=5000), "red-small", "Hope"))
    for attempt in (
        lambda: check_buy_ship(fleet, "red-small", "Two", ()),
        lambda: check_equip(fleet, "Hope", "siren"),
        lambda: check_equip_fleet(fleet, "slave-fleet"),
        lambda: check_seal(fleet, forfeit=True),
    ):
        with pytest.raises(RuleViolation, match="sealed") as refusal:
            attempt()
        assert refusal.value.rule == "F3"


def test_F3_seal_refused_while_money_could_buy_something() -> None:
    fleet = buy(fleet_with(budget=40000), "red-big", "Hope")
    with pytest.raises(RuleViolation, match="still has 5000") as refusal:
        check_seal(fleet)
    assert refusal.value.rule == "F3"
    check_seal(fleet, forfeit=True)


def test_F3_seal_allowed_when_nothing_affordable_is_left() -> None:
    check_seal(buy(fleet_with(budget=39999), "red-big", "Hope"))
    check_seal(fleet_with(budget=4999))


def test_F3_cheapest_legal_purchase_is_a_red_small() -> None:
    assert cheapest_legal_purchase(fleet_with()) == CheapestPurchase(price=5000, description="a red-small")


def test_F3_audit_recomputes_fleet_cost() -> None:
    fleet = apply_equip_fleet(fleet_with(), "slave-fleet", 30000)
    fleet = buy(fleet, "blue-small", "A", "extra-cannons", "hull-2")
    fleet = buy(fleet, "yellow-big", "B", "catapult", "catapult", "hull-4")
    fleet = apply_equip(fleet, "A", "siren", check_equip(fleet, "A", "siren"))
    expected = 30000 + (10000 + 15000 + 10000 + 5000) + (50000 + 60000 + 50000)
    assert cost_of_fleet(fleet.ships, fleet.fleet_options, RULES_VERSION) == expected
    assert fleet.spent == expected
    assert ship_cost("blue-small", ("extra-cannons", "hull-2", "siren")) == 40000


def test_F3_audit_prices_against_the_game_rules_version(monkeypatch: pytest.MonkeyPatch) -> None:
    current = catalogue_for(RULES_VERSION)
    cheap_red = msgspec.structs.replace(current.ships["red-small"], price=1000)
    older = msgspec.structs.replace(
        current, version="2025.9", ships={**current.ships, "red-small": cheap_red}
    )
    monkeypatch.setitem(CATALOGUES, "2025.9", older)
    ships = [ShipPurchase(name="Hope", kind="red-small", options=("siren",))]
    assert cost_of_fleet(ships, (), "2025.9") == 1000 + 5000
    assert cost_of_fleet(ships, (), RULES_VERSION) == 5000 + 5000
    assert check_buy_ship(new_fleet("anne", 9000, "2025.9"), "red-small", "Hope", ()) == 1000


def test_F3_unknown_rules_version_is_bad_input() -> None:
    with pytest.raises(BadInput, match="unknown rules version"):
        cost_of_fleet([], [], "1999.1")
    assert RULES_VERSION == "2026.2"


def test_F3_negative_budget_is_bad_input() -> None:
    with pytest.raises(BadInput):
        new_fleet("anne", -1)


# --- F4 ----------------------------------------------------------------------------------------


def test_F4_the_sheet_builds_on_the_stats_never_the_other_way() -> None:
    # purchase (buying, the F4 sheet) -> stats (price, derived numbers): no import back, not even
    # one for annotations only, so the two modules never form a cycle.
    tree = ast.parse(inspect.getsource(fleet_stats))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "mortecouille.core.fleet.purchase" not in imported


def test_F4_status_sheet_lists_ships_options_and_totals() -> None:
    fleet = apply_equip_fleet(fleet_with(budget=100000), "fireship-fleet", 20000)
    fleet = buy(fleet, "yellow-small", "Mouette", "hull-1", "extra-cannons")
    sheet = status_sheet(fleet, {"Mouette": 10})
    ship = sheet.ships[0]
    assert (ship.name, ship.kind, ship.type_french, ship.type_english) == (
        "Mouette",
        "yellow-small",
        "Jaune small",
        "Yellow small",
    )
    assert (ship.structure_max, ship.structure_current, ship.speed) == (54, 44, 5)
    assert ship.cannons == Cannons(port=3, starboard=3, bow=2, stern=0)
    assert [(o.id, o.french_name, o.price) for o in ship.options] == [
        ("hull-1", "Perfectionnement de coque niv 1", 5000),
        ("extra-cannons", "Ajout de canons", 15000),
    ]
    assert ship.price == 15000 + 5000 + 15000
    assert [(o.id, o.french_name, o.price) for o in sheet.fleet_options] == [
        ("fireship-fleet", "Tentative suicide universel", 20000)
    ]
    assert (sheet.total, sheet.budget, sheet.money_left) == (55000, 100000, 45000)
    assert msgspec.json.decode(msgspec.json.encode(sheet))["player"] == "anne"
