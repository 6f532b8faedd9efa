"""A built-in fleet buyer: a random legal fleet within the budget (F1-F3), for ``simulate``.

A study that always plays the same two fleets compares nothing: with random fleets the
archive's ``ships`` table holds every kind (F1) and option (F2), so ``GROUP BY kind`` means
something. The buyer is deterministic for a given state, player and seed (its randomness is a
:class:`random.Random` seeded from them, its candidates in catalogue order). It never guesses at
legality: each candidate passes the same checks the ``BuyShip``/``EquipShip``/``EquipFleet``
deciders make (mortecouille.core.fleet.purchase), and the commands it returns still go through
those deciders.
"""

from __future__ import annotations

import random

from mortecouille.core.errors import RuleViolation
from mortecouille.core.fleet.catalogue import catalogue_for
from mortecouille.core.fleet.commands import BuyShip, EquipFleet, EquipShip, SealFleet, fleet_of
from mortecouille.core.fleet.purchase import (
    cheapest_legal_purchase,
    check_buy_ship,
    check_equip,
    check_equip_fleet,
)
from mortecouille.core.state import GameState

#: At most this many ships a side: the fleets must fit their home rows of a small board, and a
#: swarm of cheap ships would crowd out the big kinds and the options a study compares.
MAX_SHIPS = 5

#: One draw in this many buys a ship while the fleet may still take one: ships first, so the
#: budget goes on hulls and the options fill what is left.
SHIP_WEIGHT = 3

Purchase = BuyShip | EquipShip | EquipFleet | SealFleet


def _ship_name(player: str, number: int) -> str:
    return f"{player} {number}"


def legal_purchases(state: GameState, player: str) -> list[BuyShip | EquipShip | EquipFleet]:
    """Every purchase ``player`` may still make that the money left pays (F1-F3), in catalogue order."""
    fleet = fleet_of(state, player)
    catalogue = catalogue_for(fleet.rules_version)
    names = [s.name for f in state.fleets.values() for s in f.ships]
    candidates: list[BuyShip | EquipShip | EquipFleet] = []
    if len(fleet.ships) < MAX_SHIPS:
        name = _ship_name(player, len(fleet.ships) + 1)
        candidates.extend(BuyShip(player=player, kind=kind, name=name) for kind in catalogue.ships)
    for option, spec in catalogue.options.items():
        if spec.scope == "fleet":
            candidates.append(EquipFleet(player=player, option=option))
        else:
            candidates.extend(EquipShip(ship=ship.name, option=option) for ship in fleet.ships)
    legal: list[BuyShip | EquipShip | EquipFleet] = []
    for command in candidates:
        try:
            if isinstance(command, BuyShip):
                check_buy_ship(fleet, command.kind, command.name, (), names)
            elif isinstance(command, EquipShip):
                check_equip(fleet, command.ship, command.option)
            else:
                check_equip_fleet(fleet, command.option)
        except RuleViolation:
            continue
        legal.append(command)
    return legal


def choose_purchase(state: GameState, player: str, seed: str) -> Purchase:
    """``player``'s next purchase: a random legal one, or sealing the fleet once nothing is left
    to buy (with a forfeit only when F3 requires it: the ship limit left money unspent)."""
    fleet = fleet_of(state, player)
    # Seeded by what the fleet holds so far, so each step is reproducible on its own.
    rng = random.Random(f"{seed}:fleet:{player}:{len(fleet.ships)}:{fleet.spent}")
    legal = legal_purchases(state, player)
    if not legal:
        cheapest = cheapest_legal_purchase(fleet)
        forfeit = cheapest is not None and cheapest.price <= fleet.money_left
        return SealFleet(player=player, forfeit=forfeit)
    ships = [c for c in legal if isinstance(c, BuyShip)]
    # A fleet's first purchase is a ship: options need one to go on, and a fleet of options only
    # would have nothing to sail.
    if ships and (not fleet.ships or len(ships) == len(legal) or rng.randrange(SHIP_WEIGHT) > 0):
        return rng.choice(ships)
    return rng.choice([c for c in legal if not isinstance(c, BuyShip)])
