"""Buying a Mortecouille fleet (F1-F3) and its status sheet (F4).

Everything here is pure: the ``check_*`` functions are meant for an event-sourced
decider (they return the price to record or raise :class:`RuleViolation`), the
``apply_*`` functions for its evolve step.

Every figure comes from :mod:`mortecouille.core.fleet.catalogue`, for the rules version the fleet
was created with; a ship's price and its stats (A2, W1-W2, S5) are
:mod:`mortecouille.core.fleet.stats`, which the sheet reads.
"""

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Final

import msgspec

from mortecouille.core.errors import BadInput, RuleViolation, phrase
from mortecouille.core.fleet.catalogue import (
    POSITIONS,
    RULES_VERSION,
    Cannons,
    Catalogue,
    OptionSpec,
    ShipClass,
    ShipKind,
    catalogue_for,
    resolve_option,
    resolve_ship_kind,
)
from mortecouille.core.fleet.stats import derive_stats, ship_cost
from mortecouille.core.limits import drawn_like, name_key, names_clashing, names_matching


class ShipPurchase(msgspec.Struct, frozen=True, kw_only=True):
    """A ship as bought: its name, F1 kind id and individual F2 option ids (catapult may repeat)."""

    name: str
    kind: str
    options: tuple[str, ...] = ()


#: The default of ``Fleet.rules_version``, frozen at the first rules version. A state's hash leaves
#: out every field equal to its default, so a default that followed ``RULES_VERSION`` would change
#: the hash of every game played under an earlier version, and ``verify`` would fail them all.
FLEET_RULES_VERSION_DEFAULT: Final = "2026.1"


class Fleet(msgspec.Struct, frozen=True, kw_only=True):
    """One player's fleet while it is being bought (F3). Ids are canonical."""

    player: str
    budget: int
    spent: int = 0
    ships: tuple[ShipPurchase, ...] = ()
    fleet_options: tuple[str, ...] = ()
    sealed: bool = False
    rules_version: str = FLEET_RULES_VERSION_DEFAULT

    @property
    def money_left(self) -> int:
        """Budget not spent yet (F3)."""
        return self.budget - self.spent

    def ship_named(self, name: str) -> ShipPurchase | None:
        """The ship of this fleet called ``name`` (case and spacing aside), if any."""
        key = name_key(name)
        return next((ship for ship in self.ships if name_key(ship.name) == key), None)


class CheapestPurchase(msgspec.Struct, frozen=True, kw_only=True):
    """The cheapest thing a fleet could still legally buy (F3 sealing ruling)."""

    price: int
    description: str


def new_fleet(player: str, budget: int, rules_version: str = RULES_VERSION) -> Fleet:
    """An empty fleet with the starting amount the players agreed on (F3)."""
    if not player.strip():
        raise BadInput("player", "a fleet needs a player name")
    if budget < 0:
        raise BadInput("budget", "the starting amount cannot be negative (got {budget})", budget=budget)
    catalogue_for(rules_version)
    return Fleet(player=player, budget=budget, rules_version=rules_version)


# --- purchase rules --------------------------------------------------------------------------


def _refuse_if_sealed(fleet: Fleet) -> None:
    if fleet.sealed:
        raise RuleViolation(
            "F3", "{player}'s fleet is sealed: money is useless once the game starts", player=fleet.player
        )


def _refuse_if_over_budget(fleet: Fleet, price: int, what: str) -> None:
    if price > fleet.money_left:
        raise RuleViolation(
            "F3",
            "{what} costs {price} but {player} has only {money_left} left of {budget}; purchases never "
            "exceed what is left",
            what=what,
            price=price,
            player=fleet.player,
            money_left=fleet.money_left,
            budget=fleet.budget,
        )


