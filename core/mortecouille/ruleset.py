"""The mortecouille ruleset as a value: fleets bought and placed, orders, the full turn (T2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mortecouille.core.dice import DiceSource
from mortecouille.core.fleet.commands import FLEET_DECIDERS, place_mortecouille_ship
from mortecouille.core.life_cycle import PlayedTurn, ResolveTurn
from mortecouille.core.mortecouille.common import SetUpShip, decide_set_up
from mortecouille.core.mortecouille.evolution import MORTECOUILLE_EVOLVERS, MORTECOUILLE_IGNORED
from mortecouille.core.mortecouille.questions import MORTECOUILLE_QUESTIONS
from mortecouille.core.ruleset import Refusal, StoryTables, Victory, compose_ruleset
from mortecouille.core.state import GameState
from mortecouille.core.turn_commands import GiveOrder, GiveTokens, WithdrawOrder
from mortecouille.events.base import Event

if TYPE_CHECKING:
    from mortecouille.core.scenario import Scenario, ScenarioPlan


def play_turn(state: GameState, command: ResolveTurn, dice: DiceSource) -> PlayedTurn:
    """The mortecouille turn (T2): its module (fire, movement, collisions, gunnery, upkeep), the
    bulk of the rules, is imported on the first resolve, since folding or showing a game never
    needs it (the CLI's start-up)."""
    from mortecouille.core.mortecouille.turn import play_mortecouille_turn

    return play_mortecouille_turn(state, command, dice)


def give_order(state: GameState, command: GiveOrder, dice: DiceSource) -> list[Event]:
    """T1: the order checks and shot measures (the gunnery tables) are imported on the first
    order given, since folding or showing a game never needs them (the CLI's start-up)."""
    from mortecouille.core.mortecouille.order_checks import decide_give_order

    return decide_give_order(state, command, dice)


def withdraw_order(state: GameState, command: WithdrawOrder, dice: DiceSource) -> list[Event]:
    """T1, imported with the order checks (see :func:`give_order`)."""
    from mortecouille.core.mortecouille.order_checks import decide_withdraw_order

    return decide_withdraw_order(state, command, dice)


def build_scenario(scenario: Scenario) -> ScenarioPlan:
    """The pure half of ``scenario``: its module (and the scenario documents' shared checks) is
    imported when a scenario is read, since folding or showing a game never needs it."""
    from mortecouille.core.mortecouille.scenario import build_mortecouille_scenario

    return build_mortecouille_scenario(scenario)


def end_test(state: GameState) -> Victory | None:
    """T3, imported with the turn's module (see :func:`play_turn`)."""
    from mortecouille.core.mortecouille.turn import victory

    return victory(state)


MORTECOUILLE = compose_ruleset(
    "mortecouille",
    commands={
        **FLEET_DECIDERS,
        GiveOrder: give_order,
        WithdrawOrder: withdraw_order,
        SetUpShip: decide_set_up,
    },
    evolvers=MORTECOUILLE_EVOLVERS,
    ignored=MORTECOUILLE_IGNORED,
    end_test=end_test,
    placement=place_mortecouille_ship,
    play_turn=play_turn,
    # explain's tables, imported when a story is told (see StoryTables)
    story=StoryTables("mortecouille.core.mortecouille.narrators"),
    scenario=build_scenario,
    asked=MORTECOUILLE_QUESTIONS,
    refusals={
        GiveTokens: Refusal(
            rule="P1", reason="tokens are for blockade games; mortecouille ships take orders (T1)"
        )
    },
)
