"""The movement phase and the board's wind phase of a mortecouille turn, as pure functions.

:func:`movement_phase` turns the turn's move intents into wind-point spends and
engine moves (A3, N, C6), then plays the two simultaneous steps of the movement
engine (M0-M6, M2f) with the ledger acting after each step, so that collision
losses, capsizes, crossings and sinkings (C, W3) happen between the steps.
:func:`board_wind_phase` plays the board's wind tiles and whirlpools the same way
(M7, B5, B6).

Both return the events in log order. Every die's ``DieRolled`` comes right before
the outcome that used it. Nothing depends on the order of ``state.ships`` or of
the intents: ships are always taken by id, and each step is resolved at once.

A fireship's collision is logged as ``FireshipExplosion`` (see
:mod:`mortecouille.events.mortecouille_movement`); the turn resolution schedules the struck
ship's fire check from it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Final

import msgspec

from mortecouille.core.board.movement import Move, play_two_steps, wind_phase_moves
from mortecouille.core.board.movement_step import Claim, Piece, StepResult
from mortecouille.core.dice import DiceCup
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.life_cycle import ship_named
from mortecouille.core.mortecouille.collisions import PhaseLedger, settle_step
from mortecouille.core.mortecouille.maneuver import (
    SIDE_SIGNS,
    SIDELESS_TURNS,
    TURN_EIGHTHS,
    TURN_NAMES,
    can_afford,
    maneuver_cost,
)
from mortecouille.core.phases import MOVE, MOVEMENT, WIND
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.mortecouille import WindPointsChanged
from mortecouille.events.mortecouille_movement import MoveUnaffordable

ADVANCE: Final = "advance"
MANEUVER: Final = "maneuver"
FIRESHIP: Final = "fireship"
INTENT_KINDS: Final = (ADVANCE, MANEUVER, FIRESHIP)



class MoveIntent(msgspec.Struct, frozen=True):
    """What a ship tries to do in the movement phase.

    ``kind``: ``"advance"`` (A3), ``"maneuver"`` (N, with ``turn``, ``side`` and
    ``sailing``) or ``"fireship"``: a fireship's automatic one-square advance (C6).
    """

    ship: str
    kind: str
    turn: str | None = None
    side: str | None = None
    sailing: bool = False


class _Plan(msgspec.Struct, frozen=True):
    """A ship's move for the engine, what it costs, and the rules it follows."""

    move: Move
    cost: int
    reason: str
    rules: tuple[str, ...]


# --- movement phase -------------------------------------------------------------------------------


def movement_phase(state: GameState, intents: Mapping[str, MoveIntent], cup: DiceCup) -> list[Event]:
    """Resolve the movement phase (T2 step 4): spend wind points, move every ship at once,
    price every collision and sink ships as soon as they go down (A3, N, M, C, W3).

    ``intents`` is keyed by ship id; intents of ships no longer afloat are ignored
    (a ship sunk in combat takes no further part, T2). Speeds count the structure
    lost so far (A2). Raises :class:`BadInput` for a malformed intent and
    :class:`RuleViolation` for an intent that does not fit the ship (C6).
    """
    ledger = PhaseLedger(state, MOVE.id, cup, ("T2",))
    moves: dict[str, Move] = {}
    for sid in sorted(intents):
        intent = intents[sid]
        if sid in state.ships and sid not in ledger.pieces:
            continue  # sunk, abandoned or gone earlier this turn: it takes no further part
        _check_intent(state, sid, intent)
        plan = _plan(ledger, sid, intent)
        points = state.ships[sid].wind
        if plan.cost and not can_afford(points, plan.cost):
            ledger.emit(
                MoveUnaffordable(
                    turn=ledger.turn,
                    phase=MOVEMENT.id,
                    ship=sid,
                    intent=plan.reason,
                    points=points,
                    cost=plan.cost,
                    rules=plan.rules,
                )
            )
            continue
        if plan.cost:
            ledger.emit(
                WindPointsChanged(
                    turn=ledger.turn,
                    phase=MOVEMENT.id,
                    ship=sid,
                    delta=-plan.cost,
                    points=points - plan.cost,
                    reason=plan.reason,
                    rules=plan.rules,
                )
            )
        moves[sid] = plan.move
        ledger.move_rules[sid] = plan.rules
    _play(ledger, moves)
    return ledger.events


