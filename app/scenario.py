"""``scenario``: one turn's situation in, its outcome out (architecture.md, scenario format).

The file is turned into ordinary commands (create the game, put the ships,
give the orders, resolve) that go through the same decider and the same store
as a real game, so the log it builds is a real, verifiable log. The document and
each ruleset's pure builder live in core (``Ruleset.scenario``); this module reads
the file and writes the log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from mortecouille.app.commands import SEED_SUFFIX, SIBLINGS, create_game
from mortecouille.core.board.geometry import square_name
from mortecouille.core.dice import DiceSource, FixedDice, SeededDice, TableDice, seed_commitment
from mortecouille.core.errors import BadInput, MortecouilleError
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import Command, CreateGame, ResolveTurn
from mortecouille.core.rulesets import RULESETS
from mortecouille.core.scenario import Scenario
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.board import Board
from mortecouille.events.codec import canonical, stamp_all
from mortecouille.events.movement import CollisionOccurred
from mortecouille.events.store import Conflict, GameLog


def parse_scenario(data: bytes) -> Scenario:
    try:
        return msgspec.json.decode(data, type=Scenario)
    except msgspec.ValidationError as error:
        raise BadInput("scenario", str(error).replace("`$.", "`")) from None
    except msgspec.DecodeError as error:
        raise BadInput("scenario", f"not valid JSON: {error}") from None


class ScenarioRun(msgspec.Struct):
    #: where the log was kept (``--log``), or None: then it lived in memory only
    log: GameLog | None
    state: GameState
    outcome: list[Event]


def run_scenario(scenario: Scenario, log_path: Path | None = None, name: str = "scenario") -> ScenarioRun:
    """Build the scenario's log, resolve its turn, and keep the log at ``log_path`` if one is given
    (created like any game's, through :func:`mortecouille.app.commands.create_game`)."""
    ruleset = RULESETS.get(scenario.ruleset)
    if ruleset is None:
        raise BadInput("ruleset", f"{scenario.ruleset!r} is not one of {', '.join(sorted(RULESETS))}")
    plan = ruleset.scenario(scenario)
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
    fixed: dict[tuple[str | None, str], list[int]] = {}
    for spec in scenario.dice.fixed:
        fixed.setdefault((spec.ship, spec.purpose), []).extend(spec.values)
    dice = FixedDice(fixed, SeededDice(seed))

    pending: list[Event] = decide(EMPTY, create, TableDice())
    state = fold(pending)
    for field, command in plan.commands:
        produced = _decide_naming(field, state, command, TableDice())
        pending.extend(produced)
        state = fold(produced, state)
    resolve = ResolveTurn(partial=True, rounds=plan.rounds, reveal_seed=seed)
    outcome = _decide_naming("orders", state, resolve, dice)
    if log_path is None:
        log = None
        stamped = stamp_all([*pending, *outcome], 0, GENESIS_HASH)[0][len(pending) :]
    else:
        log = kept_log(log_path)
        stamped = create_game(log, [*pending, *outcome], secret=None)[len(pending) :]
    return ScenarioRun(log=log, state=fold(stamped, state), outcome=stamped)


#: Suffixes of the files kept beside a game's log: a log kept under one of them would be taken for
#: (or, as ``out.head``, overwritten by) another game's sidecar.
_SIDECAR_SUFFIXES = (".head", ".seed", ".tmp")


def kept_log(path: Path) -> GameLog:
    """The log ``--log PATH`` keeps, refused before anything is written if it would clobber a file
    (issue 12, item 6): the path, its head anchor or seed sibling exists (another game's, even),
    or its name is a sidecar's (``out.head`` would be overwritten by its own anchor)."""
    log = GameLog(path)
    if path.suffix in _SIDECAR_SUFFIXES:
        raise BadInput("--log", f"{path} ends in {path.suffix}, the suffix of a game's sidecar file")
    problem = log.path_problem(SIBLINGS)
    if problem is not None:
        raise BadInput("--log", problem)
    for taken in (path, log.head_path, log.sibling(SEED_SUFFIX)):
        if taken.exists() or taken.is_symlink():
            raise Conflict(f"--log: {taken} already exists; choose a new file (nothing was written)")
    return log


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
    return {
        "ships": ships,
        "collisions": collisions,
        # each as its line in the log reads (keys sorted at every depth)
        "events": [msgspec.json.decode(canonical(msgspec.to_builtins(event))) for event in run.outcome],
        "log": str(run.log.path) if run.log is not None else None,
    }

