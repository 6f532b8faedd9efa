"""What a player's order form offers: for each of their ships, the ships its cannons and
catapults can aim at from the current positions, with the chance to hit, as the legal actions
read model (:mod:`mortecouille.app.legal_actions`) measures them on the viewer's public fold."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from mortecouille.app.legal_actions import LegalAction, legal_actions
from mortecouille.app.seats import Viewer
from mortecouille.app.view import public_state
from mortecouille.core.mortecouille.orders import takes_orders
from mortecouille.core.questions import asked_of
from mortecouille.events.base import Event


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
    state = public_state(events, viewer)
    if not asked_of(state).aims_shots or state.ended:
        return {}
    return {
        ship_id: _targets(legal_actions(state, ship_id).actions)
        for ship_id, ship in sorted(state.ships.items())
        if ship.owner == viewer.player and ship.at is not None and ship.afloat and takes_orders(ship)
    }


def _targets(actions: Sequence[LegalAction]) -> list[Target]:
    bursts = {(a.target, a.position): a.odds for a in actions if a.kind == "attack" and a.mode == "burst"}
    found: list[Target] = []
    for action in actions:
        if action.target is None or action.distance is None or action.odds is None or action.mode == "burst":
            continue
        position = action.position if action.kind == "attack" and action.position else "catapult"
        burst = bursts.get((action.target, action.position)) if action.kind == "attack" else None
        found.append(
            Target(
                target=action.target,
                position=position,
                distance=action.distance,
                odds=action.odds,
                burst_odds=burst,
            )
        )
    return found
