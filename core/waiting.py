"""Whom the current turn waits for: the ships that must act and have no input (orders, T1-T2;
tokens, P1) yet, as the game's ruleset answers
(:meth:`~mortecouille.core.questions.Questions.ships_awaited`).
``state``, ``games``, the view and the resolve that refuses a turn with ships missing all
read it here."""

from __future__ import annotations

from collections.abc import Mapping

from mortecouille.core.errors import Phrase, phrase
from mortecouille.core.questions import asked_of
from mortecouille.core.state import GameState


def ships_awaiting_orders(state: GameState) -> tuple[str, ...]:
    """The ships, by id, whose orders (or tokens) the current turn still lacks; none once the
    game has ended. A mortecouille ship fighting a fire or sailing as a fireship gives none (X1,
    C6), so it is not waited for."""
    if not state.created or state.ended:
        return ()
    return asked_of(state).ships_awaited(state)


def acting_players(state: GameState) -> frozenset[str]:
    """The players with a ship this turn waits for orders (tokens) from, given or not."""
    if not state.created:
        return frozenset()
    return asked_of(state).acting_players(state)


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
    key = "tokens missing: {waiting}" if asked_of(state).inputs == "tokens" else "orders missing: {waiting}"
    return phrase(
        key, waiting=", ".join(f"{player} ({', '.join(ships)})" for player, ships in sorted(waiting.items()))
    )
