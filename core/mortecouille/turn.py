"""Resolving a mortecouille turn (T2): the frame around the movement phase.

``ResolveTurn`` runs, in order: upkeep (fire X1-X3, wear W1/W2, sinking W3),
the wind dice (A1), combat (S, K), movement and the board's wind phase (M, C;
mortecouille.core.mortecouille.movement), then the end of the turn: idle ships lose their
wind points (T1), burst streaks (S7), catapult countdowns (K), next turn's fire
(X1-X3, C6), new fireships (C6) and victory (T3). Each phase reads the state
the previous ones left, folded from the events produced so far.

Rulings of this module:

- with ``partial`` unset, every ship that can act must have orders (T2: orders
  are given for all ships); ``partial`` lets the others do nothing (T1);
- fireships roll no wind die and never count as idle (they sail by themselves);
- victory (T3) is checked among the players owning at least one ship; when
  the last ships of every remaining player leave in the same turn, the game
  ends in a victory with no winner;
- the game-ending event follows TurnEnded, whose hash is the position before
  the game ended, as ``verify`` expects.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from mortecouille.core.dice import DiceCup, DiceSource, matches_commitment
from mortecouille.core.editions import edition_for
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.hints import PARTIAL_HINT
from mortecouille.core.life_cycle import PlayedTurn, ResolveTurn
from mortecouille.core.mortecouille.combat import CombatOutcome, combat_phase
from mortecouille.core.mortecouille.evolution import apply_turn_events
from mortecouille.core.mortecouille.fire import schedule_after_flaming_hits
from mortecouille.core.mortecouille.gunnery import bursts_in_a_row_after, countdown_end_of_turn
from mortecouille.core.mortecouille.maneuver import does_nothing
from mortecouille.core.mortecouille.movement import ADVANCE as ADVANCE_INTENT
from mortecouille.core.mortecouille.movement import FIRESHIP as FIRESHIP_INTENT
from mortecouille.core.mortecouille.movement import MANEUVER as MANEUVER_INTENT
from mortecouille.core.mortecouille.movement import MoveIntent, board_wind_phase, movement_phase
from mortecouille.core.mortecouille.order_checks import order_names
from mortecouille.core.mortecouille.orders import fighting_fire, orders_this_turn, takes_orders
from mortecouille.core.mortecouille.upkeep import (
    afloat_ids,
    left_game,
    sinking_checks,
    upkeep_phase,
    wind_phase,
)
from mortecouille.core.phases import END, MOVE
from mortecouille.core.ruleset import Victory
from mortecouille.core.state import GameState, state_hash
from mortecouille.events.base import Event
from mortecouille.events.combat import BecameFireship, BurstStreakChanged, CountdownChanged, FireScheduled
from mortecouille.events.game import GameEnded, TurnEnded, TurnStarted
from mortecouille.events.mortecouille import WindPointsChanged
from mortecouille.events.mortecouille_movement import FireshipExplosion
from mortecouille.events.orders import Advance, BecomeFireship, Maneuver


def resolve_mortecouille_turn(state: GameState, command: ResolveTurn, dice: DiceSource) -> list[Event]:
    """Play the current turn (T2) and return every event it produces, dice included.

    The rules are those of the edition the game was created with (mortecouille.core.editions): a
    rules version this engine does not know is refused before anything is played.
    """
    return play_mortecouille_turn(state, command, dice).events


def play_mortecouille_turn(state: GameState, command: ResolveTurn, dice: DiceSource) -> PlayedTurn:
    """:func:`resolve_mortecouille_turn` with the state the turn settles on before its TurnEnded
    (the mortecouille ``Ruleset.play_turn``)."""
    edition_for(state.rules_version)
    afloat = afloat_ids(state)
    sidelined = frozenset(s for s in afloat if not takes_orders(state.ships[s]))
    _check_ready(state, command, afloat, sidelined)
    cup = DiceCup(dice, state.game, state.turn)
    produced: list[Event] = [TurnStarted(turn=state.turn, rounds=1)]
    current = state

    def record(events: Iterable[Event]) -> None:
        nonlocal current
        batch = list(events)
        produced.extend(batch)
        current = apply_turn_events(batch, current)

    upkeep = upkeep_phase(current, cup)
    record(upkeep.events)
    record(wind_phase(current, cup))
    combat = combat_phase(current, cup, sidelined)
    record(combat.events)
    moved_from = len(produced)
    record(_movement(state, current, cup))
    record(sinking_checks(current, MOVE.id))
    explosions = _explosions(produced[moved_from:])
    record(_end_of_turn(state, current, combat, upkeep.failed_phase_1, explosions))
    produced.append(TurnEnded(turn=state.turn, state_hash=state_hash(current), rules=("T2",)))
    ended = _victory(current, command)
    if ended is not None:
        produced.append(ended)
    return PlayedTurn(produced, current)


def _check_ready(
    state: GameState, command: ResolveTurn, afloat: list[str], sidelined: frozenset[str]
) -> None:
    """Refuse the turn unless some ship is afloat and every ship able to act has orders (T2, D2)."""
    if command.rounds not in (None, 1):
        raise BadInput(
            "rounds", "a mortecouille turn has one movement, not {rounds} rounds (T2)", rounds=command.rounds
        )
    if command.reveal_seed is not None and state.dice_mode == "seeded":
        _check_seed(state, command.reveal_seed)
    if not afloat:
        raise RuleViolation("T2", "no ship is afloat: nothing to resolve")
    missing = [s for s in afloat if s not in sidelined and not orders_this_turn(state, s)]
    if missing and not command.partial:
        raise RuleViolation(
            "T2",
            "no orders yet for {missing}; {partial_hint}",
            missing=", ".join(missing),
            partial_hint=PARTIAL_HINT,
        )


def _check_seed(state: GameState, seed: str) -> None:
    if not matches_commitment(seed, state):
        raise BadInput("reveal_seed", "the seed to reveal does not match the game's commitment (D2)")


# --- movement (mortecouille.core.mortecouille.movement) -------------------------------------------------


def _movement(before: GameState, current: GameState, cup: DiceCup) -> list[Event]:
    """Advancing, manoeuvring and fireships move (M, A2-A3, N, C), then the board's wind (M7).

    ``current`` is the state after combat, so speed counts this turn's damage (A2).
    Orders and fireship status come from ``before``, the state the turn started from.
    """
    intents: dict[str, MoveIntent] = {}
    for ship_id in afloat_ids(current):
        if before.ships[ship_id].fireship:
            intents[ship_id] = MoveIntent(ship_id, FIRESHIP_INTENT)
            continue
        for order in orders_this_turn(before, ship_id):
            if isinstance(order, Advance):
                intents[ship_id] = MoveIntent(ship_id, ADVANCE_INTENT)
            elif isinstance(order, Maneuver):
                intents[ship_id] = MoveIntent(
                    ship_id, MANEUVER_INTENT, turn=order.turn, side=order.side, sailing=order.sailing
                )
    produced = _with_dice_first(cup, movement_phase(current, intents, cup))
    if current.board.winds or current.board.whirlpools:
        produced += _with_dice_first(cup, board_wind_phase(apply_turn_events(produced, current), cup))
    return produced


def _with_dice_first(cup: DiceCup, events: list[Event]) -> list[Event]:
    """Dice a phase left in the cup go before its outcomes (D1: a die precedes its use)."""
    return [*cup.take_events(), *events]


def _explosions(events: Iterable[Event]) -> dict[str, set[str]]:
    """Target -> fireships that exploded against it this turn (C6)."""
    found: defaultdict[str, set[str]] = defaultdict(set)
    for event in events:
        if isinstance(event, FireshipExplosion):
            found[event.ship].add(event.fireship)
    return found


# --- end of the turn -----------------------------------------------------------------------


def _end_of_turn(
    before: GameState,
    current: GameState,
    combat: CombatOutcome,
    failed_phase_1: frozenset[str],
    explosions: dict[str, set[str]],
) -> list[Event]:
    """Idle ships lose wind (T1), bursts (S7), countdowns (K), fire (X1-X3, C6), fireships (C6)."""
    turn = before.turn
    produced: list[Event] = []
    for ship_id in afloat_ids(current):
        ship, was = current.ships[ship_id], before.ships[ship_id]
        actions = order_names(orders_this_turn(before, ship_id))
        if not was.fireship and ship.wind and does_nothing(actions, fighting_fire(was)):
            produced.append(
                WindPointsChanged(
                    turn=turn, phase=END.id, ship=ship_id, delta=-ship.wind, points=0, reason="idle",
                    rules=("T1",),
                )
            )  # fmt: skip
        streak = bursts_in_a_row_after(ship.bursts_in_a_row, ship_id in combat.bursts)
        if streak != ship.bursts_in_a_row:
            produced.append(BurstStreakChanged(turn=turn, ship=ship_id, bursts_in_a_row=streak))
        countdown, sinks = countdown_end_of_turn(ship.countdown, ship_id in combat.countdown_started)
        if countdown is not None and countdown != ship.countdown:
            produced.append(CountdownChanged(turn=turn, ship=ship_id, countdown=countdown))
        if sinks:
            # K: "its crew jumps" -- the ship is abandoned, not sunk by damage.
            produced.append(left_game(turn, END.id, ship, "lost", ("K",)))
    still_afloat = apply_turn_events(produced, current)
    produced += _fire_for_next_turn(still_afloat, combat.flaming_hitters, explosions, failed_phase_1)
    for ship_id in afloat_ids(still_afloat):
        if any(isinstance(order, BecomeFireship) for order in orders_this_turn(before, ship_id)):
            produced.append(BecameFireship(turn=turn, ship=ship_id))
    return produced


def _fire_for_next_turn(
    state: GameState,
    flaming_hitters: dict[str, frozenset[str]],
    explosions: dict[str, set[str]],
    failed_phase_1: frozenset[str],
) -> list[Event]:
    """Next turn's fire phase of every ship afloat hit by flaming shots or a fireship (X1-X3, C6).

    A fireship's explosion counts as one more flaming ship hitting the target.
    """
    produced: list[Event] = []
    for target in sorted(set(flaming_hitters) | set(explosions)):
        ship = state.ships[target]
        if not ship.afloat:
            continue
        hitters = set(flaming_hitters.get(target, ())) | explosions.get(target, set())
        schedule = schedule_after_flaming_hits(ship.fire, len(hitters), target in failed_phase_1)
        rules = tuple(rule for rule in (schedule.rule,) if rule is not None)
        if target in explosions:
            rules += ("C6",)
        produced.append(
            FireScheduled(
                turn=state.turn,
                ship=target,
                phase=schedule.phase,
                hitters=tuple(sorted(hitters)),
                rules=rules,
            )
        )
    return produced


def victory(state: GameState) -> Victory | None:
    """T3, the mortecouille end test: the game is over once at most one player still has a ship
    afloat, among the players owning at least one ship."""
    contenders = {ship.owner for ship in state.ships.values() if ship.owner is not None}
    standing = {state.ships[s].owner for s in afloat_ids(state) if state.ships[s].owner is not None}
    if len(contenders) < 2 or len(standing) > 1:
        return None
    return Victory(winner=next(iter(standing), None))


def _victory(state: GameState, command: ResolveTurn) -> GameEnded | None:
    """The GameEnded of a victory (T3), revealing the seed (D2); None while the game goes on."""
    won = victory(state)
    if won is None:
        return None
    seed = None
    if state.dice_mode == "seeded":
        if command.reveal_seed is None:
            raise BadInput("reveal_seed", "this turn ends the game (T3): give the seed to reveal (D2)")
        seed = command.reveal_seed
    return GameEnded(reason="victory", winner=won.winner, seed=seed, rules=("T3", "D2"))
