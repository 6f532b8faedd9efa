"""Outcome events of a mortecouille turn outside movement: fire on board (X), cannon and
catapult shots (S, K), burst cooldowns (S7), catapult countdowns (K) and fireships (C6).

Damage itself is always a ``DamageTaken`` (mortecouille.events.movement) with its cause
("fire", "wear", "shot", "catapult"), and leaving the game a ``ShipSunk``.
"""

from mortecouille.events.base import Event


class FireChecked(Event, tag="fire-checked", frozen=True):
    """A fire check at upkeep (X1): ``phase`` checked with ``die``; ``next_phase`` is next
    turn's (None: the fire is out or the crew abandoned the ship)."""

    turn: int
    ship: str
    phase: str
    die: int
    out: bool
    damage: int
    next_phase: str | None
    abandoned: bool
    rules: tuple[str, ...] = ("X1",)


class ShotFired(Event, tag="shot-fired", frozen=True):
    """One cannon volley or catapult shot (S1-S6, K).

    ``weapon`` is a firing position (port, starboard, bow, stern) or "catapult";
    ``mode`` is "normal", "burst" or "catapult"; ``cannons`` is 0 for a catapult.
    ``needed`` is the total to reach, or "hit"/"miss" when automatic (no dice
    thrown then). ``damage`` is the structure the hit costs the target, applied
    after every shot of the turn (a ``DamageTaken`` each); ``flaming`` tells the
    hit sets the target on fire (X1).
    """

    turn: int
    ship: str
    weapon: str
    target: str
    distance: int
    cannons: int
    mode: str
    dice: tuple[int, ...]
    bonus: int
    needed: int | str
    hit: bool
    damage: int
    flaming: bool = False
    rules: tuple[str, ...] = ()


class ShotNotFired(Event, tag="shot-not-fired", frozen=True):
    """An ordered shot that could not be fired at combat time, and why (``rules``)."""

    turn: int
    ship: str
    weapon: str
    target: str
    reason: str
    rules: tuple[str, ...] = ()


class CatapultHitsTaken(Event, tag="catapult-hits", frozen=True):
    """``hits`` catapult hits on ``ship`` this turn (K): its running total and countdown."""

    turn: int
    ship: str
    hits: int
    hits_total: int
    countdown: int | None
    countdown_started: bool
    rules: tuple[str, ...] = ("K",)


class CountdownChanged(Event, tag="countdown", frozen=True):
    """The end-of-turn tick of a catapult countdown (K)."""

    turn: int
    ship: str
    countdown: int
    rules: tuple[str, ...] = ("K",)


class BurstStreakChanged(Event, tag="burst-streak", frozen=True):
    """Turns in a row, up to this one, the ship fired a burst (S7): what its cooldown reads."""

    turn: int
    ship: str
    bursts_in_a_row: int
    rules: tuple[str, ...] = ("S7",)


class FireScheduled(Event, tag="fire-scheduled", frozen=True):
    """Next turn's fire phase after this turn's flaming hits (X1-X3) or explosions (C6).

    ``hitters`` lists the distinct flaming-shot ships and fireships that hit it.
    """

    turn: int
    ship: str
    phase: str | None
    hitters: tuple[str, ...]
    rules: tuple[str, ...] = ()


class BecameFireship(Event, tag="became-fireship", frozen=True):
    """The ship is a fireship from next turn on (C6)."""

    turn: int
    ship: str
    rules: tuple[str, ...] = ("C6",)
