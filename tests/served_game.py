"""A game played through the service's HTTP API, order after order (the snapshot keeper's tests,
on either store)."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

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