def _check_ship_options(
    catalogue: Catalogue,
    kind: ShipKind,
    ship_label: str,
    options: Sequence[str],
    fleet_options: Collection[str],
) -> None:
    """Raise RuleViolation (F2) unless a ship of ``kind`` may carry all of ``options``."""
    counts = Counter(options)
    for option_id, count in counts.items():
        spec = catalogue.options[option_id]
        if spec.scope == "fleet":
            raise RuleViolation(
                "F2",
                "{option_id} is a fleet option: buy it once for the whole fleet, not for {ship_label}",
                option_id=option_id,
                ship_label=ship_label,
            )
        limit = spec.limit_for(kind.ship_class)
        if limit == 0:
            allowed = " and ".join(spec.allowed_classes)
            raise RuleViolation(
                "F2",
                "{option_id} is for {allowed} ships only; {ship_label} is a {ship_class} ship ({kind})",
                option_id=option_id,
                allowed=allowed,
                ship_label=ship_label,
                ship_class=kind.ship_class,
                kind=kind.id,
            )
        if count > limit:
            times = "once" if limit == 1 else f"{limit} times"
            raise RuleViolation(
                "F2",
                "a {ship_class} ship may carry {option_id} at most {times}; {ship_label} would have it "
                "{count} times",
                ship_class=kind.ship_class,
                option_id=option_id,
                times=times,
                ship_label=ship_label,
                count=count,
            )
        if spec.counterpart is not None and spec.counterpart in fleet_options:
            raise RuleViolation(
                "F2",
                "the fleet already owns {counterpart}, which covers every ship; {option_id} cannot be "
                "bought for {ship_label} as well",
                counterpart=spec.counterpart,
                option_id=option_id,
                ship_label=ship_label,
            )
    tiers = sorted(o for o in counts if catalogue.options[o].hull_tier > 0)
    if len(tiers) > 1:
        raise RuleViolation(
            "F2",
            "hull levels are tiers, at most one per ship; {ship_label} would have {tiers}",
            ship_label=ship_label,
            tiers=" and ".join(tiers),
        )
    _check_cannons_needed(catalogue, kind, ship_label, options, fleet_options)


def _check_cannons_needed(
    catalogue: Catalogue,
    kind: ShipKind,
    ship_label: str,
    options: Sequence[str],
    fleet_options: Collection[str],
) -> None:
    """Raise RuleViolation (S4) if an option the ship would carry, its own or its fleet's, needs
    a firing position with more cannons than the ship would have.

    Continuous-burst is such an option: "ne peuvent prétendre au tir en rafale continue que les
    bateaux de plus de deux canons, soit 3 et plus". Sold to a ship without a position of 3
    cannons it could never be used (S4 refuses every burst from fewer), so it is refused at
    purchase; extra-cannons counts, so fitting it first makes a 2-cannon ship eligible. A fleet
    option covers every ship, later ones included, so the same check refuses a ship bought
    after it that it could not serve.
    """
    carried = dict.fromkeys((*options, *fleet_options))
    needing = [o for o in carried if catalogue.options[o].min_cannons_on_a_position > 0]
    if not needing:
        return
    stats = derive_stats(kind.id, tuple(options), tuple(fleet_options), rules_version=catalogue.version)
    most = max(stats.cannons.on(position) for position in POSITIONS)
    for option_id in needing:
        spec = catalogue.options[option_id]
        if most >= spec.min_cannons_on_a_position:
            continue
        # an option that adds cannons (extra-cannons) and would make enough, bought first, is the way out
        adders = [
            o.id
            for o in catalogue.options.values()
            if o.cannons_added_per_armed_position
            and o.id not in carried
            and most > 0
            and most + o.cannons_added_per_armed_position >= spec.min_cannons_on_a_position
        ]
        hint = (
            phrase("; fit {adders} first, and it will have enough", adders=" or ".join(adders))
            if adders
            else ""
        )
        whose = "its fleet's " if option_id in fleet_options and option_id not in options else ""
        raise RuleViolation(
            "S4",
            "{whose}{option_id} needs a firing position with {min_cannons_on_a_position} or more "
            'cannons ("soit 3 et plus"): {ship_label}, a {kind}, has at most {most} on a position, '
            "so it could never use it{hint}",
            whose=whose,
            option_id=option_id,
            min_cannons_on_a_position=spec.min_cannons_on_a_position,
            ship_label=ship_label,
            kind=kind.id,
            most=most,
            hint=hint,
        )


