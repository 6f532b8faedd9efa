"""Referee rulings: a decision recorded as an event, validated and folded purely.

A ruling cites a rule ID that rules.md defines (``RULE_IDS``) and may adjust
ships: damage up or down, position, facing, wind points, back afloat. The
decider checks every adjustment against the state (a square must be on the
board, free and not a rock; damage never below 0), so a ruling that folds is
always a position the rules could hold. Rulings are commands of their own,
appended between other commands, so they can never fall inside a turn's
resolution and ``verify`` re-derives the next turn from the adjusted state.
"""

from __future__ import annotations

from typing import Final

import msgspec

from mortecouille.core.board.geometry import (
    square_name,
)
from mortecouille.core.board.ships import check_placing_open
from mortecouille.core.board.terrain import board_index
from mortecouille.core.dice import DiceSource
from mortecouille.core.errors import BadInput, Phrase, RuleViolation, phrase
from mortecouille.core.life_cycle import Command, Decide, change_ship, ship_id_typed, ship_named
from mortecouille.core.limits import check_text
from mortecouille.core.questions import Questions
from mortecouille.core.state import GameState, ShipState
from mortecouille.events.base import Event
from mortecouille.events.rulings import Adjustment, RulingRecorded

#: The section letters of rules.md, which rules and events also cite on their own (e.g. "M", "K").
RULE_SECTIONS: Final[frozenset[str]] = frozenset("BMPFTANSKXWCD")

#: Every rule ID rules.md defines, from its bold headings (``tests/test_rulings.py`` checks
#: this against the file, so a new rule there fails the test until it is added here).
RULE_IDS: Final[frozenset[str]] = RULE_SECTIONS | frozenset(
    {
        *(f"B{n}" for n in range(1, 8)),
        "M0", "M1", "M1a", "M1b", "M1c", "M1d", "M1e",
        "M2", "M2a", "M2b", "M2c", "M2d", "M2e", "M2f",
        *(f"M{n}" for n in range(3, 9)),
        "P1", "P2", "P3",
        "F1", "F2", "F3", "F4",
        "T1", "T2", "T3",
        "A1", "A2", "A3",
        *(f"S{n}" for n in range(1, 8)),
        "X1", "X2", "X3",
        "W1", "W2", "W3",
        *(f"C{n}" for n in range(1, 7)),
        "D1", "D2", "D3",
    }
)  # fmt: skip

ADJUSTABLE: Final[tuple[str, ...]] = ("damage", "position", "facing", "wind", "sunk")
#: the largest change of damage or wind points a ruling may make: far above any ship's structure
ADJUSTMENT_MAX: Final = 1000


class RecordRuling(Command, frozen=True, kw_only=True):
    rule: str
    text: str
    adjustments: tuple[Adjustment, ...] = ()


def ruling_with(asked: Questions) -> Decide:
    """The RecordRuling decider of a ruleset answering ``asked`` (its facings, its fleets)."""

    def decide(state: GameState, command: RecordRuling, dice: DiceSource) -> list[Event]:
        return decide_ruling(state, command, dice, asked)

    return decide


def decide_ruling(state: GameState, command: RecordRuling, dice: DiceSource, asked: Questions) -> list[Event]:
    rule = _rule_id(command.rule.strip())
    if rule not in RULE_IDS:
        raise BadInput(
            "rule", "{rule_id!r} is not a rule ID of RULES.md (e.g. M3, C2, X1)", rule_id=command.rule
        )
    if not command.text.strip():
        raise BadInput("text", "say what was decided and why")
    check_text("text", command.text)
    adjustments = tuple(_ship_as_spelled(state, adjustment) for adjustment in command.adjustments)
    adjusted = state
    for index, adjustment in enumerate(adjustments):
        check_adjustment(adjusted, adjustment, asked, f"adjustments[{index}]")
        adjusted = apply_adjustment(adjusted, adjustment)
    return [
        RulingRecorded(
            turn=state.turn,
            rule=rule,
            text=command.text.strip(),
            adjustments=adjustments,
            rules=(rule,),
        )
    ]


def _rule_id(text: str) -> str:
    """The rule ID ``text`` names, case aside (``s1`` is S1, ``m1E`` is M1e), when exactly one
    does; else ``text``, for the caller to refuse."""
    if text in RULE_IDS:
        return text
    named = [rule for rule in RULE_IDS if rule.casefold() == text.casefold()]
    return named[0] if len(named) == 1 else text


def _ship_as_spelled(state: GameState, adjustment: Adjustment) -> Adjustment:
    """``adjustment`` naming its ship as the game spells it (see :func:`ship_id_typed`)."""
    ship = ship_id_typed(state, adjustment.ship)
    return adjustment if ship == adjustment.ship else msgspec.structs.replace(adjustment, ship=ship)


