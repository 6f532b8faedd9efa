"""Mortecouille orders (rule T1) as they are logged: the order types and ``OrderGiven``.

An order set is everything one ship was told to do in one turn: its actions
(advance, manoeuvre, attack, become a fireship), or ``idle``, plus one catapult
shot per catapult, which is not an action. Each order is a small tagged Struct,
so a log line reads like ``{"order": "attack", "position": "port", ...}``.
Field values are plain strings; the decider checks them (mortecouille.core.mortecouille.orders) and
names the field at fault.
"""

import msgspec

from mortecouille.events.base import Event


class Advance(msgspec.Struct, tag="advance", tag_field="order", frozen=True):
    """Move one square ahead when the wind points allow it (A3)."""


class Idle(msgspec.Struct, tag="idle", tag_field="order", frozen=True):
    """Explicitly do nothing this turn (T1); the ship loses its wind points."""


class Maneuver(msgspec.Struct, tag="maneuver", tag_field="order", frozen=True, kw_only=True):
    """Turn ``turn`` ("1/8", "1/4", "1/2") to ``side`` ("left", "right"), at rest or sailing (N)."""

    turn: str
    side: str
    sailing: bool = False


class Attack(msgspec.Struct, tag="attack", tag_field="order", frozen=True, kw_only=True):
    """Fire the cannons of ``position`` at ``target``; ``mode`` "normal" or "burst" (S1-S7)."""

    position: str
    target: str
    mode: str = "normal"


class CatapultShot(msgspec.Struct, tag="catapult", tag_field="order", frozen=True, kw_only=True):
    """One catapult shot at ``target`` (K): not an action, one per catapult."""

    target: str


class BecomeFireship(msgspec.Struct, tag="fireship", tag_field="order", frozen=True):
    """Turn the ship into a fireship from next turn (C6)."""


Order = Advance | Idle | Maneuver | Attack | CatapultShot | BecomeFireship


class OrderSet(msgspec.Struct, frozen=True, kw_only=True):
    """A ship's orders for ``turn``. A set from an earlier turn counts as no orders."""

    turn: int
    actions: tuple[Order, ...]


class OrderGiven(Event, tag="order-given", frozen=True):
    """The whole order set of ``ship`` for ``turn`` (T1); ``replaced`` when it replaced an earlier one."""

    turn: int
    ship: str
    actions: tuple[Order, ...]
    replaced: bool = False
    rules: tuple[str, ...] = ("T1",)


class OrderWithdrawn(Event, tag="order-withdrawn", frozen=True):
    """``ship``'s orders for ``turn`` were taken back before the turn was resolved (T1): the ship
    has no orders again, as if none had been given (an event, never an erasure)."""

    turn: int
    ship: str
    rules: tuple[str, ...] = ("T1",)
