"""The blockade scenario builder: ships placed with their kind, tokens per round (pure)."""

from __future__ import annotations

from typing import Any

from mortecouille.core.blockade.questions import BLOCKADE_QUESTIONS
from mortecouille.core.blockade.rounds import BLOCKADE_KINDS, ROUNDS_PER_TURN, TOKENS
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.errors import BadInput
from mortecouille.core.life_cycle import Command, shared_fields
from mortecouille.core.scenario import (
    Scenario,
    ScenarioPlan,
    ShipSpec,
    check_ships,
    gather,
    plan_scenario,
    raise_problems,
)
from mortecouille.core.turn_commands import GiveTokens


def build_blockade_scenario(scenario: Scenario) -> ScenarioPlan:
    """The commands of a blockade scenario; its turn plays as many rounds as the longest token list."""
    problems = check_ships(scenario, BLOCKADE_QUESTIONS.naming_rule, _check_kind)
    rounds = gather(problems, "rounds", _rounds, scenario)
    return plan_scenario(scenario, rounds or 1, place_blockade, blockade_tokens, problems)


def _check_kind(ship: ShipSpec, field: str) -> None:
    if ship.kind not in BLOCKADE_KINDS:
        raise BadInput(
            f"{field}.kind",
            "{kind!r} is not a blockade kind: {blockade_kinds}",
            kind=ship.kind,
            blockade_kinds=", ".join(BLOCKADE_KINDS),
        )


def _rounds(scenario: Scenario) -> int:
    if scenario.rounds is not None:
        if not 1 <= scenario.rounds <= ROUNDS_PER_TURN:
            raise BadInput(
                "rounds",
                "must be 1 to {rounds_per_turn}, not {rounds} (P1)",
                rounds_per_turn=ROUNDS_PER_TURN,
                rounds=scenario.rounds,
            )
        return scenario.rounds
    longest = max((len(tokens) for tokens in scenario.orders.values()), default=0)
    return max(1, min(longest, ROUNDS_PER_TURN))


def place_blockade(scenario: Scenario, ship: ShipSpec) -> Command:
    return PlaceShip(ship=ship.id, **shared_fields(ship, PlaceShip))


def blockade_tokens(scenario: Scenario, ship: str, tokens: list[Any], field: str) -> list[Command]:
    if len(tokens) > ROUNDS_PER_TURN:
        raise BadInput(
            field, "at most {rounds_per_turn} tokens, one per round (P1)", rounds_per_turn=ROUNDS_PER_TURN
        )
    problems = [
        (f"{field}[{index}]", f'{token!r} is not "F", "L", "R" or null (P1)')
        for index, token in enumerate(tokens)
        if token is not None and token not in TOKENS
    ]
    raise_problems(problems)
    return [GiveTokens(ship=ship, tokens=tuple(tokens))] if tokens else []
