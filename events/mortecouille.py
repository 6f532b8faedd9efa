"""Events of the mortecouille turn that several phases share (A1-A3, N, T1)."""

from typing import TYPE_CHECKING

from mortecouille.events.base import Event
from mortecouille.events.condition import ShipCondition, event_with_condition


class WindPointsChanged(Event, tag="wind-points", frozen=True):
    """A ship's wind points changed: gained (A1), spent (A3, N) or lost by idling (T1)."""

    turn: int
    phase: str
    ship: str
    delta: int
    points: int
    reason: str
    rules: tuple[str, ...] = ()


class _ShipSetUpOwnFields(Event, frozen=True):
    """A scenario's ship, put on the board in a given condition without buying it.

    Only ``scenario`` writes it (architecture.md, scenario format): a real game's
    ships are bought (F) and placed.
    """

    ship: str
    kind: str
    owner: str | None
    at: tuple[int, int]
    facing: str
    rules: tuple[str, ...] = ("scenario",)


if TYPE_CHECKING:
    # What the class below is at run time, for the type checker (which cannot follow defstruct).
    class ShipSetUp(_ShipSetUpOwnFields, ShipCondition, frozen=True):
        pass

else:
    ShipSetUp = event_with_condition(_ShipSetUpOwnFields, name="ShipSetUp", tag="ship-set-up")
