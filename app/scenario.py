"""``scenario``: one turn's situation in, its outcome out (architecture.md, scenario format).

The file is turned into ordinary commands (create the game, put the ships,
give the orders, resolve) that go through the same decider and the same store
as a real game, so the log it builds is a real, verifiable log.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from mortecouille.core.blockade.commands import GiveTokens, ResolveTurn
from mortecouille.core.blockade.rounds import BLOCKADE_KINDS, ROUNDS_PER_TURN, TOKENS
from mortecouille.core.board.geometry import square_name
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.board.terrain import Board
from mortecouille.core.dice import DiceSource, FixedDice, SeededDice, TableDice, seed_commitment
from mortecouille.core.errors import BadInput, MortecouilleError
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.game import Command, CreateGame, decide, fold, shared_fields
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.movement import CollisionOccurred
from mortecouille.events.store import Conflict, GameLog


class WindSpec(msgspec.Struct, forbid_unknown_fields=True):
    at: tuple[int, int]
    dir: str


class BoardSpec(msgspec.Struct, forbid_unknown_fields=True):
    width: int
    height: int
    rocks: list[tuple[int, int]] = []
    winds: list[WindSpec] = []
    whirlpools: list[tuple[int, int]] = []


class ShipSpec(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    kind: str
    at: tuple[int, int]
    facing: str
    owner: str | None = None
    options: list[str] = []
    damage: float = 0
    wind: int = 0
    fire: str | None = None
    countdown: int | None = None
    bursts_in_a_row: int = 0
    catapult_hits: int = 0
    fireship: bool = False


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


#: ruleset -> (scenario, ship spec) -> the command that puts the ship on the board
SHIP_SETUP: dict[str, Callable[[Scenario, ShipSpec], Command]] = {}
#: ruleset -> (scenario, ship id, its order list, field name) -> the commands giving those orders
ORDER_COMMANDS: dict[str, Callable[[Scenario, str, list[Any], str], list[Command]]] = {}


def parse_scenario(data: bytes) -> Scenario:
    try:
        return msgspec.json.decode(data, type=Scenario)
    except msgspec.ValidationError as error:
        raise BadInput("scenario", str(error).replace("`$.", "`")) from None
    except msgspec.DecodeError as error:
        raise BadInput("scenario", f"not valid JSON: {error}") from None


def scenario_rounds(scenario: Scenario) -> int:
    if scenario.ruleset != "blockade":
        if scenario.rounds not in (None, 1):
            raise BadInput("rounds", "a mortecouille turn has one movement (round 1)")
        return 1
    if scenario.rounds is not None:
        if not 1 <= scenario.rounds <= ROUNDS_PER_TURN:
            raise BadInput("rounds", f"must be 1 to {ROUNDS_PER_TURN}, not {scenario.rounds} (P1)")
        return scenario.rounds
    longest = max((len(tokens) for tokens in scenario.orders.values()), default=0)
    return max(1, min(longest, ROUNDS_PER_TURN))


def place_blockade(scenario: Scenario, ship: ShipSpec) -> Command:
    return PlaceShip(ship=ship.id, **shared_fields(ship, PlaceShip))


def blockade_tokens(scenario: Scenario, ship: str, tokens: list[Any], field: str) -> list[Command]:
    if len(tokens) > ROUNDS_PER_TURN:
        raise BadInput(field, f"at most {ROUNDS_PER_TURN} tokens, one per round (P1)")
    for index, token in enumerate(tokens):
        if token is not None and token not in TOKENS:
            raise BadInput(f"{field}[{index}]", f'{token!r} is not "F", "L", "R" or null (P1)')
    return [GiveTokens(ship=ship, tokens=tuple(tokens))] if tokens else []


SHIP_SETUP["blockade"] = place_blockade
ORDER_COMMANDS["blockade"] = blockade_tokens


def check_ships(scenario: Scenario) -> None:
    seen: dict[str, int] = {}
    for index, ship in enumerate(scenario.ships):
        field = f"ships[{index}]"
        if ship.id in seen:
            raise BadInput(f"{field}.id", f"{ship.id!r} is already ships[{seen[ship.id]}]")
        seen[ship.id] = index
        if scenario.ruleset == "blockade" and ship.kind not in BLOCKADE_KINDS:
            raise BadInput(
                f"{field}.kind", f"{ship.kind!r} is not a blockade kind: {', '.join(BLOCKADE_KINDS)}"
            )
    for ship_id in scenario.orders:
        if ship_id not in seen:
            raise BadInput(f"orders.{ship_id}", f"no ship {ship_id!r} in this scenario")
    for index, fixed in enumerate(scenario.dice.fixed):
        if fixed.ship is not None and fixed.ship not in seen:
            raise BadInput(f"dice.fixed[{index}].ship", f"no ship {fixed.ship!r} in this scenario")


class ScenarioRun(msgspec.Struct):
    log: GameLog
    state: GameState
    outcome: list[Event]


def run_scenario(scenario: Scenario, log_path: Path | None = None, name: str = "scenario") -> ScenarioRun:
    """Build the scenario's log (at ``log_path``, or in a temporary folder) and resolve its turn."""
    if scenario.ruleset not in SHIP_SETUP:
        raise BadInput("ruleset", f"{scenario.ruleset!r} is not one of {', '.join(sorted(SHIP_SETUP))}")
    check_ships(scenario)
    rounds = scenario_rounds(scenario)
    seed = str(scenario.dice.seed)
    board = msgspec.convert(scenario.board, Board, from_attributes=True)
    owners = sorted({s.owner for s in scenario.ships if s.owner})
    create = CreateGame(
        game=name,
        ruleset=scenario.ruleset,
        players=tuple(owners) or ("table",),
        budget=0,
        board=board,
        dice_mode="seeded",
        seed_sha256=seed_commitment(seed),
        rules_version=RULES_VERSION,
        scenario=True,
    )
    commands: list[tuple[str, Command]] = []
    for index, ship in enumerate(scenario.ships):
        commands.append((f"ships[{index}]", SHIP_SETUP[scenario.ruleset](scenario, ship)))
    for ship_id in sorted(scenario.orders):
        field = f"orders.{ship_id}"
        for command in ORDER_COMMANDS[scenario.ruleset](scenario, ship_id, scenario.orders[ship_id], field):
            commands.append((field, command))
    fixed: dict[tuple[str | None, str], list[int]] = {}
    for spec in scenario.dice.fixed:
        fixed.setdefault((spec.ship, spec.purpose), []).extend(spec.values)
    dice = FixedDice(fixed, SeededDice(seed))

    pending: list[Event] = decide(EMPTY, create, TableDice())
    state = fold(pending)
    for field, command in commands:
        produced = _decide_naming(field, state, command, TableDice())
        pending.extend(produced)
        state = fold(produced, state)
    resolve = ResolveTurn(partial=True, rounds=rounds, reveal_seed=seed)
    outcome = _decide_naming("orders", state, resolve, dice)
    log, stamped = _write_log(log_path, name, pending, outcome)
    return ScenarioRun(log=log, state=fold(stamped, state), outcome=stamped)


