"""What a Mortecouille ship derives from the catalogue: its price (F1, F2) and its stats with
options and damage applied (A2, W1-W2, S5).

:func:`derive_stats` is the single place where options turn into numbers; the status sheet,
combat and movement all read it. Buying the fleet (F1-F3) and its status sheet (F4) are
:mod:`mortecouille.core.fleet.purchase`, which builds on this module (never the other way).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from mortecouille.core.errors import BadInput
from mortecouille.core.fleet.catalogue import RULES_VERSION, Cannons, DamageLevel, ShipClass, catalogue_for


def ship_cost(kind: str, options: Iterable[str], rules_version: str = RULES_VERSION) -> int:
    """Price of a ship of ``kind`` with its own ``options`` under ``rules_version`` (F1, F2)."""
    catalogue = catalogue_for(rules_version)
    return catalogue.ship(kind).price + sum(catalogue.option_price(o, kind) for o in options)


# --- derived stats ---------------------------------------------------------------------------


class ShipStats(msgspec.Struct, frozen=True, kw_only=True):
    """A ship's numbers with its options, fleet options and damage applied (A2, W, S, C, K)."""

    kind: str
    ship_class: ShipClass
    max_structure: int
    structure_lost: int
    structure: int
    table_speed: int
    fitted_speed: int
    speed: int
    damage_level: DamageLevel
    wear_per_turn: int
    cannons: Cannons
    normal_damage: int
    burst_damage: int
    own_loss_vs_small: int
    own_loss_vs_big: int
    inflicted_on_small: int
    inflicted_on_big: int
    hull_tier: int
    catapults: int
    flaming_shot: bool
    super_shot: bool
    siren: bool
    elite_gunner: bool
    slave: bool
    extra_crew: bool
    continuous_burst: bool
    fireship_allowed: bool

    def own_loss_against(self, other_class: ShipClass) -> int:
        """Own collision loss against a ship of ``other_class`` (C)."""
        return self.own_loss_vs_small if other_class == "small" else self.own_loss_vs_big

    def inflicted_on(self, other_class: ShipClass) -> int:
        """Collision loss this ship inflicts on a ship of ``other_class`` (C)."""
        return self.inflicted_on_small if other_class == "small" else self.inflicted_on_big


def derive_stats(
    kind: str,
    options: Sequence[str] = (),
    fleet_options: Sequence[str] = (),
    structure_lost: int = 0,
    rules_version: str = RULES_VERSION,
) -> ShipStats:
    """The one computation of a ship's stats, for the sheet, combat and movement alike.

    Structure adds the hull tier (F2). Speed (A2): table speed, plus each option's
    modifier (hull-1 +2, hull-2 +1, extra-sail -1), plus +1 from half the max
    structure lost (W1) or +2 instead from three quarters (W2), never below 1.
    Damage (S5) adds super-shot and extra-cannons. A fleet option counts once even
    if the ship also carries its individual variant.
    """
    if structure_lost < 0:
        raise BadInput(
            "structure_lost", "cannot be negative (got {structure_lost})", structure_lost=structure_lost
        )
    catalogue = catalogue_for(rules_version)
    ship = catalogue.ship(kind)
    individual = [catalogue.option(o) for o in options]
    families = {spec.family for spec in individual}
    shared = [catalogue.option(o) for o in dict.fromkeys(fleet_options)]
    effective = individual + [spec for spec in shared if spec.family not in families]
    families |= {spec.family for spec in shared}

    max_structure = ship.structure + sum(s.structure_bonus_for(ship.ship_class) for s in effective)
    fitted_speed = ship.speed + sum(spec.speed_modifier for spec in effective)
    threshold = next(
        (t for t in catalogue.damage_thresholds if t.reached(structure_lost, max_structure)), None
    )
    penalty = threshold.speed_penalty if threshold else 0
    added_cannons = sum(spec.cannons_added_per_armed_position for spec in effective)
    return ShipStats(
        kind=ship.id,
        ship_class=ship.ship_class,
        max_structure=max_structure,
        structure_lost=structure_lost,
        structure=max_structure - structure_lost,
        table_speed=ship.speed,
        fitted_speed=max(catalogue.minimum_speed, fitted_speed),
        speed=max(catalogue.minimum_speed, fitted_speed + penalty),
        damage_level=threshold.level if threshold else "intact",
        wear_per_turn=threshold.wear_per_turn if threshold else 0,
        cannons=ship.cannons.plus_on_armed(added_cannons),
        normal_damage=ship.normal_damage + sum(s.normal_damage_bonus for s in effective),
        burst_damage=ship.burst_damage + sum(s.burst_damage_bonus for s in effective),
        own_loss_vs_small=ship.own_loss_vs_small,
        own_loss_vs_big=ship.own_loss_vs_big,
        inflicted_on_small=ship.inflicted_on_small,
        inflicted_on_big=ship.inflicted_on_big,
        hull_tier=max((spec.hull_tier for spec in effective), default=0),
        catapults=sum(1 for spec in effective if spec.family == "catapult"),
        flaming_shot="flaming-shot" in families,
        super_shot="super-shot" in families,
        siren="siren" in families,
        elite_gunner="elite-gunner" in families,
        slave="slave" in families,
        extra_crew="extra-crew" in families,
        continuous_burst="continuous-burst" in families,
        fireship_allowed="fireship" in families,
    )
