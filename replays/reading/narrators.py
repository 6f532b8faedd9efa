"""The narrators of ``explain`` (:mod:`mortecouille.replays.reading.explain`): one small function per
event type,
registered in :data:`NARRATORS` by the :func:`narrator` decorator, that tells the event as a
sentence a player can check with the rulebook in hand.

Here too are what a narrator sees besides the event (:class:`ExplainContext`), the helpers
that name squares and numbers, and the tables the sentences quote (collision cases, what each
die is for, phase names). Importing :mod:`mortecouille.replays.reading.explain` registers them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

import msgspec

from mortecouille.core.blockade.rounds import BLOCKADE_KINDS
from mortecouille.core.board.geometry import eighths_between, square_name
from mortecouille.core.mortecouille.common import ship_stats
from mortecouille.core.rulings import describe_adjustment
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.blockade import TokensGiven
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
from mortecouille.events.fleet import FleetEquipped, FleetSealed, ShipBought, ShipEquipped
from mortecouille.events.game import DieRolled, GameCreated, GameEnded, TurnEnded, TurnStarted
from mortecouille.events.mortecouille import ShipSetUp, WindPointsChanged
from mortecouille.events.mortecouille_movement import FireshipExplosion, MoveUnaffordable, WreckCrossed
from mortecouille.events.movement import (
    CollisionOccurred,
    DamageTaken,
    ShipMoved,
    ShipPlaced,
    ShipPushed,
    ShipSunk,
)
from mortecouille.events.orders import OrderGiven
from mortecouille.events.rulings import RulingRecorded


class ExplainContext(msgspec.Struct, frozen=True):
    """What a narrator may look at besides the event: the states around it."""

    before: GameState
    after: GameState
    #: rounds the turn plays (4 in blockade): phase names carry the round only when > 1
    rounds: int = 1


Narrator = Callable[[Any, ExplainContext], str]
EV = TypeVar("EV", bound=Event)

NARRATORS: dict[type[Event], Narrator] = {}
#: the phase of event types that carry no ``phase`` field of their own (T2)
PHASE_OF_TYPE: dict[type[Event], str] = {}

#: What each collision case means (rules.md M), so a player need not look it up to follow.
COLLISION_CASES: Final[dict[str, str]] = {
    "M1b": "its claimed square held a stationary ship: a bump",
    "M1c": "head-on: each claimed the other's square, both stop",
    "M1d": "another ship of the same or a larger class claimed the same empty square: it stops",
    "M1e": "the other claimants were all smaller: the largest moves in, and collides too",
    "M2b": "the destination held a ship that stayed or ended its step 1 there: it stops "
    "(class does not matter)",
    "M2c": "head-on in step 2: both stop",
    "M2d": "step 2 contest with a ship of the same or a larger class: it stops",
    "M2e": "step 2 contest won by the larger ship, which collides too",
    "M3": "a bump: a forward (or wind) ship pushes a same-class or smaller ship one square, "
    "a turning ship never pushes",
    "M4": "it followed a ship that failed to leave its square",
    "M5": "several claims on one square: the strictly largest wins, otherwise nobody does",
    "M6": "the claimed square is a rock or off the board: it stops",
    "M7": "wind phase: wind pushes act as forward moves, whirlpools as turns",
}

#: The rule that says what a die of each purpose is for (D1).
DIE_RULES: Final[dict[str, str]] = {
    "wind": "A1", "wind-reroll": "A1", "shot": "S2", "catapult": "K", "fire": "X1",
    "capsize": "C2", "crossing": "C2", "crossing-damage": "C2", "side-contact": "C2",
}  # fmt: skip

PHASE_NAMES: Final[dict[str, str]] = {
    "move": "movement", "wind": "wind", "end": "end of round", "damage": "damage",
}  # fmt: skip


def narrator(
    event_type: type[EV], phase: str | None = None
) -> Callable[[Callable[[EV, ExplainContext], str]], Narrator]:
    """Register the narrator of ``event_type``; ``phase`` for types without a phase field."""

    def register(fn: Callable[[EV, ExplainContext], str]) -> Narrator:
        NARRATORS[event_type] = fn
        if phase is not None:
            PHASE_OF_TYPE[event_type] = phase
        return fn

    return register


def sq(square: Sequence[int] | None) -> str:
    """A square's name (B1); a square off the board (the edge, B4) as its coordinates."""
    if square is None:
        return "-"
    if square[0] < 0 or square[1] < 0:
        return f"({square[0]},{square[1]}) off the board"
    return square_name((square[0], square[1]))


