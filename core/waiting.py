"""Whom the current turn waits for (issue 13.5): the ships that can act and have no orders
(mortecouille, T1-T2) or tokens (blockade, P1) yet. ``state``, ``games`` and the resolve that
refuses a turn with ships missing all read it here."""

from __future__ import annotations

from collections.abc import Mapping

from mortecouille.core.errors import Phrase, phrase
from mortecouille.core.mortecouille.orders import orders_this_turn, takes_orders
from mortecouille.core.state import GameState


def ships_awaiting_orders(state: GameState) -> tuple[str, ...]:
    """The ships, by id, whose orders (or tokens) the current turn still lacks; none once the
    game has ended. A mortecouille ship fighting a fire or sailing as a fireship gives none (X1,
    C6), so it is not waited for."""
    if not state.created or state.ended:
        return ()
    afloat = sorted(ship_id for ship_id, ship in state.ships.items() if ship.afloat)
    if state.ruleset == "blockade":
        return tuple(ship_id for ship_id in afloat if ship_id not in state.tokens)
    return tuple(
        ship_id
        for ship_id in afloat
        if takes_orders(state.ships[ship_id]) and not orders_this_turn(state, ship_id)
    )


def players_awaiting_orders(state: GameState) -> Mapping[str, tuple[str, ...]]:
    """The players the turn waits for, each with their ships still without orders (a ship
    with no owner is listed under ``-``)."""
    waiting: dict[str, tuple[str, ...]] = {}
    for ship_id in ships_awaiting_orders(state):
        owner = state.ships[ship_id].owner or "-"
        waiting[owner] = (*waiting.get(owner, ()), ship_id)
    return waiting


def awaiting_text(state: GameState) -> Phrase | None:
    """``orders missing: Anne (Hope), Bart (Kraken)``, or None when the turn waits for nobody."""
    waiting = players_awaiting_orders(state)
    if not waiting:
        return None
    key = "tokens missing: {waiting}" if state.ruleset == "blockade" else "orders missing: {waiting}"
    return phrase(
        key, waiting=", ".join(f"{player} ({', '.join(ships)})" for player, ships in sorted(waiting.items()))
    )
