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

from mortecouille.app.commands import create_game
from mortecouille.app.games import SEED_SUFFIX, SIBLINGS
from mortecouille.core.board.geometry import parse_square, square_name
from mortecouille.core.dice import DiceSource, FixedDice, SeededDice, TableDice, seed_commitment
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import Command, CreateGame, ResolveTurn
from mortecouille.core.questions import asked_of
from mortecouille.core.rulesets import ruleset_named
from mortecouille.core.scenario import (
    BoardSpec,
    DiceSpec,
    Problem,
    Scenario,
    ShipSpec,
    gather,
    raise_problems,
)
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.codec import canonical
from mortecouille.events.movement import CollisionOccurred
from mortecouille.events.storage.errors import Conflict
from mortecouille.events.storage.file_log import GameLog
from mortecouille.events.storage.memory import MemoryStore

#: The keys of a scenario file, each with the type its value must have (see docs/scenario.md).
_PARTS: dict[str, Any] = {
    "ruleset": str,
    "board": BoardSpec,
    "ships": list[Any],
    "orders": dict[str, list[Any]],
    "dice": DiceSpec,
    "rounds": int | None,
}
_REQUIRED = ("ruleset", "board", "ships")


def parse_scenario(data: bytes) -> Scenario:
    """The scenario in ``data`` (JSON). Squares may be named (``"C5"``) or given as ``[x, y]``.
    Every problem found is reported at once (:class:`ScenarioProblems`), each with its path."""
    try:
        document = msgspec.json.decode(data)
    except msgspec.DecodeError as error:
        raise BadInput("scenario", "not valid JSON: {error}", error=str(error)) from None
    if not isinstance(document, dict):
        raise BadInput("scenario", "the file must hold one JSON object")
    problems: list[Problem] = []
    problems += [
        (key, "is not a key of a scenario (see docs/scenario.md)") for key in document if key not in _PARTS
    ]
    problems += [(key, "is missing") for key in _REQUIRED if key not in document]
    parts: dict[str, Any] = {}
    for key, kind in _PARTS.items():
        if key in document:
            value = _named_squares(key, document[key], problems)
            parts[key] = _convert(key, value, kind, problems)
    ships = []
    for index, ship in enumerate(parts.get("ships") or []):
        field = f"ships[{index}]"
        if isinstance(ship, dict) and "at" in ship:
            ship = {**ship, "at": _square(f"{field}.at", ship["at"], problems)}
        ships.append(_convert(field, ship, ShipSpec, problems))
    raise_problems(problems)
    return Scenario(**{**parts, "ships": ships})


def _convert(field: str, value: Any, kind: Any, problems: list[Problem]) -> Any:
    """``value`` as ``kind``, or ``None`` with msgspec's complaint added at its path in the file."""
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as error:
        message, at, where = str(error).partition(" - at `$")
        problems.append((field + where.rstrip("`") if at else field, message))
        return None


def _square(field: str, value: Any, problems: list[Problem]) -> Any:
    """A square named like ``"C5"`` as ``[x, y]`` (B1); anything else as it is, for msgspec to judge."""
    if not isinstance(value, str):
        return value
    try:
        return list(parse_square(value))
    except ValueError as error:
        problems.append((field, str(error)))
        return [0, 0]  # already reported: keep looking for other problems


def _named_squares(key: str, value: Any, problems: list[Problem]) -> Any:
    """The board's rocks, whirlpools and wind tiles with their named squares read (``"C5"``)."""
    if key != "board" or not isinstance(value, dict):
        return value
    board = dict(value)
    for part in ("rocks", "whirlpools"):
        if isinstance(board.get(part), list):
            board[part] = [_square(f"board.{part}[{i}]", at, problems) for i, at in enumerate(board[part])]
    if isinstance(board.get("winds"), list):
        board["winds"] = [
            {**wind, "at": _square(f"board.winds[{i}].at", wind["at"], problems)}
            if isinstance(wind, dict) and "at" in wind
            else wind
            for i, wind in enumerate(board["winds"])
        ]
    return board


