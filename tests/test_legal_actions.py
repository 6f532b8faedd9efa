"""The legal actions read model (app/legal_actions.py) against the rules: over generated positions
(ships at random squares and facings, options, damage, wind, fire, burst streaks), every action it
offers is accepted by ``decide`` as a GiveOrder, every other candidate of a finite enumeration is
refused, and its statement of how actions combine agrees with ``decide`` on pairs and triples."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import msgspec
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mortecouille.app.legal_actions import LegalAction, ShipActions, actions_for, allows, legal_actions
from mortecouille.app.seats import REFEREE, Viewer
from mortecouille.core.board.geometry import FACINGS
from mortecouille.core.dice import TableDice, seed_commitment
from mortecouille.core.errors import BadInput, MortecouilleError
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import CreateGame, EndGame
from mortecouille.core.mortecouille.common import SetUpShip
from mortecouille.core.mortecouille.fire import FIRE_PHASES
from mortecouille.core.mortecouille.gunnery import FIRING_POSITIONS
from mortecouille.core.mortecouille.maneuver import SIDE_SIGNS, TURN_NAMES
from mortecouille.core.state import EMPTY, GameState
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.mortecouille import ShipSetUp
from mortecouille.events.orders import Advance, Attack, BecomeFireship, CatapultShot, Idle, Maneuver, Order

KINDS = (
    "red-small",
    "red-big",
    "blue-small",
    "blue-big",
    "green-small",
    "green-big",
    "yellow-small",
    "yellow-big",
)
OPTIONS = ("extra-crew", "catapult", "continuous-burst", "fireship", "elite-gunner", "extra-cannons", "slave")
PLAYERS = ("Anne", "Bart")


@dataclass(frozen=True)
class Position:
    events: list[Event]
    state: GameState
    ship: str


def _numbered(events: list[Event]) -> list[Event]:
    return [msgspec.structs.replace(event, seq=seq) for seq, event in enumerate(events)]


@st.composite
def positions(draw: st.DrawFn) -> Position:
    width, height = draw(st.integers(3, 7)), draw(st.integers(3, 7))
    created = decide(
        EMPTY,
        CreateGame(
            game="p",
            ruleset="mortecouille",
            players=PLAYERS,
            budget=0,
            board=Board(width=width, height=height),
            seed_sha256=seed_commitment("legal-seed"),
            rules_version=RULES_VERSION,
            scenario=True,
        ),
        TableDice(),
    )
    events: list[Event] = list(created)
    state = fold(events)
    squares = [(x, y) for x in range(width) for y in range(height)]
    first = draw(st.sampled_from(squares))
    # most ships on a line through the first one's square, where shots are (S1)
    lined = [s for s in squares if s != first and _on_a_line(first, s)]
    count = draw(st.integers(1, min(6, len(lined))))
    others = st.sampled_from(lined) | st.sampled_from(squares)
    at = [
        first,
        *draw(st.lists(others.filter(lambda s: s != first), min_size=count, max_size=count, unique=True)),
    ]
    for index, square in enumerate(at):
        options = tuple(draw(st.lists(st.sampled_from(OPTIONS), max_size=3, unique=True)))
        setup = ShipSetUp(
            ship=f"S{index}",
            kind=draw(st.sampled_from(KINDS)),
            owner="Anne" if index == 0 else draw(st.sampled_from(("Bart", "Bart", "Anne"))),
            at=square,
            facing=draw(st.sampled_from(FACINGS)),
            options=options,
            damage=draw(st.integers(0, 3)),
            wind=draw(st.integers(0, 5)),
            fire=draw(st.one_of(st.none(), st.none(), st.sampled_from(FIRE_PHASES))),
            bursts_in_a_row=draw(st.sampled_from((0, 0, 0, 1, 2))),
            fireship=draw(st.booleans()) and draw(st.booleans()) and "fireship" in options,
        )
        try:
            produced = decide(state, SetUpShip(proposed=setup), TableDice())
        except MortecouilleError:
            continue  # an option this kind may not take: the ship is left out
        events.extend(produced)
        state = fold(produced, state)
    assume(len(state.ships) >= 2)
    ship = draw(st.sampled_from(sorted(state.ships)) | st.just(min(state.ships)))
    if draw(st.booleans()):  # the ship (or another) has its orders already
        other = draw(st.sampled_from(sorted(state.ships)))
        try:
            produced = decide(state, GiveOrder(ship=other, actions=(Idle(),)), TableDice())
        except MortecouilleError:
            produced = []
        events.extend(produced)
        state = fold(produced, state)
    return Position(_numbered(events), state, ship)


def _on_a_line(a: tuple[int, int], b: tuple[int, int]) -> bool:
    dx, dy = b[0] - a[0], b[1] - a[1]
    return dx == 0 or dy == 0 or abs(dx) == abs(dy)


def candidates(state: GameState, ship: str) -> list[Order]:
    """Every order a ship could be given: each maneuver, each position and mode at every ship
    (itself included), a catapult shot at every ship, and the plain ones."""
    found: list[Order] = [Idle(), Advance(), BecomeFireship()]
    for turn, side, sailing in itertools.product(TURN_NAMES, SIDE_SIGNS, (False, True)):
        found.append(Maneuver(turn=turn, side=side, sailing=sailing))
    for target in sorted(state.ships):
        for position, mode in itertools.product(FIRING_POSITIONS, ("normal", "burst")):
            found.append(Attack(position=position, target=target, mode=mode))
        found.append(CatapultShot(target=target))
    return found


def accepted(state: GameState, ship: str, actions: tuple[Order, ...], replace: bool) -> bool:
    try:
        decide(state, GiveOrder(ship=ship, actions=actions, replace=replace), TableDice())
    except MortecouilleError:
        return False
    return True


def own_fleet_target(state: GameState, ship: str, action: Order) -> bool:
    """An attack or catapult shot at another ship of the same fleet: legal, never offered."""
    if not isinstance(action, Attack | CatapultShot) or action.target == ship:
        return False
    return state.ships[action.target].owner == state.ships[ship].owner


def offered_by_owner(position: Position) -> ShipActions:
    owner = position.state.ships[position.ship].owner
    assert owner is not None
    return actions_for(position.events, Viewer.of_player(owner), position.ship)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions())
def test_every_offered_action_is_accepted_and_every_other_one_refused(position: Position) -> None:
    state, ship = position.state, position.ship
    offered = offered_by_owner(position)
    assert offered == actions_for(position.events, REFEREE, ship)  # nothing here is anyone's secret
    assert offered.ordered == (ship in state.orders)
    kept = {action.action for action in offered.actions}
    assert len(kept) == len(offered.actions)
    for action in candidates(state, ship):
        verdict = accepted(state, ship, (action,), offered.ordered)
        if action in kept:
            assert verdict, f"offered but refused: {action}"
        elif not own_fleet_target(state, ship, action):
            assert not verdict, f"accepted but not offered: {action}"
    assert all(action.target != ship for action in offered.actions)
    assert all(
        action.target is None or state.ships[action.target].owner != state.ships[ship].owner
        for action in offered.actions
    )
    assert (offered.blocked is None) == bool(offered.actions)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(), st.data())
def test_how_offered_actions_combine_is_what_decide_accepts(position: Position, data: st.DataObject) -> None:
    state, ship = position.state, position.ship
    offered = offered_by_owner(position)
    assume(offered.actions)
    picks = st.lists(st.sampled_from(offered.actions), min_size=2, max_size=3)
    for _ in range(25):
        chosen: list[LegalAction] = data.draw(picks)
        actions = tuple(action.action for action in chosen)
        assert allows(offered, chosen) == accepted(state, ship, actions, offered.ordered), actions


def test_extra_crew_offers_two_actions_one_moving_and_catapults_add_shots() -> None:
    state = _game(
        ShipSetUp(
            ship="A", kind="red-big", owner="Anne", at=(3, 3), facing="N", options=("extra-crew", "catapult")
        ),
        ShipSetUp(ship="B", kind="red-small", owner="Bart", at=(0, 3), facing="N"),
    )
    offered = legal_actions(state, "A")
    assert offered.combining is not None
    assert (offered.combining.actions, offered.combining.moving, offered.combining.catapult_shots) == (
        2,
        1,
        1,
    )
    by_order = {action.order: action for action in offered.actions}
    assert by_order["attack port B"].distance == 3 and 0 < (by_order["attack port B"].odds or 0) <= 1
    pair = [by_order["advance"], by_order["attack port B"], by_order["catapult B"]]
    assert allows(offered, pair)
    assert not allows(offered, [by_order["advance"], by_order["maneuver 1/4 left"]])


def test_a_ship_of_its_own_fleet_is_never_offered_as_a_target() -> None:
    state = _game(
        ShipSetUp(ship="A", kind="red-big", owner="Anne", at=(3, 3), facing="N", options=("catapult",)),
        ShipSetUp(ship="Mate", kind="red-small", owner="Anne", at=(0, 3), facing="N"),
    )
    offered = legal_actions(state, "A")
    assert not [action for action in offered.actions if action.target is not None]
    assert accepted(state, "A", (Attack(position="port", target="Mate"),), False)  # the rules allow it


def test_a_ship_fighting_a_fire_is_offered_idle_alone_and_a_fireship_nothing() -> None:
    state = _game(
        ShipSetUp(ship="A", kind="red-big", owner="Anne", at=(3, 3), facing="N", fire="3"),
        ShipSetUp(
            ship="F",
            kind="red-small",
            owner="Bart",
            at=(0, 3),
            facing="N",
            options=("fireship",),
            fireship=True,
        ),
    )
    assert [action.order for action in legal_actions(state, "A").actions] == ["idle"]
    fireship = legal_actions(state, "F")
    assert fireship.actions == () and fireship.blocked is not None and fireship.blocked.rule == "C6"
    assert "fireship" in fireship.blocked.render()


def test_an_ended_game_offers_nothing_and_an_unknown_ship_is_refused_naming_ship() -> None:
    state = _game(
        ShipSetUp(ship="A", kind="red-big", owner="Anne", at=(3, 3), facing="N"),
        ShipSetUp(ship="B", kind="red-small", owner="Bart", at=(0, 3), facing="N"),
    )
    ended = fold(decide(state, EndGame(reason="referee", seed="legal-seed"), TableDice()), state)
    offered = legal_actions(ended, "a")  # matched as order matches a name
    assert offered.ship == "A" and offered.actions == () and offered.blocked is not None
    assert offered.blocked.rule == "T3"
    with pytest.raises(BadInput) as refused:
        legal_actions(state, "Nobody")
    assert refused.value.field == "ship"


def _game(*ships: ShipSetUp) -> GameState:
    created = decide(
        EMPTY,
        CreateGame(
            game="u",
            ruleset="mortecouille",
            players=PLAYERS,
            budget=0,
            board=Board(width=10, height=10),
            seed_sha256=seed_commitment("legal-seed"),
            rules_version=RULES_VERSION,
            scenario=True,
        ),
        TableDice(),
    )
    return fold([*created, *ships])
