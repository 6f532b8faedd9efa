"""Dice (rules D1-D3): where every die's value comes from, and the event that records it.

A decider never calls a random generator. It asks a :class:`DiceCup` for a die
by its identity (turn, phase, ship, purpose); the cup numbers the ship's rolls
for that purpose in that phase, takes the value from a :class:`DiceSource` and
records a :class:`DieRolled` event. Sources:

* :class:`SeededDice` derives each value from the game's secret seed and the
  roll's identity with HMAC-SHA256 (D2), so the outcome never depends on the
  order ships are processed in, on the clock, or on Python's ``random``; in a game
  of the ``contributed`` scheme (D3) the key of each turn is first derived from the
  seed and the players' revealed contributions (:func:`turn_key`);
* :class:`TableDice` takes the values the referee typed, in order, or asks for
  each one through a callback the CLI supplies;
* :class:`FixedDice` takes listed values per ship and purpose, then falls back
  (scenarios);
* :class:`LoggedDice` replays the values recorded in a log (``verify``).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, Protocol

import msgspec

from mortecouille.core.errors import BadInput, Phrase
from mortecouille.events.base import Event
from mortecouille.events.dice import DiceContributionRevealed
from mortecouille.events.game import DieRolled, GameCreated

#: D1: every die of the rules is a d6.
DIE_SIDES: Final = 6


def check_die(value: int, field: str = "dice") -> None:
    """Refuse a value no die of the rules can show (D1), naming ``field``."""
    if not 1 <= value <= DIE_SIDES:
        raise BadInput(field, "{value} is not a d{die_sides} value", value=value, die_sides=DIE_SIDES)


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
    """The unsalted SHA-256 seeded games published before the salt (D2); still read, and kept
    for scenarios, whose seed is written in the scenario file anyway."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def salted_commitment(seed: str, salt: str) -> str:
    """HMAC-SHA256 of ``seed`` keyed with the game's own random ``salt`` (D2): what a new seeded
    game publishes. The salt defeats precomputed tables and links between games; the length of
    the seed (16 characters at least, random by default) is what puts brute force out of reach."""
    import hmac  # for a seed only (commit, check, draw): a reading command never imports it

    return hmac.new(salt.encode("utf-8"), seed.encode("utf-8"), hashlib.sha256).hexdigest()


class Committed(Protocol):
    """A game's published commitment to its seed: the game-created event, or a state."""

    @property
    def seed_sha256(self) -> str | None: ...
    @property
    def seed_salt(self) -> str | None: ...
    @property
    def seed_hmac(self) -> str | None: ...


def commits_to_a_seed(game: Committed) -> bool:
    return game.seed_sha256 is not None or (game.seed_salt is not None and game.seed_hmac is not None)


def matches_commitment(seed: str, game: Committed) -> bool:
    """Whether ``seed`` is the one ``game`` committed to (D2): every commitment it publishes must
    match, and it must publish one."""
    import hmac  # for a seed only (commit, check, draw): a reading command never imports it

    checks = []
    if game.seed_sha256 is not None:
        checks.append(hmac.compare_digest(seed_commitment(seed), game.seed_sha256))
    if game.seed_salt is not None and game.seed_hmac is not None:
        checks.append(hmac.compare_digest(salted_commitment(seed, game.seed_salt), game.seed_hmac))
    return bool(checks) and all(checks)


def seeded_value(seed: str, identity: RollIdentity) -> int:
    """A die value derived from the seed and the roll's identity alone (D2).

    Rejection sampling over successive HMAC blocks keeps every face exactly
    equally likely (a plain modulo would favour low faces).
    """
    import hmac  # for a seed only (commit, check, draw): a reading command never imports it

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
        # the one-shot form runs in C without building an HMAC object (every seeded die, in play
        # and in every check of a revealed seed); the same bytes as hmac.new(...).digest()
        block = hmac.digest(key, message + counter.to_bytes(4, "big"), "sha256")
        for offset in range(0, 32, 8):
            number = int.from_bytes(block[offset : offset + 8], "big")
            if number < limit:
                return number % identity.sides + 1
        counter += 1


