"""A ruleset as a value: everything the engine needs to referee one kind of game.

Nothing registers itself: each ruleset module builds its :class:`Ruleset` from its own
tables and the shared ones below, and :mod:`mortecouille.core.rulesets` lists them all.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING

import msgspec

from mortecouille.core.board.ships import BOARD_EVOLVERS, PlacementRule, PlaceShip, placing_with
from mortecouille.core.contributions import (
    CONTRIBUTION_DECIDERS,
    CONTRIBUTION_EVOLVERS,
    LockTurn,
    contributed_play,
    locking_with,
    refused_when_locked,
)
from mortecouille.core.deadlines import PassDeadline, SetDeadline, decide_set_deadline, passing_with
from mortecouille.core.dice import DiceSource
from mortecouille.core.life_cycle import (
    Command,
    CreateGame,
    Decide,
    EndGame,
    Evolve,
    PlayTurn,
    ResolveTurn,
    decide_create,
    decide_end,
    evolve_created,
    evolve_ended,
)
from mortecouille.core.narration import Narrator
from mortecouille.core.phases import Phase
from mortecouille.core.questions import Questions
from mortecouille.core.rulings import RecordRuling, evolve_ruling, ruling_with
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.deadlines import DeadlinePassed, DeadlineSet
from mortecouille.events.game import DieRolled, GameCreated, GameEnded, LossRecorded, TurnStarted
from mortecouille.events.movement import CollisionOccurred, ShipPushed
from mortecouille.events.rulings import RulingRecorded

if TYPE_CHECKING:
    # a type only: the scenario documents' module is imported by a ruleset's builder when a
    # scenario is read, not by every command that looks a ruleset up (the CLI's start-up)
    from mortecouille.core.scenario import ScenarioBuilder


class StoryTables:
    """Where a ruleset's tables for ``explain`` are kept: the module named here, holding its
    ``NARRATORS`` (how each event type is told) and ``PHASES`` (the phase of each event type whose
    own ``phase`` field names none). The module is imported the first time either table is read:
    folding or showing a game never reads them, so a command that tells no story never imports
    them (the CLI's start-up). The tables stay as explicit as a dict in the ruleset's
    value: only where they are written down changes."""

    def __init__(self, module: str) -> None:
        self.module = module
        self._found: ModuleType | None = None

    def _tables(self) -> ModuleType:
        if self._found is None:
            self._found = importlib.import_module(self.module)
        return self._found

    @property
    def narrators(self) -> Mapping[type[Event], Narrator]:
        table: Mapping[type[Event], Narrator] = self._tables().NARRATORS
        return table

    @property
    def phases(self) -> Mapping[type[Event], Phase]:
        table: Mapping[type[Event], Phase] = self._tables().PHASES
        return table

    def __repr__(self) -> str:
        return f"StoryTables({self.module!r})"


class Victory(msgspec.Struct, frozen=True, kw_only=True):
    """A game its rules end: ``winner`` is None when nobody is left standing (T3)."""

    winner: str | None


class Refusal(msgspec.Struct, frozen=True, kw_only=True):
    """Why a ruleset refuses a command of another ruleset: the rule at stake, in a sentence."""

    rule: str
    reason: str


#: a ruleset's end test: the victory the state shows, or None while the game goes on
EndTest = Callable[[GameState], Victory | None]


class Ruleset(msgspec.Struct, frozen=True, kw_only=True):
    """One ruleset: its commands and events, how a game of it starts, plays and ends.

    Values are Structs rather than dataclasses: a dataclass is compiled when its module is
    imported (and imports ``dataclasses``), which every command paid before its first line
    (the CLI's start-up)."""

    name: str
    #: every command a game of this ruleset takes, with its decider (shared ones included)
    deciders: Mapping[type[Command], Decide]
    #: commands of other rulesets it refuses citing a rule (any other is refused naming the ruleset)
    refusals: Mapping[type[Command], Refusal]
    #: every event that changes the state, with its evolver (shared ones included)
    evolvers: Mapping[type[Event], Evolve]
    #: events logged for the record whose effect other events carry (a die, a shot):
    #: folding skips them; any event in neither table is a corrupt log
    ignored: frozenset[type[Event]]
    #: the state a game of this ruleset starts from, before its GameCreated is folded on it
    initial_state: GameState
    end_test: EndTest
    #: this ruleset's own check of a PlaceShip, after the board's (B4, M)
    placement: PlacementRule
    #: ResolveTurn played: its events (what its decider returns: the dice contributions' of a
    #: contributed game, D3, then the turn's) and the state the turn settles on before its
    #: TurnEnded (re-derivation takes that state rather than fold the turn again)
    play_turn: PlayTurn
    #: the pure half of ``scenario``: the document in, the commands out
    scenario: ScenarioBuilder
    #: where ``explain``'s tables are: :attr:`narrators` and :attr:`phases`
    story: StoryTables
    #: its answers to the questions the shells and the shared rules ask (who must act, placement)
    asked: Questions

    @property
    def narrators(self) -> Mapping[type[Event], Narrator]:
        """How ``explain`` tells each event type of this ruleset, as one sentence."""
        return self.story.narrators

    @property
    def phases(self) -> Mapping[type[Event], Phase]:
        """The phase of the turn of each event type whose own ``phase`` field names none."""
        return self.story.phases


#: The life cycle, turn deadlines and dice contributions: every ruleset takes these commands (and
#: placements, rulings, deadlines passed and locks, through deciders given its answers).
SHARED_DECIDERS: Mapping[type[Command], Decide] = {
    CreateGame: decide_create,
    EndGame: decide_end,
    SetDeadline: decide_set_deadline,
    **CONTRIBUTION_DECIDERS,
}

#: The life cycle, rulings and ships on the board: every ruleset folds these events.
SHARED_EVOLVERS: Mapping[type[Event], Evolve] = {
    GameCreated: evolve_created,
    GameEnded: evolve_ended,
    RulingRecorded: evolve_ruling,
    **BOARD_EVOLVERS,
    **CONTRIBUTION_EVOLVERS,
}

#: Events every ruleset logs for the record only: a die's value is carried by the outcome it
#: decides, a turn's start by its events, a collision and a push by the moves and damage; a loss
#: recorded by ``repair`` changes nothing (the game goes on from the events that remain); a deadline
#: set or passed is the shell's schedule, the turn's outcome carries its effect (core.deadlines).
SHARED_IGNORED: frozenset[type[Event]] = frozenset(
    {DieRolled, TurnStarted, CollisionOccurred, ShipPushed, LossRecorded, DeadlineSet, DeadlinePassed}
)


def compose_ruleset(
    name: str,
    *,
    commands: Mapping[type[Command], Decide],
    evolvers: Mapping[type[Event], Evolve],
    ignored: frozenset[type[Event]],
    end_test: EndTest,
    placement: PlacementRule,
    play_turn: PlayTurn,
    scenario: ScenarioBuilder,
    refusals: Mapping[type[Command], Refusal],
    story: StoryTables,
    asked: Questions,
    initial_state: GameState = EMPTY,
) -> Ruleset:
    """A ruleset from its own parts and the shared ones: its deciders are the shared ones, PlaceShip
    through ``placement`` (and, with RecordRuling, LockTurn and PassDeadline, given the answers
    ``asked``), ResolveTurn (and PassDeadline, which may resolve the turn) through
    the events of ``play_turn`` (after the dice contributions of a contributed game, D3), then its own
    ``commands``; each refused while a contributed game's turn is locked, but for the few a locked
    turn takes (D3).

    ``evolvers`` and ``ignored`` come whole (shared ones included), as the ruleset's turn folds
    with the very same tables before the value exists.
    """
    play_with_contributions = contributed_play(play_turn, evolvers, ignored)
    resolve_turn = events_of(play_with_contributions)
    deciders: dict[type[Command], Decide] = {
        **SHARED_DECIDERS,
        PlaceShip: placing_with(placement, asked),
        RecordRuling: ruling_with(asked),
        LockTurn: locking_with(asked),
        ResolveTurn: resolve_turn,
        PassDeadline: passing_with(resolve_turn, asked),
        **commands,
    }
    # D3: once a contributed game's turn is locked, its inputs are final
    deciders = {kind: refused_when_locked(kind, handler) for kind, handler in deciders.items()}
    return Ruleset(
        name=name,
        deciders=deciders,
        refusals=refusals,
        evolvers=evolvers,
        ignored=ignored,
        initial_state=initial_state,
        end_test=end_test,
        placement=placement,
        play_turn=play_with_contributions,
        scenario=scenario,
        story=story,
        asked=asked,
    )


def events_of(play_turn: PlayTurn) -> Decide:
    """The ResolveTurn decider of a ruleset's turn: the events of ``play_turn``."""

    def resolve_turn(state: GameState, command: ResolveTurn, dice: DiceSource) -> list[Event]:
        return play_turn(state, command, dice).events

    return resolve_turn
