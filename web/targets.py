"""What a player's order form offers: for each of their ships, the ships its cannons
and catapults can aim at from the current positions, with the chance to hit as ``odds`` computes
it (S1-S4, K), so a player picks a target in range and knows the odds before submitting.

Measured by the rules' own checks (``measure_attack``, ``measure_catapult``) on the state of the
viewer's **public fold** (``app.view.public_log``), never the full state: the form can only say
what the viewer may know. A shot the rules would refuse (off every firing line, beyond the table, a
side without cannons, a burst cooldown) is not offered. The odds are before a numerical
superiority bonus (S6), which depends on the other ships' fire this turn.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from mortecouille.app.seats import Viewer
from mortecouille.app.view import disclosure, public_log
from mortecouille.core.errors import MortecouilleError
from mortecouille.core.game import fold
from mortecouille.core.mortecouille.common import ship_stats
from mortecouille.core.mortecouille.gunnery import FIRING_POSITIONS, catapult_odds_cell, odds_cell
from mortecouille.core.mortecouille.order_checks import measure_attack, measure_catapult
from mortecouille.core.mortecouille.orders import takes_orders
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.orders import Attack, CatapultShot


class Target(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A ship one of the viewer's ships can fire at now: from which ``position`` (``port``,
    ``starboard``, ``bow``, ``stern``, or ``catapult``), at what ``distance``, and the chance to hit
    (``odds``; ``burst_odds`` for a burst, when the side may burst)."""

    target: str
    position: str
    distance: int
    odds: float
    burst_odds: float | None = None


def targets_for(events: Sequence[Event], viewer: Viewer) -> dict[str, list[Target]]:
    """Each of ``viewer``'s ships that takes orders, with its targets; empty for anyone but a player
    of a mortecouille game being played."""
    if viewer.role != "player" or not events:
        return {}
    state = fold(public_log(events, viewer, disclosure(events)))
    if state.ruleset != "mortecouille" or state.ended:
        return {}
    return {
        ship_id: _targets_of(state, ship_id)
        for ship_id, ship in sorted(state.ships.items())
        if ship.owner == viewer.player and ship.at is not None and ship.afloat and takes_orders(ship)
    }


def _targets_of(state: GameState, ship_id: str) -> list[Target]:
    elite = ship_stats(state, ship_id).elite_gunner
    found: list[Target] = []
    others = [
        other for other, ship in sorted(state.ships.items()) if other != ship_id and ship.afloat and ship.at
    ]
    for other in others:
        for position in FIRING_POSITIONS:
            try:
                plan = measure_attack(state, ship_id, Attack(position=position, target=other))
            except MortecouilleError:
                continue
            try:
                burst = measure_attack(state, ship_id, Attack(position=position, target=other, mode="burst"))
                burst_odds: float | None = odds_cell(
                    burst.cannons, burst.distance, True, elite
                ).probability_float
            except MortecouilleError:
                burst_odds = None
            cell = odds_cell(plan.cannons, plan.distance, False, elite)
            found.append(
                Target(
                    target=other,
                    position=position,
                    distance=plan.distance,
                    odds=cell.probability_float,
                    burst_odds=burst_odds,
                )
            )
        if ship_stats(state, ship_id).catapults:
            try:
                shot = measure_catapult(state, ship_id, CatapultShot(target=other))
            except MortecouilleError:
                continue
            cell = catapult_odds_cell(shot.distance, elite)
            found.append(
                Target(target=other, position="catapult", distance=shot.distance, odds=cell.probability_float)
            )
    return found