#: The dice scheme of D3: each turn's dice from the seed and every player's revealed contribution.
CONTRIBUTED: Final = "contributed"
#: Every dice scheme a game-created line may name; ``None`` (left out of the line) is D2 alone.
DICE_SCHEMES: Final[tuple[str | None, ...]] = (None, CONTRIBUTED)
#: A contribution is 128 bits of fresh randomness, written as 32 lowercase hex digits (D3): far
#: too many to try against its commitment, so the commitment needs no salt.
CONTRIBUTION_HEX_DIGITS: Final = 32
#: the domain-separation label of :func:`turn_key`: a turn key is never another HMAC of the seed
TURN_KEY_LABEL: Final = "mortecouille turn dice v1"


def is_lower_hex(text: str, digits: int) -> bool:
    return len(text) == digits and all(c in "0123456789abcdef" for c in text)


def contribution_commitment(contribution: str) -> str:
    """The commitment a player publishes for ``contribution`` (D3): its SHA-256, hex."""
    return hashlib.sha256(contribution.encode("utf-8")).hexdigest()


def turn_key(seed: str, game: str, turn: int, contributions: Mapping[str, str]) -> str:
    """The key of one turn's dice in a ``contributed`` game (D3): HMAC-SHA256 keyed with the game's
    seed over the game, the turn and every revealed contribution sorted by player.

    Without the seed, no player can compute it; without every contribution, neither can the
    seed's holder. A player resolved without (absent) is simply not in ``contributions``."""
    import hmac  # for a seed only (commit, check, draw): a reading command never imports it

    message = msgspec.json.encode([TURN_KEY_LABEL, game, turn, sorted(contributions.items())])
    return hmac.new(seed.encode("utf-8"), message, hashlib.sha256).hexdigest()


def dice_key(seed: str, scheme: str | None, game: str, turn: int, contributions: Mapping[str, str]) -> str:
    """The key that derives the dice of ``turn``: the seed itself (D2), or its turn key (D3)."""
    return turn_key(seed, game, turn, contributions) if scheme == CONTRIBUTED else seed


def revealed_contributions(events: Sequence[Event]) -> dict[int, dict[str, str]]:
    """Every contribution a log reveals, by turn then player (``verify`` re-derives the turn keys)."""
    by_turn: dict[int, dict[str, str]] = {}
    for event in events:
        if isinstance(event, DiceContributionRevealed):
            by_turn.setdefault(event.turn, {})[event.player] = event.contribution
    return by_turn


class SeededDice:
    """Dice derived from ``seed`` (D2): the game's seed, or the key of one turn (D3)."""

    def __init__(self, seed: str) -> None:
        self.seed = seed

    def value(self, identity: RollIdentity, label: str) -> tuple[int, str]:
        return seeded_value(self.seed, identity), "seeded"

    def for_turn(self, game: str, turn: int, contributions: Mapping[str, str]) -> SeededDice:
        """The dice of ``turn`` of a ``contributed`` game, this game seed's and the contributions'."""
        return SeededDice(turn_key(self.seed, game, turn, contributions))


