"""Live push (issue 14.5): every game's new events, as each listener may see them, by server-sent
events.

One watcher per game with listeners hands every new event to each listener's queue:

* a game in files: a :class:`GameWatcher` tails the game's log file: it polls the file's size
  every ``interval`` seconds (0.2 s by default), so events appended by anyone, the service or the
  CLI on the same games directory, reach listeners within a second. It decodes only the complete
  lines appended since it last looked. The service's own appends wake it at once;
* a game in PostgreSQL: a :class:`StoreWatcher` reads the game from the next seq it has not handed
  on whenever it is woken: by the store's change feed (one LISTEN connection per process,
  :mod:`mortecouille.events.postgres_feed`), which sees every append by every process on the same
  database, so several ``serve`` processes push every event to every listener; and by this
  service's own appends (a store without a feed: by a tick as well). The feed reads the store's
  global order after its last position, so a notification lost while its connection was down is
  caught up when it connects again; a watcher reads by seq, so nothing is handed on twice.

A listener (:func:`event_stream`) first registers its queue, then reads the log and sends what is
after the client's ``Last-Event-ID``; then it sends what its queue brings, skipping any seq it has
already sent. Registering before reading is what makes a resume exact: an event appended meanwhile
is in the read, or in the queue, or both (sent once), never in neither.

Each message is ``id: SEQ``, ``event: event``, ``data: <EventView JSON>`` as that listener's viewer
may see the event (:func:`mortecouille.web.access.event_message`). When an event makes earlier
sealed events visible (a turn resolved, the last fleet sealed, the game ended), an
``event: revealed`` message follows, with ``id:`` that event's seq and ``data: {"seq": N, "events":
[...]}``: the EventViews that this listener had received sealed and may now read. A comment line
(``: heartbeat``) goes out every ``heartbeat`` seconds so proxies and clients know the stream lives.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Protocol

import msgspec
import structlog

from mortecouille.app.problems import problem_text
from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import LogError, check_line, decode_line, decode_lines
from mortecouille.events.store import GameLog
from mortecouille.events.store_errors import StoreError
from mortecouille.events.stores import EventStore, FileStore, GameStore, events_from

_log = structlog.get_logger("mortecouille.web")

#: How often a watcher looks at its log's size, in seconds.
POLL_SECONDS = 0.2
#: How often a stream sends a comment when nothing happens, in seconds.
HEARTBEAT_SECONDS = 15.0


class _Watching:
    """What every watcher keeps: its listeners' queues and the task that feeds them, stopped when
    the last listener leaves."""

    def __init__(self) -> None:
        self.listeners: set[asyncio.Queue[list[Event]]] = set()
        self.task: asyncio.Task[None] | None = None

    def unsubscribe(self, queue: asyncio.Queue[list[Event]]) -> None:
        self.listeners.discard(queue)
        if not self.listeners and self.task is not None:
            self.task.cancel()
            self.task = None

    def _broadcast(self, events: list[Event]) -> None:
        for queue in self.listeners:
            queue.put_nowait(events)


class GameWatcher(_Watching):
    """Tails one game's log file and hands each new event to every listener's queue."""

    def __init__(self, log_: GameLog, interval: float) -> None:
        super().__init__()
        self.log = log_
        self.interval = interval
        self.offset = self._size()

    def _size(self) -> int:
        try:
            return os.stat(self.log.path).st_size
        except FileNotFoundError:
            return 0

    async def subscribe(self) -> asyncio.Queue[list[Event]]:
        """A new listener's queue: every event appended from now on is put in it."""
        queue: asyncio.Queue[list[Event]] = asyncio.Queue()
        self.listeners.add(queue)
        if self.task is None:
            self.offset = self._size()  # earlier events are each listener's own read
            self.task = asyncio.create_task(self._run(), name=f"watch {self.log.name}")
        return queue

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                self.poll()
            except Exception:  # noqa: BLE001 - a watcher keeps watching; the log is verify's to judge
                _log.warning("watcher could not read the log", game=self.log.name, exc_info=True)

    def wake(self) -> None:
        """Poll now, for an append this service just made (listeners need not wait for the tick)."""
        if not self.listeners:
            return
        try:
            self.poll()
        except Exception:  # noqa: BLE001 - as in _run: the next tick tries again
            _log.warning("watcher could not read the log", game=self.log.name, exc_info=True)

    def poll(self) -> None:
        """Read the complete lines appended since the last poll and hand them to the listeners."""
        size = self._size()
        if size < self.offset:  # cut by ``repair``: start again from its end
            self.offset = size
            return
        if size == self.offset:
            return
        with open(self.log.path, "rb") as handle:
            handle.seek(self.offset)
            data = handle.read(size - self.offset)
        complete = data[: data.rfind(b"\n") + 1]  # a line being written is read at the next poll
        if not complete:
            return
        events = decode_lines(complete)
        self.offset += len(complete)
        self._broadcast(events)