def cost_of_fleet(
    ships: Iterable[ShipPurchase],
    fleet_options: Iterable[str],
    rules_version: str = RULES_VERSION,
) -> int:
    """What a fleet costs under ``rules_version``, recomputed from its purchases (F3 audit)."""
    catalogue = catalogue_for(rules_version)
    fleet_total = sum(catalogue.option(o).price for o in fleet_options)
    return fleet_total + sum(ship_cost(s.kind, s.options, rules_version) for s in ships)


def check_buy_ship(
    fleet_state: Fleet,
    kind: str,
    name: str,
    options: Sequence[str] = (),
    names_in_game: Collection[str] = (),
) -> int:
    """The price of buying ship ``name`` of ``kind`` fitted with ``options`` (F1, F2, F3).

    ``kind`` and ``options`` may be ids or French names (record the ``resolve_*``
    results, not the raw text). ``names_in_game`` holds the names of every ship of
    every player; this fleet's own names are checked too.
    """
    _refuse_if_sealed(fleet_state)
    version = fleet_state.rules_version
    catalogue = catalogue_for(version)
    spec = catalogue.ships[resolve_ship_kind(kind, version)]
    option_ids = [resolve_option(o, version) for o in options]
    if not name.strip():
        raise BadInput("name", "every ship needs a name")
    # the key every command reads a ship's name by (project ruling under F1): a name that key
    # matches would leave both ships ambiguous to every command naming either, and one drawn like
    # another would let a reader take one for the other. The refusal does not spell the ship it
    # matched: it may be another player's purchase, still secret (F3).
    taken = [*names_in_game, *(s.name for s in fleet_state.ships)]
    if names_matching(name, taken):
        raise RuleViolation(
            "F1",
            "name: a ship named {name!r} is already in the game (ship names match case and spacing "
            "aside); every ship needs its own name so the status sheets (F4) and every command tell "
            "them apart",
            name=name,
        )
    if names_clashing(name, taken):
        raise RuleViolation(
            "F1",
            "name: a ship whose name looks like {name!r} is already in the game ({alike}); every ship "
            "needs its own name so the status sheets (F4) and every reader tell them apart",
            name=name,
            alike=drawn_like(name),
        )
    _check_ship_options(catalogue, spec, repr(name), option_ids, fleet_state.fleet_options)
    price = ship_cost(spec.id, option_ids, version)
    _refuse_if_over_budget(fleet_state, price, f"{spec.id} {name!r} with its options")
    return price


def _find_ship(fleet: Fleet, ship_name: str) -> ShipPurchase:
    ship = fleet.ship_named(ship_name)
    if ship is None:
        names = [s.name for s in fleet.ships]
        import difflib  # a hint for a refused name only: not imported by every command

        close = difflib.get_close_matches(ship_name, names, n=1)
        hint = phrase("; did you mean {name!r}?", name=close[0]) if close else ""
        raise BadInput(
            "ship",
            "{player} has no ship named {ship_name!r}{hint}",
            player=fleet.player,
            ship_name=ship_name,
            hint=hint,
        )
    return ship


def check_equip(fleet_state: Fleet, ship_name: str, option: str) -> int:
    """The price of fitting individual ``option`` to the fleet's ship ``ship_name`` (F2, F3)."""
    _refuse_if_sealed(fleet_state)
    version = fleet_state.rules_version
    catalogue = catalogue_for(version)
    ship = _find_ship(fleet_state, ship_name)
    option_id = resolve_option(option, version)
    kind = catalogue.ships[ship.kind]
    options = (*ship.options, option_id)
    _check_ship_options(catalogue, kind, repr(ship.name), options, fleet_state.fleet_options)
    price = catalogue.option_price(option_id, kind.id)
    _refuse_if_over_budget(fleet_state, price, f"{option_id} for {ship.name!r}")
    return price


