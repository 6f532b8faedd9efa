"""The scenario document (architecture.md, scenario format) and what a ruleset makes of it.

A scenario file is read by :mod:`mortecouille.app.scenario`; each ruleset's pure builder
(``Ruleset.scenario``, in ``core/<ruleset>/scenario.py``) turns the document into the
ordinary commands that put its ships on the board and give their orders.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias, TypeVar

import msgspec

from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.life_cycle import Command
from mortecouille.core.limits import NamesHeld, check_name, check_ship_count, how_alike
from mortecouille.events.condition import ShipCondition

#: one thing wrong with a scenario file: (where in the file, what is wrong)
Problem: TypeAlias = tuple[str, str]

T = TypeVar("T")


class ScenarioProblems(BadInput):
    """Everything wrong with a scenario file, each with its path in the file (``ships[1].kind``),
    reported at once so that a designer fixes the file in one pass, not one error per run."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(dict.fromkeys(problems))  # in file order, each once
        if len(self.problems) == 1:
            super().__init__(*self.problems[0])
            return
        listed = "; ".join(f"{field}: {message}" for field, message in self.problems)
        super().__init__("scenario", "{count} problems: {listed}", count=len(self.problems), listed=listed)


def gather(problems: list[Problem], field: str, action: Callable[..., T], *args: Any) -> T | None:
    """``action(*args)``, or ``None`` with what it refused added to ``problems`` (a rule's refusal
    under ``field``, the part of the file it comes from)."""
    try:
        return action(*args)
    except ScenarioProblems as error:
        problems.extend(error.problems)
    except BadInput as error:
        problems.append((error.field, error.message))
    except RuleViolation as error:
        problems.append((field, f"[{error.rule}] {error.message}"))
    return None


def raise_problems(problems: Sequence[Problem]) -> None:
    if problems:
        raise ScenarioProblems(problems)


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


def check_ships(
    scenario: Scenario, naming_rule: str, check_ship: Callable[[ShipSpec, str], None] | None = None
) -> list[Problem]:
    """The checks every ruleset's scenario shares: ship ids distinct, orders and fixed dice
    naming ships of the file (two names alike refused citing ``naming_rule``); ``check_ship(ship,
    field)`` adds the ruleset's own. Returns every
    problem found (none raised), so that the builder can go on looking for more."""
    problems: list[Problem] = []
    gather(problems, "ships", check_ship_count, len(scenario.ships), "ships")
    seen: dict[str, int] = {}
    # ids and owners that look alike: one by the key commands read names by (case and spacing
    # aside), or drawn alike (core.limits.look_alike); either would be one name to a command or to
    # a reader (project rulings under F1 or P1, and T3)
    ids = NamesHeld()
    id_index: dict[str, int] = {}
    owners = NamesHeld()
    owner_index: dict[str, int] = {}
    ship_rule = naming_rule
    for index, ship in enumerate(scenario.ships):
        field = f"ships[{index}]"
        if ship.id in seen:
            problems.append((f"{field}.id", f"{ship.id!r} is already ships[{seen[ship.id]}]"))
        elif (first := ids.clashing(ship.id)) is not None:
            problems.append(
                (
                    f"{field}.id",
                    f"{ship.id!r} and ships[{id_index[first]}]'s {first!r} {how_alike(first, ship.id)}: "
                    f"every ship needs a name of its own ({ship_rule}, project ruling)",
                )
            )
        else:
            ids.add(ship.id)
            id_index[ship.id] = index
        seen.setdefault(ship.id, index)
        gather(problems, field, check_name, f"{field}.id", ship.id)
        if ship.owner is not None:
            gather(problems, field, check_name, f"{field}.owner", ship.owner)
            spelled = owners.clashing(ship.owner)
            if spelled is None:
                owners.add(ship.owner)
                owner_index[ship.owner] = index
            elif spelled != ship.owner:
                problems.append(
                    (
                        f"{field}.owner",
                        f"{ship.owner!r} and ships[{owner_index[spelled]}]'s owner {spelled!r} "
                        f"{how_alike(spelled, ship.owner)}: spell a player one way, every player needs a "
                        "name of their own (T3, project ruling)",
                    )
                )
        if check_ship is not None:
            gather(problems, field, check_ship, ship, field)
    for ship_id in scenario.orders:
        if ship_id not in seen:
            problems.append((f"orders.{ship_id}", f"no ship {ship_id!r} in this scenario"))
    for index, fixed in enumerate(scenario.dice.fixed):
        if fixed.ship is not None and fixed.ship not in seen:
            problems.append((f"dice.fixed[{index}].ship", f"no ship {fixed.ship!r} in this scenario"))
    return problems


def plan_scenario(
    scenario: Scenario,
    rounds: int,
    set_up: Callable[[Scenario, ShipSpec], Command],
    give_orders: Callable[[Scenario, str, list[Any], str], list[Command]],
    problems: Sequence[Problem] = (),
) -> ScenarioPlan:
    """Every ship's set-up in file order, then every ship's orders by ship id. ``problems``
    already found and every one met here are raised together (:class:`ScenarioProblems`)."""
    found = list(problems)
    commands: list[tuple[str, Command]] = []
    for index, ship in enumerate(scenario.ships):
        field = f"ships[{index}]"
        command = gather(found, field, set_up, scenario, ship)
        if command is not None:
            commands.append((field, command))
    for ship_id in sorted(scenario.orders):
        field = f"orders.{ship_id}"
        given = gather(found, field, give_orders, scenario, ship_id, scenario.orders[ship_id], field)
        commands.extend((field, command) for command in given or [])
    raise_problems(found)
    return ScenarioPlan(commands=commands, rounds=rounds)
