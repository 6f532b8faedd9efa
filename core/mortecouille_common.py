"""What every phase of a mortecouille turn needs: a ship's derived stats and wind points."""

from __future__ import annotations

import functools

import msgspec

from core.catalogue import resolve_option, resolve_ship_kind
from core.dice import DiceSource
from core.errors import BadInput, RuleViolation
from core.fire import FIRE_PHASES
from core.fleet import ShipStats, derive_stats
from core.game import Command, decider, evolver, replace
from core.geometry import FACING_VECTORS
from core.ships import check_square_free
from core.state import GameState, ShipState
from events.base import Event
from events.mortecouille import ShipSetUp, WindPointsChanged


def fleet_options_of(state: GameState, ship: ShipState) -> tuple[str, ...]:
    fleet = state.fleets.get(ship.owner or "")
    return tuple(fleet.fleet_options) if fleet is not None else ()


def ship_stats(state: GameState, ship_id: str) -> ShipStats:
    """The one place a ship's current numbers come from (F1, F2, A2, W): options, fleet
    options and structure lost so far."""
    ship = state.ships[ship_id]
    return _cached_stats(
        ship.kind, tuple(ship.options), fleet_options_of(state, ship), int(ship.damage), state.rules_version
    )


@functools.lru_cache(maxsize=8192)
def _cached_stats(
    kind: str, options: tuple[str, ...], fleet_options: tuple[str, ...], lost: int, rules_version: str
) -> ShipStats:
    """derive_stats is pure, and a turn asks for the same ship's numbers many times."""
    return derive_stats(kind, options, fleet_options, structure_lost=lost, rules_version=rules_version)


@evolver(WindPointsChanged)
def evolve_wind_points(state: GameState, event: WindPointsChanged) -> GameState:
    ship = state.ships[event.ship]
    changed = msgspec.structs.replace(ship, wind=event.points)
    return replace(state, ships={**state.ships, event.ship: changed})


@evolver(ShipSetUp)
def evolve_set_up(state: GameState, event: ShipSetUp) -> GameState:
    ship = ShipState(
        id=event.ship,
        kind=event.kind,
        owner=event.owner,
        at=event.at,
        facing=event.facing,
        options=event.options,
        damage=float(event.damage),
        wind=event.wind,
        fire=event.fire,
        countdown=event.countdown,
        bursts_in_a_row=event.bursts_in_a_row,
        catapult_hits=event.catapult_hits,
        fireship=event.fireship,
    )
    return replace(state, ships={**state.ships, event.ship: ship})


class SetUpShip(Command, frozen=True, kw_only=True):
    """Put a ship on a scenario's board in a given condition (architecture.md, scenario format)."""

    ship: str
    kind: str
    at: tuple[int, int]
    facing: str
    owner: str | None = None
    options: tuple[str, ...] = ()
    damage: float = 0
    wind: int = 0
    fire: str | None = None
    countdown: int | None = None
    bursts_in_a_row: int = 0
    catapult_hits: int = 0
    fireship: bool = False


@decider(SetUpShip)
def decide_set_up(state: GameState, command: SetUpShip, dice: DiceSource) -> list[Event]:
    if not state.scenario:
        raise RuleViolation("F3", "ships of a real game are bought and placed; set-up is for scenarios")
    if state.ruleset != "mortecouille":
        raise BadInput("ruleset", "ship set-up with options and fire is for mortecouille scenarios")
    if command.ship in state.ships:
        raise BadInput("id", f"{command.ship!r} is already on the board")
    kind = resolve_ship_kind(command.kind, state.rules_version)
    options = tuple(resolve_option(option, state.rules_version) for option in command.options)
    if command.facing not in FACING_VECTORS:
        raise BadInput("facing", f"{command.facing!r} is not one of {', '.join(FACING_VECTORS)} (B2)")
    if command.fire is not None and command.fire not in FIRE_PHASES:
        raise BadInput("fire", f"{command.fire!r} is not a fire phase: {', '.join(FIRE_PHASES)} or null (X1)")
    for name in ("damage", "wind", "bursts_in_a_row", "catapult_hits"):
        if getattr(command, name) < 0:
            raise BadInput(name, f"must be 0 or more, not {getattr(command, name)}")
    if command.countdown is not None and command.countdown < 0:
        raise BadInput("countdown", f"must be 0 or more, or null, not {command.countdown} (K)")
    check_square_free(state, command.ship, command.at)
    return [
        ShipSetUp(
            ship=command.ship,
            kind=kind,
            owner=command.owner,
            at=command.at,
            facing=command.facing,
            options=options,
            damage=command.damage,
            wind=command.wind,
            fire=command.fire,
            countdown=command.countdown,
            bursts_in_a_row=command.bursts_in_a_row,
            catapult_hits=command.catapult_hits,
            fireship=command.fireship,
        )
    ]