class StoreWatcher(_Watching):
    """Follows one game of a store that is not a file (PostgreSQL) by seq, and hands each new
    event to every listener's queue.

    It reads only when woken: by the store's change feed (an append by any process: LISTEN/NOTIFY,
    :mod:`mortecouille.events.postgres_feed`), by this service's own appends, and, for a store
    without a feed, by a tick every ``interval`` seconds (None: no tick); a read that fails is
    tried again :data:`RETRY_SECONDS` later. Each read asks for the events from the next seq it has not
    handed on (``events_from``) in a worker thread, one read at a time; wakes that come during a
    read cost one more read, not one each. So no event is handed on twice, and an event appended
    after a listener subscribed is handed on (or in that listener's own read; it sends it once).

    The first subscriber waits until the watcher knows where the game's log ends (its head):
    what was appended before is that listener's own read, what comes after is the watcher's.
    """

    def __init__(self, log_: EventStore, interval: float | None) -> None:
        super().__init__()
        self.log = log_
        self.interval = interval
        #: the seq of the next event to hand on (None until the head was read) and the hash of the
        #: last one (the chain a line offered by the feed must continue)
        self.next_seq: int | None = None
        self.last_hash = ""
        self._changed = asyncio.Event()
        self._ready: asyncio.Future[None] | None = None

    async def subscribe(self) -> asyncio.Queue[list[Event]]:
        """A new listener's queue: every event appended from now on is put in it."""
        queue: asyncio.Queue[list[Event]] = asyncio.Queue()
        self.listeners.add(queue)
        if self.task is None:
            self.next_seq = None
            self._ready = asyncio.get_running_loop().create_future()
            self._changed.set()
            self.task = asyncio.create_task(self._run(), name=f"watch {self.log.name}")
        assert self._ready is not None
        try:
            await asyncio.shield(self._ready)
        except BaseException:  # the listener left (or the service stops) before the head was read
            self.unsubscribe(queue)
            raise
        return queue

    def wake(self) -> None:
        """Read the game's new events soon (on the event loop's thread)."""
        self._changed.set()

    async def _run(self) -> None:
        while True:
            if self.interval is None:
                await self._changed.wait()
            else:
                with contextlib.suppress(TimeoutError):  # the tick, for a store without a feed
                    await asyncio.wait_for(self._changed.wait(), timeout=self.interval)
            self._changed.clear()
            try:
                await self._catch_up()
            except Exception:  # noqa: BLE001 - a watcher keeps watching; the log is verify's to judge
                _log.warning("watcher could not read the log", game=self.log.name, exc_info=True)
                # read again soon: the appends it could not read may be the last ones for a while
                asyncio.get_running_loop().call_later(RETRY_SECONDS, self._changed.set)

    async def _catch_up(self) -> None:
        if self.next_seq is None:
            head = await asyncio.to_thread(self.log.read_head)
            self.next_seq = head.seq + 1 if head is not None else 0
            self.last_hash = head.hash if head is not None else GENESIS_HASH
            if self._ready is not None and not self._ready.done():
                self._ready.set_result(None)
            return
        start = self.next_seq
        events = await asyncio.to_thread(lambda: list(events_from(self.log, start)))
        # the feed may have handed on some of them while this read was under way
        self._hand_on([event for event in events if event.seq >= (self.next_seq or 0)])

    def offer(self, lines: Sequence[tuple[int, bytes]]) -> None:
        """Lines (seq, bytes) the store's change feed read (on the event loop's thread): handed on
        as they are when they continue the chain this watcher holds (each checked as a reader
        checks a line: its seq, its prev, its hash), so the game need not be read again; a line
        that does not (a gap, the head still unknown, a line that fails its check) makes the
        watcher read the game instead."""
        if self.next_seq is None or not self.listeners:
            self.wake()
            return
        fresh = [(seq, line) for seq, line in lines if seq >= self.next_seq]
        events: list[Event] = []
        prev = self.last_hash
        try:
            for seq, line in fresh:
                if seq != self.next_seq + len(events):
                    raise LogError(f"seq {seq} does not follow seq {self.next_seq + len(events) - 1}")
                prev = check_line(line, seq + 1, seq, prev)
                events.append(decode_line(line, seq + 1))
        except LogError:
            self.wake()  # read from the store, whose reader names what is wrong
        self._hand_on(events)

    def _hand_on(self, events: list[Event]) -> None:
        if not events or self.next_seq is None or events[0].seq != self.next_seq:
            return
        self.next_seq = events[-1].seq + 1
        self.last_hash = events[-1].hash
        self._broadcast(events)


