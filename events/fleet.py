"""Events of buying a Mortecouille fleet (rules F1-F3).

Every purchase is an event carrying the price paid, so a finished game's fleets
can be audited against the price list of the rules version it was created with
(F3). Kinds and options are always stored as canonical catalogue ids, never as
the text the referee typed; the ship's name is its id everywhere else.
"""

from mortecouille.events.base import Event


class ShipBought(Event, tag="ship-bought", frozen=True, kw_only=True):
    """``player`` bought ship ``ship`` (its name) of F1 ``kind`` fitted with individual ``options``.

    ``price`` is the ship's table price plus its options' prices (F1, F2).
    """

    player: str
    ship: str
    kind: str
    options: tuple[str, ...] = ()
    price: int
    rules: tuple[str, ...] = ("F1", "F2", "F3")


class ShipEquipped(Event, tag="ship-equipped", frozen=True, kw_only=True):
    """``player`` fitted individual option ``option`` to their ship ``ship`` (F2)."""

    player: str
    ship: str
    option: str
    price: int
    rules: tuple[str, ...] = ("F2", "F3")


class FleetEquipped(Event, tag="fleet-equipped", frozen=True, kw_only=True):
    """``player`` bought fleet ("universal") option ``option``: it covers every ship, later ones too (F2)."""

    player: str
    option: str
    price: int
    rules: tuple[str, ...] = ("F2", "F3")


class FleetSealed(Event, tag="fleet-sealed", frozen=True, kw_only=True):
    """``player``'s fleet is final: no more purchases, its ships may be placed (F3).

    ``forfeited`` is the money left unspent, lost once the game starts; ``forfeit``
    says the referee sealed explicitly while that money could still buy something.
    """

    player: str
    forfeited: int
    forfeit: bool = False
    rules: tuple[str, ...] = ("F3",)


class ShipWithdrawn(Event, tag="ship-withdrawn", frozen=True, kw_only=True):
    """``player`` took back the purchase of ship ``ship`` before sealing; ``refund`` is what it
    had cost, the ship and its individual options (F3: a purchase is undone by an event, never
    erased, so the log keeps the mistake and its correction)."""

    player: str
    ship: str
    refund: int
    rules: tuple[str, ...] = ("F3",)