def _decide_naming(field: str, state: GameState, command: Command, dice: DiceSource) -> list[Event]:
    """Decide, and say which part of the file a refusal comes from."""
    try:
        return decide(state, command, dice)
    except BadInput as error:
        raise BadInput(f"{field}: {error.field}", error.message) from None
    except MortecouilleError as error:
        raise type(error)(*_prefixed(error, field)) from None


def _prefixed(error: MortecouilleError, field: str) -> tuple[str, str]:
    rule = getattr(error, "rule", "scenario")
    message = getattr(error, "message", str(error))
    return rule, f"{field}: {message}"


def _write_log(
    log_path: Path | None, name: str, setup: list[Event], outcome: list[Event]
) -> tuple[GameLog, list[Event]]:
    if log_path is None:
        log_path = Path(tempfile.mkdtemp(prefix="mortecouille-scenario-")) / f"{name}.jsonl"
    log = GameLog(log_path)
    if log.exists():
        raise Conflict(f"--log: {log_path} already exists; choose a new file")
    log.create(setup)
    return log, log.append(outcome)


def scenario_output(run: ScenarioRun) -> dict[str, Any]:
    """The ``--json`` answer: ships after the turn, collisions, and the outcome events as logged."""
    ships: dict[str, Any] = {}
    mortecouille = run.state.ruleset == "mortecouille"
    for ship in sorted(run.state.ships.values(), key=lambda s: s.id):
        entry: dict[str, Any] = {
            "at": list(ship.at) if ship.at is not None else None,
            "square": square_name(ship.at) if ship.at is not None else None,
            "facing": ship.facing,
            "damage": ship.damage,
            "sunk": ship.sunk or ship.lost,
        }
        if mortecouille:
            entry.update(fire=ship.fire, wind=ship.wind, countdown=ship.countdown)
            if ship.lost:
                entry["lost"] = True
            if ship.gone:
                entry["gone"] = True
        ships[ship.id] = entry
    collisions = []
    for event in run.outcome:
        if isinstance(event, CollisionOccurred):
            item: dict[str, Any] = {
                "round": event.round,
                "phase": event.phase,
                "step": event.step,
                "ships": list(event.ships),
                "rule": event.rule,
            }
            if event.rock is not None:
                item["rock"] = list(event.rock)
            collisions.append(item)
    lines = run.log.read_bytes().splitlines()
    first = run.outcome[0].seq if run.outcome else len(lines)
    return {
        "ships": ships,
        "collisions": collisions,
        "events": [msgspec.json.decode(line) for line in lines[first:]],
        "log": str(run.log.path),
    }


def _register_rulesets() -> None:
    from mortecouille.app import scenario_mortecouille  # noqa: F401 - registers the mortecouille half


_register_rulesets()
