"""The decider and the reducer: ``decide(state, command, dice) -> events`` and
``evolve(state, event) -> state``, for a game of any ruleset.

Each finds the game's :class:`~mortecouille.core.ruleset.Ruleset` in
:data:`~mortecouille.core.rulesets.RULESETS` by the state's ruleset (or, before the game
exists, by the CreateGame command or the GameCreated event), then dispatches through the
ruleset's dicts keyed by the exact class (measured faster than a ``match`` on Struct
classes). The command classes and helpers every ruleset shares live in
:mod:`mortecouille.core.life_cycle`, below the rulesets.
"""

from __future__ import annotations

from collections.abc import Iterable

from mortecouille.core.dice import DiceSource
from mortecouille.core.errors import BadInput, RuleViolation, phrase
from mortecouille.core.life_cycle import (
    UNFIT,
    Command,
    CreateGame,
    PlayedTurn,
    ResolveTurn,
    UnappliableEvent,
    UnknownEvent,
    check_game_name,
    fold_with,
)
from mortecouille.core.ruleset import Ruleset
from mortecouille.core.rulesets import RULESETS, ruleset_named
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.codec import CorruptLine
from mortecouille.events.game import GameCreated


def decide(state: GameState, command: Command, dice: DiceSource) -> list[Event]:
    """Validate ``command`` against ``state`` and return the events it produces.

    Raises RuleViolation or BadInput, having produced nothing, when refused: a command
    the game's ruleset does not take is refused citing the rule its ``refusals`` give,
    or else naming the ``ruleset``.
    """
    ruleset = _deciding(state, command)
    handler = ruleset.deciders.get(type(command))
    if handler is None:
        refusal = ruleset.refusals.get(type(command))
        if refusal is not None:
            raise RuleViolation(
                refusal.rule,
                "{game!r} is a {ruleset} game: {reason}",
                game=state.game,
                ruleset=ruleset.name,
                reason=refusal.reason,
            )
        takers = [name for name, other in RULESETS.items() if type(command) in other.deciders]
        where = (
            phrase("a command of {rulesets} games", rulesets=" and ".join(takers))
            if takers
            else phrase("a command of no ruleset")
        )
        raise BadInput(
            "ruleset",
            "{command} is {where}, not of {ruleset} ones",
            command=type(command).__name__,
            where=where,
            ruleset=ruleset.name,
        )
    return handler(state, command, dice)


def play_turn(state: GameState, command: ResolveTurn, dice: DiceSource) -> PlayedTurn:
    """:func:`decide` of a ResolveTurn (the same events, refused alike), with the state the turn
    settles on before its TurnEnded (:class:`~mortecouille.core.life_cycle.PlayedTurn`): the
    ruleset's ``play_turn``, whose events its ResolveTurn decider returns. Re-deriving a log
    (``verify``) takes that state instead of folding the turn a second time."""
    return _deciding(state, command).play_turn(state, command, dice)


def _deciding(state: GameState, command: Command) -> Ruleset:
    """The ruleset that decides ``command`` in ``state``: the game's (refused once it has ended,
    T3, but for a new game), or before the game exists the one a CreateGame names."""
    if state.created:
        if state.ended and not isinstance(command, CreateGame):
            raise RuleViolation(
                "T3", "game {game!r} has ended ({end_reason})", game=state.game, end_reason=state.end_reason
            )
        return RULESETS[state.ruleset]
    if isinstance(command, CreateGame):
        check_game_name(command.game)
        return ruleset_named(command.ruleset, "ruleset")
    raise BadInput("game", "the game has not been created")


def evolve(state: GameState, event: Event) -> GameState:
    """Apply one event. Never fails on a valid log; an event the game's ruleset neither
    evolves nor ignores is a corrupt log (:class:`UnknownEvent`, exit 4)."""
    if not state.created:
        return fold((event,), state)
    ruleset = RULESETS[state.ruleset]
    handler = ruleset.evolvers.get(type(event))
    if handler is not None:
        try:
            return handler(state, event)
        except UNFIT as error:
            raise UnappliableEvent(event, error) from None
    if type(event) in ruleset.ignored:
        return state
    raise UnknownEvent(event, state.ruleset)


def fold(events: Iterable[Event], state: GameState = EMPTY) -> GameState:
    """The state ``events`` lead to from ``state`` (by default, before the game exists).

    The first event of a log, GameCreated, names the ruleset whose tables fold the rest:

    >>> from mortecouille.core.board.terrain import Board
    >>> from mortecouille.core.dice import TableDice
    >>> from mortecouille.core.life_cycle import CreateGame
    >>> create = CreateGame(game="demo", ruleset="blockade", players=("ann", "bob"),
    ...                     budget=0, board=Board(width=8, height=8), dice_mode="table")
    >>> state = fold(decide(EMPTY, create, TableDice()))
    >>> state.ruleset, state.players, state.turn
    ('blockade', ('ann', 'bob'), 1)

    Raises :class:`UnknownEvent` (exit 4) on an event the ruleset neither evolves nor ignores.
    """
    events = iter(events)
    if not state.created:
        first = next(events, None)
        if first is None:
            return state
        if not isinstance(first, GameCreated):
            raise UnknownEvent(first, "")
        if first.ruleset not in RULESETS:
            raise CorruptLine(f"seq {first.seq}: the game's ruleset {first.ruleset!r} is not one of "
                              f"{', '.join(RULESETS)}", seq=first.seq)  # fmt: skip
        created = RULESETS[first.ruleset]
        state = created.evolvers[GameCreated](created.initial_state, first)
    # the tables are looked up once per fold, never per event: this is every command's hot path
    ruleset = RULESETS[state.ruleset]
    return fold_with(ruleset.evolvers, ruleset.ignored, events, state)