def _check_intent(state: GameState, sid: str, intent: MoveIntent) -> None:
    if intent.ship != sid:
        raise BadInput(
            f"intents.{sid}.ship", "the intent keyed {sid!r} is for {ship!r}", sid=sid, ship=intent.ship
        )
    ship = ship_named(state, sid, f"intents.{sid}")
    if intent.kind not in INTENT_KINDS:
        raise BadInput(
            f"intents.{sid}.kind",
            "{kind!r} is not one of {intent_kinds}",
            kind=intent.kind,
            intent_kinds=", ".join(INTENT_KINDS),
        )
    if intent.kind == FIRESHIP and not ship.fireship:
        raise RuleViolation("C6", "{sid} is not a fireship: it does not sail on by itself", sid=sid)
    if intent.kind != FIRESHIP and ship.fireship:
        raise RuleViolation(
            "C6",
            "{sid} is a fireship: it only sails straight on, one square a turn", sid=sid)
    if intent.kind != MANEUVER:
        return
    if intent.turn not in TURN_NAMES:
        raise BadInput(
            f"intents.{sid}.turn",
            "{turn!r} is not one of {turn_names}",
            turn=intent.turn,
            turn_names=", ".join(TURN_NAMES),
        )
    if intent.side is None and intent.turn not in SIDELESS_TURNS:
        raise BadInput(f"intents.{sid}.side", "a {turn} turn needs a side: left or right", turn=intent.turn)
    if intent.side is not None and intent.side not in SIDE_SIGNS:
        raise BadInput(f"intents.{sid}.side", "{side!r} is neither 'left' nor 'right'", side=intent.side)


def _plan(ledger: PhaseLedger, sid: str, intent: MoveIntent) -> _Plan:
    """The engine move of an intent and its wind-point cost (A3, N; C6 costs nothing)."""
    piece = ledger.pieces[sid]
    stats = ledger.stats[sid]
    if intent.kind == FIRESHIP:
        return _Plan(Move.forward(piece), 0, FIRESHIP, ("C6", "M0"))
    if intent.kind == ADVANCE:
        return _Plan(Move.forward(piece), stats.speed, ADVANCE, ("A2", "A3", "M0"))
    assert intent.turn is not None  # checked by _check_intent
    name = TURN_NAMES[intent.turn]
    side = intent.side or "right"
    eighths = TURN_EIGHTHS[name] * SIDE_SIGNS[side]
    cost = maneuver_cost(name, stats.ship_class, intent.sailing, stats.speed)
    how = "sailing" if intent.sailing else "at rest"
    reason = f"{MANEUVER} {intent.turn} {side} {how}"
    if not intent.sailing:
        return _Plan(Move.rotate_in_place(piece, eighths), cost, reason, ("N", "M0"))
    if name == "quarter":
        return _Plan(Move.turn(piece, side), cost, reason, ("A2", "N", "M0", "M2f"))
    return _Plan(Move.sail_then_rotate(piece, eighths), cost, reason, ("A2", "N", "M0", "M2f"))


# --- board wind phase -----------------------------------------------------------------------------


def board_wind_phase(state: GameState, cup: DiceCup) -> list[Event]:
    """Resolve the board's wind phase (T2 step 5): wind tiles push like a forward move, whirlpools
    turn and never push (M7, B5, B6); collisions cost damage as in the movement phase (C, W3).

    Returns no events on a board with neither wind tiles nor whirlpools.
    """
    ledger = PhaseLedger(state, WIND.id, cup, ("T2", "M7"))
    moves = wind_phase_moves(state.board, ledger.pieces)
    for sid, move in moves.items():
        ledger.move_rules[sid] = ("B5",) if move.pushes else ("B6", "M2f")
    _play(ledger, moves)
    return ledger.events


# --- the two steps --------------------------------------------------------------------------------


def _play(ledger: PhaseLedger, moves: Mapping[str, Move]) -> None:
    """The engine's two steps (:func:`mortecouille.core.board.movement.play_two_steps`) with the
    ledger acting after each: losses and sinkings, so a ship sunk in step 1 neither moves nor
    blocks in step 2 (T2); then final facings and the ShipMoved events."""
    _fireships_leave(ledger, moves)
    active = {sid: move for sid, move in moves.items() if sid in ledger.pieces}

    def settle(
        result: StepResult, step_pieces: Mapping[str, Piece], claims: Mapping[str, Claim]
    ) -> tuple[Mapping[str, Piece], Collection[str]]:
        ledger.after_step(result, step_pieces)
        if not claims:
            return ledger.pieces, ()  # nobody moved, so nothing collided: nothing to settle
        crossed = settle_step(ledger, result, claims, step_pieces)
        return ledger.pieces, set(result.moved) | crossed

    steps = play_two_steps(ledger.state.board, ledger.pieces, active, settle)
    # Every ship that tried to turn ends with its new facing, even if it stopped.
    for sid, piece in steps.pieces.items():
        ledger.place(sid, piece.at, piece.facing)
    ledger.report_moves()


def _fireships_leave(ledger: PhaseLedger, moves: Mapping[str, Move]) -> None:
    """A fireship sailing off the board leaves the game as it goes, freeing its square (C6).

    For any other ship the edge is a rock it stops against (B4, M6)."""
    for sid in sorted(moves):
        move = moves[sid]
        if sid not in ledger.pieces or not ledger.is_fireship(sid) or move.first is None:
            continue
        (x, y), (vx, vy) = ledger.pieces[sid].at, move.first
        if not ledger.index.on_board((x + vx, y + vy)):
            ledger.sink(sid, "gone", ("C6", "B4"))