Watcher = GameWatcher | StoreWatcher

#: How soon a store watcher whose read failed (the database unreachable) reads again, in seconds.
RETRY_SECONDS = 1.0


class LiveHub:
    """The watchers of a service's games, created as listeners come and dropped when they go.

    A game in files is tailed by a :class:`GameWatcher` (its file polled every ``interval``
    seconds, so the CLI's appends arrive too); a game in another store by a :class:`StoreWatcher`,
    woken by the store's change feed (:meth:`wake_game`, from the feed's thread) and by this
    service's appends; ``store_interval``: its tick, for a store without a feed (None: none)."""

    def __init__(self, interval: float = POLL_SECONDS, store_interval: float | None = POLL_SECONDS) -> None:
        self.interval = interval
        self.store_interval = store_interval
        self.watchers: dict[str, Watcher] = {}
        #: the event loop the watchers run on, once the service has started (see :meth:`wake`)
        self.loop: asyncio.AbstractEventLoop | None = None

    def wake(self, log_: EventStore) -> None:
        """This service appended to ``log_``: have its watcher read the new lines now, on the event
        loop (this is called from the worker thread that ran the command), instead of at its next
        tick. The tick stays, for appends made by others (the CLI)."""
        self.wake_game(log_.name)

    def wake_game(self, game: str) -> None:
        """Someone appended to ``game`` (called from any thread): its watcher reads it now."""
        watcher = self.watchers.get(game)
        if watcher is not None and self.loop is not None:
            self.loop.call_soon_threadsafe(watcher.wake)

    def offer_lines(self, game: str, lines: Sequence[tuple[int, bytes]]) -> None:
        """The lines (seq, bytes) just appended to ``game``, from the store's change feed (called
        from its thread): its watcher hands them on (see :meth:`StoreWatcher.offer`)."""
        watcher = self.watchers.get(game)
        if watcher is None or self.loop is None:
            return
        if isinstance(watcher, StoreWatcher):
            self.loop.call_soon_threadsafe(watcher.offer, lines)
        else:
            self.loop.call_soon_threadsafe(watcher.wake)

    def watcher(self, log_: EventStore) -> Watcher:
        watcher = self.watchers.get(log_.name)
        if watcher is None:
            if isinstance(log_, GameLog):
                watcher = GameWatcher(log_, self.interval)
            else:
                watcher = StoreWatcher(log_, self.store_interval)
            self.watchers[log_.name] = watcher
        return watcher

    def poll_all(self) -> None:
        """Poll every file watcher now and wake every store watcher (tests; they look on their own too)."""
        for watcher in list(self.watchers.values()):
            if not watcher.listeners:
                continue
            if isinstance(watcher, GameWatcher):
                watcher.poll()
            else:
                watcher.wake()

    async def close(self) -> None:
        for watcher in self.watchers.values():
            if watcher.task is not None:
                watcher.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher.task
                watcher.task = None


