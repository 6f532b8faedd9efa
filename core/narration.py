"""What the narrators of ``explain`` share: what a narrator sees besides the event
(:class:`ExplainContext`), the helpers that name squares and numbers, the collision cases the
sentences quote, and the narrators of the events both rulesets log.

A narrator is a small function that tells one event as a sentence a player can check with
the rulebook in hand. Each ruleset's table (:mod:`mortecouille.core.mortecouille.narrators`,
:mod:`mortecouille.core.blockade.narrators`) merges :data:`SHARED_NARRATORS` with its own;
nothing here registers itself anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import msgspec

from mortecouille.core.board.geometry import eighths_between, square_name
from mortecouille.core.board.terrain import board_index
from mortecouille.core.dice import PURPOSES
from mortecouille.core.phases import END, ORDERS, RULING, SET_UP, START, WIND, Phase, phase_name
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.deadlines import DeadlinePassed, DeadlineSet
from mortecouille.events.dice import (
    DiceContributionAbsent,
    DiceContributionCommitted,
    DiceContributionRevealed,
    TurnLocked,
)
from mortecouille.events.game import DieRolled, GameCreated, GameEnded, LossRecorded, TurnEnded, TurnStarted
from mortecouille.events.movement import (
    CollisionOccurred,
    DamageTaken,
    ShipMoved,
    ShipPlaced,
    ShipPushed,
    ShipSunk,
)
from mortecouille.events.rulings import RulingRecorded


class ExplainContext(msgspec.Struct, frozen=True):
    """What a narrator may look at besides the event: the states around it."""

    before: GameState
    after: GameState
    #: rounds the turn plays (4 in blockade): phase names carry the round only when > 1
    rounds: int = 1


#: A narrator tells one event (of the type it is filed under) as a sentence.
Narrator = Callable[[Any, ExplainContext], str]
#: What a ruleset's damage line ends with: the ship's damage so far, against its limit.
DamageTotal = Callable[[ExplainContext, str], str]

#: What each collision case means (rules.md M), so a player need not look it up to follow.
COLLISION_CASES: Final[Mapping[str, str]] = {
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


def sq(square: Sequence[int] | None) -> str:
    """A square's name (B1); a square off the board (the edge, B4) as its coordinates."""
    if square is None:
        return "-"
    if square[0] < 0 or square[1] < 0:
        return f"({square[0]},{square[1]}) off the board"
    return square_name((square[0], square[1]))


def num(value: float) -> str:
    """A number as the rulebook writes it: 3, not 3.0; 0.5 stays 0.5."""
    return f"{value:g}"


def contact_side(facing: str, heading: str) -> str:
    """Which part of a ship meets the other (C1): 0-45 degrees bow, 90 side, 135-180 stern."""
    angle = eighths_between(facing, heading)
    return "bow" if angle <= 1 else "side" if angle == 2 else "stern"


# ------------------------------------------------------------------ narrators of shared events


def tell_game_created(event: GameCreated, ctx: ExplainContext) -> str:
    fork = f", forked from {event.forked_from} at seq {event.forked_at_seq}" if event.forked_from else ""
    scheme = " keyed each turn by the players' contributions (D3)" if event.dice_scheme else ""
    return f"game {event.game} created ({event.ruleset}, {event.dice_mode} dice{scheme}{fork})"


def tell_contribution_committed(event: DiceContributionCommitted, ctx: ExplainContext) -> str:
    return (
        f"{event.player} commits to a secret contribution to the dice of turn {event.turn} "
        f"(SHA-256 {event.commitment[:12]}..., D3)"
    )


def tell_turn_locked(event: TurnLocked, ctx: ExplainContext) -> str:
    return f"turn {event.turn} is locked: its orders and dice contributions are final (D3)"


def tell_contribution_revealed(event: DiceContributionRevealed, ctx: ExplainContext) -> str:
    return (
        f"{event.player} reveals their contribution to the dice of turn {event.turn}: "
        f"{event.contribution}, which matches their commitment (D3)"
    )


