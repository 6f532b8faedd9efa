"""Buying Mortecouille fleets as commands and events (rules F1-F3), and where bought ships
may be placed.

The deciders only look up the game's facts (whose fleet, which names are taken)
and hand the rules to :mod:`mortecouille.core.fleet.purchase`'s ``check_*`` functions, which raise
RuleViolation or BadInput before anything is written. Events store canonical
catalogue ids; the evolvers replay them with :mod:`mortecouille.core.fleet.purchase`'s ``apply_*``
functions and the price the event recorded, so an audit (F3) can compare that
price with the price list.
"""

from __future__ import annotations

from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import DiceSource
from mortecouille.core.errors import BadInput, RuleViolation, phrase
from mortecouille.core.fleet.catalogue import resolve_option, resolve_ship_kind
from mortecouille.core.fleet.purchase import (
    Fleet,
    ShipPurchase,
    apply_buy_ship,
    apply_equip,
    apply_equip_fleet,
    apply_seal,
    apply_withdraw,
    check_buy_ship,
    check_equip,
    check_equip_fleet,
    check_seal,
)
from mortecouille.core.life_cycle import (
    Command,
    Decide,
    Evolve,
    change_ship,
    player_typed,
    replace,
    with_ship,
    without_ship,
)
from mortecouille.core.limits import check_name, check_ship_count
from mortecouille.core.state import GameState, ShipState
from mortecouille.events.base import Event
from mortecouille.events.fleet import FleetEquipped, FleetSealed, ShipBought, ShipEquipped, ShipWithdrawn
from mortecouille.events.movement import ShipPlaced


class BuyShip(Command, frozen=True, kw_only=True):
    """Buy ship ``name`` of ``kind`` for ``player``, fitted with individual ``options`` (F1, F2)."""

    player: str
    kind: str
    name: str
    options: tuple[str, ...] = ()


class EquipShip(Command, frozen=True, kw_only=True):
    """Fit individual ``option`` to the bought ship named ``ship`` (F2)."""

    ship: str
    option: str


class EquipFleet(Command, frozen=True, kw_only=True):
    """Buy fleet ("universal") ``option`` for every ship of ``player``, later ones too (F2)."""

    player: str
    option: str


class WithdrawShip(Command, frozen=True, kw_only=True):
    """Take back the purchase of ship ``ship``, refunding it, while its fleet is open (F3)."""

    ship: str


class SealFleet(Command, frozen=True, kw_only=True):
    """Close ``player``'s purchases; ``forfeit`` gives up money that could still buy something (F3)."""

    player: str
    forfeit: bool = False


# --- looking things up -----------------------------------------------------------------------


def fleet_of(state: GameState, player: str) -> Fleet:
    """``player``'s fleet, empty until their first purchase (F3: the budget is per player)."""
    fleet = state.fleets.get(player)
    if fleet is None:
        # Built directly, not with mortecouille.core.fleet.purchase.new_fleet: evolve must never fail, and
        # new_fleet refuses a rules version the catalogue does not know.
        fleet = Fleet(player=player, budget=state.budget, rules_version=state.rules_version)
    return fleet


def resolve_player(state: GameState, text: str) -> str:
    """The player ``text`` names (case and spacing aside, ``core.limits.name_key``), or BadInput
    naming PLAYER."""
    named = player_typed(state.players, text)
    if named in state.players:
        return named
    import difflib  # a hint for a refused name only: not imported by every command

    close = difflib.get_close_matches(text, state.players, n=1)
    hint = (
        phrase("did you mean {name!r}?", name=close[0])
        if close
        else phrase("players: {players}", players=", ".join(state.players))
    )
    raise BadInput(
        "player", "{text!r} is not a player of {game!r}; {hint}", text=text, game=state.game, hint=hint
    )


def find_purchase(state: GameState, ship: str) -> tuple[Fleet, ShipPurchase]:
    """The fleet that bought ship ``ship`` (case aside) and its purchase, or BadInput naming SHIP."""
    for fleet in state.fleets.values():
        purchase = fleet.ship_named(ship)
        if purchase is not None:
            return fleet, purchase
    names = [s.name for fleet in state.fleets.values() for s in fleet.ships]
    import difflib  # a hint for a refused name only: not imported by every command

    close = difflib.get_close_matches(ship, names, n=1)
    hint = phrase("; did you mean {name!r}?", name=close[0]) if close else ""
    raise BadInput(
        "ship", "no ship named {ship!r} was bought in {game!r}{hint}", ship=ship, game=state.game, hint=hint
    )


