"""What every phase of a mortecouille turn needs: a ship's derived stats and wind points."""

from __future__ import annotations

import functools

import msgspec

from mortecouille.core.board.geometry import FACING_VECTORS
from mortecouille.core.board.ships import check_square_free
from mortecouille.core.dice import DiceSource
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.fleet.catalogue import resolve_option, resolve_ship_kind
from mortecouille.core.fleet.stats import ShipStats, derive_stats
from mortecouille.core.life_cycle import Command, change_ship, shared_fields, with_ship
from mortecouille.core.limits import check_name, check_ship_count, how_alike, names_clashing
from mortecouille.core.mortecouille.fire import FIRE_PHASES
from mortecouille.core.state import GameState, ShipState
from mortecouille.events.base import Event
from mortecouille.events.mortecouille import ShipSetUp, WindPointsChanged


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


def evolve_wind_points(state: GameState, event: WindPointsChanged) -> GameState:
    return change_ship(state, event.ship, wind=event.points)


def evolve_set_up(state: GameState, event: ShipSetUp) -> GameState:
    return with_ship(state, ShipState(id=event.ship, **shared_fields(event, ShipState)))


class SetUpShip(Command, frozen=True, kw_only=True):
    """Put a ship on a scenario's board in the condition ``proposed`` gives (architecture.md,
    scenario format); the decider checks it and logs it with its kind and options resolved."""

    proposed: ShipSetUp


def decide_set_up(state: GameState, command: SetUpShip, dice: DiceSource) -> list[Event]:
    setup = command.proposed
    if not state.scenario:
        raise RuleViolation("F3", "ships of a real game are bought and placed; set-up is for scenarios")
    if setup.ship in state.ships:
        raise BadInput("id", "{ship!r} is already on the board", ship=setup.ship)
    check_name("id", setup.ship)
    same = names_clashing(setup.ship, state.ships)
    if same:
        raise BadInput(
            "id",
            "{ship!r} and {same!r}, already on the board, {alike}: every ship needs a name of its own "
            "(F1, project ruling)",
            ship=setup.ship,
            same=same[0],
            alike=how_alike(same[0], setup.ship),
        )
    check_ship_count(len(state.ships) + 1, "ships")
    kind = resolve_ship_kind(setup.kind, state.rules_version)
    options = tuple(resolve_option(option, state.rules_version) for option in setup.options)
    if setup.facing not in FACING_VECTORS:
        raise BadInput(
            "facing",
            "{facing!r} is not one of {facing_vectors} (B2)",
            facing=setup.facing,
            facing_vectors=", ".join(FACING_VECTORS),
        )
    if setup.fire is not None and setup.fire not in FIRE_PHASES:
        raise BadInput(
            "fire",
            "{fire!r} is not a fire phase: {fire_phases} or null (X1)",
            fire=setup.fire,
            fire_phases=", ".join(FIRE_PHASES),
        )
    for name in ("damage", "wind", "bursts_in_a_row", "catapult_hits"):
        if getattr(setup, name) < 0:
            raise BadInput(name, "must be 0 or more, not {value}", value=getattr(setup, name))
    if setup.countdown is not None and setup.countdown < 0:
        raise BadInput(
            "countdown", "must be 0 or more, or null, not {countdown} (K)", countdown=setup.countdown
        )
    check_square_free(state, setup.ship, setup.at)
    return [msgspec.structs.replace(setup, kind=kind, options=options, damage=float(setup.damage))]
