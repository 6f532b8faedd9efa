"""The mortecouille scenario builder: ships in a given condition, and orders (pure).

Orders come as the architecture gives them: ``"advance"``, ``"idle"``,
``"fireship"``, ``{"maneuver": "1/4", "side": "left", "sailing": true}``,
``{"attack": "port", "target": "B", "mode": "burst"}``, ``{"catapult": "B"}``.
Fleet options listed on any ship apply to every ship with the same owner.
"""

from __future__ import annotations

from typing import Any

from mortecouille.core.errors import BadInput
from mortecouille.core.fleet.catalogue import catalogue_for, resolve_option
from mortecouille.core.life_cycle import Command, shared_fields
from mortecouille.core.mortecouille.common import SetUpShip
from mortecouille.core.mortecouille.questions import MORTECOUILLE_QUESTIONS
from mortecouille.core.scenario import (
    Problem,
    Scenario,
    ScenarioPlan,
    ShipSpec,
    check_ships,
    gather,
    plan_scenario,
    raise_problems,
)
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.mortecouille import ShipSetUp
from mortecouille.events.orders import Advance, Attack, BecomeFireship, CatapultShot, Idle, Maneuver, Order

_PLAIN_ORDERS: dict[str, Order] = {"advance": Advance(), "idle": Idle(), "fireship": BecomeFireship()}


def fleet_options_by_owner(scenario: Scenario) -> dict[str | None, set[str]]:
    catalogue = catalogue_for()
    by_owner: dict[str | None, set[str]] = {}
    for index, ship in enumerate(scenario.ships):
        for position, option in enumerate(ship.options):
            try:
                canonical = resolve_option(option)
            except BadInput as error:
                raise BadInput(
                    f"ships[{index}].options[{position}]", error.key, rule=error.rule, **error.params
                ) from None
            if catalogue.option(canonical).scope == "fleet" and ship.owner is not None:
                by_owner.setdefault(ship.owner, set()).add(canonical)
    return by_owner


def set_up_ship(scenario: Scenario, ship: ShipSpec) -> Command:
    shared = fleet_options_by_owner(scenario).get(ship.owner, set())
    own = [resolve_option(option) for option in ship.options]
    options = tuple(own + sorted(shared - set(own)))
    condition = shared_fields(ship, ShipSetUp) | {"options": options}
    return SetUpShip(proposed=ShipSetUp(ship=ship.id, **condition))


def parse_order(item: Any, field: str) -> Order:
    if isinstance(item, str):
        if item in _PLAIN_ORDERS:
            return _PLAIN_ORDERS[item]
        raise BadInput(field, "{item!r} is not an order: advance, idle, fireship, or an object", item=item)
    if not isinstance(item, dict):
        raise BadInput(field, "{item!r} is not an order", item=item)
    try:
        if "maneuver" in item:
            return Maneuver(
                turn=str(item["maneuver"]),
                side=str(item.get("side", "right")),
                sailing=bool(item.get("sailing", False)),
            )
        if "attack" in item:
            return Attack(
                position=str(item["attack"]), target=str(item["target"]), mode=str(item.get("mode", "normal"))
            )
        if "catapult" in item:
            return CatapultShot(target=str(item["catapult"]))
    except KeyError as missing:
        raise BadInput(f"{field}.{missing.args[0]}", "is missing") from None
    raise BadInput(field, "{item!r} has none of the keys maneuver, attack, catapult", item=item)


def give_orders(scenario: Scenario, ship: str, actions: list[Any], field: str) -> list[Command]:
    if not actions:
        return []
    problems: list[Problem] = []
    parsed = [
        gather(problems, f"{field}[{index}]", parse_order, item, f"{field}[{index}]")
        for index, item in enumerate(actions)
    ]
    raise_problems(problems)
    return [GiveOrder(ship=ship, actions=tuple(order for order in parsed if order is not None))]


def build_mortecouille_scenario(scenario: Scenario) -> ScenarioPlan:
    """The commands of a mortecouille scenario; its turn has one movement (T2)."""
    # a ship's kind is checked with its options by SetUpShip, in the terms of the game's catalogue
    problems = check_ships(scenario, MORTECOUILLE_QUESTIONS.naming_rule)
    if scenario.rounds not in (None, 1):
        problems.append(("rounds", "a mortecouille turn has one movement (round 1)"))
    return plan_scenario(scenario, 1, set_up_ship, give_orders, problems)
