"""The Mortecouille price list: ships (F1) and options (F2), as data.

This module is the only place that holds the tables. Every price, structure,
speed or damage figure the engine uses is read from a :class:`Catalogue`, never
repeated in code. Catalogues are kept per rules version (:data:`CATALOGUES`) so
an audit (F3) can price a finished game against the list it was created with.

French names from the source document resolve to the canonical English ids
(:func:`resolve_ship_kind`, :func:`resolve_option`), ignoring case, accents and
punctuation.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from typing import Final, Literal

import msgspec

from mortecouille.core.errors import BadInput, phrase

#: The rules version new games are created with. The price list is the same in every version
#: so far; what changed between versions is listed in ``mortecouille.core.editions.EDITIONS``.
RULES_VERSION: Final = "2026.2"

ShipClass = Literal["small", "big"]
SHIP_CLASSES: Final[tuple[ShipClass, ...]] = ("small", "big")
OptionScope = Literal["ship", "fleet"]
OptionPricing = Literal["flat", "per-added-cannon"]
Position = Literal["port", "starboard", "bow", "stern"]
DamageLevel = Literal["intact", "half", "three-quarters"]

POSITIONS: Final[tuple[Position, ...]] = ("port", "starboard", "bow", "stern")


class Cannons(msgspec.Struct, frozen=True, kw_only=True):
    """Cannons on each firing position (S1, S2). Port and starboard are counted apart."""

    port: int
    starboard: int
    bow: int
    stern: int

    @classmethod
    def layout(cls, each_side: int, bow: int = 0, stern: int = 0) -> Cannons:
        """The F1 notation: a side figure means that many on *each* side."""
        return cls(port=each_side, starboard=each_side, bow=bow, stern=stern)

    def on(self, position: Position) -> int:
        """Cannons that fire from ``position`` (S2)."""
        return int(getattr(self, position))

    def armed_positions(self) -> int:
        """Positions with at least one cannon; each side counts (F2 extra-cannons pricing)."""
        return sum(1 for position in POSITIONS if self.on(position) > 0)

    def plus_on_armed(self, added: int) -> Cannons:
        """``added`` more cannons on every armed position, none where there are none (F2)."""

        def grow(count: int) -> int:
            return count + added if count > 0 else 0

        return Cannons(
            port=grow(self.port),
            starboard=grow(self.starboard),
            bow=grow(self.bow),
            stern=grow(self.stern),
        )


class ShipKind(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the F1 ship table. Collision figures are used by rule C."""

    id: str
    french_name: str
    english_name: str
    ship_class: ShipClass
    structure: int
    normal_damage: int
    burst_damage: int
    cannons: Cannons
    price: int
    speed: int
    own_loss_vs_small: int
    own_loss_vs_big: int
    inflicted_on_small: int
    inflicted_on_big: int

    def own_loss_against(self, other_class: ShipClass) -> int:
        """What this ship loses when it collides with a ship of ``other_class`` (C)."""
        return self.own_loss_vs_small if other_class == "small" else self.own_loss_vs_big

    def inflicted_on(self, other_class: ShipClass) -> int:
        """What this ship makes a ship of ``other_class`` lose in a collision (C)."""
        return self.inflicted_on_small if other_class == "small" else self.inflicted_on_big


class OptionSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One option of F2.

    ``family`` names the ability and is shared by an individual option and its
    fleet ("universal") variant, so effects never depend on which one was bought.
    ``limit_small``/``limit_big`` are per ship (a limit of 0 is a class
    restriction); a fleet option is owned at most once per fleet.
    """

    id: str
    french_names: tuple[str, ...]
    english_name: str
    price: int
    scope: OptionScope
    family: str
    effect: str
    effect_rule: str
    pricing: OptionPricing = "flat"
    counterpart: str | None = None
    limit_small: int = 1
    limit_big: int = 1
    hull_tier: int = 0
    structure_bonus_small: int = 0
    structure_bonus_big: int = 0
    speed_modifier: int = 0
    normal_damage_bonus: int = 0
    burst_damage_bonus: int = 0
    cannons_added_per_armed_position: int = 0
    #: a ship may carry this option only with a firing position holding at least this many
    #: cannons (S4: continuous-burst, "soit 3 et plus"); 0: no such requirement
    min_cannons_on_a_position: int = 0

    @property
    def french_name(self) -> str:
        """The name the source document gives first."""
        return self.french_names[0]

    @property
    def allowed_classes(self) -> tuple[ShipClass, ...]:
        """Ship classes that may carry this option (F2: hull-4 is big only)."""
        classes: list[ShipClass] = []
        if self.limit_small > 0:
            classes.append("small")
        if self.limit_big > 0:
            classes.append("big")
        return tuple(classes)

    def limit_for(self, ship_class: ShipClass) -> int:
        """How many times one ship of ``ship_class`` may carry this option (F2)."""
        return self.limit_small if ship_class == "small" else self.limit_big

    def structure_bonus_for(self, ship_class: ShipClass) -> int:
        """Structure added to a ship of ``ship_class`` (F2 hull tiers)."""
        return self.structure_bonus_small if ship_class == "small" else self.structure_bonus_big


class DamageThreshold(msgspec.Struct, frozen=True, kw_only=True):
    """A W rule: once ``lost_fraction`` of max structure is lost, the ship is slower and wears.

    The fraction is kept as a (numerator, denominator) pair so "exactly half" is
    compared in integers.
    """

    rule: str
    level: DamageLevel
    lost_fraction: tuple[int, int]
    speed_penalty: int
    wear_per_turn: int

    def reached(self, structure_lost: int, max_structure: int) -> bool:
        """Whether losing ``structure_lost`` of ``max_structure`` reaches this threshold."""
        numerator, denominator = self.lost_fraction
        return structure_lost * denominator >= numerator * max_structure


class Catalogue(msgspec.Struct, frozen=True, kw_only=True):
    """The F1 and F2 tables of one rules version, with the A2/W speed and wear figures.

    ``damage_thresholds`` runs from the most severe down: the first reached applies
    *instead of* the others (A2: "+2 (instead)").
    """

    version: str
    ships: dict[str, ShipKind]
    options: dict[str, OptionSpec]
    damage_thresholds: tuple[DamageThreshold, ...]
    minimum_speed: int

    def ship(self, kind: str) -> ShipKind:
        """The F1 row of ``kind`` (an id or alias)."""
        return self.ships[resolve_ship_kind(kind, self.version)]

    def option(self, option: str) -> OptionSpec:
        """The F2 row of ``option`` (an id or alias)."""
        return self.options[resolve_option(option, self.version)]

    def option_price(self, option: str, kind: str) -> int:
        """What ``option`` costs on a ship of ``kind`` (F2).

        Extra cannons are priced per cannon added: one on every armed position,
        each side counting, so the ship's layout sets the price.
        """
        spec = self.option(option)
        if spec.pricing == "per-added-cannon":
            added = spec.cannons_added_per_armed_position * self.ship(kind).cannons.armed_positions()
            return spec.price * added
        return spec.price


def _ship(
    kind_id: str,
    french: str,
    ship_class: ShipClass,
    structure: int,
    damage: tuple[int, int],
    cannons: Cannons,
    price: int,
    speed: int,
    own_loss: tuple[int, int],
    inflicted: tuple[int, int],
) -> ShipKind:
    return ShipKind(
        id=kind_id,
        french_name=french,
        english_name=kind_id.replace("-", " ").capitalize(),
        ship_class=ship_class,
        structure=structure,
        normal_damage=damage[0],
        burst_damage=damage[1],
        cannons=cannons,
        price=price,
        speed=speed,
        own_loss_vs_small=own_loss[0],
        own_loss_vs_big=own_loss[1],
        inflicted_on_small=inflicted[0],
        inflicted_on_big=inflicted[1],
    )


_L = Cannons.layout

# F1, in the order of the source table. The source writes "3/c+2av+2ar" for the
# yellow big; rules.md reads it as 3 per side, 2 bow, 2 stern.
_SHIPS_2026_1: Final = (
    _ship("red-small", "Rouge small", "small", 38, (3, 9), _L(2), 5000, 2, (5, 15), (3, 1)),
    _ship("red-big", "Rouge big", "big", 121, (12, 18), _L(4), 35000, 5, (2, 10), (20, 5)),
    _ship("blue-small", "Bleu small", "small", 35, (6, 16), _L(3, 1), 10000, 4, (7, 25), (2, 0)),
    _ship("blue-big", "Bleu big", "big", 130, (16, 25), _L(4, 2, 2), 55000, 7, (0, 8), (30, 15)),
    _ship("green-small", "Vert small", "small", 37, (4, 12), _L(3), 10000, 3, (4, 13), (4, 1)),
    _ship("green-big", "Vert big", "big", 129, (16, 23), _L(4, 1), 50000, 6, (1, 9), (22, 8)),
    _ship("yellow-small", "Jaune small", "small", 44, (5, 13), _L(2, 1), 15000, 3, (5, 15), (3, 0)),
    _ship("yellow-big", "Jaune big", "big", 140, (17, 21), _L(3, 2, 2), 50000, 5, (1, 5), (27, 11)),
)  # fmt: skip

_O = OptionSpec
_HULL = "Perfectionnement de coque niv"
_HULL_LONG = "Perfectionnement de coque niveau"

# F2. Rulings (rules.md): an option with no universal variant is individual; each
# individual option at most once per ship except the catapult (small 1, big 2).
_OPTIONS_2026_1: Final = (
    _O(id="slave", french_names=("Esclave individuel", "Esclave"), english_name="Slave",
       price=5000, scope="ship", family="slave", counterpart="slave-fleet", effect_rule="A1",
       effect="once per turn, reroll a failed (1-2) wind die"),
    _O(id="slave-fleet", french_names=("Esclave universel",), english_name="Slave (fleet)",
       price=30000, scope="fleet", family="slave", counterpart="slave", effect_rule="A1",
       effect="every ship: once per turn, reroll a failed (1-2) wind die"),
    _O(id="hull-1", french_names=(f"{_HULL} 1", f"{_HULL_LONG} 1"), english_name="Hull upgrade 1",
       price=5000, scope="ship", family="hull", hull_tier=1, structure_bonus_small=10,
       structure_bonus_big=20, speed_modifier=2, effect_rule="A2",
       effect="+10 structure small, +20 big; speed +2"),
    _O(id="hull-2", french_names=(f"{_HULL} 2", f"{_HULL_LONG} 2"), english_name="Hull upgrade 2",
       price=10000, scope="ship", family="hull", hull_tier=2, structure_bonus_small=11,
       structure_bonus_big=20, speed_modifier=1, effect_rule="A2",
       effect="+11 structure small, +20 big; speed +1"),
    _O(id="hull-3", french_names=(f"{_HULL} 3", f"{_HULL_LONG} 3"), english_name="Hull upgrade 3",
       price=20000, scope="ship", family="hull", hull_tier=3, structure_bonus_small=15,
       structure_bonus_big=22, effect_rule="F2", effect="+15 structure small, +22 big"),
    _O(id="hull-4", french_names=(f"{_HULL} 4", f"{_HULL_LONG} 4"), english_name="Hull upgrade 4",
       price=50000, scope="ship", family="hull", hull_tier=4, limit_small=0,
       structure_bonus_big=45, effect_rule="F2", effect="big ships only: +45 structure"),
    _O(id="flaming-shot", french_names=("Boulet enflammé", "Boulets enflammés"),
       english_name="Flaming shot", price=10000, scope="ship", family="flaming-shot",
       effect_rule="X1", effect="its hits set the target on fire"),
    _O(id="extra-sail", french_names=("Ajout de voile", "Ajout de voiles"),
       english_name="Extra sail", price=5000, scope="ship", family="extra-sail",
       speed_modifier=-1, effect_rule="A2",
       effect="speed -1 (never below 1)"),
    _O(id="super-shot", french_names=("Super boulet de canon individuel", "Super boulet de canon"),
       english_name="Super shot", price=5000, scope="ship", family="super-shot",
       counterpart="super-shot-fleet", normal_damage_bonus=5, burst_damage_bonus=9,
       effect_rule="S5", effect="+5 normal, +9 burst damage"),
    _O(id="super-shot-fleet", french_names=("Super boulet de canon universel",),
       english_name="Super shot (fleet)", price=30000, scope="fleet", family="super-shot",
       counterpart="super-shot", normal_damage_bonus=5, burst_damage_bonus=9,
       effect_rule="S5", effect="every ship: +5 normal, +9 burst damage"),
    _O(id="siren", french_names=("Sirène",), english_name="Siren", price=5000, scope="ship",
       family="siren", effect_rule="C4",
       effect="bow in a collision: +8 to the other ship, own loss -6 (not below 0)"),
    _O(id="extra-cannons", french_names=("Ajout de canons", "Ajout de canon"),
       english_name="Extra cannons", price=5000, pricing="per-added-cannon", scope="ship",
       family="extra-cannons", cannons_added_per_armed_position=1, normal_damage_bonus=4,
       burst_damage_bonus=6, effect_rule="S5",
       effect="+1 cannon on each armed position; +4 normal, +6 burst damage"),
    _O(id="extra-crew", french_names=("Supplément de personnel",), english_name="Extra crew",
       price=10000, scope="ship", family="extra-crew", effect_rule="T1",
       effect="up to two different actions per turn"),
    _O(id="catapult", french_names=("Catapulte embarquée et pivotante", "Catapulte"),
       english_name="Catapult", price=30000, scope="ship", family="catapult", limit_small=1,
       limit_big=2, effect_rule="K", effect="one extra shot per turn in any direction"),
    _O(id="continuous-burst", french_names=("Rafale continue",), english_name="Continuous burst",
       price=10000, scope="ship", family="continuous-burst", effect_rule="S7",
       min_cannons_on_a_position=3,
       effect="burst on two turns of three; needs a position with 3 or more cannons"),
    _O(id="fireship", french_names=("Tentative suicide individuel", "Tentative suicide"),
       english_name="Fireship", price=5000, scope="ship", family="fireship",
       counterpart="fireship-fleet", effect_rule="C6", effect="may become a fireship"),
    _O(id="fireship-fleet", french_names=("Tentative suicide universel",),
       english_name="Fireship (fleet)", price=20000, scope="fleet", family="fireship",
       counterpart="fireship", effect_rule="C6", effect="every ship may become a fireship"),
    _O(id="elite-gunner", french_names=("Canonnier d'élite individuel", "Canonnier d'élite"),
       english_name="Elite gunner", price=10000, scope="ship", family="elite-gunner",
       counterpart="elite-gunner-fleet", effect_rule="S2",
       effect="+1d6 on fire dice (cannons and catapult)"),
    _O(id="elite-gunner-fleet", french_names=("Canonnier d'élite universel",),
       english_name="Elite gunner (fleet)", price=60000, scope="fleet", family="elite-gunner",
       counterpart="elite-gunner", effect_rule="S2",
       effect="every ship: +1d6 on fire dice (cannons and catapult)"),
)  # fmt: skip


def _catalogue_2026(version: str) -> Catalogue:
    """The F1/F2 tables and A2/W figures, unchanged since 2026.1 (2026.2 corrected rules K and C6,
    not prices: see ``mortecouille.core.editions``)."""
    return Catalogue(
        version=version,
        ships={ship.id: ship for ship in _SHIPS_2026_1},
        options={option.id: option for option in _OPTIONS_2026_1},
        damage_thresholds=(
            DamageThreshold(
                rule="W2",
                level="three-quarters",
                lost_fraction=(3, 4),
                speed_penalty=2,
                wear_per_turn=3,
            ),
            DamageThreshold(rule="W1", level="half", lost_fraction=(1, 2), speed_penalty=1, wear_per_turn=1),
        ),
        minimum_speed=1,
    )


#: Every rules version the engine can price, by version string (F3 audit). Each one is also an
#: edition of ``mortecouille.core.editions.EDITIONS`` (a test keeps the two key sets equal).
CATALOGUES: Final[dict[str, Catalogue]] = {
    version: _catalogue_2026(version) for version in ("2026.1", "2026.2")
}


def catalogue_for(rules_version: str = RULES_VERSION) -> Catalogue:
    """The F1/F2 tables of ``rules_version``; BadInput if the engine does not know it."""
    try:
        return CATALOGUES[rules_version]
    except KeyError:
        known = ", ".join(sorted(CATALOGUES))
        raise BadInput(
            "rules_version",
            "unknown rules version {version!r}; known: {known}",
            version=rules_version,
            known=known,
        ) from None


@functools.lru_cache(maxsize=4096)
def normalise_name(text: str) -> str:
    """Case, accents and punctuation folded away, so "Boulet enflammé" == "boulet-enflamme"."""
    decomposed = unicodedata.normalize("NFKD", text)
    without_accents = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return re.sub(r"[^0-9a-z]+", " ", without_accents.casefold()).strip()


def _alias_table(entries: Iterable[tuple[str, Iterable[str]]]) -> dict[str, str]:
    table: dict[str, str] = {}
    for canonical_id, names in entries:
        for name in (canonical_id, *names):
            key = normalise_name(name)
            if table.setdefault(key, canonical_id) != canonical_id:
                # Two ids sharing a name would make resolution depend on table order.
                raise ValueError(f"alias {name!r} names both {table[key]} and {canonical_id}")
    return table


def _resolve(text: str, field: str, what: str, aliases: dict[str, str], ids: Iterable[str]) -> str:
    key = normalise_name(text)
    if key in aliases:
        return aliases[key]
    import difflib  # a hint for a refused name only: not imported by every command

    close = difflib.get_close_matches(key, list(aliases), n=1, cutoff=0.6)
    hint = (
        phrase("did you mean {name!r}?", name=aliases[close[0]])
        if close
        else phrase("known ids: {ids}", ids=", ".join(ids))
    )
    raise BadInput(field, "unknown {what} {text!r}; {hint}", what=what, text=text, hint=hint)


@functools.cache
def _ship_aliases(rules_version: str) -> dict[str, str]:
    ships = catalogue_for(rules_version).ships.values()
    return _alias_table((ship.id, (ship.french_name, ship.english_name)) for ship in ships)


@functools.cache
def _option_aliases(rules_version: str) -> dict[str, str]:
    options = catalogue_for(rules_version).options.values()
    return _alias_table((option.id, (*option.french_names, option.english_name)) for option in options)


def resolve_ship_kind(text: str, rules_version: str = RULES_VERSION) -> str:
    """The F1 ship id that ``text`` names (an id, or its French or English name)."""
    ids = catalogue_for(rules_version).ships
    return _resolve(text, "kind", "ship kind", _ship_aliases(rules_version), ids)


def resolve_option(text: str, rules_version: str = RULES_VERSION) -> str:
    """The F2 option id that ``text`` names (an id, or one of its French or English names).

    A French name without "individuel"/"universel" means the individual option.
    """
    ids = catalogue_for(rules_version).options
    return _resolve(text, "option", "option", _option_aliases(rules_version), ids)
