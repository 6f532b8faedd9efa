"""Round trips to PostgreSQL per command (the tournament at speed).

A command's latency on PostgreSQL is mostly its round trips to the server: each costs a network
exchange, and those made while the events table's EXCLUSIVE lock is held (the gap-free global
order) make every other appender wait. psycopg counts nothing, so these tests count every exchange
a connection makes (see :func:`counting_round_trips`) and pin the numbers reached, so that a
change that adds round trips to the command path fails here rather than in a benchmark.

What a player's order with an ``Idempotency-Key`` costs on a service over PostgreSQL, 6 round
trips (it was about 30): the pool's check of the one connection the whole request uses, the
game's existence, its secrets (the caller's seats and the secret seed, in one read), the writer
lock and the head under it (pipelined), the append's transaction in one pipelined exchange
(BEGIN, the head's compare-and-set, the EXCLUSIVE lock, the insert, the NOTIFY, COMMIT), the
lock's release. (When another process appended since, the lines it appended are read too: the
idempotency keys in them, and the state carried on by them.)
An append through the store's contract (``log.append``): 3 (the pool's check; the lock and the
head; the transaction with the lock's release after its commit).
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.events.game import DieRolled
from mortecouille.web.server import build_app
from tests.postgres_server import PostgresServer
from tests.test_serve_processes import ready_game

pytestmark = pytest.mark.postgres

#: The most round trips one order of a player may make through the service (steady state: the
#: game already read by this process, its keys too). Reached: 6 (see the module's docstring).
ORDER_ROUND_TRIPS = 6
#: The most round trips the retry of that order under its Idempotency-Key may make: no append,
#: but the game read under the lock (the batch answered, and the state it folds to) and again
#: for the answer. Reached: 7.
RETRY_ROUND_TRIPS = 7
#: The most round trips one append through the store's contract may make (``log.append``).
#: Reached: 3.
APPEND_ROUND_TRIPS = 3


def roll(turn: int) -> DieRolled:
    return DieRolled(
        turn=turn, phase="wind", ship="A", purpose="wind", index=0, sides=6, value=3, source="seeded"
    )


class RoundTrips:
    """Counts every exchange of every psycopg connection, by thread, while installed."""

    def __init__(self) -> None:
        self.by_thread: Counter[str] = Counter()
        self.guard = threading.Lock()

    def outside_the_feed(self) -> int:
        """The exchanges of every thread but the change feed's (its own LISTEN connection reads
        the global order after each notification, apart from any command)."""
        return sum(count for name, count in self.by_thread.items() if not name.startswith("feed "))


@contextmanager
def counting_round_trips() -> Iterator[RoundTrips]:
    """Count the round trips of every psycopg connection while the block runs: each exchange
    outside a pipeline (``Connection.wait`` on a generator that sends or receives anything: a
    statement, BEGIN, COMMIT, a fetch, the pool's check; a COMMIT with no transaction open sends
    nothing and is not counted), and each pipeline block once (its statements are sent without
    waiting; the client waits once, at the block's end, for all their answers)."""
    import psycopg

    counted = RoundTrips()
    wait, pipeline = psycopg.Connection.wait, psycopg.Connection.pipeline

    def count() -> None:
        with counted.guard:
            counted.by_thread[threading.current_thread().name] += 1

    def counted_exchange(gen: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
        """``gen`` as it is, counted if it exchanges anything with the server."""
        try:
            wanted = next(gen)
        except StopIteration as done:
            return done.value
        count()
        while True:
            try:
                answer = yield wanted
            except BaseException as error:  # noqa: BLE001 - handed to the wrapped generator as is
                try:
                    wanted = gen.throw(error)
                except StopIteration as done:
                    return done.value
                continue
            try:
                wanted = gen.send(answer)
            except StopIteration as done:
                return done.value

    def counting_wait(self: Any, gen: Generator[Any, Any, Any], *args: Any, **kwargs: Any) -> Any:
        if self._pipeline is not None:  # a pipeline's exchanges: the block is counted once
            return wait(self, gen, *args, **kwargs)
        return wait(self, counted_exchange(gen), *args, **kwargs)

    @contextmanager
    def counting_pipeline(self: Any) -> Iterator[Any]:
        outermost = self._pipeline is None
        try:
            with pipeline(self) as block:
                yield block
        finally:
            if outermost:
                count()

    psycopg.Connection.wait = counting_wait  # type: ignore[method-assign]
    psycopg.Connection.pipeline = counting_pipeline  # type: ignore[method-assign,assignment]
    try:
        yield counted
    finally:
        psycopg.Connection.wait = wait  # type: ignore[method-assign]
        psycopg.Connection.pipeline = pipeline  # type: ignore[method-assign]


@pytest.fixture
def service(postgres_server: PostgresServer) -> Iterator[TestClient[Litestar]]:
    from mortecouille.app.games import open_games

    url = f"{postgres_server.url}?schema=t_{uuid.uuid4().hex[:16]}"
    app = build_app(open_games(url), deadline_seconds=None, close_store=True)
    with TestClient(app) as client:
        yield client


def test_a_players_order_on_postgresql_makes_at_most_its_pinned_round_trips(
    service: TestClient[Litestar],
) -> None:
    anne = ready_game(service)["Anne"]
    first = {"ship": "Hope", "actions": [{"kind": "advance"}]}
    assert (
        service.post("/api/games/g/orders", json=first, headers={**anne, "Idempotency-Key": "k0"}).status_code
        == 200
    )
    order = {"ship": "Hope", "actions": [{"kind": "idle"}], "replace": True}
    with counting_round_trips() as counted:
        answer = service.post("/api/games/g/orders", json=order, headers={**anne, "Idempotency-Key": "k1"})
    assert answer.status_code == 200, answer.text
    assert 0 < counted.outside_the_feed() <= ORDER_ROUND_TRIPS, counted.by_thread
    # the retry under the same key appends nothing; it reads the game (the batch it answers with)
    with counting_round_trips() as again:
        retried = service.post("/api/games/g/orders", json=order, headers={**anne, "Idempotency-Key": "k1"})
    assert retried.json()["seq"] == answer.json()["seq"]
    assert 0 < again.outside_the_feed() <= RETRY_ROUND_TRIPS, again.by_thread


def test_an_append_through_the_store_makes_at_most_its_pinned_round_trips(
    postgres_server: PostgresServer,
) -> None:
    from mortecouille.events.storage.postgres import PostgresStore

    with PostgresStore(postgres_server.url, schema=f"t_{uuid.uuid4().hex[:16]}") as store:
        log = store.log("g")
        log.create([roll(0)])
        for turn in (1, 2):
            with counting_round_trips() as counted:
                log.append([roll(turn)], expected_seq=turn)
            assert 0 < counted.outside_the_feed() <= APPEND_ROUND_TRIPS, counted.by_thread
        assert [event.turn for event in log.read()] == [0, 1, 2]
