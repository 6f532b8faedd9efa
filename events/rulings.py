"""A referee's ruling as an event: the decision, its reason and its effect on the board.

A ruling never edits the past. It is appended between commands like any other
event, cites the rules.md ID it rests on, and its adjustments are folded into
the state from that point on (mortecouille.core.rulings), so ``replay``, ``explain`` and the
board show it where it happened.
"""

import msgspec

from mortecouille.events.base import Event

Square = tuple[int, int]


class Adjustment(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One change to one ship. Exactly one of the optional fields is set.

    ``damage`` is added to the damage taken so far (negative: repaired);
    ``at``, ``facing`` and ``wind`` replace the ship's values; ``sunk`` false
    puts a sunk, abandoned or gone ship back afloat, true takes it out.
    """

    ship: str
    damage: float | None = None
    at: Square | None = None
    facing: str | None = None
    wind: int | None = None
    sunk: bool | None = None

    @property
    def change(self) -> str:
        """Which field this adjustment sets ("damage", "at", ...)."""
        for name in ("damage", "at", "facing", "wind", "sunk"):
            if getattr(self, name) is not None:
                return name
        return "nothing"


class RulingRecorded(Event, tag="ruling", frozen=True):
    """The referee decided ``text`` under rule ``rule`` before turn ``turn`` was resolved."""

    turn: int
    rule: str
    text: str
    adjustments: tuple[Adjustment, ...] = ()
    rules: tuple[str, ...] = ()