def resolve_ship(state: GameState, text: str) -> str:
    """The id of the ship ``text`` names as ``place`` and ``equip`` read it (case and spacing
    aside, a near miss answered with "did you mean"), for the commands that take a ship's id
    (``order``); a ship the game has under exactly that id is taken as it is."""
    if text in state.ships:
        return text
    return find_purchase(state, text)[1].name


def _ship_names_in_game(state: GameState) -> list[str]:
    bought = [s.name for fleet in state.fleets.values() for s in fleet.ships]
    return [*bought, *state.ships]


def _canonical_name(name: str) -> str:
    # Names compare with spacing folded (mortecouille.core.fleet.purchase), so the stored id is folded
    # the same way.
    return " ".join(name.split())


def _require_buying_phase(state: GameState) -> None:
    if state.turn > 1:
        raise RuleViolation("F3", "the game has started: money is useless now")


# --- deciders --------------------------------------------------------------------------------


def decide_buy_ship(state: GameState, command: BuyShip, dice: DiceSource) -> list[Event]:
    """F1-F3: a known kind and options, within the limits and the money left, under a new name."""
    _require_buying_phase(state)
    player = resolve_player(state, command.player)
    fleet = fleet_of(state, player)
    check_name("NAME", command.name)
    check_ship_count(len(_ship_names_in_game(state)) + 1, "NAME")
    name = _canonical_name(command.name)
    price = check_buy_ship(fleet, command.kind, name, command.options, _ship_names_in_game(state))
    version = fleet.rules_version
    return [
        ShipBought(
            player=player,
            ship=name,
            kind=resolve_ship_kind(command.kind, version),
            options=tuple(resolve_option(option, version) for option in command.options),
            price=price,
        )
    ]


def decide_equip_ship(state: GameState, command: EquipShip, dice: DiceSource) -> list[Event]:
    """F2-F3: one more individual option on a ship of an open fleet."""
    _require_buying_phase(state)
    fleet, purchase = find_purchase(state, command.ship)
    price = check_equip(fleet, purchase.name, command.option)
    option = resolve_option(command.option, fleet.rules_version)
    return [ShipEquipped(player=fleet.player, ship=purchase.name, option=option, price=price)]


def decide_equip_fleet(state: GameState, command: EquipFleet, dice: DiceSource) -> list[Event]:
    """F2-F3: a universal option, once per fleet, never beside its individual variant."""
    _require_buying_phase(state)
    player = resolve_player(state, command.player)
    fleet = fleet_of(state, player)
    price = check_equip_fleet(fleet, command.option)
    option = resolve_option(command.option, fleet.rules_version)
    return [FleetEquipped(player=player, option=option, price=price)]


def decide_withdraw_ship(state: GameState, command: WithdrawShip, dice: DiceSource) -> list[Event]:
    """F3: a purchase is taken back, refunded in full, until its fleet is sealed; afterwards the
    fleet is final and only a referee's ruling takes a ship out of the game."""
    _require_buying_phase(state)
    fleet, purchase = find_purchase(state, command.ship)
    if fleet.sealed:
        raise RuleViolation(
            "F3",
            "{player}'s fleet is sealed: {purchase!r} can no longer be withdrawn; a ruling takes it "
            "out of the game (ruling GAME --adjust '{purchase}' sunk=true)",
            player=fleet.player,
            purchase=purchase.name,
        )
    # the price the purchase events recorded (ship, then each individual option), as paid
    refund = state.ships[purchase.name].price
    return [ShipWithdrawn(player=fleet.player, ship=purchase.name, refund=refund)]


def decide_seal(state: GameState, command: SealFleet, dice: DiceSource) -> list[Event]:
    """F3: sealing with money that could still buy something needs an explicit forfeit."""
    _require_buying_phase(state)
    player = resolve_player(state, command.player)
    fleet = fleet_of(state, player)
    check_seal(fleet, command.forfeit)
    return [FleetSealed(player=player, forfeited=fleet.money_left, forfeit=command.forfeit)]


# --- evolvers --------------------------------------------------------------------------------


def _with_fleet(state: GameState, fleet: Fleet) -> GameState:
    return replace(state, fleets={**state.fleets, fleet.player: fleet})


