"""The decider and the reducer: ``decide(state, command, dice) -> events`` and
``evolve(state, event) -> state``.

Both dispatch through dicts keyed by the exact class (measured faster than a
``match`` on Struct classes). A ruleset module adds its commands and events with
:func:`decider` and :func:`evolver`; this module knows only the life cycle
shared by every game.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import msgspec

from mortecouille.core.board.terrain import Board, validate_board
from mortecouille.core.dice import DiceSource, seed_commitment
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.state import EMPTY, GameState, ShipState
from mortecouille.events.base import Event
from mortecouille.events.game import GameCreated, GameEnded

RULESETS = ("mortecouille", "blockade")
DICE_MODES = ("seeded", "table")


class Command(msgspec.Struct, frozen=True, kw_only=True):
    """Something a referee asks for. Subclasses are registered with :func:`decider`."""


Decide = Callable[[GameState, Any, DiceSource], list[Event]]
Evolve = Callable[[GameState, Any], GameState]
C = TypeVar("C", bound=Command)
EV = TypeVar("EV", bound=Event)

DECIDERS: dict[type[Command], Decide] = {}
EVOLVERS: dict[type[Event], Evolve] = {}


def decider(
    command_type: type[C],
) -> Callable[[Callable[[GameState, C, DiceSource], list[Event]]], Decide]:
    def register(fn: Callable[[GameState, C, DiceSource], list[Event]]) -> Decide:
        DECIDERS[command_type] = fn
        return fn

    return register


def evolver(event_type: type[EV]) -> Callable[[Callable[[GameState, EV], GameState]], Evolve]:
    def register(fn: Callable[[GameState, EV], GameState]) -> Evolve:
        EVOLVERS[event_type] = fn
        return fn

    return register


def decide(state: GameState, command: Command, dice: DiceSource) -> list[Event]:
    """Validate ``command`` against ``state`` and return the events it produces.

    Raises RuleViolation or BadInput, having produced nothing, when refused.
    """
    handler = DECIDERS.get(type(command))
    if handler is None:
        raise TypeError(f"no decider for {type(command).__name__}")
    if not isinstance(command, CreateGame):
        if not state.created:
            raise BadInput("game", "the game has not been created")
        if state.ended:
            raise RuleViolation("T3", f"game {state.game!r} has ended ({state.end_reason})")
    return handler(state, command, dice)


def _unchanged(state: GameState, event: Event) -> GameState:
    return state


def evolve(state: GameState, event: Event) -> GameState:
    """Apply one event. Never fails on a valid log; events a state ignores leave it unchanged."""
    return EVOLVERS.get(type(event), _unchanged)(state, event)


def fold(events: Iterable[Event], state: GameState = EMPTY) -> GameState:
    handlers = EVOLVERS
    for event in events:
        handler = handlers.get(type(event))
        if handler is not None:
            state = handler(state, event)
    return state


def replace(state: GameState, **changes: Any) -> GameState:
    return msgspec.structs.replace(state, **changes)


def ship_named(state: GameState, ship_id: str, field: str) -> ShipState:
    """The ship ``ship_id``, or a refusal naming ``field`` when the game has none."""
    ship = state.ships.get(ship_id)
    if ship is None:
        raise BadInput(field, f"no ship {ship_id!r} in {state.game!r}")
    return ship


def with_ship(state: GameState, ship: ShipState) -> GameState:
    """``state`` with ``ship`` in it, in place of any ship with its id."""
    return replace(state, ships={**state.ships, ship.id: ship})


def change_ship(state: GameState, ship_id: str, **changes: Any) -> GameState:
    """``state`` with ``changes`` made to the fields of one of its ships."""
    return with_ship(state, msgspec.structs.replace(state.ships[ship_id], **changes))


def shared_fields(source: msgspec.Struct, target: type[msgspec.Struct]) -> dict[str, Any]:
    """``source``'s values for every field ``target`` also has, by name: a command, its event
    and the state it builds share their field names, so none of them lists the others' fields."""
    return {name: getattr(source, name) for name in _shared_names(type(source), target)}


@functools.cache
def _shared_names(source: type[msgspec.Struct], target: type[msgspec.Struct]) -> tuple[str, ...]:
    return tuple(name for name in target.__struct_fields__ if name in source.__struct_fields__)


# ------------------------------------------------------------------ life cycle


class CreateGame(Command, frozen=True, kw_only=True):
    game: str
    ruleset: str
    players: tuple[str, ...]
    budget: int
    board: Board
    dice_mode: str = "seeded"
    seed_sha256: str | None = None
    rules_version: str = ""
    forked_from: str | None = None
    forked_at_seq: int | None = None
    scenario: bool = False


class EndGame(Command, frozen=True, kw_only=True):
    reason: str = "referee"
    winner: str | None = None
    seed: str | None = None


@decider(CreateGame)
def decide_create(state: GameState, command: CreateGame, dice: DiceSource) -> list[Event]:
    if state.created:
        raise BadInput("game", f"game {state.game!r} already exists")
    if not command.game or not all(c.isalnum() or c in "-_." for c in command.game):
        raise BadInput("GAME", f"{command.game!r}: use letters, digits, '-', '_' or '.'")
    if command.ruleset not in RULESETS:
        raise BadInput("--ruleset", f"{command.ruleset!r} is not one of {', '.join(RULESETS)}")
    if command.dice_mode not in DICE_MODES:
        raise BadInput("--dice", f"{command.dice_mode!r} is not one of {', '.join(DICE_MODES)}")
    players = command.players
    if not players:
        raise BadInput("--players", "name at least one player")
    if any(not p.strip() for p in players) or len(set(players)) != len(players):
        raise BadInput("--players", f"players must be distinct and non-empty: {players!r}")
    if command.budget < 0:
        raise BadInput("--budget", f"must be 0 or more, not {command.budget}")
    validate_board(command.board)
    if command.dice_mode == "seeded" and not command.seed_sha256:
        raise BadInput("--seed", "a seeded game must commit to its seed (D2)")
    seed_sha256 = command.seed_sha256 if command.dice_mode == "seeded" else None
    return [GameCreated(**shared_fields(command, GameCreated) | {"seed_sha256": seed_sha256})]


@evolver(GameCreated)
def evolve_created(state: GameState, event: GameCreated) -> GameState:
    return GameState(**shared_fields(event, GameState), created=True)


@decider(EndGame)
def decide_end(state: GameState, command: EndGame, dice: DiceSource) -> list[Event]:
    if command.winner is not None and command.winner not in state.players:
        raise BadInput("--winner", f"{command.winner!r} is not a player of {state.game!r}")
    seed = None
    if state.dice_mode == "seeded":
        if command.seed is None or seed_commitment(command.seed) != state.seed_sha256:
            raise BadInput("seed", "the seed to reveal does not match the game's commitment (D2)")
        seed = command.seed
    return [GameEnded(reason=command.reason, winner=command.winner, seed=seed, rules=("T3", "D2"))]


@evolver(GameEnded)
def evolve_ended(state: GameState, event: GameEnded) -> GameState:
    return replace(state, ended=True, end_reason=event.reason, winner=event.winner, revealed_seed=event.seed)
