"""What every phase of a mortecouille turn needs: a ship's derived stats and wind points."""

from __future__ import annotations

import msgspec

from core.fleet import ShipStats, derive_stats
from core.game import evolver, replace
from core.state import GameState, ShipState
from events.mortecouille import ShipSetUp, WindPointsChanged


def fleet_options_of(state: GameState, ship: ShipState) -> tuple[str, ...]:
    fleet = state.fleets.get(ship.owner or "")
    return tuple(fleet.fleet_options) if fleet is not None else ()


def ship_stats(state: GameState, ship_id: str) -> ShipStats:
    """The one place a ship's current numbers come from (F1, F2, A2, W): options, fleet
    options and structure lost so far."""
    ship = state.ships[ship_id]
    return derive_stats(
        ship.kind,
        ship.options,
        fleet_options_of(state, ship),
        structure_lost=int(ship.damage),
        rules_version=state.rules_version,
    )


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
        damage=event.damage,
        wind=event.wind,
        fire=event.fire,
        countdown=event.countdown,
        bursts_in_a_row=event.bursts_in_a_row,
        catapult_hits=event.catapult_hits,
        fireship=event.fireship,
    )
    return replace(state, ships={**state.ships, event.ship: ship})
