"""Dice (rules D1-D2): where every die's value comes from, and the event that records it.

A decider never calls a random generator. It asks a :class:`DiceCup` for a die
by its identity (turn, phase, ship, purpose); the cup numbers the ship's rolls
for that purpose in that phase, takes the value from a :class:`DiceSource` and
records a :class:`DieRolled` event. Sources:

* :class:`SeededDice` derives each value from the game's secret seed and the
  roll's identity with HMAC-SHA256 (D2), so the outcome never depends on the
  order ships are processed in, on the clock, or on Python's ``random``;
* :class:`TableDice` takes the values the referee typed, in order, or asks for
  each one through a callback the CLI supplies;
* :class:`FixedDice` takes listed values per ship and purpose, then falls back
  (scenarios);
* :class:`LoggedDice` replays the values recorded in a log (``verify``).
"""

from __future__ import annotations

import hashlib
import hmac
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Final, Protocol

import msgspec

from mortecouille.core.errors import BadInput
from mortecouille.events.game import DieRolled

#: D1: every die of the rules is a d6.
DIE_SIDES: Final = 6


def check_die(value: int, field: str = "dice") -> None:
    """Refuse a value no die of the rules can show (D1), naming ``field``."""
    if not 1 <= value <= DIE_SIDES:
        raise BadInput(field, f"{value} is not a d{DIE_SIDES} value")


#: The purposes of the dice rule D1 names, each with the rule that says what the die is for
#: (``explain`` cites it); a die with any other purpose is a programming error.
PURPOSES: Final[Mapping[str, str]] = {
    "wind": "A1", "wind-reroll": "A1", "shot": "S2", "catapult": "K", "fire": "X1",
    "capsize": "C2", "crossing": "C2", "crossing-damage": "C2", "side-contact": "C2",
}  # fmt: skip


class RollIdentity(msgspec.Struct, frozen=True):
    """Everything that names one die (D2). ``index`` counts within (turn, phase, ship, purpose)."""

    game: str
    turn: int
    phase: str
    ship: str | None
    purpose: str
    index: int
    sides: int = DIE_SIDES

    def describe(self) -> str:
        who = self.ship if self.ship is not None else "table"
        return f"turn {self.turn}, {self.phase}: {who}, {self.purpose} #{self.index + 1}, 1d{self.sides}"


class DiceSource(Protocol):
    """Gives one die's value and the source to record. ``label`` describes it for prompts."""

    def value(self, identity: RollIdentity, label: str) -> tuple[int, str]: ...


def seed_commitment(seed: str) -> str:
    """The SHA-256 a seeded game publishes in its first event (D2)."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def seeded_value(seed: str, identity: RollIdentity) -> int:
    """A die value derived from the seed and the roll's identity alone (D2).

    Rejection sampling over successive HMAC blocks keeps every face exactly
    equally likely (a plain modulo would favour low faces).
    """
    message = msgspec.json.encode(
        [
            identity.game,
            identity.turn,
            identity.phase,
            identity.ship,
            identity.purpose,
            identity.index,
        ]
    )
    key = seed.encode("utf-8")
    limit = (1 << 64) - ((1 << 64) % identity.sides)
    counter = 0
    while True:
        block = hmac.new(key, message + counter.to_bytes(4, "big"), hashlib.sha256).digest()
        for offset in range(0, 32, 8):
            number = int.from_bytes(block[offset : offset + 8], "big")
            if number < limit:
                return number % identity.sides + 1
        counter += 1


class SeededDice:
    def __init__(self, seed: str) -> None:
        self.seed = seed

    def value(self, identity: RollIdentity, label: str) -> tuple[int, str]:
        return seeded_value(self.seed, identity), "seeded"


def check_die_value(value: int, sides: int, field: str) -> int:
    if not 1 <= value <= sides:
        raise BadInput(field, f"a d{sides} shows 1 to {sides}, not {value}")
    return value


class TableDice:
    """Values the referee read off the table's physical dice (D1)."""

    def __init__(
        self,
        values: Iterable[int] = (),
        ask: Callable[[RollIdentity, str], int] | None = None,
    ) -> None:
        self.pending = list(values)
        self.ask = ask

    def value(self, identity: RollIdentity, label: str) -> tuple[int, str]:
        if self.pending:
            return check_die_value(self.pending.pop(0), identity.sides, "--dice"), "table"
        if self.ask is not None:
            return check_die_value(self.ask(identity, label), identity.sides, "die"), "table"
        raise BadInput(
            "--dice",
            f"table dice: no value given for {label} ({identity.describe()}); "
            "pass more values with --dice or answer the prompt",
        )


class FixedDice:
    """Listed values per (ship, purpose), used in order; every other die from ``fallback``."""

    def __init__(self, fixed: Mapping[tuple[str | None, str], Iterable[int]], fallback: DiceSource):
        self.fixed = {key: list(values) for key, values in fixed.items()}
        self.fallback = fallback

    def value(self, identity: RollIdentity, label: str) -> tuple[int, str]:
        queue = self.fixed.get((identity.ship, identity.purpose))
        if queue:
            return check_die_value(queue.pop(0), identity.sides, "dice.fixed"), "fixed"
        return self.fallback.value(identity, label)


class LoggedDice:
    """The dice a log recorded, looked up by identity, for re-deriving outcomes (``verify``)."""

    def __init__(self, rolls: Iterable[DieRolled], game: str) -> None:
        self.rolls: dict[tuple[int, str, str | None, str, int], DieRolled] = {
            (r.turn, r.phase, r.ship, r.purpose, r.index): r for r in rolls
        }
        self.game = game

    def value(self, identity: RollIdentity, label: str) -> tuple[int, str]:
        key = (identity.turn, identity.phase, identity.ship, identity.purpose, identity.index)
        roll = self.rolls.get(key)
        if roll is None:
            raise BadInput("log", f"the rules need a die the log does not hold: {label}")
        return roll.value, roll.source


class DiceCup:
    """Hands dice to one decision and keeps the DieRolled events it produced, in order."""

    def __init__(self, source: DiceSource, game: str, turn: int) -> None:
        self.source = source
        self.game = game
        self.turn = turn
        self.events: list[DieRolled] = []
        self._counters: defaultdict[tuple[str, str | None, str], int] = defaultdict(int)

    def roll(self, phase: str, ship: str | None, purpose: str, label: str, sides: int = DIE_SIDES) -> int:
        if purpose not in PURPOSES:
            raise ValueError(f"unknown die purpose {purpose!r}")
        key = (phase, ship, purpose)
        identity = RollIdentity(self.game, self.turn, phase, ship, purpose, self._counters[key], sides)
        self._counters[key] += 1
        value, source = self.source.value(identity, label)
        self.events.append(
            DieRolled(
                turn=self.turn,
                phase=phase,
                ship=ship,
                purpose=purpose,
                index=identity.index,
                sides=sides,
                value=value,
                source=source,
            )
        )
        return value

    def roll_many(self, count: int, phase: str, ship: str | None, purpose: str, label: str) -> list[int]:
        return [self.roll(phase, ship, purpose, label) for _ in range(count)]

    def take_events(self) -> list[DieRolled]:
        taken, self.events = self.events, []
        return taken
