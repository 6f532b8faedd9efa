"""Events of the mortecouille turn that several phases share (A1-A3, N, T1)."""

from __future__ import annotations

from mortecouille.events.base import Event


class WindPointsChanged(Event, tag="wind-points", frozen=True):
    """A ship's wind points changed: gained (A1), spent (A3, N) or lost by idling (T1)."""

    turn: int
    phase: str
    ship: str
    delta: int
    points: int
    reason: str
    rules: tuple[str, ...] = ()


class ShipSetUp(Event, tag="ship-set-up", frozen=True):
    """A scenario's ship, put on the board in a given condition without buying it.

    Only ``scenario`` writes it (architecture.md, scenario format): a real game's
    ships are bought (F) and placed.
    """

    ship: str
    kind: str
    owner: str | None
    at: tuple[int, int]
    facing: str
    options: tuple[str, ...] = ()
    damage: float = 0
    wind: int = 0
    fire: str | None = None
    countdown: int | None = None
    bursts_in_a_row: int = 0
    catapult_hits: int = 0
    fireship: bool = False
    rules: tuple[str, ...] = ("scenario",)
