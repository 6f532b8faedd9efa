"""The scenario document (architecture.md, scenario format) and what a ruleset makes of it.

A scenario file is read by :mod:`mortecouille.app.scenario`; each ruleset's pure builder
(``Ruleset.scenario``, in ``core/<ruleset>/scenario.py``) turns the document into the
ordinary commands that put its ships on the board and give their orders.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import msgspec

from mortecouille.core.errors import BadInput
from mortecouille.core.life_cycle import Command
from mortecouille.core.limits import check_name, check_ship_count
from mortecouille.events.condition import ShipCondition


class WindSpec(msgspec.Struct, forbid_unknown_fields=True):
    at: tuple[int, int]
    dir: str


class BoardSpec(msgspec.Struct, forbid_unknown_fields=True):
    width: int
    height: int
    rocks: list[tuple[int, int]] = []
    winds: list[WindSpec] = []
    whirlpools: list[tuple[int, int]] = []


class ShipSpec(ShipCondition, frozen=True, forbid_unknown_fields=True):
    """A ship of the file: where it is and whose, and its condition (ShipCondition's fields)."""

    id: str
    kind: str
    at: tuple[int, int]
    facing: str
    owner: str | None = None


class FixedDiceSpec(msgspec.Struct, forbid_unknown_fields=True):
    purpose: str
    values: list[int]
    ship: str | None = None


class DiceSpec(msgspec.Struct, forbid_unknown_fields=True):
    seed: int | str = 0
    fixed: list[FixedDiceSpec] = []


class Scenario(msgspec.Struct, forbid_unknown_fields=True):
    ruleset: str
    board: BoardSpec
    ships: list[ShipSpec]
    orders: dict[str, list[Any]] = {}
    dice: DiceSpec = msgspec.field(default_factory=DiceSpec)
    rounds: int | None = None


class ScenarioPlan(msgspec.Struct, frozen=True):
    """What a scenario asks of the rules: its commands, each with the part of the file it
    comes from (named in a refusal), and the number of rounds its turn plays."""

    commands: list[tuple[str, Command]]
    rounds: int


#: a ruleset's pure scenario builder: the document in, the commands out (BadInput naming the key)
ScenarioBuilder: TypeAlias = Callable[[Scenario], ScenarioPlan]


def check_ships(scenario: Scenario, check_ship: Callable[[ShipSpec, str], None] | None = None) -> None:
    """The checks every ruleset's scenario shares: ship ids distinct, orders and fixed dice
    naming ships of the file; ``check_ship(ship, field)`` adds the ruleset's own."""
    check_ship_count(len(scenario.ships), "ships")
    seen: dict[str, int] = {}
    for index, ship in enumerate(scenario.ships):
        field = f"ships[{index}]"
        if ship.id in seen:
            raise BadInput(f"{field}.id", f"{ship.id!r} is already ships[{seen[ship.id]}]")
        seen[ship.id] = index
        check_name(f"{field}.id", ship.id)
        if ship.owner is not None:
            check_name(f"{field}.owner", ship.owner)
        if check_ship is not None:
            check_ship(ship, field)
    for ship_id in scenario.orders:
        if ship_id not in seen:
            raise BadInput(f"orders.{ship_id}", f"no ship {ship_id!r} in this scenario")
    for index, fixed in enumerate(scenario.dice.fixed):
        if fixed.ship is not None and fixed.ship not in seen:
            raise BadInput(f"dice.fixed[{index}].ship", f"no ship {fixed.ship!r} in this scenario")


def plan_scenario(
    scenario: Scenario,
    rounds: int,
    set_up: Callable[[Scenario, ShipSpec], Command],
    give_orders: Callable[[Scenario, str, list[Any], str], list[Command]],
) -> ScenarioPlan:
    """Every ship's set-up in file order, then every ship's orders by ship id."""
    commands: list[tuple[str, Command]] = []
    for index, ship in enumerate(scenario.ships):
        commands.append((f"ships[{index}]", set_up(scenario, ship)))
    for ship_id in sorted(scenario.orders):
        field = f"orders.{ship_id}"
        for command in give_orders(scenario, ship_id, scenario.orders[ship_id], field):
            commands.append((field, command))
    return ScenarioPlan(commands=commands, rounds=rounds)
