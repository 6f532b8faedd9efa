"""Live push across processes on PostgreSQL: the store's change feed
(``events/storage/postgres_feed.py``, one LISTEN connection per process) and the watchers it wakes
(``web/live.py``, ``StoreWatcher``).

Appends are made by other processes (forked writers with their own connections), as another
``serve`` process would make them. Promises: the feed hands on every row once, in the global
order; when its connection is killed it connects again and hands on what was appended meanwhile,
nothing lost, nothing twice; a listener's stream over a PostgreSQL game gets every event once, in
order, whatever process appended it, and a resume from ``Last-Event-ID`` gets exactly the rest.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from mortecouille.events.base import Event
from mortecouille.events.game import DieRolled
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.postgres

#: How long a test waits for something the feed must deliver: a guard against a hang, not a
#: speed requirement (the machine may be loaded).
PATIENCE_SECONDS = 120.0


def roll(turn: int, ship: str = "A") -> DieRolled:
    return DieRolled(
        turn=turn, phase="wind", ship=ship, purpose="wind", index=0, sides=6, value=3, source="seeded"
    )


@pytest.fixture
def store(postgres_server: PostgresServer) -> Iterator[Any]:
    from mortecouille.events.storage.postgres import PostgresStore

    with PostgresStore(postgres_server.url, schema=f"t_{uuid.uuid4().hex[:16]}") as opened:
        yield opened


def _append_elsewhere(url: str, schema: str, games: list[str], rounds: int, batch: int) -> None:
    """Another process's appends: ``rounds`` batches of ``batch`` rolls to each game in turn."""
    from mortecouille.events.storage.postgres import PostgresStore

    with PostgresStore(url, schema=schema, max_connections=1) as elsewhere:
        for turn in range(1, rounds + 1):
            for game in games:
                elsewhere.log(game).append([roll(turn, ship=str(i)) for i in range(batch)])


def _run_elsewhere(store: Any, games: list[str], rounds: int, batch: int = 1) -> Any:
    process = multiprocessing.get_context("fork").Process(
        target=_append_elsewhere, args=(store.dsn, store.schema, games, rounds, batch)
    )
    process.start()
    return process


class Received:
    """What a feed handed on, and a way to wait (on the rows, not on a clock) for enough of it."""

    def __init__(self) -> None:
        self.rows: list[Any] = []
        self.more = threading.Condition()

    def __call__(self, rows: list[Any]) -> None:
        with self.more:
            self.rows.extend(rows)
            self.more.notify_all()

    def wait_for(self, count: int) -> None:
        with self.more:
            assert self.more.wait_for(lambda: len(self.rows) >= count, PATIENCE_SECONDS), (
                f"{len(self.rows)} rows of {count}"
            )


def test_the_feed_hands_on_every_row_of_every_process_once_in_the_global_order(store: Any) -> None:
    from mortecouille.events.storage.postgres_feed import PostgresFeed

    games = ["g1", "g2", "g3"]
    for game in games:
        store.log(game).create([roll(0)])
    received = Received()
    with PostgresFeed(store.dsn, store.schema, received):
        writers = [_run_elsewhere(store, games[i::3], rounds=20, batch=2) for i in range(3)]
        for writer in writers:
            writer.join(PATIENCE_SECONDS)
            assert writer.exitcode == 0
        received.wait_for(3 * 20 * 2)
    every = store.tail(0, limit=100000)
    appended = every[len(games) :]  # the creations came before the feed started: not handed on
    assert [row.position for row in received.rows] == [row.position for row in appended]
    assert [(row.game, row.seq) for row in received.rows] == [(row.game, row.seq) for row in appended]
    assert {row.type for row in received.rows} == {"die-rolled"}


def test_a_feed_whose_connection_is_killed_catches_up_with_nothing_lost_or_repeated(store: Any) -> None:
    import psycopg

    from mortecouille.events.storage.postgres_feed import PostgresFeed

    store.log("g").create([roll(0)])
    received = Received()
    feed = PostgresFeed(store.dsn, store.schema, received, reconnect_seconds=0.2)
    with feed:
        store.log("g").append([roll(1)])
        received.wait_for(1)
        with psycopg.connect(store.dsn, autocommit=True) as admin:
            # the feed's LISTEN connection dropped by the server, as a restart or a network cut would
            killed = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%%'"
                " OR (state = 'idle' AND query LIKE 'SELECT position, game, seq, type%%')"
            ).fetchall()
            assert killed
        # appended while the feed is away (or just back): none of them may be lost
        writer = _run_elsewhere(store, ["g"], rounds=30)
        writer.join(PATIENCE_SECONDS)
        assert writer.exitcode == 0
        received.wait_for(31)
        assert feed.connections >= 2
    assert [row.seq for row in received.rows] == list(range(1, 32))


# ----------------------------------------------------------------------------- the watchers