def on_board(state: GameState, square: Sequence[int]) -> bool:
    return 0 <= square[0] < state.board.width and 0 <= square[1] < state.board.height


def num(value: float) -> str:
    return f"{value:g}"


# ------------------------------------------------------------------ narrators: shared events


@narrator(GameCreated, phase="set-up")
def _created(event: GameCreated, ctx: ExplainContext) -> str:
    fork = f", forked from {event.forked_from} at seq {event.forked_at_seq}" if event.forked_from else ""
    return f"game {event.game} created ({event.ruleset}, {event.dice_mode} dice{fork})"


@narrator(DieRolled)
def _die(event: DieRolled, ctx: ExplainContext) -> str:
    who = event.ship or "the table"
    rule = DIE_RULES.get(event.purpose)
    why = f" ({rule})" if rule else ""
    roll = f"1d{event.sides} for {event.purpose} #{event.index + 1}{why}"
    return f"{who} rolls {roll}: {event.value} ({event.source})"


@narrator(TurnStarted, phase="start")
def _turn_started(event: TurnStarted, ctx: ExplainContext) -> str:
    rounds = f", {event.rounds} rounds" if event.rounds > 1 else ""
    return f"turn {event.turn} is resolved{rounds}"


@narrator(TurnEnded, phase="end")
def _turn_ended(event: TurnEnded, ctx: ExplainContext) -> str:
    return f"turn {event.turn} ends; state hash {event.state_hash[:12]}"


@narrator(GameEnded, phase="end")
def _game_ended(event: GameEnded, ctx: ExplainContext) -> str:
    winner = f"; {event.winner} wins" if event.winner else ""
    seed = "; the dice seed is revealed" if event.seed else ""
    return f"the game ends ({event.reason}){winner}{seed}"


@narrator(ShipPlaced, phase="orders")
def _placed(event: ShipPlaced, ctx: ExplainContext) -> str:
    owner = f" of {event.owner}" if event.owner else ""
    kind = f" ({event.kind})" if event.kind else ""
    return f"{event.ship}{kind}{owner} is placed on {sq(event.at)} facing {event.facing}"


@narrator(TokensGiven, phase="orders")
def _tokens(event: TokensGiven, ctx: ExplainContext) -> str:
    shown = " ".join(token or "-" for token in event.tokens)
    return f"{event.ship} gets its tokens, one per round: {shown}"


@narrator(ShipMoved)
def _moved(event: ShipMoved, ctx: ExplainContext) -> str:
    before = ctx.before.ships.get(event.ship)
    turned = f", turning {before.facing}->{event.facing}" if before and before.facing != event.facing else ""
    if len(event.path) <= 1:
        return f"{event.ship} stays on {sq(event.at)} facing {event.facing}{turned}"
    path = "-".join(sq(s) for s in event.path)
    how = "is carried" if event.phase == "wind" else "moves"
    return f"{event.ship} {how} {path}, ends on {sq(event.at)} facing {event.facing}{turned}"


@narrator(ShipPushed)
def _pushed(event: ShipPushed, ctx: ExplainContext) -> str:
    return (
        f"{event.pusher} bumps {event.ship} and pushes it from {sq(event.pushed_from)} "
        f"to {sq(event.pushed_to)} (step {event.step})"
    )


