"""A built-in player: legal, aggressive orders for every ship of one player (T1), for
``simulate`` and demos.

The bot is deterministic for a given state, player and seed: its only
randomness is a :class:`random.Random` seeded from those, ships are taken by
id, and every tie is broken by a fixed key, never by dict order. It never
guesses at legality: its chosen order set goes through the same decider a
referee's order does, and a refused set falls back to simpler ones, so it only
ever gives legal orders.

How one ship chooses (ships in id order, so later ships know which targets
earlier ones picked and concentrate fire for the S6 bonus):

- a damaged ship with the fireship option and an enemy close ahead, or one that
  enemies surround, becomes a fireship (C6);
- it scores every cannon attack on a line (S1) by hit chance x damage (S3-S5),
  capped by what the target has left, with a bonus for a kill and for flaming
  shot (X); a burst (S4) must beat twice a normal shot, since it silences the
  cannons next turn (S7);
- it scores every move it may try (advance A3; eighth, quarter and half turns
  at rest or sailing, N) by where it leaves the ship: the attack it will have
  next turn from there, the attacks one turn in place would open, how close it
  gets to the nearest enemy and whether it then points at one, rams (C: a big
  bow into a small ship pays, a small bow into a big ship does not), collisions
  with friends, rocks and the edge. A move the wind points cannot pay keeps the
  ship still *and* its points (A3, N), so it serves as "hold": an idle ship
  would lose them all (T1);
- it attacks rather than moves unless the move is worth more; with extra-crew
  it does both (T1); its catapults fire every turn at the best target in range
  (K).

Now and then (one turn in twenty) a ship tries a random manoeuvre instead, so
that long runs exercise more of the rules.

This module plays a player's turn (:func:`choose_orders`); one ship's decision is
:class:`mortecouille.bots.outlook.Outlook`, and the odds and values it rests on are in
:mod:`mortecouille.bots.odds`.
"""

from __future__ import annotations

import functools
import random
from typing import Final

from mortecouille.bots.odds import Unit
from mortecouille.bots.outlook import Outlook
from mortecouille.core.dice import TableDice
from mortecouille.core.errors import RuleViolation
from mortecouille.core.fleet.stats import ShipStats, derive_stats
from mortecouille.core.game import decide
from mortecouille.core.mortecouille.common import fleet_options_of
from mortecouille.core.mortecouille.orders import orders_this_turn
from mortecouille.core.state import GameState, ShipState
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.orders import Attack, CatapultShot

#: How often a ship tries a random manoeuvre instead of its best plan.
WHIM: Final = 0.05


# --- entry point ---------------------------------------------------------------------------


def choose_orders(state: GameState, player: str, rng_seed: int | str) -> list[GiveOrder]:
    """One legal ``GiveOrder`` for each afloat ship of ``player`` that still needs orders."""
    rng = random.Random(f"{rng_seed}/{state.game}/{state.turn}/{player}")
    units = _units(state)
    enemies = [unit for unit in units if unit.owner != player]
    #: target -> ships of ours already firing at it this turn (S6)
    shooters: dict[str, set[str]] = {}
    commands: list[GiveOrder] = []
    for unit in units:
        ship = state.ships[unit.id]
        if unit.owner != player or ship.fireship or orders_this_turn(state, unit.id):
            continue
        whim = rng.random() < WHIM
        outlook = Outlook(state, unit, units, enemies)
        for actions in outlook.candidates(shooters, rng if whim else None):
            command = GiveOrder(ship=unit.id, actions=actions)
            if _legal(state, command):
                commands.append(command)
                for action in actions:
                    if isinstance(action, Attack | CatapultShot):
                        shooters.setdefault(action.target, set()).add(unit.id)
                break
    return commands


def _legal(state: GameState, command: GiveOrder) -> bool:
    # Only a refusal by the rules is expected; a BadInput would be a bot bug and must surface.
    try:
        decide(state, command, TableDice())
    except RuleViolation:
        return False
    return True


@functools.lru_cache(maxsize=4096)
def _cached_stats(
    kind: str, options: tuple[str, ...], fleet_options: tuple[str, ...], lost: int, rules_version: str
) -> ShipStats:
    # derive_stats is pure and slow-ish; the bot asks for the same few ships over and over.
    return derive_stats(kind, options, fleet_options, structure_lost=lost, rules_version=rules_version)


def _stats(state: GameState, ship: ShipState) -> ShipStats:
    return _cached_stats(
        ship.kind, ship.options, fleet_options_of(state, ship), int(ship.damage), state.rules_version
    )


def _units(state: GameState) -> list[Unit]:
    """Every ship afloat, by id."""
    units = []
    for ship_id in sorted(state.ships):
        ship = state.ships[ship_id]
        if ship.afloat and ship.at is not None:
            units.append(
                Unit(
                    ship.id, ship.owner, ship.at, ship.facing, _stats(state, ship), ship.wind, ship.countdown
                )
            )
    return units
