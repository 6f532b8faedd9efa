"""The log's schema in one table: every event type, its current version, and the upcasters.

The codec builds its decoder from :data:`EVENT_CLASSES` once; the tag table and the current
versions are derived from it, so an event type is declared in exactly one place (its class) and
listed in exactly one place (here). A class missing from the table cannot be decoded, and
``tests/test_schema_evolution.py`` fails on every ``Event`` subclass of this package left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from mortecouille.events.base import Event
from mortecouille.events.blockade import TokensGiven
from mortecouille.events.combat import (
    BecameFireship,
    BurstStreakChanged,
    CatapultHitsTaken,
    CountdownChanged,
    FireChecked,
    FireScheduled,
    ShotFired,
    ShotNotFired,
)
from mortecouille.events.deadlines import DeadlinePassed, DeadlineSet
from mortecouille.events.dice import (
    DiceContributionAbsent,
    DiceContributionCommitted,
    DiceContributionRevealed,
    TurnLocked,
)
from mortecouille.events.fleet import FleetEquipped, FleetSealed, ShipBought, ShipEquipped, ShipWithdrawn
from mortecouille.events.game import (
    DieRolled,
    GameCreated,
    GameEnded,
    LossRecorded,
    TurnEnded,
    TurnStarted,
    turn_started_v1_to_v2,
)
from mortecouille.events.mortecouille import ShipSetUp, WindPointsChanged
from mortecouille.events.mortecouille_movement import FireshipExplosion, MoveUnaffordable, WreckCrossed
from mortecouille.events.movement import (
    CollisionOccurred,
    DamageTaken,
    ShipMoved,
    ShipPlaced,
    ShipPushed,
    ShipSunk,
)
from mortecouille.events.orders import OrderGiven, OrderWithdrawn
from mortecouille.events.rulings import RulingRecorded

#: Every event type a log may hold, grouped by what they record.
EVENT_CLASSES: tuple[type[Event], ...] = (
    # a game's life cycle and its dice, both rulesets
    GameCreated,
    DieRolled,
    TurnStarted,
    TurnEnded,
    GameEnded,
    # a loss the referee's repair recorded, both rulesets
    LossRecorded,
    # the dice nobody can foresee (D3), both rulesets
    DiceContributionCommitted,
    TurnLocked,
    DiceContributionRevealed,
    DiceContributionAbsent,
    # ships on the board, both rulesets
    ShipPlaced,
    ShipMoved,
    ShipPushed,
    CollisionOccurred,
    DamageTaken,
    ShipSunk,
    # referee rulings
    RulingRecorded,
    # turn deadlines set by the game service's referee, both rulesets
    DeadlineSet,
    DeadlinePassed,
    # blockade orders
    TokensGiven,
    # mortecouille fleets
    ShipBought,
    ShipEquipped,
    FleetEquipped,
    FleetSealed,
    ShipWithdrawn,
    # the mortecouille turn
    OrderGiven,
    OrderWithdrawn,
    WindPointsChanged,
    ShipSetUp,
    MoveUnaffordable,
    WreckCrossed,
    FireshipExplosion,
    FireChecked,
    ShotFired,
    ShotNotFired,
    CatapultHitsTaken,
    CountdownChanged,
    BurstStreakChanged,
    FireScheduled,
    BecameFireship,
)

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


def event_tag(cls: type[Event]) -> str:
    """The ``type`` value of ``cls``'s log lines."""
    tag = cls.__struct_config__.tag
    if not isinstance(tag, str):
        raise TypeError(f"{cls.__name__} needs an explicit string tag")
    return tag


def _current_version(cls: type[Event]) -> int:
    """The schema version ``cls`` writes: the default of its ``v`` field.

    Read from the class's own field and default tuples (defaults belong to the last fields), not
    ``msgspec.structs.fields``, which resolves every annotation of every event class at each
    command's start-up to give this one number."""
    names, defaults = cls.__struct_fields__, cls.__struct_defaults__
    return int(defaults[names.index("v") - (len(names) - len(defaults))])


def _by_tag(classes: tuple[type[Event], ...]) -> dict[str, type[Event]]:
    table: dict[str, type[Event]] = {}
    for cls in classes:
        tag = event_tag(cls)
        if tag in table:
            raise TypeError(f"event tag {tag!r} is used by {table[tag].__name__} and {cls.__name__}")
        table[tag] = cls
    return table


#: ``type`` tag -> event class.
EVENT_TYPES: Mapping[str, type[Event]] = MappingProxyType(_by_tag(EVENT_CLASSES))

#: Current schema version of each tag: the default of its ``v`` field.
CURRENT_VERSIONS: Mapping[str, int] = MappingProxyType(
    {tag: _current_version(cls) for tag, cls in EVENT_TYPES.items()}
)

#: ``(type tag, version) -> function`` turning a raw line of that version into the next
#: version's raw line; chained until the current version is reached.
UPCASTERS: Mapping[tuple[str, int], Upcaster] = MappingProxyType(
    {
        ("turn-started", 1): turn_started_v1_to_v2,
    }
)