def evolve_ship_bought(state: GameState, event: ShipBought) -> GameState:
    """The fleet gains the ship, and the game an unplaced ship (not afloat until placed).

    Recording the ship in ``state.ships`` at once means the placement evolver
    (mortecouille.core.board.ships) keeps its owner, kind and options when it puts it on the board,
    so combat reads the options from the ship like a scenario's (T2).
    """
    fleet = fleet_of(state, event.player)
    state = _with_fleet(state, apply_buy_ship(fleet, event.kind, event.ship, event.options, event.price))
    ship = ShipState(
        id=event.ship, kind=event.kind, owner=event.player, options=event.options, price=event.price
    )
    return with_ship(state, ship)


def evolve_ship_equipped(state: GameState, event: ShipEquipped) -> GameState:
    fleet = fleet_of(state, event.player)
    state = _with_fleet(state, apply_equip(fleet, event.ship, event.option, event.price))
    ship = state.ships[event.ship]
    return change_ship(
        state, event.ship, options=(*ship.options, event.option), price=ship.price + event.price
    )


def evolve_fleet_equipped(state: GameState, event: FleetEquipped) -> GameState:
    fleet = fleet_of(state, event.player)
    return _with_fleet(state, apply_equip_fleet(fleet, event.option, event.price))


def evolve_ship_withdrawn(state: GameState, event: ShipWithdrawn) -> GameState:
    """The fleet loses the ship and gets its price back; the unplaced ship leaves the game."""
    fleet = fleet_of(state, event.player)
    state = _with_fleet(state, apply_withdraw(fleet, event.ship, event.refund))
    return without_ship(state, event.ship)


def evolve_fleet_sealed(state: GameState, event: FleetSealed) -> GameState:
    return _with_fleet(state, apply_seal(fleet_of(state, event.player)))


# --- placement -------------------------------------------------------------------------------


def place_mortecouille_ship(state: GameState, command: PlaceShip) -> ShipPlaced:
    """A bought ship of a sealed fleet goes on the board before turn 1 is resolved (F3, B2).

    :func:`mortecouille.core.board.ships.decide_place` has already checked the facing and that the
    square is on the board, not a rock and free.
    """
    fleet, purchase = find_purchase(state, command.ship)
    if not fleet.sealed:
        raise RuleViolation(
            "F3",
            "{player}'s fleet is not sealed yet; seal it before placing {purchase!r}",
            player=fleet.player,
            purchase=purchase.name,
        )
    if state.turn > 1:
        raise RuleViolation(
            "T2", "turn {turn} has been resolved: ships are no longer placed", turn=state.turn - 1
        )
    if command.kind is not None and resolve_ship_kind(command.kind, fleet.rules_version) != purchase.kind:
        raise BadInput(
            "kind",
            "{purchase!r} was bought as a {kind}, not {given!r}",
            purchase=purchase.name,
            kind=purchase.kind,
            given=command.kind,
        )
    if command.owner is not None and command.owner != fleet.player:
        raise BadInput(
            "owner",
            "{purchase!r} belongs to {player}, not {owner!r}",
            purchase=purchase.name,
            player=fleet.player,
            owner=command.owner,
        )
    if command.damage != 0:
        # The placement evolver keeps a bought ship's record, damage included: a
        # bought ship starts intact. Damaged ships are a scenario's set-up.
        raise BadInput(
            "damage", "{purchase!r} was bought new and is placed intact (F1)", purchase=purchase.name
        )
    return ShipPlaced(
        ship=purchase.name,
        at=command.at,
        facing=command.facing,
        kind=purchase.kind,
        owner=fleet.player,
        damage=command.damage,
        rules=("F3", "B2"),
    )


#: The commands of buying a fleet (F1-F3), and the events they log.
FLEET_DECIDERS: dict[type[Command], Decide] = {
    BuyShip: decide_buy_ship,
    EquipShip: decide_equip_ship,
    EquipFleet: decide_equip_fleet,
    SealFleet: decide_seal,
    WithdrawShip: decide_withdraw_ship,
}
FLEET_EVOLVERS: dict[type[Event], Evolve] = {
    ShipBought: evolve_ship_bought,
    ShipEquipped: evolve_ship_equipped,
    FleetEquipped: evolve_fleet_equipped,
    FleetSealed: evolve_fleet_sealed,
    ShipWithdrawn: evolve_ship_withdrawn,
}
