"""Legal actions, a read model: for one ship, every order the rules accept from it now, with its
wind cost (A3, N), its target, distance and chance to hit (S1-S4, K), and how the orders combine
into one order set (T1, K), as data a form or a command line offers to a player.

Measured by the rules' own checks (``check_actions``, ``measure_attack``, ``measure_catapult``,
``maneuver_cost``) on a state the caller folded from what the viewer may know
(:func:`actions_for`: the viewer's public fold, ``app.view.public_log``), never the whole log:
the answer says nothing the viewer could not read elsewhere.

Choices of this model, where the rules allow more:

- a ship of the ordered ship's own fleet is never offered as a target (friendly fire is legal,
  never proposed);
- the chances to hit are before a numerical superiority bonus (S6), which depends on the other
  ships' fire this turn; a wind cost is paid at the movement phase, after this turn's wind die
  (A1), so ``affordable`` says only whether the points held now suffice.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

import msgspec

from mortecouille.app.requests.bodies import Action as RequestAction
from mortecouille.app.requests.commands import request_of
from mortecouille.app.seats import Viewer
from mortecouille.app.view import public_state
from mortecouille.core.blockade.rounds import ROUNDS_PER_TURN, TOKENS
from mortecouille.core.contributions import contributed, current_round
from mortecouille.core.errors import BadInput, MortecouilleError, fill
from mortecouille.core.fleet.stats import ShipStats
from mortecouille.core.life_cycle import ship_id_typed
from mortecouille.core.mortecouille.common import ship_stats
from mortecouille.core.mortecouille.gunnery import FIRING_POSITIONS, catapult_odds_cell, odds_cell
from mortecouille.core.mortecouille.maneuver import (
    MAX_ACTIONS,
    MAX_MOVING_ACTIONS,
    SIDE_SIGNS,
    TURN_NAMES,
    maneuver_cost,
)
from mortecouille.core.mortecouille.order_checks import measure_attack, measure_catapult
from mortecouille.core.mortecouille.orders import fighting_fire, orders_this_turn
from mortecouille.core.questions import asked_of
from mortecouille.core.state import GameState, ShipState
from mortecouille.events.base import Event
from mortecouille.events.orders import Advance, Attack, BecomeFireship, CatapultShot, Idle, Maneuver, Order

#: The orders T1 counts as actions (a catapult shot and idling are not), and those that move.
ACTION_KINDS = ("advance", "maneuver", "attack", "fireship")
MOVING_KINDS = ("advance", "maneuver")
BLOCKADE_NO_TOKEN = "-"


class LegalAction(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One order the rules accept from the ship now, alone in its order set: its ``kind``, the
    ``order`` as the ``order`` command types it (a name quoted as a shell reads it), the typed
    ``action`` a GiveOrder carries, its wind ``cost`` (A3, N) and whether the points held now pay
    it, or its ``target`` with ``position``, ``distance`` and chance to hit (``odds``)."""

    kind: str
    order: str
    action: Order
    #: the action as ``POST /orders`` takes it in its ``actions`` list
    request: RequestAction
    rules: tuple[str, ...]
    cost: int | None = None
    affordable: bool | None = None
    target: str | None = None
    position: str | None = None
    mode: str | None = None
    distance: int | None = None
    odds: float | None = None


class Combining(msgspec.Struct, frozen=True, kw_only=True):
    """How offered orders join in one order set (T1, K): at most ``actions`` actions (advance,
    maneuver, attack, fireship), each of a different kind and at most ``moving`` of them moving
    (advance, maneuver); ``idle`` only alone or with catapult shots; and at most
    ``catapult_shots`` catapult shots (one per catapult), which are not actions."""

    actions: int
    moving: int
    catapult_shots: int
    action_kinds: tuple[str, ...] = ACTION_KINDS
    moving_kinds: tuple[str, ...] = MOVING_KINDS
    rules: tuple[str, ...] = ("T1", "K")


class Blocked(msgspec.Struct, frozen=True, kw_only=True):
    """Why the ship may give no orders (or tokens) now: the rule, and the reason as a message key
    (its English template) with its parameters, rendered in words by each shell."""

    rule: str
    key: str
    params: dict[str, str | int] = {}

    def render(self) -> str:
        """The reason in English, with its rule: ``[C6] Kraken is a fireship ...``."""
        return f"[{self.rule}] {fill(self.key, self.params)}"


