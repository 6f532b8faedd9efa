"""Events of the mortecouille movement and board wind phases (A3, N, C2, C6).

Moves, pushes, collisions, damage and sinkings use the shared events of
:mod:`mortecouille.events.movement`; the ones here record what only mortecouille has: a move
the ship could not pay for, a bow ship crossing the wreck of the side ship it
sank, and a fireship exploding against a ship.

Positions come from ``ShipMoved``, losses from ``DamageTaken``, sinkings from
``ShipSunk``. ``FireshipExplosion`` is the turn's cue to schedule a fire check for
``ship`` next turn (C6); the turn resolution folds it into its own fire event. From
the 2026.2 rules edition it also spends the fireship's barrels (it sails on and never
explodes again); in 2026.1 it changes nothing by itself, the fireship's ``ShipSunk``
follows.
"""

from mortecouille.events.base import Event

Square = tuple[int, int]


class MoveUnaffordable(Event, tag="move-unaffordable", frozen=True):
    """A ship ordered to advance or manoeuvre held fewer wind points than the move costs:
    it does not move, keeps its points and is a stationary ship for the movement rules (A3, N).

    ``intent`` is ``"advance"`` or the manoeuvre, e.g. ``"maneuver 1/4 right sailing"``.
    """

    turn: int
    phase: str
    ship: str
    intent: str
    points: int
    cost: int
    rules: tuple[str, ...] = ()


class WreckCrossed(Event, tag="wreck-crossed", frozen=True):
    """A bow ship carries on over the side ship it sank in a collision (C2).

    ``entered`` is the square it carried on into, or ``None`` when it could not enter
    it (already there, a rock or the edge, another ship there, or another crossing
    ship aiming at it); it pays the crossing losses either way (``DamageTaken``).
    """

    turn: int
    round: int
    phase: str
    step: int
    ship: str
    wreck: str
    entered: Square | None
    rules: tuple[str, ...] = ()


class FireshipExplosion(Event, tag="fireship-explosion", frozen=True):
    """``fireship`` exploded against ``ship`` (C6): ``ship`` makes a fire check next turn.

    The losses are logged as ``DamageTaken`` (cause ``"explosion"``); in the 2026.1 edition the
    fireship's end follows as ``ShipSunk``, from 2026.2 it sails on with its barrels spent.
    Scheduling the fire check is left to the turn resolution.
    """

    turn: int
    fireship: str
    ship: str
    rules: tuple[str, ...] = ()
