"""What the narrators of ``explain`` share: what a narrator sees besides the event
(:class:`ExplainContext`), the helpers that name squares and numbers, the collision cases the
sentences quote, and the narrators of the events both rulesets log.

A narrator is a small function that tells one event as a sentence a player can check with
the rulebook in hand: a :class:`~mortecouille.core.errors.Phrase` (a template key and its
parameters), which the edge renders in its reader's language. Each ruleset's table
(:mod:`mortecouille.core.mortecouille.narrators`, :mod:`mortecouille.core.blockade.narrators`)
merges :data:`SHARED_NARRATORS` with its own; nothing here registers itself anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import msgspec

from mortecouille.core.board.geometry import eighths_between, square_name
from mortecouille.core.board.terrain import board_index
from mortecouille.core.dice import PURPOSES
from mortecouille.core.errors import Phrase, joined, phrase
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
Narrator = Callable[[Any, ExplainContext], Phrase]
#: What a ruleset's damage line ends with: the ship's damage so far, against its limit.
DamageTotal = Callable[[ExplainContext, str], Phrase | str]

#: nothing to add to a sentence: an optional part left out
NOTHING: Final = ""

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


def sq(square: Sequence[int] | None) -> Phrase | str:
    """A square's name (B1); a square off the board (the edge, B4) as its coordinates."""
    if square is None:
        return "-"
    if square[0] < 0 or square[1] < 0:
        return phrase("({x},{y}) off the board", x=square[0], y=square[1])
    return square_name((square[0], square[1]))


def num(value: float) -> str:
    """A number as the rulebook writes it: 3, not 3.0; 0.5 stays 0.5."""
    return f"{value:g}"


def contact_side(facing: str, heading: str) -> str:
    """Which part of a ship meets the other (C1): 0-45 degrees bow, 90 side, 135-180 stern."""
    angle = eighths_between(facing, heading)
    return "bow" if angle <= 1 else "side" if angle == 2 else "stern"


# ------------------------------------------------------------------ narrators of shared events


def tell_game_created(event: GameCreated, ctx: ExplainContext) -> Phrase:
    fork = (
        phrase(", forked from {game} at seq {seq}", game=event.forked_from, seq=event.forked_at_seq)
        if event.forked_from
        else NOTHING
    )
    scheme = phrase(" keyed each turn by the players' contributions (D3)") if event.dice_scheme else NOTHING
    return phrase(
        "game {game} created ({ruleset}, {dice_mode} dice{scheme}{fork})",
        game=event.game,
        ruleset=event.ruleset,
        dice_mode=event.dice_mode,
        scheme=scheme,
        fork=fork,
    )


def tell_contribution_committed(event: DiceContributionCommitted, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{player} commits to a secret contribution to the dice of turn {turn} (SHA-256 {commitment}..., D3)",
        player=event.player,
        turn=event.turn,
        commitment=event.commitment[:12],
    )


def tell_turn_locked(event: TurnLocked, ctx: ExplainContext) -> Phrase:
    return phrase("turn {turn} is locked: its orders and dice contributions are final (D3)", turn=event.turn)


def tell_contribution_revealed(event: DiceContributionRevealed, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{player} reveals their contribution to the dice of turn {turn}: "
        "{contribution}, which matches their commitment (D3)",
        player=event.player,
        turn=event.turn,
        contribution=event.contribution,
    )


def tell_contribution_absent(event: DiceContributionAbsent, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{player} never revealed their contribution to turn {turn}: the turn is resolved "
        "without it ({reason}) (D3)",
        player=event.player,
        turn=event.turn,
        reason=event.reason,
    )


def tell_die_rolled(event: DieRolled, ctx: ExplainContext) -> Phrase:
    who = event.ship or phrase("the table")
    rule = PURPOSES.get(event.purpose)
    why = phrase(" ({rule})", rule=rule) if rule else NOTHING
    return phrase(
        "{who} rolls 1d{sides} for {purpose} #{number}{why}: {value} ({source})",
        who=who,
        sides=event.sides,
        purpose=event.purpose,
        number=event.index + 1,
        why=why,
        value=event.value,
        source=event.source,
    )


