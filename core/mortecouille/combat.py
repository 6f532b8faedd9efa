"""The combat phase of a mortecouille turn (T2 step 3): cannons (S1-S7) and catapults (K).

Every shot is simultaneous: all are measured from the positions at the start
of combat, numerical superiority (S6) counts every ship firing at a target,
and the damage (S5, K) is applied only after the last shot, so a ship sunk
this turn still fires. Shots are resolved in a fixed order (shooter id, then
its orders as given), which only decides where each DieRolled sits in the log:
every die's value depends on its identity alone (D2), never on that order.

Ruling: an ordered shot that can no longer be fired at combat time (its target
left the game at upkeep, say) is logged as ``ShotNotFired`` with the rule that
stops it, counts for nobody's S6 bonus, and still counts as the ship's action
(T1: the crew manned the guns).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Final

import msgspec

from mortecouille.core.dice import DiceCup
from mortecouille.core.editions import edition_for
from mortecouille.core.errors import RuleViolation
from mortecouille.core.mortecouille.common import ship_stats
from mortecouille.core.mortecouille.evolution import apply_turn_events
from mortecouille.core.mortecouille.gunnery import (
    AUTOMATIC_HIT,
    AUTOMATIC_MISS,
    catapult_dice_count,
    catapult_hit_effect,
    dice_count,
    hit_damage,
    shot_hits,
    superiority_bonus,
)
from mortecouille.core.mortecouille.order_checks import ShotPlan, measure_attack, measure_catapult
from mortecouille.core.mortecouille.orders import orders_this_turn
from mortecouille.core.mortecouille.upkeep import damage_event, left_game, sinking_checks
from mortecouille.core.phases import COMBAT
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.combat import (
    CatapultHitsTaken,
    ShotFired,
    ShotNotFired,
)
from mortecouille.events.orders import Attack, CatapultShot

CATAPULT: Final = "catapult"
BURST: Final = "burst"


class PlannedShot(msgspec.Struct, frozen=True, kw_only=True):
    """One ordered shot, measured at the start of combat; ``plan`` None when it cannot be fired."""

    shooter: str
    weapon: str
    target: str
    mode: str
    plan: ShotPlan | None
    refusal: RuleViolation | None = None


class CombatOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """Combat's events, and what the end of the turn needs from them."""

    events: list[Event]
    #: target -> the distinct flaming-shot ships that hit it (X1-X3)
    flaming_hitters: dict[str, frozenset[str]]
    #: ships that fired a burst this turn (S7)
    bursts: frozenset[str]
    #: ships whose catapult countdown started this turn (K)
    countdown_started: frozenset[str]


def plan_shots(state: GameState, sidelined: frozenset[str]) -> list[PlannedShot]:
    """Every attack and catapult shot ordered this turn, by shooter id, measured now.

    ``sidelined`` ships can do nothing this turn (fire phase 3, fireships): they
    hold no such orders anyway. A shooter that left the game at upkeep does not fire (T2).
    """
    planned: list[PlannedShot] = []
    for shooter in sorted(state.ships):
        if shooter in sidelined:
            continue
        afloat = state.ships[shooter].afloat
        for order in orders_this_turn(state, shooter):
            if isinstance(order, Attack):
                weapon, mode = order.position, order.mode
            elif isinstance(order, CatapultShot):
                weapon, mode = CATAPULT, CATAPULT
            else:
                continue
            if afloat:
                planned.append(_plan(state, shooter, weapon, mode, order))
            else:
                gone = RuleViolation("T2", "{shooter} left the game before combat", shooter=shooter)
                planned.append(
                    PlannedShot(
                        shooter=shooter,
                        weapon=weapon,
                        target=order.target,
                        mode=mode,
                        plan=None,
                        refusal=gone,
                    )
                )
    return planned


def _plan(
    state: GameState, shooter: str, weapon: str, mode: str, order: Attack | CatapultShot
) -> PlannedShot:
    target = order.target
    try:
        if isinstance(order, Attack):
            plan = measure_attack(state, shooter, order)
        else:
            plan = measure_catapult(state, shooter, order)
    except RuleViolation as refusal:
        return PlannedShot(
            shooter=shooter, weapon=weapon, target=target, mode=mode, plan=None, refusal=refusal
        )
    return PlannedShot(shooter=shooter, weapon=weapon, target=target, mode=mode, plan=plan)


