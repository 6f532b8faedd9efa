"""What a referee's ``resolve`` and a turn's lock check before a turn is played.

These checks guard the table's mistakes that cannot be undone: starting a mortecouille game
before every fleet is sealed and every bought ship placed (F3: afterwards nothing can be
bought or placed), and playing a turn in which no ship has orders or tokens (T1, P1: every ship
would lose its wind points, typically a repeated ``resolve --partial``).

They run in the command path only (mortecouille.app.commands.resolve_turn), not in the turn
deciders: re-derivation (``verify``) replays every logged turn with ``partial`` and must keep
accepting logs written before these checks existed, and the bots and scenarios decide their
turns directly, where an idle turn (a fireship sailing alone) is legitimate.

:func:`check_turn_can_lock` is the lock's own (D3), called by its decider
(``core.contributions.decide_lock``): no turn is ever re-derived from a lock, and a turn locked
before it can be played could never be resolved.
"""

from __future__ import annotations

from mortecouille.core.errors import RuleViolation
from mortecouille.core.fleet.purchase import Fleet
from mortecouille.core.questions import Questions
from mortecouille.core.state import GameState, ShipState


def check_table_resolve(state: GameState, asked: Questions, *, idle_turn: bool) -> None:
    """Refuse a referee's resolve the table would regret; ``idle_turn``: no ship acts, on purpose."""
    if not state.created or state.ended:
        return  # the turn deciders refuse these with their own rule (T3)
    # A scenario's ships are set up, not bought (architecture.md): it has no fleets to seal.
    if asked.buys_fleets and state.turn == 1 and not state.scenario:
        check_fleets_ready(state)
    if not idle_turn:
        asked.check_inputs_given(state)


def check_fleets_ready(state: GameState) -> None:
    """Before turn 1: every player has sealed, every bought ship is placed or withdrawn (F3)."""
    unsealed = unsealed_players(state)
    if unsealed:
        raise RuleViolation(
            "F3",
            "the game cannot start: fleet not sealed yet for {unsealed}; `seal {game} {first}` "
            "(--forfeit gives up money left) before the first resolve",
            unsealed=", ".join(unsealed),
            game=state.game,
            first=unsealed[0],
        )
    unplaced = unplaced_ships(state)
    if unplaced:
        names = ", ".join(f"{s.id} ({s.owner})" for s in unplaced)
        example = unplaced[0].id
        raise RuleViolation(
            "F3",
            "the game cannot start: {names} bought but not placed; `place {game} {example!r} SQUARE`, "
            "or if it cannot be placed, a ruling: `ruling {game} --rule F3 --text ... --adjust "
            "{example!r} position=SQUARE` places it, `--adjust {example!r} sunk=true` withdraws it",
            names=names,
            game=state.game,
            example=example,
        )


def unsealed_players(state: GameState) -> list[str]:
    """The players whose fleet is not sealed yet, in the game's order (public: who has sealed)."""
    return [p for p in state.players if not _sealed(state.fleets.get(p))]


def unplaced_ships(state: GameState) -> list[ShipState]:
    """The ships bought and neither placed nor taken out of the game by a ruling."""
    return [
        ship for ship in state.ships.values() if ship.at is None and not (ship.sunk or ship.lost or ship.gone)
    ]


def check_turn_can_lock(state: GameState, asked: Questions) -> None:
    """Refuse to lock a turn that could never be resolved (D3): a lock makes the turn's inputs
    final, so a turn locked before the game can start would take no purchase, seal or placement,
    could not be resolved, and nothing would unlock it. Before turn 1 of a mortecouille game
    every fleet must be sealed and every bought ship placed (F3); in any game some ship must be
    afloat (T2; P1 in blockade), as the resolve itself requires."""
    if asked.buys_fleets and state.turn == 1 and not state.scenario:
        unsealed = unsealed_players(state)
        if unsealed:
            _cannot_lock(state, "F3", f"fleet not sealed yet for {', '.join(unsealed)}")
        unplaced = unplaced_ships(state)
        if unplaced:
            names = ", ".join(f"{s.id} ({s.owner})" for s in unplaced)
            _cannot_lock(state, "F3", f"{names} bought but not placed")
    if not any(ship.afloat for ship in state.ships.values()):
        _cannot_lock(state, asked.turn_rule, "no ship is afloat")


def _cannot_lock(state: GameState, rule: str, why: str) -> None:
    raise RuleViolation(
        rule,
        "turn {turn} cannot be locked before it can be played: {why}; a locked turn takes no purchase, "
        "seal, placement or order (D3), so it could never be resolved",
        turn=state.turn,
        why=why,
    )


def _sealed(fleet: Fleet | None) -> bool:
    return fleet is not None and fleet.sealed