def check_die_value(value: int, sides: int, field: str) -> int:
    if not 1 <= value <= sides:
        raise BadInput(field, "a d{sides} shows 1 to {sides}, not {value}", sides=sides, value=value)
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
            return check_die_value(self.pending.pop(0), identity.sides, "dice"), "table"
        if self.ask is not None:
            return check_die_value(self.ask(identity, label), identity.sides, "die"), "table"
        raise BadInput(
            "dice",
            "table dice: no value given for {label} ({die}); pass more values with --dice or answer "
            "the prompt",
            label=label,
            die=identity.describe(),
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


#: Every source a die can record: the seed (D2), the table's physical dice (D1), a scenario's
#: fixed values.
SOURCES: Final = ("seeded", "table", "fixed")


class DiceForgery(BadInput):
    """A logged die no honest game could hold (``verify``); ``seq`` is its line."""

    def __init__(self, roll: DieRolled, key: str, /, **params: object) -> None:
        super().__init__("log", "seq {seq}: {problem}", seq=roll.seq, problem=Phrase(key, params))
        self.seq = roll.seq


class DicePolicy(msgspec.Struct, frozen=True, kw_only=True):
    """Which dice a game may hold, as its game-created event fixes it (D1-D2).

    The dice mode is chosen once, when the game is created: a seeded game's dice come from
    its seed and nowhere else, a table game's from the referee. A die's own ``source`` field
    is never trusted to say which check applies (a forger relabels it).
    """

    game: str
    dice_mode: str
    #: a scenario's author fixes some dice of its one turn by hand (``FixedDice``, turn 1)
    scenario: bool = False
    #: a fork's rolls up to this seq were copied from the original game, rolled by its dice
    copied_up_to: int = -1
    #: the revealed seed, once the game has ended; ``None`` before
    seed: str | None = None
    #: the game's dice scheme (``None``: D2; ``"contributed"``: D3) and, for D3, the contributions
    #: revealed for each turn, from which each turn's key is derived with the seed
    dice_scheme: str | None = None
    contributions: dict[int, dict[str, str]] = {}

    @classmethod
    def of(
        cls, created: GameCreated, seed: str | None, contributions: dict[int, dict[str, str]] | None = None
    ) -> DicePolicy:
        return cls(
            game=created.game,
            dice_mode=created.dice_mode,
            scenario=created.scenario,
            copied_up_to=created.forked_at_seq if created.forked_at_seq is not None else -1,
            seed=seed if created.dice_mode == "seeded" else None,
            # a table-dice fork of a contributed game keeps the original's line, not its scheme
            dice_scheme=created.dice_scheme if created.dice_mode == "seeded" else None,
            contributions=contributions or {},
        )

    def copied(self, roll: DieRolled) -> bool:
        return roll.seq <= self.copied_up_to

    def sources(self, roll: DieRolled) -> tuple[str, ...]:
        if self.copied(roll):
            return SOURCES
        own = ("seeded",) if self.dice_mode == "seeded" else ("table",)
        # `scenario` resolves turn 1 only; any later turn is played through commands (seeded)
        return (*own, "fixed") if self.scenario and roll.turn == 1 else own

    def check(self, roll: DieRolled) -> None:
        """Refuse ``roll`` unless this game could have rolled it: a d6 showing 1..6 (D1), from
        the game's own source, and, once the seed is revealed, the seed's value (D2)."""
        if roll.sides != DIE_SIDES:
            raise DiceForgery(
                roll,
                "a d{sides}: every die of the rules is a d{rules_sides} (D1)",
                sides=roll.sides,
                rules_sides=DIE_SIDES,
            )
        if not 1 <= roll.value <= roll.sides:
            raise DiceForgery(
                roll, "a d{sides} shows 1 to {sides}, not {value} (D1)", sides=roll.sides, value=roll.value
            )
        accepted = self.sources(roll)
        if roll.source not in accepted:
            raise DiceForgery(
                roll,
                "a die from {source!r} in a {dice_mode}-dice game, "
                "which takes its dice from {accepted} only (D2)",
                source=roll.source,
                dice_mode=self.dice_mode,
                accepted=" or ".join(map(repr, accepted)),
            )
        if self.seed is not None and roll.source == "seeded" and not self.copied(roll):
            identity = RollIdentity(
                self.game, roll.turn, roll.phase, roll.ship, roll.purpose, roll.index, roll.sides
            )
            contributions = self.contributions.get(roll.turn, {})
            key = dice_key(self.seed, self.dice_scheme, self.game, roll.turn, contributions)
            expected = seeded_value(key, identity)
            if expected != roll.value:
                die = identity.describe()
                if self.dice_scheme == CONTRIBUTED:
                    raise DiceForgery(
                        roll,
                        "{die} shows {value}, the seed and the {count} contribution(s) of turn {turn} "
                        "give {expected} (D3)",
                        die=die,
                        value=roll.value,
                        count=len(contributions),
                        turn=roll.turn,
                        expected=expected,
                    )
                raise DiceForgery(
                    roll,
                    "{die} shows {value}, the seed gives {expected} (D2)",
                    die=die,
                    value=roll.value,
                    expected=expected,
                )


class LoggedDice:
    """The dice a log recorded, looked up by identity, for re-deriving outcomes (``verify``).

    Each die the rules ask for must pass ``policy`` (its source and value are never taken on
    the log's word); re-derivation then compares the dice asked for with the logged ones in order.
    """

    def __init__(self, rolls: Iterable[DieRolled], policy: DicePolicy) -> None:
        self.rolls: dict[tuple[int, str, str | None, str, int], DieRolled] = {
            (r.turn, r.phase, r.ship, r.purpose, r.index): r for r in rolls
        }
        self.policy = policy

    def value(self, identity: RollIdentity, label: str) -> tuple[int, str]:
        key = (identity.turn, identity.phase, identity.ship, identity.purpose, identity.index)
        roll = self.rolls.get(key)
        if roll is None:
            raise BadInput("log", "the rules need a die the log does not hold: {label}", label=label)
        self.policy.check(roll)
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