def _check_fleet_option(fleet: Fleet, spec: OptionSpec) -> None:
    """Raise RuleViolation (F2) unless ``fleet`` may buy fleet option ``spec``."""
    if spec.scope != "fleet":
        variant = phrase("its fleet variant is {counterpart}", counterpart=spec.counterpart)
        if spec.counterpart is None:
            variant = phrase("it has no fleet variant")
        raise RuleViolation(
            "F2", "{spec} is an individual option bought per ship; {variant}", spec=spec.id, variant=variant
        )
    if spec.id in fleet.fleet_options:
        raise RuleViolation("F2", "{player}'s fleet already owns {spec}", player=fleet.player, spec=spec.id)
    catalogue = catalogue_for(fleet.rules_version)
    for ship in fleet.ships:
        if spec.counterpart is not None and spec.counterpart in ship.options:
            raise RuleViolation(
                "F2",
                "{ship!r} already carries {counterpart}; the fleet variant {spec} cannot be bought "
                "while an individual one is owned",
                ship=ship.name,
                counterpart=spec.counterpart,
                spec=spec.id,
            )
        kind = catalogue.ships[ship.kind]
        _check_cannons_needed(catalogue, kind, repr(ship.name), ship.options, (*fleet.fleet_options, spec.id))


def check_equip_fleet(fleet_state: Fleet, option: str) -> int:
    """The price of fleet option ``option``, which then covers every ship, later ones too (F2)."""
    _refuse_if_sealed(fleet_state)
    catalogue = catalogue_for(fleet_state.rules_version)
    spec = catalogue.option(option)
    _check_fleet_option(fleet_state, spec)
    _refuse_if_over_budget(fleet_state, spec.price, f"fleet option {spec.id}")
    return spec.price


def cheapest_legal_purchase(fleet_state: Fleet) -> CheapestPurchase | None:
    """The cheapest ship or option the fleet may still legally buy, budget aside (F3)."""
    catalogue = catalogue_for(fleet_state.rules_version)
    offers = [CheapestPurchase(price=s.price, description=f"a {s.id}") for s in catalogue.ships.values()]
    for spec in catalogue.options.values():
        if spec.scope == "fleet":
            try:
                _check_fleet_option(fleet_state, spec)
            except RuleViolation:
                continue
            offers.append(CheapestPurchase(price=spec.price, description=f"fleet option {spec.id}"))
            continue
        for ship in fleet_state.ships:
            kind = catalogue.ships[ship.kind]
            try:
                _check_ship_options(
                    catalogue, kind, ship.name, (*ship.options, spec.id), fleet_state.fleet_options
                )
            except RuleViolation:
                continue
            price = catalogue.option_price(spec.id, kind.id)
            offers.append(CheapestPurchase(price=price, description=f"{spec.id} for {ship.name!r}"))
    return min(offers, key=lambda offer: offer.price, default=None)


def check_seal(fleet_state: Fleet, forfeit: bool = False) -> None:
    """Refuse to seal a fleet whose money could still buy something, unless ``forfeit`` (F3 R)."""
    _refuse_if_sealed(fleet_state)
    if forfeit:
        return
    cheapest = cheapest_legal_purchase(fleet_state)
    if cheapest is not None and cheapest.price <= fleet_state.money_left:
        raise RuleViolation(
            "F3",
            "{player} still has {money_left}, enough for {description} ({price}); spend it or seal "
            "with a forfeit",
            player=fleet_state.player,
            money_left=fleet_state.money_left,
            description=cheapest.description,
            price=cheapest.price,
        )


# --- evolve helpers --------------------------------------------------------------------------


def apply_buy_ship(fleet_state: Fleet, kind: str, name: str, options: Sequence[str], price: int) -> Fleet:
    """The fleet after a ship purchase event (ids are stored in canonical form)."""
    version = fleet_state.rules_version
    purchase = ShipPurchase(
        name=name,
        kind=resolve_ship_kind(kind, version),
        options=tuple(resolve_option(o, version) for o in options),
    )
    return msgspec.structs.replace(
        fleet_state, ships=(*fleet_state.ships, purchase), spent=fleet_state.spent + price
    )