def tell_turn_started(event: TurnStarted, ctx: ExplainContext) -> Phrase:
    rounds = phrase(", {rounds} rounds", rounds=event.rounds) if event.rounds > 1 else NOTHING
    return phrase("turn {turn} is resolved{rounds}", turn=event.turn, rounds=rounds)


def tell_turn_ended(event: TurnEnded, ctx: ExplainContext) -> Phrase:
    return phrase(
        "turn {turn} ends; state hash {state_hash}", turn=event.turn, state_hash=event.state_hash[:12]
    )


def turns_resolved(state: GameState) -> int:
    """The turns behind a position, the one turn number every output shows.

    Each TurnEnded moves ``state.turn`` on to the turn to order next and the game's end leaves
    it there, so a position always has ``state.turn - 1`` turns resolved, ended or not.
    """
    return state.turn - 1


def ending_text(reason: str | None, winner: str | None) -> Phrase:
    """How a game ended, as the table says it. A T3 "victory" with no winner is every ship gone:
    the log keeps its ``reason`` (old logs must verify), only the words shown change."""
    if reason == "victory" and winner is None:
        return phrase("all ships lost: no winner")
    if winner:
        return phrase("{reason}, {winner} wins", reason=str(reason), winner=winner)
    return phrase("{reason}", reason=str(reason))


def position_caption(state: GameState) -> Phrase:
    """The turn a position shows: ``after turn 3; turn 4 to order`` or ``after turn 27 - game over: ...``."""
    done = turns_resolved(state)
    behind = phrase("after turn {turn}", turn=done) if done else phrase("before turn 1")
    if state.ended:
        return phrase(
            "{behind} - game over: {ending}",
            behind=behind,
            ending=ending_text(state.end_reason, state.winner),
        )
    return phrase("{behind}; turn {turn} to order", behind=behind, turn=state.turn)


def tell_game_ended(event: GameEnded, ctx: ExplainContext) -> Phrase:
    seed = phrase("; the dice seed is revealed") if event.seed else NOTHING
    return phrase("the game ends ({ending}){seed}", ending=ending_text(event.reason, event.winner), seed=seed)


def tell_ship_placed(event: ShipPlaced, ctx: ExplainContext) -> Phrase:
    owner = phrase(" of {owner}", owner=event.owner) if event.owner else NOTHING
    kind = phrase(" ({kind})", kind=event.kind) if event.kind else NOTHING
    return phrase(
        "{ship}{kind}{owner} is placed on {square} facing {facing}",
        ship=event.ship,
        kind=kind,
        owner=owner,
        square=sq(event.at),
        facing=event.facing,
    )


def tell_ship_moved(event: ShipMoved, ctx: ExplainContext) -> Phrase:
    before = ctx.before.ships.get(event.ship)
    turned: Phrase | str = NOTHING
    if before and before.facing != event.facing:
        turned = phrase(", turning {before}->{after}", before=before.facing, after=event.facing)
    square = sq(event.at)
    if len(event.path) <= 1:
        return phrase(
            "{ship} stays on {square} facing {facing}{turned}",
            ship=event.ship,
            square=square,
            facing=event.facing,
            turned=turned,
        )
    path = joined([sq(s) for s in event.path], "-")
    key = (
        "{ship} is carried {path}, ends on {square} facing {facing}{turned}"
        if event.phase == WIND.id
        else "{ship} moves {path}, ends on {square} facing {facing}{turned}"
    )
    return phrase(key, ship=event.ship, path=path, square=square, facing=event.facing, turned=turned)


def tell_ship_pushed(event: ShipPushed, ctx: ExplainContext) -> Phrase:
    return phrase(
        "{pusher} bumps {ship} and pushes it from {start} to {end} (step {step})",
        pusher=event.pusher,
        ship=event.ship,
        start=sq(event.pushed_from),
        end=sq(event.pushed_to),
        step=event.step,
    )