def tell_contribution_absent(event: DiceContributionAbsent, ctx: ExplainContext) -> str:
    return (
        f"{event.player} never revealed their contribution to turn {event.turn}: the turn is resolved "
        f"without it ({event.reason}) (D3)"
    )


def tell_die_rolled(event: DieRolled, ctx: ExplainContext) -> str:
    who = event.ship or "the table"
    rule = PURPOSES.get(event.purpose)
    why = f" ({rule})" if rule else ""
    roll = f"1d{event.sides} for {event.purpose} #{event.index + 1}{why}"
    return f"{who} rolls {roll}: {event.value} ({event.source})"


def tell_turn_started(event: TurnStarted, ctx: ExplainContext) -> str:
    rounds = f", {event.rounds} rounds" if event.rounds > 1 else ""
    return f"turn {event.turn} is resolved{rounds}"


def tell_turn_ended(event: TurnEnded, ctx: ExplainContext) -> str:
    return f"turn {event.turn} ends; state hash {event.state_hash[:12]}"


def turns_resolved(state: GameState) -> int:
    """The turns behind a position, the one turn number every output shows.

    Each TurnEnded moves ``state.turn`` on to the turn to order next and the game's end leaves
    it there, so a position always has ``state.turn - 1`` turns resolved, ended or not.
    """
    return state.turn - 1


def ending_text(reason: str | None, winner: str | None) -> str:
    """How a game ended, as the table says it. A T3 "victory" with no winner is every ship gone:
    the log keeps its ``reason`` (old logs must verify), only the words shown change."""
    if reason == "victory" and winner is None:
        return "all ships lost: no winner"
    return f"{reason}, {winner} wins" if winner else str(reason)


def position_caption(state: GameState) -> str:
    """The turn a position shows: ``after turn 3; turn 4 to order`` or ``after turn 27 - game over: ...``."""
    done = turns_resolved(state)
    behind = f"after turn {done}" if done else "before turn 1"
    if state.ended:
        return f"{behind} - game over: {ending_text(state.end_reason, state.winner)}"
    return f"{behind}; turn {state.turn} to order"


def tell_game_ended(event: GameEnded, ctx: ExplainContext) -> str:
    seed = "; the dice seed is revealed" if event.seed else ""
    return f"the game ends ({ending_text(event.reason, event.winner)}){seed}"


def tell_ship_placed(event: ShipPlaced, ctx: ExplainContext) -> str:
    owner = f" of {event.owner}" if event.owner else ""
    kind = f" ({event.kind})" if event.kind else ""
    return f"{event.ship}{kind}{owner} is placed on {sq(event.at)} facing {event.facing}"


def tell_ship_moved(event: ShipMoved, ctx: ExplainContext) -> str:
    before = ctx.before.ships.get(event.ship)
    turned = f", turning {before.facing}->{event.facing}" if before and before.facing != event.facing else ""
    if len(event.path) <= 1:
        return f"{event.ship} stays on {sq(event.at)} facing {event.facing}{turned}"
    path = "-".join(sq(s) for s in event.path)
    how = "is carried" if event.phase == WIND.id else "moves"
    return f"{event.ship} {how} {path}, ends on {sq(event.at)} facing {event.facing}{turned}"


def tell_ship_pushed(event: ShipPushed, ctx: ExplainContext) -> str:
    return (
        f"{event.pusher} bumps {event.ship} and pushes it from {sq(event.pushed_from)} "
        f"to {sq(event.pushed_to)} (step {event.step})"
    )


def tell_collision(event: CollisionOccurred, ctx: ExplainContext) -> str:
    """Who met what, where, and the case of rules M that settled it."""
    if event.rock is not None and not board_index(ctx.before.board).on_board((event.rock[0], event.rock[1])):
        ship = ctx.before.ships.get(event.ships[0])
        where = f" at {sq(ship.at)}" if ship is not None and ship.at is not None else ""
        what = f"{event.ships[0]} runs into the edge of the board{where}"
    elif event.rock is not None:
        what = f"{event.ships[0]} hits the rock at {sq(event.rock)}"
    else:
        what = f"{' and '.join(event.ships)} collide over {sq(event.square)}"
    why = COLLISION_CASES.get(event.rule, "")
    return f"{what} (step {event.step}, case {event.rule}{': ' + why if why else ''})"


