"""A ship's condition: the fields a state's ship, a scenario's ship and its set-up event share.

Declared once here (events may not import core): ``ShipState`` (core/state.py) and the
scenario's ``ShipSpec`` (core/scenario.py) subclass :class:`ShipCondition`; the
``ShipSetUp`` event, which cannot also subclass it (a class may have only one base with
fields of its own, and an event's is :class:`~mortecouille.events.base.Event`), is built
from the same declarations by :func:`event_with_condition`.
"""

from typing import Any

import msgspec

from mortecouille.events.base import Event


class ShipCondition(msgspec.Struct, frozen=True, kw_only=True):
    """How a ship is doing beyond where it is: its options, the damage it has taken (blockade:
    ram and rock damage in small shots, P2-P3; mortecouille: structure lost, C, S, X, W), wind
    points (A1-A3), fire (X1-X3), catapult countdown (K), burst streak (S7), fireship (C6)."""

    options: tuple[str, ...] = ()
    damage: float = 0
    wind: int = 0
    fire: str | None = None
    countdown: int | None = None
    bursts_in_a_row: int = 0
    catapult_hits: int = 0
    fireship: bool = False


def event_with_condition(own: type[Event], *, name: str, tag: str) -> type[Event]:
    """An event type with ``own``'s fields and :class:`ShipCondition`'s, in that order except that
    ``own``'s fields with a default come last, as if declared so by hand (they are in the log)."""
    declared = [f for f in msgspec.structs.fields(own) if f.name not in Event.__struct_fields__]
    ordered = [
        *(f for f in declared if f.required),
        *msgspec.structs.fields(ShipCondition),
        *(f for f in declared if not f.required),
    ]
    built = msgspec.defstruct(
        name, [_as_defstruct(f) for f in ordered], bases=(Event,), tag=tag, frozen=True, module=own.__module__
    )
    built.__doc__ = own.__doc__
    assert issubclass(built, Event)
    return built


def _as_defstruct(field: msgspec.structs.FieldInfo) -> tuple[str, Any] | tuple[str, Any, Any]:
    if field.default is not msgspec.NODEFAULT:
        return (field.name, field.type, field.default)
    if field.default_factory is not msgspec.NODEFAULT:
        return (field.name, field.type, msgspec.field(default_factory=field.default_factory))
    return (field.name, field.type)