def tell_collision(event: CollisionOccurred, ctx: ExplainContext) -> Phrase:
    """Who met what, where, and the case of rules M that settled it."""
    what: Phrase
    if event.rock is not None and not board_index(ctx.before.board).on_board((event.rock[0], event.rock[1])):
        ship = ctx.before.ships.get(event.ships[0])
        where = (
            phrase(" at {square}", square=sq(ship.at))
            if ship is not None and ship.at is not None
            else NOTHING
        )
        what = phrase("{ship} runs into the edge of the board{where}", ship=event.ships[0], where=where)
    elif event.rock is not None:
        what = phrase("{ship} hits the rock at {square}", ship=event.ships[0], square=sq(event.rock))
    else:
        what = phrase(
            "{ships} collide over {square}", ships=" and ".join(event.ships), square=sq(event.square)
        )
    why = COLLISION_CASES.get(event.rule, "")
    if why:
        return phrase(
            "{what} (step {step}, case {rule}: {why})",
            what=what,
            step=event.step,
            rule=event.rule,
            why=phrase(why),
        )
    return phrase("{what} (step {step}, case {rule})", what=what, step=event.step, rule=event.rule)


def damage_narrator(total: DamageTotal) -> Narrator:
    """The narrator of damage, ending with ``total``: each ruleset counts a ship's damage its way."""

    def tell_damage(event: DamageTaken, ctx: ExplainContext) -> Phrase:
        other = phrase(" with {other}", other=event.other) if event.other else NOTHING
        step = (
            phrase(
                " in the {phase} phase, step {step}",
                phase=phase_name(event.phase, ctx.rounds),
                step=event.step,
            )
            if event.step
            else NOTHING
        )
        return phrase(
            "{ship} takes {amount} damage ({cause}{other}{step}){total}",
            ship=event.ship,
            amount=num(event.amount),
            cause=event.cause,
            other=other,
            step=step,
            total=total(ctx, event.ship),
        )

    return tell_damage


#: How a ship leaves the game (its ShipSunk's ``how``), told.
SINKING: Final[Mapping[str, str]] = {
    "sunk": "{ship} sinks at {square} and takes no further part",
    "lost": "{ship} is abandoned by its crew at {square} and takes no further part",
    "gone": "{ship} leaves the board at {square} and takes no further part",
}


def tell_ship_sunk(event: ShipSunk, ctx: ExplainContext) -> Phrase:
    key = SINKING.get(event.how, "{ship} {how} at {square} and takes no further part")
    return phrase(key, ship=event.ship, how=event.how, square=sq(event.at))


def tell_ruling(event: RulingRecorded, ctx: ExplainContext) -> Phrase:
    # imported here: this module is imported by every command that shows a state (its
    # position_caption), which never tells a ruling (the CLI's start-up)
    from mortecouille.core.rulings import describe_adjustment

    adjustments = [describe_adjustment(a) for a in event.adjustments]
    effects = joined(adjustments, "; ") if adjustments else phrase("no change to the board")
    return phrase(
        "referee's ruling under {rule}: {text} -> {effects}",
        rule=event.rule,
        text=event.text,
        effects=effects,
    )


def tell_loss(event: LossRecorded, ctx: ExplainContext) -> Phrase:
    return phrase(
        "LOSS recorded by the referee's repair: {lost} event(s) the head anchor vouched for "
        "(seq {first}..{last}) were gone from the log; the game goes on without them",
        lost=event.lost,
        first=event.anchored_seq - event.lost + 1,
        last=event.anchored_seq,
    )


def tell_deadline_set(event: DeadlineSet, ctx: ExplainContext) -> Phrase:
    return phrase("the referee sets turn {turn}'s deadline at {at}", turn=event.turn, at=event.at)


def tell_deadline_passed(event: DeadlinePassed, ctx: ExplainContext) -> Phrase:
    idle = ", ".join(event.idle)
    without = (
        phrase("{idle} had no orders and do nothing this turn (T1)", idle=idle)
        if idle
        else phrase("every ship had orders")
    )
    then = (
        phrase("the turn is resolved")
        if event.resolved
        else phrase("the referee resolves the turn with the table's dice")
    )
    return phrase(
        "turn {turn}'s deadline ({at}) passed: {without}; {then}",
        turn=event.turn,
        at=event.at,
        without=without,
        then=then,
    )


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