def damage_narrator(total: DamageTotal) -> Narrator:
    """The narrator of damage, ending with ``total``: each ruleset counts a ship's damage its way."""

    def tell_damage(event: DamageTaken, ctx: ExplainContext) -> str:
        cause = event.cause + (f" with {event.other}" if event.other else "")
        if event.step:
            cause += f" in the {phase_name(event.phase, ctx.rounds)} phase, step {event.step}"
        return f"{event.ship} takes {num(event.amount)} damage ({cause}){total(ctx, event.ship)}"

    return tell_damage


def tell_ship_sunk(event: ShipSunk, ctx: ExplainContext) -> str:
    how = {"sunk": "sinks", "lost": "is abandoned by its crew", "gone": "leaves the board"}.get(
        event.how, event.how
    )
    return f"{event.ship} {how} at {sq(event.at)} and takes no further part"


def tell_ruling(event: RulingRecorded, ctx: ExplainContext) -> str:
    # imported here: this module is imported by every command that shows a state (its
    # position_caption), which never tells a ruling (the CLI's start-up)
    from mortecouille.core.rulings import describe_adjustment

    effects = "; ".join(describe_adjustment(a) for a in event.adjustments) or "no change to the board"
    return f"referee's ruling under {event.rule}: {event.text} -> {effects}"


def tell_loss(event: LossRecorded, ctx: ExplainContext) -> str:
    first = event.anchored_seq - event.lost + 1
    return (
        f"LOSS recorded by the referee's repair: {event.lost} event(s) the head anchor vouched for "
        f"(seq {first}..{event.anchored_seq}) were gone from the log; the game goes on without them"
    )


def tell_deadline_set(event: DeadlineSet, ctx: ExplainContext) -> str:
    return f"the referee sets turn {event.turn}'s deadline at {event.at}"


def tell_deadline_passed(event: DeadlinePassed, ctx: ExplainContext) -> str:
    idle = ", ".join(event.idle)
    without = f"{idle} had no orders and do nothing this turn (T1)" if idle else "every ship had orders"
    then = "the turn is resolved" if event.resolved else "the referee resolves the turn with the table's dice"
    return f"turn {event.turn}'s deadline ({event.at}) passed: {without}; {then}"


#: The narrators of the events both rulesets log, but damage (see :func:`damage_narrator`)
#: and collisions (mortecouille adds the contact points, C1), which each ruleset files itself.
SHARED_NARRATORS: Final[Mapping[type[Event], Narrator]] = {
    GameCreated: tell_game_created,
    DieRolled: tell_die_rolled,
    TurnStarted: tell_turn_started,
    TurnEnded: tell_turn_ended,
    GameEnded: tell_game_ended,
    ShipPlaced: tell_ship_placed,
    ShipMoved: tell_ship_moved,
    ShipPushed: tell_ship_pushed,
    ShipSunk: tell_ship_sunk,
    RulingRecorded: tell_ruling,
    LossRecorded: tell_loss,
    DiceContributionCommitted: tell_contribution_committed,
    TurnLocked: tell_turn_locked,
    DiceContributionRevealed: tell_contribution_revealed,
    DiceContributionAbsent: tell_contribution_absent,
    DeadlineSet: tell_deadline_set,
    DeadlinePassed: tell_deadline_passed,
}

#: The phase of shared event types that carry no ``phase`` field of their own (T2).
SHARED_PHASES: Final[Mapping[type[Event], Phase]] = {
    GameCreated: SET_UP,
    TurnStarted: START,
    TurnEnded: END,
    GameEnded: END,
    ShipPlaced: ORDERS,
    RulingRecorded: RULING,
    LossRecorded: RULING,
    DiceContributionCommitted: ORDERS,
    TurnLocked: ORDERS,
    DiceContributionRevealed: ORDERS,
    DiceContributionAbsent: ORDERS,
    DeadlineSet: ORDERS,
    DeadlinePassed: START,
}
