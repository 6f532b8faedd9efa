"""The event base class and the registry every event type joins.

Every line of a game log is one event: a msgspec Struct tagged by ``type``.
The envelope (``seq``, ``prev``, ``hash``) and the schema version ``v`` are
fields of the base class so that one decode gives the whole line, which keeps
the fold cheap. Events built by the decider carry placeholder envelope values
until the store stamps them on append.

Adding an event type is declaring a subclass with a ``tag`` and decorating it
with :func:`register`; nothing else needs to change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

GENESIS_HASH = "0" * 64


class Event(msgspec.Struct, tag_field="type", kw_only=True, frozen=True, gc=False):
    """One append-only fact. Subclasses set ``tag``; a new schema version redeclares ``v``."""

    seq: int = -1
    prev: str = ""
    hash: str = ""
    v: int = 1


E = TypeVar("E", bound=type[Event])

EVENT_TYPES: dict[str, type[Event]] = {}

#: Current schema version of each tag: the default of its ``v`` field.
CURRENT_VERSIONS: dict[str, int] = {}

#: ``(type tag, version) -> function`` turning a raw line of that version into
#: the next version's raw line; chained until the current version is reached.
UPCASTERS: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {}


def register(cls: E) -> E:
    """Add an event class to the log's tagged union."""
    tag = cls.__struct_config__.tag
    if not isinstance(tag, str):
        raise TypeError(f"{cls.__name__} needs an explicit string tag")
    if tag in EVENT_TYPES:
        raise TypeError(f"event tag {tag!r} registered twice")
    EVENT_TYPES[tag] = cls
    version = next(f.default for f in msgspec.structs.fields(cls) if f.name == "v")
    CURRENT_VERSIONS[tag] = int(version)
    return cls


def upcaster(
    tag: str, from_version: int
) -> Callable[[Callable[[dict[str, Any]], dict[str, Any]]], Callable[[dict[str, Any]], dict[str, Any]]]:
    """Declare how a ``from_version`` line of ``tag`` becomes a ``from_version + 1`` line."""

    def decorate(
        fn: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> Callable[[dict[str, Any]], dict[str, Any]]:
        UPCASTERS[(tag, from_version)] = fn
        return fn

    return decorate