def combat_phase(state: GameState, cup: DiceCup, sidelined: frozenset[str]) -> CombatOutcome:
    """All shots at once (S1-S7, K), then their damage, catapult effects and sinkings (W3).

    ``state`` is the position at the start of combat; ``sidelined`` the ships that
    can do nothing this turn (read from the state before upkeep changed their fire).
    """
    planned = plan_shots(state, sidelined)
    shooters_by_target: defaultdict[str, set[str]] = defaultdict(set)
    for shot in planned:
        if shot.plan is not None:
            shooters_by_target[shot.target].add(shot.shooter)
    bonus_by_target = superiority_bonus(shooters_by_target)

    produced: list[Event] = []
    fired: list[ShotFired] = []
    for shot in planned:
        if shot.plan is None:
            assert shot.refusal is not None
            produced.append(
                ShotNotFired(
                    turn=state.turn, ship=shot.shooter, weapon=shot.weapon, target=shot.target,
                    reason=shot.refusal.message, rules=(shot.refusal.rule,),
                )
            )  # fmt: skip
            continue
        result = _fire(state, cup, shot, shot.plan, bonus_by_target[shot.target])
        produced += cup.take_events()
        produced.append(result)
        fired.append(result)

    produced += _damage_after_all_shots(state, fired)
    catapult_events, started = _catapult_effects(state, fired)
    produced += catapult_events
    if edition_for(state.rules_version).immediate_catapult_sinking:
        produced += _countdown_sinkings(state, catapult_events)
    produced += sinking_checks(apply_turn_events(produced, state), COMBAT.id)

    flaming: defaultdict[str, set[str]] = defaultdict(set)
    for result in fired:
        if result.hit and result.flaming:
            flaming[result.target].add(result.ship)
    return CombatOutcome(
        events=produced,
        flaming_hitters={target: frozenset(ships) for target, ships in flaming.items()},
        bursts=frozenset(result.ship for result in fired if result.mode == BURST),
        countdown_started=started,
    )


def _fire(state: GameState, cup: DiceCup, shot: PlannedShot, plan: ShotPlan, bonus: int) -> ShotFired:
    """Throw the dice of one shot (none when it hits or misses automatically) and score it."""
    stats = ship_stats(state, shot.shooter)
    target_class = ship_stats(state, shot.target).ship_class
    catapult = shot.weapon == CATAPULT
    count = (
        catapult_dice_count(stats.elite_gunner) if catapult else dice_count(plan.cannons, stats.elite_gunner)
    )
    dice: tuple[int, ...] = ()
    if plan.needed not in (AUTOMATIC_HIT, AUTOMATIC_MISS):
        what = "catapult shot" if catapult else f"{shot.mode} fire from the {shot.weapon}"
        label = f"{shot.shooter}, {what} at {shot.target} (distance {plan.distance}), {count}d6"
        purpose = "catapult" if catapult else "shot"
        dice = tuple(cup.roll_many(count, COMBAT.id, shot.shooter, purpose, label))
    hit = shot_hits(plan.needed, dice, bonus)
    if catapult:
        damage = catapult_hit_effect(target_class, 0, 1, None, stats.super_shot).structure_damage
        rules: tuple[str, ...] = ("K",)
    else:
        base = stats.burst_damage if shot.mode == BURST else stats.normal_damage
        damage = hit_damage(base, plan.distance)
        rules = ("S1", "S2", "S4" if shot.mode == BURST else "S3", "S5")
    if bonus:
        rules += ("S6",)
    flaming = hit and stats.flaming_shot
    if flaming:
        rules += ("X1",)
    return ShotFired(
        turn=state.turn, ship=shot.shooter, weapon=shot.weapon, target=shot.target,
        distance=plan.distance, cannons=plan.cannons, mode=shot.mode, dice=dice, bonus=bonus,
        needed=plan.needed, hit=hit, damage=damage if hit else 0, flaming=flaming, rules=rules,
    )  # fmt: skip


def _damage_after_all_shots(state: GameState, fired: list[ShotFired]) -> list[Event]:
    """One DamageTaken per damaging hit, once every shot is fired (S5, K)."""
    return [
        damage_event(
            state.turn,
            COMBAT.id,
            result.target,
            result.damage,
            CATAPULT if result.mode == CATAPULT else "shot",
            "K" if result.mode == CATAPULT else "S5",
            other=result.ship,
        )  # fmt: skip
        for result in fired
        if result.hit and result.damage
    ]


def _countdown_sinkings(state: GameState, catapult_events: list[Event]) -> list[Event]:
    """K from the 2026.2 edition: a ship whose countdown reaches 0 through this turn's hits sinks
    at once, in combat ("quatre touchés de catapulte dans le même tour et le bateau type small
    coule immédiatement"), so it neither moves nor rams this turn. (In 2026.1 it left at the end
    of the turn, as a countdown ticked to 0 by the turn's end still does.)"""
    return [
        left_game(state.turn, COMBAT.id, state.ships[event.ship], "sunk", ("K",))
        for event in catapult_events
        if isinstance(event, CatapultHitsTaken) and event.countdown == 0
    ]


def _catapult_effects(state: GameState, fired: list[ShotFired]) -> tuple[list[Event], frozenset[str]]:
    """Count each target's catapult hits and run its countdown (K)."""
    hits: defaultdict[str, list[bool]] = defaultdict(list)
    for result in fired:
        if result.hit and result.mode == CATAPULT:
            hits[result.target].append(ship_stats(state, result.ship).super_shot)
    produced: list[Event] = []
    started: set[str] = set()
    for target in sorted(hits):
        ship = state.ships[target]
        target_class = ship_stats(state, target).ship_class
        # Super-shot only changes structure damage, already counted per shot; the
        # countdown depends on the number of hits alone, so one call covers them all.
        effect = catapult_hit_effect(
            target_class, ship.catapult_hits, len(hits[target]), ship.countdown, super_shot=False
        )
        if effect.countdown_started:
            started.add(target)
        produced.append(
            CatapultHitsTaken(
                turn=state.turn, ship=target, hits=len(hits[target]), hits_total=effect.hits_total,
                countdown=effect.countdown, countdown_started=effect.countdown_started, rules=effect.rules,
            )
        )  # fmt: skip
    return produced, frozenset(started)
