"""The blockade ruleset as a value: ships placed without buying, four tokens a turn (P1-P3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mortecouille.core.blockade.commands import (
    BLOCKADE_EVOLVERS,
    BLOCKADE_IGNORED,
    decide_tokens,
    no_victory,
    place_blockade_ship,
    play_blockade_turn,
)
from mortecouille.core.blockade.questions import BLOCKADE_QUESTIONS
from mortecouille.core.fleet.commands import FLEET_DECIDERS
from mortecouille.core.ruleset import Refusal, StoryTables, compose_ruleset
from mortecouille.core.turn_commands import GiveOrder, GiveTokens, WithdrawOrder

if TYPE_CHECKING:
    from mortecouille.core.scenario import Scenario, ScenarioPlan

_BOUGHT = Refusal(rule="F1", reason="ships and options are bought in mortecouille only")


def build_scenario(scenario: Scenario) -> ScenarioPlan:
    """The pure half of ``scenario``: its module (and the scenario documents' shared checks) is
    imported when a scenario is read, since folding or showing a game never needs it."""
    from mortecouille.core.blockade.scenario import build_blockade_scenario

    return build_blockade_scenario(scenario)


BLOCKADE = compose_ruleset(
    "blockade",
    commands={GiveTokens: decide_tokens},
    evolvers=BLOCKADE_EVOLVERS,
    ignored=BLOCKADE_IGNORED,
    end_test=no_victory,
    placement=place_blockade_ship,
    play_turn=play_blockade_turn,
    # explain's tables, imported when a story is told (see StoryTables)
    story=StoryTables("mortecouille.core.blockade.narrators"),
    scenario=build_scenario,
    asked=BLOCKADE_QUESTIONS,
    refusals={
        **{
            command: Refusal(
                rule="T1", reason="orders are for mortecouille games; blockade ships take tokens (P1)"
            )
            for command in (GiveOrder, WithdrawOrder)
        },
        **{command: _BOUGHT for command in FLEET_DECIDERS},
    },
)
