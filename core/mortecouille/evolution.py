"""How a mortecouille game folds: its evolvers, the events it logs for the record only, and
how its turn phases apply the events they have produced so far.

This module sits below the phases (upkeep, combat, turn) that fold, so it holds the
evolvers of the events they log; :data:`mortecouille.core.mortecouille.ruleset.MORTECOUILLE`
folds with these same tables.
"""

from __future__ import annotations

from collections.abc import Iterable

from mortecouille.core.editions import EDITIONS
from mortecouille.core.fleet.commands import FLEET_EVOLVERS
from mortecouille.core.life_cycle import Evolve, change_ship, fold_with
from mortecouille.core.mortecouille.common import evolve_set_up, evolve_wind_points
from mortecouille.core.mortecouille.orders import evolve_order_given, evolve_order_withdrawn
from mortecouille.core.ruleset import SHARED_EVOLVERS, SHARED_IGNORED
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.combat import (
    BecameFireship,
    BurstStreakChanged,
    CatapultHitsTaken,
    CountdownChanged,
    FireChecked,
    FireScheduled,
    ShotFired,
    ShotNotFired,
)
from mortecouille.events.mortecouille import ShipSetUp, WindPointsChanged
from mortecouille.events.mortecouille_movement import FireshipExplosion, MoveUnaffordable, WreckCrossed
from mortecouille.events.orders import OrderGiven, OrderWithdrawn


def evolve_fire_checked(state: GameState, event: FireChecked) -> GameState:
    """The ship's fire now reads the phase of its next check (None: out or abandoned)."""
    return change_ship(state, event.ship, fire=event.next_phase)


def evolve_catapult_hits(state: GameState, event: CatapultHitsTaken) -> GameState:
    return change_ship(state, event.ship, catapult_hits=event.hits_total, countdown=event.countdown)


def evolve_countdown(state: GameState, event: CountdownChanged) -> GameState:
    return change_ship(state, event.ship, countdown=event.countdown)


def evolve_burst_streak(state: GameState, event: BurstStreakChanged) -> GameState:
    return change_ship(state, event.ship, bursts_in_a_row=event.bursts_in_a_row)


def evolve_fire_scheduled(state: GameState, event: FireScheduled) -> GameState:
    return change_ship(state, event.ship, fire=event.phase)


def evolve_became_fireship(state: GameState, event: BecameFireship) -> GameState:
    return change_ship(state, event.ship, fireship=True)


def evolve_fireship_explosion(state: GameState, event: FireshipExplosion) -> GameState:
    """From the 2026.2 edition the fireship survives its explosion with its barrels spent (C6: it
    explodes once). In 2026.1 it sinks right after (ShipSunk), and nothing changes here: the state
    of a game played then folds, and hashes, as it did. A rules version the engine does not know
    changes nothing here either: the price list and the deciders refuse it (``edition_for``)."""
    edition = EDITIONS.get(state.rules_version)
    if edition is None or not edition.fireship_survives_impact or event.fireship not in state.ships:
        return state
    return change_ship(state, event.fireship, barrels_spent=True)


MORTECOUILLE_EVOLVERS: dict[type[Event], Evolve] = {
    **SHARED_EVOLVERS,
    **FLEET_EVOLVERS,
    ShipSetUp: evolve_set_up,
    OrderGiven: evolve_order_given,
    OrderWithdrawn: evolve_order_withdrawn,
    WindPointsChanged: evolve_wind_points,
    FireChecked: evolve_fire_checked,
    CatapultHitsTaken: evolve_catapult_hits,
    CountdownChanged: evolve_countdown,
    BurstStreakChanged: evolve_burst_streak,
    FireScheduled: evolve_fire_scheduled,
    BecameFireship: evolve_became_fireship,
    FireshipExplosion: evolve_fireship_explosion,
}

#: Logged for the record: a shot's damage comes as DamageTaken and its streak as
#: BurstStreakChanged; an unaffordable move and a wreck crossed as the moves, wind points and
#: damage that follow them.
MORTECOUILLE_IGNORED: frozenset[type[Event]] = SHARED_IGNORED | {
    ShotFired,
    ShotNotFired,
    MoveUnaffordable,
    WreckCrossed,
}


def apply_turn_events(events: Iterable[Event], state: GameState) -> GameState:
    """``state`` after the events a turn's phases have produced so far (a phase reading what the
    previous left), with the tables :data:`MORTECOUILLE_EVOLVERS` and :data:`MORTECOUILLE_IGNORED`."""
    return fold_with(MORTECOUILLE_EVOLVERS, MORTECOUILLE_IGNORED, events, state)