def apply_equip(fleet_state: Fleet, ship_name: str, option: str, price: int) -> Fleet:
    """The fleet after an individual option purchase event."""
    target = _find_ship(fleet_state, ship_name)
    option_id = resolve_option(option, fleet_state.rules_version)
    ships = tuple(
        msgspec.structs.replace(s, options=(*s.options, option_id)) if s is target else s
        for s in fleet_state.ships
    )
    return msgspec.structs.replace(fleet_state, ships=ships, spent=fleet_state.spent + price)


def apply_equip_fleet(fleet_state: Fleet, option: str, price: int) -> Fleet:
    """The fleet after a fleet option purchase event."""
    option_id = resolve_option(option, fleet_state.rules_version)
    return msgspec.structs.replace(
        fleet_state,
        fleet_options=(*fleet_state.fleet_options, option_id),
        spent=fleet_state.spent + price,
    )


def apply_withdraw(fleet_state: Fleet, ship_name: str, refund: int) -> Fleet:
    """The fleet after a ship purchase was withdrawn: the ship gone, its price refunded (F3)."""
    target = _find_ship(fleet_state, ship_name)
    ships = tuple(s for s in fleet_state.ships if s is not target)
    return msgspec.structs.replace(fleet_state, ships=ships, spent=fleet_state.spent - refund)


def apply_seal(fleet_state: Fleet) -> Fleet:
    """The fleet after it is sealed for the game."""
    return msgspec.structs.replace(fleet_state, sealed=True)


# --- status sheet (F4) -----------------------------------------------------------------------


class OptionLine(msgspec.Struct, frozen=True, kw_only=True):
    """One option on the status sheet, with the price paid for it."""

    id: str
    french_name: str
    english_name: str
    price: int


class ShipSheet(msgspec.Struct, frozen=True, kw_only=True):
    """One ship's line of the fiche d'état (F4). ``price`` is the ship with its own options."""

    name: str
    kind: str
    type_french: str
    type_english: str
    ship_class: ShipClass
    structure_max: int
    structure_current: int
    speed: int
    cannons: Cannons
    normal_damage: int
    burst_damage: int
    options: tuple[OptionLine, ...]
    price: int


class FleetSheet(msgspec.Struct, frozen=True, kw_only=True):
    """A player's fiche d'état (F4): every ship, the fleet options, the total and money left."""

    player: str
    rules_version: str
    ships: tuple[ShipSheet, ...]
    fleet_options: tuple[OptionLine, ...]
    total: int
    budget: int
    money_left: int
    sealed: bool


def status_sheet(fleet_state: Fleet, structure_lost: Mapping[str, int] | None = None) -> FleetSheet:
    """The F4 sheet of ``fleet_state``; ``structure_lost`` maps ship names to damage taken."""
    version = fleet_state.rules_version
    catalogue = catalogue_for(version)
    losses = structure_lost or {}

    def line(option_id: str, kind: str | None) -> OptionLine:
        spec = catalogue.options[option_id]
        price = catalogue.option_price(option_id, kind) if kind else spec.price
        return OptionLine(
            id=spec.id, french_name=spec.french_name, english_name=spec.english_name, price=price
        )

    sheets = []
    for ship in fleet_state.ships:
        kind = catalogue.ships[ship.kind]
        stats = derive_stats(
            ship.kind, ship.options, fleet_state.fleet_options, losses.get(ship.name, 0), version
        )
        sheets.append(
            ShipSheet(
                name=ship.name,
                kind=kind.id,
                type_french=kind.french_name,
                type_english=kind.english_name,
                ship_class=kind.ship_class,
                structure_max=stats.max_structure,
                structure_current=stats.structure,
                speed=stats.speed,
                cannons=stats.cannons,
                normal_damage=stats.normal_damage,
                burst_damage=stats.burst_damage,
                options=tuple(line(o, ship.kind) for o in ship.options),
                price=ship_cost(ship.kind, ship.options, version),
            )
        )
    return FleetSheet(
        player=fleet_state.player,
        rules_version=version,
        ships=tuple(sheets),
        fleet_options=tuple(line(o, None) for o in fleet_state.fleet_options),
        total=fleet_state.spent,
        budget=fleet_state.budget,
        money_left=fleet_state.money_left,
        sealed=fleet_state.sealed,
    )
