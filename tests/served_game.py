"""A game played through the service's HTTP API, order after order (the snapshot keeper's tests,
on either store)."""

from __future__ import annotations

import threading
from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app.snapshots import SNAPSHOT_EVERY
from mortecouille.events.stores import EventStore
from mortecouille.web.server import Service
from tests.test_serve_processes import ready_game


class ServedGame:
    """The service's game ``g``, ready to be played (:func:`ready_game`); :meth:`log` is the
    store's log of it, given by each store's test."""

    def __init__(self, client: TestClient[Litestar]) -> None:
        self.client = client
        self.service: Service = client.app.state.service
        self.seats = ready_game(client)
        self.orders = 0

    def log(self) -> EventStore:
        raise NotImplementedError

    def order(self) -> dict[str, Any]:
        """Anne's order for her ship, replacing the one before: one more append through the service."""
        actions = "advance" if self.orders % 2 else "idle"
        self.orders += 1
        answer = self.client.post(
            "/api/games/g/orders",
            json={"ship": "Hope", "actions": actions, "replace": True},
            headers=self.seats["Anne"],
        )
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def play_until(self, events: int) -> None:
        """Orders through the service until the game holds at least ``events`` events."""
        while len(self.log().read()) < events:
            self.order()

    def order_past_a_started_write(self, entered: threading.Event, more: int = 3) -> None:
        """Orders until the keeper has started a snapshot write (``entered``, set by a write held
        up by the test; at most SNAPSHOT_EVERY orders: one of them passes a mark), then ``more``
        orders, each answered while that write is still held up."""
        for _ in range(SNAPSHOT_EVERY):
            if entered.is_set():
                break
            self.order()
        assert entered.is_set(), "no snapshot write was started"
        for _ in range(more):
            self.order()