def check_adjustment(
    state: GameState, adjustment: Adjustment, asked: Questions, field: str = "adjustments"
) -> None:
    """Refuse an adjustment that would leave a position the rules cannot hold, naming ``field``."""
    if adjustment.at is not None:
        # a ruling's position places a ship as ``place`` does: not while fleets are secret (F3)
        what = phrase("{ship}: a ship is given a position", ship=adjustment.ship)
        check_placing_open(state, asked, what, field)
    ship = ship_named(state, adjustment.ship, field)
    if adjustment.change == "nothing":
        raise BadInput(field, "{ship}: the adjustment changes nothing", ship=adjustment.ship)
    for name in ("damage", "wind"):
        amount = getattr(adjustment, name)
        bounded = amount is None or (abs(amount) <= ADJUSTMENT_MAX and float(amount).is_integer())
        if not bounded:
            raise BadInput(
                field,
                "{ship} {name} {amount!r}: a whole number within {adjustment_max}",
                ship=ship.id,
                name=name,
                amount=amount,
                adjustment_max=ADJUSTMENT_MAX,
            )
    if adjustment.damage is not None and ship.damage + adjustment.damage < 0:
        raise BadInput(
            field, "{ship} has taken {damage:g}: damage cannot go below 0", ship=ship.id, damage=ship.damage
        )
    if adjustment.wind is not None and adjustment.wind < 0:
        raise BadInput(field, "{ship}: wind points cannot be negative (A1)", ship=ship.id)
    if adjustment.facing is not None:
        allowed = asked.facings
        if adjustment.facing not in allowed:
            raise BadInput(
                field,
                "{ship}: facing {facing} is not one of {allowed} (B2)",
                ship=ship.id,
                facing=adjustment.facing,
                allowed=allowed,
            )
    if adjustment.at is not None:
        _check_square(state, ship, adjustment.at, field)
    if adjustment.sunk is False and ship.at is None:
        raise BadInput(field, "{ship} was never placed: give it a position first", ship=ship.id)


def _check_square(state: GameState, ship: ShipState, at: tuple[int, int], field: str) -> None:
    index = board_index(state.board)
    if not index.on_board(at):
        raise RuleViolation(
            "B4",
            "{ship}: {at} is off the {width}x{height} board",
            field=field,
            ship=ship.id,
            at=at,
            width=index.width,
            height=index.height,
        )
    if at in index.rocks:
        raise RuleViolation(
            "B4", "{ship}: {square} is a rock", field=field, ship=ship.id, square=square_name(at)
        )
    for other in state.ships.values():
        if other.id != ship.id and other.afloat and other.at == at:
            raise RuleViolation(
                "M",
                "{ship}: {square} already holds {other}",
                field=field,
                ship=ship.id,
                square=square_name(at),
                other=other.id,
            )


def apply_adjustment(state: GameState, adjustment: Adjustment) -> GameState:
    ship = state.ships[adjustment.ship]
    changes: dict[str, object] = {}
    if adjustment.damage is not None:
        changes["damage"] = ship.damage + adjustment.damage
    if adjustment.at is not None:
        changes["at"] = adjustment.at
    if adjustment.facing is not None:
        changes["facing"] = adjustment.facing
    if adjustment.wind is not None:
        changes["wind"] = adjustment.wind
    if adjustment.sunk is not None:
        # Back afloat clears every way of having left the game; out means sunk (P3, W3).
        changes.update(sunk=adjustment.sunk, lost=False, gone=False)
    return change_ship(state, ship.id, **changes)


def evolve_ruling(state: GameState, event: RulingRecorded) -> GameState:
    for adjustment in event.adjustments:
        state = apply_adjustment(state, adjustment)
    return state


def describe_adjustment(adjustment: Adjustment) -> Phrase:
    """``Frig damage +3``, ``Frig to C5``: the effect as a referee says it."""
    ship = adjustment.ship
    if adjustment.damage is not None:
        return phrase("{ship} damage {damage:+g}", ship=ship, damage=adjustment.damage)
    if adjustment.at is not None:
        return phrase("{ship} moved to {square}", ship=ship, square=square_name(adjustment.at))
    if adjustment.facing is not None:
        return phrase("{ship} now faces {facing}", ship=ship, facing=adjustment.facing)
    if adjustment.wind is not None:
        return phrase("{ship} wind points set to {wind}", ship=ship, wind=adjustment.wind)
    if adjustment.sunk is not None:
        return phrase("{ship} out of the game" if adjustment.sunk else "{ship} back afloat", ship=ship)
    return phrase("{ship}: no change", ship=ship)