class Seqs:
    """A renderer that writes each event's seq on a line, shared by every stream of one game (as
    the service's ``SharedView`` is), and checks that what it is handed continues the log: no seq
    twice, none missing, whatever the watcher and the feed did."""

    def __init__(self) -> None:
        self.seqs: list[int] = []

    def start(self, events: Sequence[Event]) -> None:
        self.seqs = [event.seq for event in events]

    def backlog(self, after: int) -> list[bytes]:
        return [b"%d\n" % seq for seq in self.seqs if seq > after]

    def more(self, events: Sequence[Event]) -> list[tuple[int, bytes]]:
        for event in events:
            assert event.seq == len(self.seqs), (self.seqs[-1:], event.seq)
            self.seqs.append(event.seq)
        return [(event.seq, b"%d\n" % event.seq) for event in events]


async def _listen(hub: Any, log_: Any, after: int, count: int) -> list[int]:
    """The seqs one listener's stream sends until it has ``count`` of them."""
    from mortecouille.web.live import event_stream

    stream = event_stream(hub, log_, after, "seqs", Seqs)
    got: list[int] = []
    try:
        async with asyncio.timeout(PATIENCE_SECONDS):
            async for chunk in stream:
                got.extend(int(line) for line in chunk.split())
                if len(got) >= count:
                    break
    finally:
        await stream.aclose()
    return got


@pytest.mark.parametrize("hand_on", ["lines", "wake"])
def test_listeners_in_another_process_than_the_writers_get_every_event_once_in_order(
    store: Any, hand_on: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lines``: the feed's rows handed to the watchers as the service does (``offer_lines``): no
    read of the game after the watcher learnt its head. ``wake``: the watchers woken only, each
    reading the game from its next seq."""
    from mortecouille.events.storage.postgres_feed import PostgresFeed
    from mortecouille.web import live
    from mortecouille.web.live import LiveHub

    reads: list[int] = []
    real_events_from = live.events_from

    def counted(log_: Any, seq: int) -> Any:
        reads.append(seq)
        return real_events_from(log_, seq)

    monkeypatch.setattr(live, "events_from", counted)
    games = ["g1", "g2"]
    for game in games:
        store.log(game).create([roll(0)])
    store.log("g1").append([roll(1)])  # seq 1 is before every stream: sent from the read

    async def main() -> tuple[list[int], list[int], list[int]]:
        # no tick: what arrives is the feed's doing
        hub = LiveHub(store_interval=None, heartbeat=3600)
        hub.loop = asyncio.get_running_loop()

        def on_rows(rows: list[Any]) -> None:
            for game in {row.game for row in rows}:
                if hand_on == "lines":
                    hub.offer_lines(game, [(row.seq, row.line) for row in rows if row.game == game])
                else:
                    hub.wake_game(game)

        feed = PostgresFeed(store.dsn, store.schema, on_rows)
        await asyncio.to_thread(feed.start)
        try:
            rounds = 25
            listeners = [
                asyncio.create_task(_listen(hub, store.log("g1"), -1, 2 + rounds * 3)),
                asyncio.create_task(_listen(hub, store.log("g2"), 0, rounds * 3)),
                asyncio.create_task(_listen(hub, store.log("g1"), 1, rounds * 3)),  # a resume
            ]
            while sum(channel.streams for channel in hub.channels.values()) < 3:
                await asyncio.sleep(0.01)
            writer = _run_elsewhere(store, games, rounds, batch=3)
            first, second, resumed = await asyncio.gather(*listeners)
            await asyncio.to_thread(writer.join, PATIENCE_SECONDS)
            assert writer.exitcode == 0
            await hub.close()
            return first, second, resumed
        finally:
            await asyncio.to_thread(feed.stop)

    first, second, resumed = asyncio.run(main())
    assert first == list(range(0, 2 + 25 * 3))
    assert second == list(range(1, 1 + 25 * 3))
    assert resumed == list(range(2, 2 + 25 * 3))
    if hand_on == "lines":
        assert reads == []  # every event came with the feed's rows, checked against the chain
    else:
        assert reads


def test_a_line_that_does_not_continue_the_chain_is_not_handed_on_the_game_is_read_instead(
    store: Any,
) -> None:
    """A line offered by the feed with another hash (or a gap in seqs) is refused; the watcher reads
    the game from the store instead, so listeners get the stored events."""
    import json as json_module

    from mortecouille.events.codec import canonical
    from mortecouille.web.live import LiveHub

    log_ = store.log("g")
    log_.create([roll(0)])

    async def main() -> list[tuple[int, str]]:
        hub = LiveHub(store_interval=None)
        hub.loop = asyncio.get_running_loop()
        watcher = hub.watcher(log_)
        queue = await watcher.subscribe()
        appended = log_.append([roll(1), roll(2)])
        lines = log_.read_bytes().splitlines()
        forged = json_module.loads(lines[1])
        forged["hash"] = forged["hash"][::-1]
        hub.offer_lines("g", [(1, canonical(forged)), (2, lines[2])])  # a bad hash, then a good line
        handed: list[tuple[int, str]] = []
        async with asyncio.timeout(PATIENCE_SECONDS):
            while len(handed) < 2:
                handed.extend((event.seq, event.hash) for event in await queue.get())
        watcher.unsubscribe(queue)
        await hub.close()
        assert handed == [(event.seq, event.hash) for event in appended]
        return handed

    assert [seq for seq, _ in asyncio.run(main())] == [1, 2]
