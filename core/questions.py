"""What the shells and the shared rules ask a game's ruleset instead of comparing its name.

Each ruleset answers them once, in its own folder (``questions.py``), as the ``asked`` part of its
value (:class:`~mortecouille.core.ruleset.Ruleset`). The shared deciders below the rulesets (placing
a ship, a ruling, a lock, a deadline) are given the answers when a ruleset is composed; the shells
read them with :func:`asked_of`, which imports a ruleset's answers, not its rules: showing a game
from its snapshot never loads the fold or the rulesets' table.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import msgspec

from mortecouille.core.state import GameState, ShipState


class Questions(msgspec.Struct, frozen=True, kw_only=True):
    """One ruleset's answers: whom a turn waits for, how ships are placed, named and shown."""

    #: whether the current turn waits for this ship's input (T1-T2, P1): afloat and able to act
    acts: Callable[[ShipState], bool]
    #: whether the ship of this id has its input for the state's current turn
    has_input: Callable[[GameState, str], bool]
    #: what a ship's input for a turn is called: ``orders`` (T1) or ``tokens`` (P1)
    inputs: str
    #: refuse a referee's resolve in which no ship that acts has its input (T1, P1)
    check_inputs_given: Callable[[GameState], None]
    #: the rule a turn is played by, cited when no turn can be (T2, P1)
    turn_rule: str
    #: the rule ships are named under, cited when two names clash (F1: bought; P1: placed)
    naming_rule: str
    #: whether ships are bought into fleets, sealed before the first turn (F1-F4); the ships of a
    #: scenario are set up instead, and a game whose ships are not bought places new ones by kind
    buys_fleets: bool
    #: the fewest players a game needs (T3)
    fewest_players: int
    #: the facings a ship may take (B2), in the order they are told
    facings: tuple[str, ...]
    #: whether its ships aim shots at other ships (S, K)
    aims_shots: bool
    #: the parts of a ship's condition this ruleset keeps beyond the board's (square, facing,
    #: damage, sunk), as ``scenario --json`` shows them
    ship_condition: Callable[[ShipState], dict[str, Any]]

    def ships_awaited(self, state: GameState) -> tuple[str, ...]:
        """Who must act now: the ships, by id and in order, whose input the current turn still
        lacks; none before the game exists or once it has ended."""
        if not state.created or state.ended:
            return ()
        acts, has_input = self.acts, self.has_input
        return tuple(
            ship_id
            for ship_id, ship in sorted(state.ships.items())
            if acts(ship) and not has_input(state, ship_id)
        )

    def acting_players(self, state: GameState) -> frozenset[str]:
        """The players with a ship the current turn waits for input from, given or not."""
        acts = self.acts
        return frozenset(ship.owner for ship in state.ships.values() if ship.owner and acts(ship))


#: name -> (module, attribute) of every ruleset's answers, as :data:`~mortecouille.core.rulesets.RULESETS`
#: lists the rulesets (tests/test_rulesets.py checks that they agree)
_WHERE: dict[str, tuple[str, str]] = {
    "mortecouille": ("mortecouille.core.mortecouille.questions", "MORTECOUILLE_QUESTIONS"),
    "blockade": ("mortecouille.core.blockade.questions", "BLOCKADE_QUESTIONS"),
}
_LOADED: dict[str, Questions] = {}


def asked_named(ruleset: str) -> Questions:
    """The answers of the ruleset called ``ruleset`` (KeyError for any other name), imported the
    first time they are asked for."""
    found = _LOADED.get(ruleset)
    if found is None:
        module, attribute = _WHERE[ruleset]
        found = getattr(importlib.import_module(module), attribute)
        assert isinstance(found, Questions), module
        _LOADED[ruleset] = found
    return found


def asked_of(state: GameState) -> Questions:
    """The answers of the ruleset of the game ``state`` holds (created: its ruleset is known)."""
    return asked_named(state.ruleset)
