"""The narrators of a mortecouille game: the shared ones (:mod:`mortecouille.core.narration`)
and those of the fleets, orders, wind points, combat, fire and end of turn, in one explicit
table, :data:`NARRATORS`, with the phase of each event type that names none (:data:`PHASES`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from mortecouille.core.errors import Phrase, joined, phrase
from mortecouille.core.mortecouille.common import ship_stats
from mortecouille.core.mortecouille.orders import order_text
from mortecouille.core.narration import (
    NOTHING,
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


def structure_left(ctx: ExplainContext, ship_id: str) -> Phrase | str:
    """A damaged ship's structure left of its maximum (A2); its damage alone if its kind is unknown."""
    ship = ctx.after.ships.get(ship_id)
    if ship is None:
        return NOTHING
    try:
        stats = ship_stats(ctx.after, ship_id)
    except (KeyError, ValueError):
        return phrase("; {damage} taken in all", damage=num(ship.damage))
    return phrase("; structure {structure} of {most}", structure=stats.structure, most=stats.max_structure)


def tell_collision_with_contacts(event: CollisionOccurred, ctx: ExplainContext) -> Phrase:
    """A collision, with the part of each ship that met the other (C1) when two ships met."""
    told = tell_collision(event, ctx)
    if event.rock is None and event.contacts:
        parts = [
            phrase(
                "{ship} {side} at {square}",
                ship=c.ship,
                side=phrase(contact_side(c.facing, c.heading)),
                square=sq(c.at),
            )
            for c in event.contacts
        ]
        return phrase("{collision}; contact {contacts} (C1)", collision=told, contacts=joined(parts, ", "))
    return told


# ------------------------------------------------------------------ fleets


def tell_ship_bought(event: ShipBought, ctx: ExplainContext) -> Phrase:
    options = phrase(" with {options}", options=", ".join(event.options)) if event.options else NOTHING
    return phrase(
        "{player} buys {kind} {ship}{options} for {price}",
        player=event.player,
        kind=event.kind,
        ship=event.ship,
        options=options,
        price=event.price,
    )


def tell_ship_equipped(event: ShipEquipped, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{player} fits {option} to {ship} for {price}",
        player=event.player,
        option=event.option,
        ship=event.ship,
        price=event.price,
    )


def tell_fleet_equipped(event: FleetEquipped, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{player} buys the fleet option {option} for {price}",
        player=event.player,
        option=event.option,
        price=event.price,
    )


def tell_ship_withdrawn(event: ShipWithdrawn, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{player} withdraws the purchase of {ship}; {refund} refunded",
        player=event.player,
        ship=event.ship,
        refund=event.refund,
    )


def tell_fleet_sealed(event: FleetSealed, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{player} seals the fleet; {forfeited} left unspent", player=event.player, forfeited=event.forfeited
    )


# ------------------------------------------------------------------ set-up, orders, wind points


def tell_ship_set_up(event: ShipSetUp, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{ship} ({kind}) is set up on {square} facing {facing}",
        ship=event.ship,
        kind=event.kind,
        square=sq(event.at),
        facing=event.facing,
    )


def tell_order(event: OrderGiven, ctx: ExplainContext) -> Phrase:
    # the actions as a player types them (the table's own words, never translated)
    actions = "; ".join(order_text(a) for a in event.actions) or phrase("nothing")
    again = phrase(" (replacing an earlier order)") if event.replaced else NOTHING
    return phrase("{ship} is ordered: {actions}{again}", ship=event.ship, actions=actions, again=again)


def tell_order_withdrawn(event: OrderWithdrawn, ctx: ExplainContext) -> Phrase:
    return phrase("{ship}'s orders for turn {turn} are withdrawn", ship=event.ship, turn=event.turn)


def tell_wind_points(event: WindPointsChanged, ctx: ExplainContext) -> Phrase:
    key = (
        "{ship} gains {delta} wind point(s) ({reason}): now {points}"
        if event.delta > 0
        else "{ship} loses {delta} wind point(s) ({reason}): now {points}"
    )
    return phrase(key, ship=event.ship, delta=abs(event.delta), reason=event.reason, points=event.points)


# ------------------------------------------------------------------ fire, combat, end of turn