def contact_side(facing: str, heading: str) -> str:
    """Which part of a ship meets the other (C1): 0-45 degrees bow, 90 side, 135-180 stern."""
    angle = eighths_between(facing, heading)
    return "bow" if angle <= 1 else "side" if angle == 2 else "stern"


@narrator(CollisionOccurred)
def _collision(event: CollisionOccurred, ctx: ExplainContext) -> str:
    if event.rock is not None and not on_board(ctx.before, event.rock):
        ship = ctx.before.ships.get(event.ships[0])
        where = f" at {sq(ship.at)}" if ship is not None and ship.at is not None else ""
        what = f"{event.ships[0]} runs into the edge of the board{where}"
    elif event.rock is not None:
        what = f"{event.ships[0]} hits the rock at {sq(event.rock)}"
    else:
        what = f"{' and '.join(event.ships)} collide over {sq(event.square)}"
    why = COLLISION_CASES.get(event.rule, "")
    text = f"{what} (step {event.step}, case {event.rule}{': ' + why if why else ''})"
    if ctx.before.ruleset == "mortecouille" and event.rock is None and event.contacts:
        parts = [f"{c.ship} {contact_side(c.facing, c.heading)} at {sq(c.at)}" for c in event.contacts]
        text += "; contact " + ", ".join(parts) + " (C1)"
    return text


def damage_total(ctx: ExplainContext, ship_id: str) -> str:
    ship = ctx.after.ships.get(ship_id)
    if ship is None:
        return ""
    kind = BLOCKADE_KINDS.get(ship.kind) if ctx.after.ruleset == "blockade" else None
    if kind is not None:
        return f"; {num(ship.damage)} of {num(kind.max_damage)} taken"
    try:
        stats = ship_stats(ctx.after, ship_id)
    except (KeyError, ValueError):
        return f"; {num(ship.damage)} taken in all"
    return f"; structure {stats.structure} of {stats.max_structure}"


@narrator(DamageTaken)
def _damage(event: DamageTaken, ctx: ExplainContext) -> str:
    cause = event.cause + (f" with {event.other}" if event.other else "")
    if event.step:
        cause += f" in the {PHASE_NAMES.get(event.phase, event.phase)} phase, step {event.step}"
    return f"{event.ship} takes {num(event.amount)} damage ({cause}){damage_total(ctx, event.ship)}"


@narrator(ShipSunk)
def _sunk(event: ShipSunk, ctx: ExplainContext) -> str:
    how = {"sunk": "sinks", "lost": "is abandoned by its crew", "gone": "leaves the board"}.get(
        event.how, event.how
    )
    return f"{event.ship} {how} at {sq(event.at)} and takes no further part"


@narrator(RulingRecorded, phase="ruling")
def _ruling(event: RulingRecorded, ctx: ExplainContext) -> str:
    effects = "; ".join(describe_adjustment(a) for a in event.adjustments) or "no change to the board"
    return f"referee's ruling under {event.rule}: {event.text} -> {effects}"


# ------------------------------------------------------------------ narrators: fleets


@narrator(ShipBought, phase="fleets")
def _bought(event: ShipBought, ctx: ExplainContext) -> str:
    options = f" with {', '.join(event.options)}" if event.options else ""
    return f"{event.player} buys {event.kind} {event.ship}{options} for {event.price}"


@narrator(ShipEquipped, phase="fleets")
def _equipped(event: ShipEquipped, ctx: ExplainContext) -> str:
    return f"{event.player} fits {event.option} to {event.ship} for {event.price}"


@narrator(FleetEquipped, phase="fleets")
def _fleet_equipped(event: FleetEquipped, ctx: ExplainContext) -> str:
    return f"{event.player} buys the fleet option {event.option} for {event.price}"


@narrator(FleetSealed, phase="fleets")
def _sealed(event: FleetSealed, ctx: ExplainContext) -> str:
    return f"{event.player} seals the fleet; {event.forfeited} left unspent"


# ------------------------------------------------------------------ narrators: mortecouille


