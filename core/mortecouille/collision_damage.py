"""Collision damage between two ships in the mortecouille ruleset (C1-C4, C6).

The movement engine finds collisions (M rules); this module prices them. It is
pure: ship figures come in as a :class:`CollisionSide`, dice values as
arguments, and each result says which dice the caller must roll next.

Order of a collision: own + inflicted + contact extra (C2), then siren (C4),
then the fireship explosion (C6); capsize and crossing losses come after, from
dice the caller rolls once it knows whether the ships are still afloat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Literal

import msgspec

from mortecouille.core.board.geometry import FACING_VECTORS, eighths_between
from mortecouille.core.dice import check_die
from mortecouille.core.errors import BadInput
from mortecouille.core.fleet.catalogue import SHIP_CLASSES

ContactPart = Literal["bow", "side", "stern"]
CONTACT_PARTS: Final[tuple[ContactPart, ...]] = ("bow", "side", "stern")

#: C1: contact part by the angle between facing and contact direction, in eighths.
CONTACT_PART_BY_EIGHTHS: Final[Mapping[int, ContactPart]] = {
    0: "bow",
    1: "bow",
    2: "side",
    3: "stern",
    4: "stern",
}

#: C2: extra loss of the first ship of each pair (missing pairs: none).
CONTACT_EXTRA: Final[Mapping[tuple[ContactPart, ContactPart], int]] = {
    ("bow", "bow"): 3,
    ("bow", "stern"): 2,
    ("bow", "side"): 2,
    ("side", "bow"): 6,
}
#: C2 ruling: side-side costs this much to each ship, if one of two d6 shows at most the limit.
SIDE_SIDE_EXTRA: Final = 2
SIDE_SIDE_DIE_LIMIT: Final = 3
CAPSIZE_DIE_LIMIT: Final = 2  # C2: the side ship capsizes on 1-2
CROSSING_LOSS: Final = 5  # C2: the bow ship crossing a sunk side ship
CROSSING_DAMAGE_DIE_LIMIT: Final = 2  # C2: ... and loses 3d6 more on 1-2
CROSSING_DAMAGE_DICE: Final = 3
SIREN_OWN_REDUCTION: Final = 6  # C4
SIREN_OTHER_INCREASE: Final = 8  # C4
FIRESHIP_EXPLOSION: Final = 30  # C6: to each ship of the collision


class CollisionSide(msgspec.Struct, frozen=True):
    """One ship in a collision: its F1 collision figures, contact part (C1) and options."""

    ship_class: str
    own_loss_vs_small: int
    own_loss_vs_big: int
    inflicted_on_small: int
    inflicted_on_big: int
    part: ContactPart
    siren: bool = False
    fireship: bool = False


class CollisionLoss(msgspec.Struct, frozen=True):
    """What one ship loses in a collision, and what it must roll next.

    ``total`` = own + inflicted + contact_extra + siren_adjustment + explosion.
    ``rolls_capsize``: if still afloat after ``total``, roll 1d6 (:func:`capsizes`).
    ``crosses_if_other_sinks``: if the other ship sinks in this collision and this
    one is still afloat, it crosses (:func:`crossing_extra`).
    ``side_contact_die_needed``: side-side contact; call again with both dice.
    ``catches_fire``: a fireship exploded against it; fire check next turn (C6).
    ``explodes_as_fireship``: this ship is the fireship and its barrels explode (C6); whether that
    sinks it depends on the edition (mortecouille.core.editions).
    """

    own: int
    inflicted: int
    contact_extra: int
    siren_adjustment: int
    explosion: int
    total: int
    rolls_capsize: bool
    crosses_if_other_sinks: bool
    side_contact_die_needed: bool
    catches_fire: bool
    explodes_as_fireship: bool
    rules: tuple[str, ...]


def contact_part(facing: str, heading: str) -> ContactPart:
    """C1: part of a ship touched, from its facing and the direction of contact."""
    for name, value in (("facing", facing), ("heading", heading)):
        if value not in FACING_VECTORS:
            raise BadInput(name, "{value!r} is not a facing", value=value)
    return CONTACT_PART_BY_EIGHTHS[eighths_between(facing, heading)]


def _check_side(name: str, side: CollisionSide) -> None:
    if side.ship_class not in SHIP_CLASSES:
        raise BadInput(
            name,
            "class {ship_class!r} is not one of {ship_classes}",
            ship_class=side.ship_class,
            ship_classes=SHIP_CLASSES,
        )
    if side.part not in CONTACT_PARTS:
        raise BadInput(
            name, "part {part!r} is not one of {contact_parts}", part=side.part, contact_parts=CONTACT_PARTS
        )


def _own(side: CollisionSide, other: CollisionSide) -> int:
    return side.own_loss_vs_small if other.ship_class == "small" else side.own_loss_vs_big


def _inflicted_by(other: CollisionSide, side: CollisionSide) -> int:
    return other.inflicted_on_small if side.ship_class == "small" else other.inflicted_on_big


def side_contact_applies(die_a: int, die_b: int) -> bool:
    """C2 ruling: a side-side contact costs its extra only if one of the two d6 shows 1-3."""
    check_die(die_a)
    check_die(die_b)
    return min(die_a, die_b) <= SIDE_SIDE_DIE_LIMIT


def capsizes(die: int) -> bool:
    """C2: a side ship struck by a bow, still afloat, capsizes and sinks on 1-2."""
    check_die(die)
    return die <= CAPSIZE_DIE_LIMIT


def crossing_damage_roll_needed(die: int) -> bool:
    """C2: whether the crossing die calls for the 3d6 damage roll."""
    check_die(die)
    return die <= CROSSING_DAMAGE_DIE_LIMIT


def crossing_extra(die: int, three_d6: Sequence[int] | None) -> int:
    """C2: what a bow ship loses crossing a side ship that sank: 5, plus 3d6 on a 1-2.

    ``three_d6`` is only needed (and only read) when ``die`` shows 1-2.
    """
    if not crossing_damage_roll_needed(die):
        return CROSSING_LOSS
    if three_d6 is None or len(three_d6) != CROSSING_DAMAGE_DICE:
        raise BadInput(
            "three_d6",
            "a crossing die of {die} needs {crossing_damage_dice} d6",
            die=die,
            crossing_damage_dice=CROSSING_DAMAGE_DICE,
        )
    for value in three_d6:
        check_die(value)
    return CROSSING_LOSS + sum(three_d6)


def _side_loss(
    side: CollisionSide,
    other: CollisionSide,
    side_contact_dice: tuple[int, int] | None,
) -> CollisionLoss:
    rules = ["F1", "C1"]
    own, inflicted = _own(side, other), _inflicted_by(other, side)
    extra = CONTACT_EXTRA.get((side.part, other.part), 0)
    side_side = side.part == "side" and other.part == "side"
    die_needed = side_side and side_contact_dice is None
    if side_side and side_contact_dice is not None:
        if side_contact_applies(*side_contact_dice):
            extra = SIDE_SIDE_EXTRA
        else:
            # C2 ruling: a side-side contact without a 1-3 "costs nothing at all", losses included
            own = inflicted = extra = 0
    if extra or side_side:
        rules.append("C2")
    # Siren (C4) adjusts the collision's own total, once its accounts are done:
    # the other siren's +8 is added first, then the own 6 are avoided, not below 0.
    base = own + inflicted + extra
    with_other_siren = base + (SIREN_OTHER_INCREASE if other.siren and other.part == "bow" else 0)
    after_siren = with_other_siren
    if side.siren and side.part == "bow":
        after_siren = max(with_other_siren - SIREN_OWN_REDUCTION, 0)
    if after_siren != base or (side.siren and side.part == "bow"):
        rules.append("C4")
    explosion = FIRESHIP_EXPLOSION * (side.fireship + other.fireship)
    if explosion:
        rules.append("C6")
    return CollisionLoss(
        own=own,
        inflicted=inflicted,
        contact_extra=extra,
        siren_adjustment=after_siren - base,
        explosion=explosion,
        total=after_siren + explosion,
        rolls_capsize=side.part == "side" and other.part == "bow",
        crosses_if_other_sinks=side.part == "bow" and other.part == "side",
        side_contact_die_needed=die_needed,
        catches_fire=other.fireship and not side.fireship,
        explodes_as_fireship=side.fireship,
        rules=tuple(rules),
    )


def collision_losses(
    a: CollisionSide,
    b: CollisionSide,
    side_contact_dice: tuple[int, int] | None = None,
) -> tuple[CollisionLoss, CollisionLoss]:
    """Losses of both ships in one collision (C1-C4, C6), as ``(loss_of_a, loss_of_b)``.

    Each ship loses its own F1 loss against the other's class, plus the other's
    F1 inflicted loss against its class, plus the C2 contact extra. Side-side
    contact: without ``side_contact_dice`` (one d6 per ship) the extra is left
    out and both results say the dice are needed; with them, the C2 ruling
    applies. A fireship (C6) adds 30 to both ships per fireship in the pair.

    The worked example of the rules (C3): Red, a red-small, advances bow first into the side of
    Yellow, a yellow-big. Red loses 15 (own, against a big) + 27 (inflicted by a yellow-big on a
    small) + 2 (bow into side) = 44, more than its 38, so it sinks; Yellow loses 1 + 1 + 6 = 8 and
    rolls for capsizing.

    >>> from mortecouille.core.fleet.stats import derive_stats
    >>> def side(kind: str, part: ContactPart) -> CollisionSide:
    ...     s = derive_stats(kind)  # the catalogue's F1 collision figures
    ...     figures = (s.own_loss_vs_small, s.own_loss_vs_big, s.inflicted_on_small, s.inflicted_on_big)
    ...     return CollisionSide(s.ship_class, *figures, part=part)
    >>> red, yellow = collision_losses(side("red-small", "bow"), side("yellow-big", "side"))
    >>> red.own, red.inflicted, red.contact_extra, red.total, derive_stats("red-small").structure
    (15, 27, 2, 44, 38)
    >>> yellow.own, yellow.inflicted, yellow.contact_extra, yellow.total, yellow.rolls_capsize
    (1, 1, 6, 8, True)
    """
    _check_side("a", a)
    _check_side("b", b)
    return _side_loss(a, b, side_contact_dice), _side_loss(b, a, side_contact_dice)