def tell_fire_checked(event: FireChecked, ctx: ExplainContext) -> Phrase:
    result = (
        phrase("the fire is out")
        if event.out
        else phrase("the fire burns on (-{damage})", damage=event.damage)
    )
    if event.abandoned:
        result = phrase("{result}, the crew abandons the ship", result=result)
    elif event.next_phase:
        result = phrase("{result}; next turn phase {phase}", result=result, phase=event.next_phase)
    return phrase(
        "{ship} fire check, phase {phase}: die {die}, {result}",
        ship=event.ship,
        phase=event.phase,
        die=event.die,
        result=result,
    )


def tell_shot(event: ShotFired, ctx: ExplainContext) -> Phrase:
    guns = phrase("{cannons} cannon(s), ", cannons=event.cannons) if event.cannons else NOTHING
    roll: Phrase
    if isinstance(event.needed, str):
        roll = phrase("automatic {needed}", needed=event.needed)
    else:
        bonus = phrase(" + {bonus}", bonus=event.bonus) if event.bonus else NOTHING
        roll = phrase(
            "dice {dice}{bonus} = {total}, needs {needed}",
            dice="+".join(map(str, event.dice)),
            bonus=bonus,
            total=sum(event.dice) + event.bonus,
            needed=event.needed,
        )
    result = phrase("hit, {damage} damage", damage=event.damage) if event.hit else phrase("miss")
    if event.hit and event.flaming:
        result = phrase("{result}, flaming", result=result)
    return phrase(
        "{ship} fires {weapon} ({mode}) at {target}, distance {distance}: {guns}{roll}: {result}",
        ship=event.ship,
        weapon=event.weapon,
        mode=event.mode,
        target=event.target,
        distance=event.distance,
        guns=guns,
        roll=roll,
        result=result,
    )


def tell_shot_not_fired(event: ShotNotFired, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{ship} cannot fire {weapon} at {target}: {reason}",
        ship=event.ship,
        weapon=event.weapon,
        target=event.target,
        reason=event.reason,
    )


def tell_catapult_hits(event: CatapultHitsTaken, ctx: ExplainContext) -> Phrase:
    countdown = (
        phrase("; countdown {countdown}", countdown=event.countdown)
        if event.countdown is not None
        else NOTHING
    )
    started = phrase(" (started)") if event.countdown_started else NOTHING
    return phrase(
        "{ship} takes {hits} catapult hit(s), {total} in all{countdown}{started}",
        ship=event.ship,
        hits=event.hits,
        total=event.hits_total,
        countdown=countdown,
        started=started,
    )


def tell_countdown(event: CountdownChanged, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{ship}'s catapult countdown ticks to {countdown}", ship=event.ship, countdown=event.countdown
    )


def tell_burst_streak(event: BurstStreakChanged, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{ship} has fired a burst {bursts} turn(s) in a row", ship=event.ship, bursts=event.bursts_in_a_row
    )


def tell_fire_scheduled(event: FireScheduled, ctx: ExplainContext) -> Phrase:
    by = phrase(" (hit by {hitters})", hitters=", ".join(event.hitters)) if event.hitters else NOTHING
    if event.phase is None:
        return phrase("{ship} has no fire check next turn{by}", ship=event.ship, by=by)
    return phrase(
        "{ship} will make a phase {phase} fire check next turn{by}", ship=event.ship, phase=event.phase, by=by
    )


def tell_became_fireship(event: BecameFireship, ctx: ExplainContext) -> Phrase:
    return phrase("{ship} becomes a fireship from next turn", ship=event.ship)


# ------------------------------------------------------------------ movement


def tell_move_unaffordable(event: MoveUnaffordable, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{ship} cannot {intent}: {points} wind point(s), needs {cost}; it keeps its points and stays put",
        ship=event.ship,
        intent=event.intent,
        points=event.points,
        cost=event.cost,
    )


def tell_wreck_crossed(event: WreckCrossed, ctx: ExplainContext) -> Phrase:
    into = (
        phrase("into {square}", square=sq(event.entered))
        if event.entered
        else phrase("but cannot enter the square")
    )
    return phrase(
        "{ship} carries on over the wreck of {wreck} {into} (step {step})",
        ship=event.ship,
        wreck=event.wreck,
        into=into,
        step=event.step,
    )


def tell_explosion(event: FireshipExplosion, ctx: ExplainContext) -> Phrase:
    return phrase(
        "fireship {fireship} explodes against {ship}, which will check for fire next turn",
        fireship=event.fireship,
        ship=event.ship,
    )


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