class ShipActions(msgspec.Struct, frozen=True, kw_only=True):
    """What ``ship`` may be ordered to do in turn ``turn``: the ``actions`` offered and how they
    combine (mortecouille), or the ``tokens`` of each of at most ``rounds`` rounds (blockade, P1);
    ``blocked`` when it may give nothing now; ``ordered`` when it has its orders (or tokens) for the
    turn already, so that giving them again replaces them; ``wind``: the points it holds (A1)."""

    game: str
    ruleset: str
    turn: int
    ship: str
    owner: str | None
    ordered: bool
    blocked: Blocked | None = None
    wind: int | None = None
    actions: tuple[LegalAction, ...] = ()
    combining: Combining | None = None
    tokens: tuple[str, ...] = ()
    rounds: int | None = None


# --- the entrance ------------------------------------------------------------------------------


def actions_for(events: Sequence[Event], viewer: Viewer, ship: str) -> ShipActions:
    """:func:`legal_actions` of ``ship`` (named as ``order`` reads a name) from ``viewer``'s
    public fold of ``events``, a whole log: what the viewer may know, nothing more."""
    return legal_actions(public_state(events, viewer), ship)


def legal_actions(state: GameState, ship: str) -> ShipActions:
    """What the rules let ``ship`` be ordered to do now in ``state``; a ship the state does not
    hold is refused naming ``ship``."""
    ship_id = ship_id_typed(state, ship)
    found = state.ships.get(ship_id)
    if found is None:
        raise BadInput("ship", "no ship {ship!r} in {game!r}", ship=ship, game=state.game)
    base = ShipActions(
        game=state.game,
        ruleset=state.ruleset,
        turn=state.turn,
        ship=ship_id,
        owner=found.owner,
        ordered=False,
    )
    if asked_of(state).inputs == "tokens":  # a blockade ship takes tokens, not orders (P1)
        return _blockade(state, found, base)
    return _mortecouille(state, found, base)


def allows(offered: ShipActions, chosen: Sequence[LegalAction]) -> bool:
    """Whether ``chosen``, offered actions of ``offered``, make one order set the rules accept,
    by ``offered.combining`` (T1, K)."""
    combining = offered.combining
    if combining is None or not chosen or any(action not in offered.actions for action in chosen):
        return False
    kinds = [action.kind for action in chosen]
    acts = [kind for kind in kinds if kind in combining.action_kinds]
    if "idle" in kinds and (acts or kinds.count("idle") > 1):
        return False
    return (
        len(set(acts)) == len(acts)
        and len(acts) <= combining.actions
        and sum(kind in combining.moving_kinds for kind in acts) <= combining.moving
        and kinds.count("catapult") <= combining.catapult_shots
    )


# --- blockade (P1) -----------------------------------------------------------------------------


def _blockade(state: GameState, ship: ShipState, base: ShipActions) -> ShipActions:
    ordered = ship.id in state.tokens
    blocked = _blocked_game(state)
    if blocked is None and not ship.afloat:
        blocked = Blocked(rule="P3", key="{ship} has sunk and takes no tokens", params={"ship": ship.id})
    if blocked is not None:
        return msgspec.structs.replace(base, ordered=ordered, blocked=blocked)
    return msgspec.structs.replace(
        base, ordered=ordered, tokens=(*TOKENS, BLOCKADE_NO_TOKEN), rounds=ROUNDS_PER_TURN
    )


# --- mortecouille (T1, A, N, S, K, C6, X1) --------------------------------------------------------


def _mortecouille(state: GameState, ship: ShipState, base: ShipActions) -> ShipActions:
    ordered = bool(orders_this_turn(state, ship.id))
    base = msgspec.structs.replace(base, ordered=ordered, wind=ship.wind)
    blocked = _blocked_game(state) or _blocked_ship(ship)
    if blocked is not None:
        return msgspec.structs.replace(base, blocked=blocked)
    stats = ship_stats(state, ship.id)
    if fighting_fire(ship):
        # X1: the crew fights the fire; an order set of idle alone is all it may give
        idle = _plain(Idle(), "idle", ("T1", "X1"))
        return msgspec.structs.replace(
            base, actions=(idle,), combining=Combining(actions=0, moving=0, catapult_shots=0)
        )
    offered = [
        _plain(Idle(), "idle", ("T1",)),
        _moving(Advance(), "advance", stats.speed, ship.wind, ("A2", "A3")),
        *_maneuvers(stats, ship.wind),
    ]
    if stats.fireship_allowed:
        offered.append(_plain(BecomeFireship(), "fireship", ("C6",)))
    offered.extend(_shots(state, ship, stats))
    combining = Combining(
        actions=MAX_ACTIONS[stats.extra_crew], moving=MAX_MOVING_ACTIONS, catapult_shots=stats.catapults
    )
    return msgspec.structs.replace(base, actions=tuple(offered), combining=combining)


