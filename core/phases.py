"""The phases of a turn (T2, P1), each named once: the id the log records and the name a reader sees.

The ``id`` is what events carry in their ``phase`` field and what a die's identity (D2)
holds, so it feeds the seeded dice and the golden logs: an id never changes. The
``name`` is what ``explain`` shows; a turn of several rounds (blockade, P1) may call
the phase otherwise (``round_name``).

A few phases are ``explain``'s alone, for event types without a phase field of their own
(the set-up, the fleets, orders and rulings between turns). The fire-check phases of X1
(``1``, ``2a``...) are not phases of the turn: they stay with the fire rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, NamedTuple


class Phase(NamedTuple):
    """One phase: its ``id`` in logs and die identities, its ``name`` for a reader."""

    id: str
    name: str
    #: the name in a turn of several rounds (blockade, P1), when it differs from ``name``
    round_name: str | None = None

    def name_in(self, rounds: int) -> str:
        """The name a reader sees in a turn of ``rounds`` rounds."""
        return self.round_name if rounds > 1 and self.round_name is not None else self.name


#: explain's phases for what happens outside a turn's resolution
SET_UP: Final = Phase("set-up", "set-up")
FLEETS: Final = Phase("fleets", "fleets")
ORDERS: Final = Phase("orders", "orders")
RULING: Final = Phase("ruling", "ruling")
START: Final = Phase("start", "start")

#: the phases of a mortecouille turn (T2), in order; blockade rounds play MOVE, WIND and END (P1)
UPKEEP: Final = Phase("upkeep", "upkeep")
WIND: Final = Phase("wind", "wind")
COMBAT: Final = Phase("combat", "combat")
MOVE: Final = Phase("move", "movement")
END: Final = Phase("end", "end", round_name="end of round")

#: the movement phase as mortecouille records its wind points spent moving and the dice of
#: collisions in it (the moves themselves record MOVE)
MOVEMENT: Final = Phase("movement", "movement")
#: the wind phase as mortecouille records the dice of its collisions (the wind dice record WIND)
WIND_COLLISIONS: Final = Phase("wind-phase", "wind-phase")
#: blockade applies ram and rock damage after a round's wind phase (P1): explain tells it apart
DAMAGE: Final = Phase("damage", "damage")

ALL_PHASES: Final[tuple[Phase, ...]] = (
    SET_UP, FLEETS, ORDERS, RULING, START, UPKEEP, WIND, COMBAT, MOVE, END, MOVEMENT, WIND_COLLISIONS, DAMAGE,
)  # fmt: skip

PHASES_BY_ID: Final[Mapping[str, Phase]] = {phase.id: phase for phase in ALL_PHASES}


def phase_name(phase_id: str, rounds: int = 1) -> str:
    """The name a reader sees for the phase ``phase_id``; an unknown id as itself."""
    phase = PHASES_BY_ID.get(phase_id)
    return phase_id if phase is None else phase.name_in(rounds)