class ScenarioRun(msgspec.Struct):
    #: where the log was kept (``--log``), or None: then it lived in a memory store only
    log: GameLog | None
    state: GameState
    outcome: list[Event]


def run_scenario(scenario: Scenario, log_path: Path | None = None, name: str = "scenario") -> ScenarioRun:
    """Build the scenario's log, resolve its turn, and keep the log at ``log_path`` if one is given
    (created like any game's, through :func:`mortecouille.app.commands.create_game`)."""
    ruleset = ruleset_named(scenario.ruleset)
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
    # the ships first, then the orders: every refusal of a stage is reported together (an order
    # for a ship the rules refused would only repeat that refusal)
    for stage in ("ships", "orders"):
        problems: list[Problem] = []
        for field, command in plan.commands:
            if field.startswith(stage):
                produced = gather(problems, field, _decide_field, field, state, command)
                pending.extend(produced or [])
                state = fold(produced or [], state)
        raise_problems(problems)
    resolve = ResolveTurn(partial=True, rounds=plan.rounds, reveal_seed=seed)
    outcome = _decide_naming("orders", state, resolve, dice)
    # written through the same creation either way: into memory, or kept at ``log_path``
    log = None if log_path is None else kept_log(log_path)
    written = create_game(MemoryStore().log(name) if log is None else log, [*pending, *outcome], secret=None)
    stamped = written[len(pending) :]
    return ScenarioRun(log=log, state=fold(stamped, state), outcome=stamped)


#: Suffixes of the files kept beside a game's log: a log kept under one of them would be taken for
#: (or, as ``out.head``, overwritten by) another game's sidecar.
_SIDECAR_SUFFIXES = (".head", ".seed", ".tmp")


def kept_log(path: Path) -> GameLog:
    """The log ``--log PATH`` keeps, refused before anything is written if it would clobber a file:
    the path, its head anchor or seed sibling exists (another game's, even),
    or its name is a sidecar's (``out.head`` would be overwritten by its own anchor)."""
    log = GameLog(path)
    if path.suffix in _SIDECAR_SUFFIXES:
        raise BadInput(
            "log_path",
            "{path} ends in {suffix}, the suffix of a game's sidecar file",
            path=path,
            suffix=path.suffix,
        )
    problem = log.path_problem(SIBLINGS)
    if problem is not None:
        raise BadInput("log_path", "{problem}", problem=problem)
    for taken in (path, log.head_path, log.sibling(SEED_SUFFIX)):
        if taken.exists() or taken.is_symlink():
            raise Conflict(f"--log: {taken} already exists; choose a new file (nothing was written)")
    return log


def _decide_field(field: str, state: GameState, command: Command) -> list[Event]:
    """Decide a set-up or order command; a refusal of its input names the file's part and key
    (``ships[1].kind``); a rule's refusal is named by :func:`gather`."""
    try:
        return decide(state, command, TableDice())
    except BadInput as error:
        raise BadInput(f"{field}.{error.field}", error.key, rule=error.rule, **error.params) from None


def _decide_naming(field: str, state: GameState, command: Command, dice: DiceSource) -> list[Event]:
    """Decide, and say which part of the file a refusal comes from."""
    try:
        return decide(state, command, dice)
    except BadInput as error:
        raise BadInput(f"{field}.{error.field}", error.key, rule=error.rule, **error.params) from None
    except RuleViolation as error:
        where = field if error.field is None else f"{field}.{error.field}"
        raise RuleViolation(error.rule, error.key, field=where, **error.params) from None


def scenario_output(run: ScenarioRun) -> dict[str, Any]:
    """The ``--json`` answer: ships after the turn, collisions, and the outcome events as logged."""
    ships: dict[str, Any] = {}
    condition = asked_of(run.state).ship_condition
    for ship in sorted(run.state.ships.values(), key=lambda s: s.id):
        entry: dict[str, Any] = {
            "at": list(ship.at) if ship.at is not None else None,
            "square": square_name(ship.at) if ship.at is not None else None,
            "facing": ship.facing,
            "damage": ship.damage,
            "sunk": ship.sunk or ship.lost,
        }
        entry.update(condition(ship))
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
