"""A game played through the service's HTTP API, order after order (the snapshot keeper's tests,
on either store)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app.snapshots import SNAPSHOT_EVERY
from mortecouille.events.storage.contract import EventStore
from mortecouille.web.controllers.service import Service
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
        actions = [{"kind": "advance" if self.orders % 2 else "idle"}]
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

    def orders_while_a_write_is_held_up(
        self, monkeypatch: pytest.MonkeyPatch, owner: object, name: str, written: Callable[[], bool]
    ) -> list[str]:
        """Orders while the keeper's snapshot write (``owner.name``, held up here until the orders
        are in) waits: orders until the keeper has started one (at most SNAPSHOT_EVERY: one of
        them passes a mark), then three more, each answered while nothing is ``written`` yet;
        then the write goes on and is waited for. The names of the threads that called it."""
        release, entered = threading.Event(), threading.Event()
        writers: list[str] = []
        write = getattr(owner, name)

        def held_up(*args: Any) -> Any:
            writers.append(threading.current_thread().name)
            entered.set()
            release.wait()
            return write(*args)

        monkeypatch.setattr(owner, name, held_up)
        try:
            for _ in range(SNAPSHOT_EVERY):
                if entered.is_set():
                    break
                self.order()
            assert entered.is_set(), "no snapshot write was started"
            for _ in range(3):
                self.order()
            assert not written()  # still held up, and yet every order was answered
        finally:
            release.set()
        self.service.snapshots.settled()
        return writers