@narrator(ShipSetUp, phase="orders")
def _set_up(event: ShipSetUp, ctx: ExplainContext) -> str:
    return f"{event.ship} ({event.kind}) is set up on {sq(event.at)} facing {event.facing}"


def _order_text(order: Any) -> str:
    body = msgspec.to_builtins(order)
    name = str(body.pop("order", "?"))
    return name + "".join(f" {k}={v}" for k, v in body.items())


@narrator(OrderGiven, phase="orders")
def _order(event: OrderGiven, ctx: ExplainContext) -> str:
    actions = "; ".join(_order_text(a) for a in event.actions) or "nothing"
    again = " (replacing an earlier order)" if event.replaced else ""
    return f"{event.ship} is ordered: {actions}{again}"


@narrator(WindPointsChanged)
def _wind_points(event: WindPointsChanged, ctx: ExplainContext) -> str:
    verb = "gains" if event.delta > 0 else "loses"
    return f"{event.ship} {verb} {abs(event.delta)} wind point(s) ({event.reason}): now {event.points}"


@narrator(FireChecked, phase="upkeep")
def _fire_checked(event: FireChecked, ctx: ExplainContext) -> str:
    result = "the fire is out" if event.out else f"the fire burns on (-{event.damage})"
    if event.abandoned:
        result += ", the crew abandons the ship"
    elif event.next_phase:
        result += f"; next turn phase {event.next_phase}"
    return f"{event.ship} fire check, phase {event.phase}: die {event.die}, {result}"


@narrator(ShotFired, phase="combat")
def _shot(event: ShotFired, ctx: ExplainContext) -> str:
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


@narrator(ShotNotFired, phase="combat")
def _not_fired(event: ShotNotFired, ctx: ExplainContext) -> str:
    return f"{event.ship} cannot fire {event.weapon} at {event.target}: {event.reason}"


@narrator(CatapultHitsTaken, phase="combat")
def _catapult_hits(event: CatapultHitsTaken, ctx: ExplainContext) -> str:
    countdown = f"; countdown {event.countdown}" if event.countdown is not None else ""
    started = " (started)" if event.countdown_started else ""
    return f"{event.ship} takes {event.hits} catapult hit(s), {event.hits_total} in all{countdown}{started}"


@narrator(CountdownChanged, phase="end")
def _countdown(event: CountdownChanged, ctx: ExplainContext) -> str:
    return f"{event.ship}'s catapult countdown ticks to {event.countdown}"


@narrator(BurstStreakChanged, phase="end")
def _bursts(event: BurstStreakChanged, ctx: ExplainContext) -> str:
    return f"{event.ship} has fired a burst {event.bursts_in_a_row} turn(s) in a row"


@narrator(FireScheduled, phase="end")
def _fire_scheduled(event: FireScheduled, ctx: ExplainContext) -> str:
    by = f" (hit by {', '.join(event.hitters)})" if event.hitters else ""
    if event.phase is None:
        return f"{event.ship} has no fire check next turn{by}"
    return f"{event.ship} will make a phase {event.phase} fire check next turn{by}"


@narrator(BecameFireship, phase="end")
def _became_fireship(event: BecameFireship, ctx: ExplainContext) -> str:
    return f"{event.ship} becomes a fireship from next turn"


@narrator(MoveUnaffordable)
def _unaffordable(event: MoveUnaffordable, ctx: ExplainContext) -> str:
    return (
        f"{event.ship} cannot {event.intent}: {event.points} wind point(s), needs {event.cost}; "
        "it keeps its points and stays put"
    )


@narrator(WreckCrossed)
def _wreck(event: WreckCrossed, ctx: ExplainContext) -> str:
    into = f"into {sq(event.entered)}" if event.entered else "but cannot enter the square"
    return f"{event.ship} carries on over the wreck of {event.wreck} {into} (step {event.step})"


@narrator(FireshipExplosion)
def _explosion(event: FireshipExplosion, ctx: ExplainContext) -> str:
    return f"fireship {event.fireship} explodes against {event.ship}, which will check for fire next turn"