def sse_message(*, data: bytes, event: str | None = None, seq: int | None = None) -> bytes:
    """One server-sent event: ``id:``, ``event:`` and one ``data:`` line (JSON has no newline)."""
    lines = []
    if seq is not None:
        lines.append(b"id: %d" % seq)
    if event is not None:
        lines.append(b"event: " + event.encode())
    lines.append(b"data: " + data)
    return b"\n".join(lines) + b"\n\n"


HEARTBEAT = b": heartbeat\n\n"


def parse_last_event_id(header: str | None) -> int:
    """The seq a reconnecting client last received, -1 for none (a new stream sends everything).
    An id that is not a seq is taken as none: the client gets the whole stream again, never a gap."""
    if header is None:
        return -1
    try:
        seq = int(header.strip())
    except ValueError:
        return -1
    return max(seq, -1)


async def event_stream(
    hub: LiveHub,
    log_: EventStore,
    after: int,
    render: EventRenderer,
    heartbeat: float = HEARTBEAT_SECONDS,
) -> AsyncIterator[bytes]:
    """The SSE body for one listener: every event after seq ``after``, as ``render`` shows it to
    the listener's viewer, then each new one as it is appended; see the module docstring."""
    watcher = hub.watcher(log_)
    queue = await watcher.subscribe()
    try:
        try:
            backlog = await asyncio.to_thread(log_.read)
        except (LogError, StoreError) as error:  # told as any answer tells it: never the log's bytes
            problem = {"message": problem_text(error, log_.name)}
            yield sse_message(event="problem", data=msgspec.json.encode(problem))
            return
        for chunk in render.start(backlog, after):
            yield chunk
        while True:
            try:
                batch = await asyncio.wait_for(queue.get(), timeout=heartbeat)
            except TimeoutError:
                yield HEARTBEAT
                continue
            for chunk in render.more(batch):
                yield chunk
    finally:
        watcher.unsubscribe(queue)


class AppendedRow(Protocol):
    """One row a change feed hands on (``events.postgres_feed.FeedRow``): its game, seq, event
    type and line."""

    @property
    def game(self) -> str: ...

    @property
    def seq(self) -> int: ...

    @property
    def type(self) -> str: ...

    @property
    def line(self) -> bytes: ...


class ChangeFeed(Protocol):
    """What sees every append to the store, by any process (``events.postgres_feed.PostgresFeed``):
    started with the service, stopped with it; it calls its receiver from a thread of its own."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


#: How a service makes its change feed: given the receiver of each batch of rows.
FeedMaker = Callable[[Callable[[Sequence[AppendedRow]], None]], ChangeFeed]


def feed_for(store: GameStore) -> FeedMaker | None:
    """The change feed of ``store``, if it has one: a PostgreSQL store's (one LISTEN connection,
    :mod:`mortecouille.events.postgres_feed`, imported only then); None for a file store, whose
    watchers poll the files."""
    if isinstance(store, FileStore):
        return None
    from mortecouille.events.postgres_store import PostgresStore

    if not isinstance(store, PostgresStore):
        return None
    from mortecouille.events.postgres_feed import PostgresFeed

    def make(receive: Callable[[Sequence[AppendedRow]], None]) -> ChangeFeed:
        return PostgresFeed(store.dsn, store.schema, receive)

    return make


class EventRenderer(Protocol):
    """How one listener's stream shows events (the service's is ``access.ListenerView``)."""

    def start(self, events: list[Event], after: int) -> list[bytes]:
        """The messages for the events of the log read at start with seq > ``after``."""

    def more(self, events: list[Event]) -> list[bytes]:
        """The messages for new events (some may have been sent already: skipped by seq)."""
