"""Which event types may hold a player's secret when they are appended: the one definition.

The game service's redaction (:func:`mortecouille.app.view.secret_of`, docs/service.md "What each
viewer sees") seals events of these types until the rules reveal them, and the command path
(:func:`mortecouille.app.commands.run_command`) writes a random ``nonce`` on every line of one
(docs/service.md "Nonces and idempotency keys"), so that a line hash, a receipt's head or a hash a
page is sent, cannot be used to test guesses of the secret, and the chain check refuses a nonce
on any other line. All read the tuples here, so a new secret type is sealed and nonced alike; it
sits in ``events`` (the bottom layer) because it is a fact about event types, which every layer
above may import.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from mortecouille.events.base import Event
from mortecouille.events.blockade import TokensGiven
from mortecouille.events.fleet import FleetEquipped, FleetSealed, ShipBought, ShipEquipped, ShipWithdrawn
from mortecouille.events.movement import ShipPlaced
from mortecouille.events.orders import OrderGiven, OrderWithdrawn
from mortecouille.events.rulings import RulingRecorded

#: A player's purchases (F1-F3): secret until every fleet is sealed.
PURCHASES: Final[tuple[type[Event], ...]] = (
    ShipBought,
    ShipEquipped,
    FleetEquipped,
    ShipWithdrawn,
    FleetSealed,
)
#: A ship's orders for a turn (T1, P1): secret until that turn is resolved.
ORDERS: Final[tuple[type[Event], ...]] = (OrderGiven, OrderWithdrawn, TokensGiven)
#: Secret when the log says so: a bought ship's placement shows its kind, and a ruling may change
#: such a ship, so both are sealed with the purchases until every fleet is sealed.
SEALED_WITH_PURCHASES: Final[tuple[type[Event], ...]] = (ShipPlaced, RulingRecorded)
#: Every event type the redaction may seal: the types of the secret inputs.
SECRET_TYPES: Final[tuple[type[Event], ...]] = (*ORDERS, *PURCHASES, *SEALED_WITH_PURCHASES)


def holds_secret_input(events: Iterable[Event]) -> bool:
    """Whether a batch holds an event of a type the redaction may seal (:data:`SECRET_TYPES`)."""
    return any(isinstance(event, SECRET_TYPES) for event in events)
