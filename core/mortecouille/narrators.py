"""The narrators of a mortecouille game: the shared ones (:mod:`mortecouille.core.narration`)
and those of the fleets, orders, wind points, combat, fire and end of turn, in one explicit
table, :data:`NARRATORS`, with the phase of each event type that names none (:data:`PHASES`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from mortecouille.core.mortecouille.common import ship_stats
from mortecouille.core.mortecouille.orders import order_text
from mortecouille.core.narration import (
    SHARED_NARRATORS,
    SHARED_PHASES,
    ExplainContext,
    Narrator,
    contact_side,
    damage_narrator,
    num,
    sq,
    tell_collision,
)
from mortecouille.core.phases import COMBAT, END, FLEETS, ORDERS, UPKEEP, Phase
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
from mortecouille.events.fleet import FleetEquipped, FleetSealed, ShipBought, ShipEquipped, ShipWithdrawn
from mortecouille.events.mortecouille import ShipSetUp, WindPointsChanged
from mortecouille.events.mortecouille_movement import FireshipExplosion, MoveUnaffordable, WreckCrossed
from mortecouille.events.movement import CollisionOccurred, DamageTaken
from mortecouille.events.orders import OrderGiven, OrderWithdrawn


def structure_left(ctx: ExplainContext, ship_id: str) -> str:
    """A damaged ship's structure left of its maximum (A2); its damage alone if its kind is unknown."""
    ship = ctx.after.ships.get(ship_id)
    if ship is None:
        return ""
    try:
        stats = ship_stats(ctx.after, ship_id)
    except (KeyError, ValueError):
        return f"; {num(ship.damage)} taken in all"
    return f"; structure {stats.structure} of {stats.max_structure}"


def tell_collision_with_contacts(event: CollisionOccurred, ctx: ExplainContext) -> str:
    """A collision, with the part of each ship that met the other (C1) when two ships met."""
    text = tell_collision(event, ctx)
    if event.rock is None and event.contacts:
        parts = [f"{c.ship} {contact_side(c.facing, c.heading)} at {sq(c.at)}" for c in event.contacts]
        text += "; contact " + ", ".join(parts) + " (C1)"
    return text


# ------------------------------------------------------------------ fleets


def tell_ship_bought(event: ShipBought, ctx: ExplainContext) -> str:
    options = f" with {', '.join(event.options)}" if event.options else ""
    return f"{event.player} buys {event.kind} {event.ship}{options} for {event.price}"


def tell_ship_equipped(event: ShipEquipped, ctx: ExplainContext) -> str:
    return f"{event.player} fits {event.option} to {event.ship} for {event.price}"


def tell_fleet_equipped(event: FleetEquipped, ctx: ExplainContext) -> str:
    return f"{event.player} buys the fleet option {event.option} for {event.price}"


def tell_ship_withdrawn(event: ShipWithdrawn, ctx: ExplainContext) -> str:
    return f"{event.player} withdraws the purchase of {event.ship}; {event.refund} refunded"


def tell_fleet_sealed(event: FleetSealed, ctx: ExplainContext) -> str:
    return f"{event.player} seals the fleet; {event.forfeited} left unspent"


# ------------------------------------------------------------------ set-up, orders, wind points


def tell_ship_set_up(event: ShipSetUp, ctx: ExplainContext) -> str:
    return f"{event.ship} ({event.kind}) is set up on {sq(event.at)} facing {event.facing}"


def tell_order(event: OrderGiven, ctx: ExplainContext) -> str:
    actions = "; ".join(order_text(a) for a in event.actions) or "nothing"
    again = " (replacing an earlier order)" if event.replaced else ""
    return f"{event.ship} is ordered: {actions}{again}"


def tell_order_withdrawn(event: OrderWithdrawn, ctx: ExplainContext) -> str:
    return f"{event.ship}'s orders for turn {event.turn} are withdrawn"


def tell_wind_points(event: WindPointsChanged, ctx: ExplainContext) -> str:
    verb = "gains" if event.delta > 0 else "loses"
    return f"{event.ship} {verb} {abs(event.delta)} wind point(s) ({event.reason}): now {event.points}"


# ------------------------------------------------------------------ fire, combat, end of turn


def tell_fire_checked(event: FireChecked, ctx: ExplainContext) -> str:
    result = "the fire is out" if event.out else f"the fire burns on (-{event.damage})"
    if event.abandoned:
        result += ", the crew abandons the ship"
    elif event.next_phase:
        result += f"; next turn phase {event.next_phase}"
    return f"{event.ship} fire check, phase {event.phase}: die {event.die}, {result}"