def _blocked_game(state: GameState) -> Blocked | None:
    if state.ended:
        return Blocked(rule="T3", key="game {game!r} has ended", params={"game": state.game})
    if contributed(state) and current_round(state).locked:
        return Blocked(
            rule="D3", key="turn {turn} is locked: its inputs are final until it is resolved",
            params={"turn": state.turn},
        )  # fmt: skip
    return None


def _blocked_ship(ship: ShipState) -> Blocked | None:
    if ship.at is None and not (ship.sunk or ship.lost or ship.gone):
        return Blocked(rule="F3", key="{ship} is bought but not placed yet", params={"ship": ship.id})
    if not ship.afloat:
        return Blocked(
            rule="T2",
            key="{ship} has sunk or left the game and takes no further part",
            params={"ship": ship.id},
        )
    if ship.fireship:
        return Blocked(
            rule="C6", key="{ship} is a fireship: it sails straight on by itself", params={"ship": ship.id}
        )
    return None


def _plain(action: Order, kind: str, rules: tuple[str, ...]) -> LegalAction:
    return LegalAction(kind=kind, order=kind, action=action, request=request_of(action), rules=rules)


def _moving(action: Order, text: str, cost: int, wind: int, rules: tuple[str, ...]) -> LegalAction:
    kind = "advance" if isinstance(action, Advance) else "maneuver"
    return LegalAction(
        kind=kind, order=text, action=action, request=request_of(action), rules=rules, cost=cost,
        affordable=wind >= cost,
    )  # fmt: skip


def _maneuvers(stats: ShipStats, wind: int) -> list[LegalAction]:
    offered: list[LegalAction] = []
    for turn, name in TURN_NAMES.items():
        for side in SIDE_SIGNS:
            for sailing in (False, True):
                cost = maneuver_cost(name, stats.ship_class, sailing, stats.speed)
                text = f"maneuver {turn} {side}" + (" --sailing" if sailing else "")
                rules = ("N", "A2", "M2f") if sailing else ("N",)
                offered.append(
                    _moving(Maneuver(turn=turn, side=side, sailing=sailing), text, cost, wind, rules)
                )
    return offered


def _shots(state: GameState, ship: ShipState, stats: ShipStats) -> list[LegalAction]:
    """Every cannon attack (by position and mode) and catapult shot at a ship in range, never one
    of the ship's own fleet (S1-S4, S7, K)."""
    offered: list[LegalAction] = []
    for other_id, other in sorted(state.ships.items()):
        if other_id == ship.id or not other.afloat or (ship.owner is not None and other.owner == ship.owner):
            continue
        quoted = shlex.quote(other_id)
        for position in FIRING_POSITIONS:
            for mode in ("normal", "burst"):
                attack = Attack(position=position, target=other_id, mode=mode)
                try:
                    plan = measure_attack(state, ship.id, attack)
                except MortecouilleError:
                    continue
                cell = odds_cell(plan.cannons, plan.distance, mode == "burst", stats.elite_gunner)
                offered.append(
                    LegalAction(
                        kind="attack",
                        order=f"attack {position} {quoted}" + (" --burst" if mode == "burst" else ""),
                        action=attack,
                        request=request_of(attack),
                        rules=("S1", "S4", "S7") if mode == "burst" else ("S1", "S3"),
                        target=other_id,
                        position=position,
                        mode=mode,
                        distance=plan.distance,
                        odds=cell.probability_float,
                    )
                )
        if stats.catapults:
            shot = CatapultShot(target=other_id)
            try:
                plan = measure_catapult(state, ship.id, shot)
            except MortecouilleError:
                continue
            cell = catapult_odds_cell(plan.distance, stats.elite_gunner)
            offered.append(
                LegalAction(
                    kind="catapult",
                    order=f"catapult {quoted}",
                    action=shot,
                    request=request_of(shot),
                    rules=("K",),
                    target=other_id,
                    distance=plan.distance,
                    odds=cell.probability_float,
                )
            )
    return offered