def tell_shot(event: ShotFired, ctx: ExplainContext) -> str:
    guns = f"{event.cannons} cannon(s), " if event.cannons else ""
    if isinstance(event.needed, str):
        roll = f"automatic {event.needed}"
    else:
        total = sum(event.dice) + event.bonus
        bonus = f" + {event.bonus}" if event.bonus else ""
        roll = f"dice {'+'.join(map(str, event.dice))}{bonus} = {total}, needs {event.needed}"
    result = f"hit, {event.damage} damage" if event.hit else "miss"
    if event.hit and event.flaming:
        result += ", flaming"
    return (
        f"{event.ship} fires {event.weapon} ({event.mode}) at {event.target}, distance {event.distance}: "
        f"{guns}{roll}: {result}"
    )


def tell_shot_not_fired(event: ShotNotFired, ctx: ExplainContext) -> str:
    return f"{event.ship} cannot fire {event.weapon} at {event.target}: {event.reason}"


def tell_catapult_hits(event: CatapultHitsTaken, ctx: ExplainContext) -> str:
    countdown = f"; countdown {event.countdown}" if event.countdown is not None else ""
    started = " (started)" if event.countdown_started else ""
    return f"{event.ship} takes {event.hits} catapult hit(s), {event.hits_total} in all{countdown}{started}"


def tell_countdown(event: CountdownChanged, ctx: ExplainContext) -> str:
    return f"{event.ship}'s catapult countdown ticks to {event.countdown}"


def tell_burst_streak(event: BurstStreakChanged, ctx: ExplainContext) -> str:
    return f"{event.ship} has fired a burst {event.bursts_in_a_row} turn(s) in a row"


def tell_fire_scheduled(event: FireScheduled, ctx: ExplainContext) -> str:
    by = f" (hit by {', '.join(event.hitters)})" if event.hitters else ""
    if event.phase is None:
        return f"{event.ship} has no fire check next turn{by}"
    return f"{event.ship} will make a phase {event.phase} fire check next turn{by}"


def tell_became_fireship(event: BecameFireship, ctx: ExplainContext) -> str:
    return f"{event.ship} becomes a fireship from next turn"


# ------------------------------------------------------------------ movement


def tell_move_unaffordable(event: MoveUnaffordable, ctx: ExplainContext) -> str:
    return (
        f"{event.ship} cannot {event.intent}: {event.points} wind point(s), needs {event.cost}; "
        "it keeps its points and stays put"
    )


def tell_wreck_crossed(event: WreckCrossed, ctx: ExplainContext) -> str:
    into = f"into {sq(event.entered)}" if event.entered else "but cannot enter the square"
    return f"{event.ship} carries on over the wreck of {event.wreck} {into} (step {event.step})"


def tell_explosion(event: FireshipExplosion, ctx: ExplainContext) -> str:
    return f"fireship {event.fireship} explodes against {event.ship}, which will check for fire next turn"


NARRATORS: Final[Mapping[type[Event], Narrator]] = {
    **SHARED_NARRATORS,
    CollisionOccurred: tell_collision_with_contacts,
    DamageTaken: damage_narrator(structure_left),
    ShipBought: tell_ship_bought,
    ShipEquipped: tell_ship_equipped,
    FleetEquipped: tell_fleet_equipped,
    FleetSealed: tell_fleet_sealed,
    ShipWithdrawn: tell_ship_withdrawn,
    ShipSetUp: tell_ship_set_up,
    OrderGiven: tell_order,
    OrderWithdrawn: tell_order_withdrawn,
    WindPointsChanged: tell_wind_points,
    FireChecked: tell_fire_checked,
    ShotFired: tell_shot,
    ShotNotFired: tell_shot_not_fired,
    CatapultHitsTaken: tell_catapult_hits,
    CountdownChanged: tell_countdown,
    BurstStreakChanged: tell_burst_streak,
    FireScheduled: tell_fire_scheduled,
    BecameFireship: tell_became_fireship,
    MoveUnaffordable: tell_move_unaffordable,
    WreckCrossed: tell_wreck_crossed,
    FireshipExplosion: tell_explosion,
}

#: The phase of event types whose ``phase`` field is not a phase of the turn, or that have none:
#: a fire check's field is its fire phase (X1), told in the upkeep.
PHASES: Final[Mapping[type[Event], Phase]] = {
    **SHARED_PHASES,
    ShipBought: FLEETS,
    ShipEquipped: FLEETS,
    FleetEquipped: FLEETS,
    FleetSealed: FLEETS,
    ShipWithdrawn: FLEETS,
    ShipSetUp: ORDERS,
    OrderGiven: ORDERS,
    OrderWithdrawn: ORDERS,
    FireChecked: UPKEEP,
    ShotFired: COMBAT,
    ShotNotFired: COMBAT,
    CatapultHitsTaken: COMBAT,
    CountdownChanged: END,
    BurstStreakChanged: END,
    FireScheduled: END,
    BecameFireship: END,
}
