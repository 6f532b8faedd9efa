"""One channel per game with streams (:class:`GameChannel`; the design in
:mod:`mortecouille.web.live`): the log read once, followed through the watcher, rendered once per
viewer for all the streams of that viewer."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable, Hashable
from typing import Protocol

import structlog

from mortecouille.events.base import Event
from mortecouille.events.codec import LogError
from mortecouille.events.storage.contract import EventStore
from mortecouille.web.live_streams import (
    HEARTBEAT,
    SEAT_ENDED,
    Batch,
    GrantCheck,
    Renderer,
    StreamLimits,
    Subscriber,
)


class Watcher(Protocol):
    """What tails one game's log for its channel (``web.live``'s watchers)."""

    async def subscribe(self) -> asyncio.Queue[list[Event]]: ...

    def unsubscribe(self, queue: asyncio.Queue[list[Event]]) -> None: ...


class Hub(Protocol):
    """What a channel uses of its hub (``web.live.LiveHub``): its watchers, timings, caps."""

    seat_check: float
    tick: float
    beats: int
    heartbeat: float
    limits: StreamLimits
    revoked: GrantCheck

    def watcher(self, log_: EventStore) -> Watcher: ...

    def _forget(self, channel: GameChannel) -> None: ...


_log = structlog.get_logger("mortecouille.web")


class _Rendition:
    """One viewer's renderer in a channel, and the streams it renders for."""

    __slots__ = ("renderer", "subscribers")

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self.subscribers: set[Subscriber] = set()


class GameChannel:
    """Everything the streams of one game share (see the module's docstring): the log read once,
    followed through the watcher; one renderer per viewer; the streams of each; their heartbeats
    and the checks of their seats. Every method but the reads runs on the event loop."""

    def __init__(self, hub: Hub, log_: EventStore) -> None:
        self.hub = hub
        self.log = log_
        self.watcher = hub.watcher(log_)
        self.events: list[Event] = []
        self.renditions: dict[Hashable, _Rendition] = {}
        self.building: dict[Hashable, asyncio.Task[_Rendition]] = {}
        self.streams = 0
        #: how many of them were opened with a seat's token
        self.seat_streams = 0
        self.joining = 0
        #: the streams joining, by viewer
        self.joining_as: collections.Counter[Hashable] = collections.Counter()
        self.closed = False
        self.queue: asyncio.Queue[list[Event]] | None = None
        self.task: asyncio.Task[None] | None = None
        #: batches for seat streams, held until the seats are read after them
        self.held: list[tuple[_Rendition, Batch]] = []
        self.checking: asyncio.Task[None] | None = None
        self.check_again = False
        loop = asyncio.get_running_loop()
        self.check_due = loop.time() + hub.seat_check
        self.next_beat = loop.time() + hub.tick
        self.beat = 0
        self.joined = 0
        self.opened = asyncio.create_task(self._open(), name=f"open {log_.name}")

    @property
    def head(self) -> int:
        return len(self.events) - 1

    async def _open(self) -> None:
        """Follow the game, then read its log: an event appended meanwhile is in the read, in the
        watcher's first batches, or both (taken once), never in neither."""
        queue = await self.watcher.subscribe()
        if self.closed:  # its streams left while the watcher found the log's end
            self.watcher.unsubscribe(queue)
            self.hub._forget(self)
            return
        self.queue = queue
        try:
            self.events = await asyncio.to_thread(self.log.read)
        except BaseException:
            self.close()
            raise
        if not self.closed:
            self.task = asyncio.create_task(self._run(), name=f"channel {self.log.name}")

    async def join(
        self, key: Hashable, make: Callable[[], Renderer], after: int, grant: Hashable | None
    ) -> Subscriber:
        """A new stream of ``key``'s viewer (``make`` makes its renderer, if the channel has none
        yet), sent the events after seq ``after`` and then each new one."""
        self.joining += 1
        self.joining_as[key] += 1
        try:
            await asyncio.shield(self.opened)
            rendition = await self._rendition(key, make)
            while self.renditions.get(key) is not rendition and not self.closed:
                # its last stream left while this one waited for it: it no longer follows the game
                rendition = await self._rendition(key, make)
            # from here to the end, nothing awaits: the backlog and the place are taken at one instant
            now = asyncio.get_running_loop().time()
            subscriber = Subscriber(key, grant, max(after, self.head), self.joined % self.hub.beats, now)
            if self.closed:  # the channel failed meanwhile: the stream ends, and reconnects
                subscriber.close()
                return subscriber
            self.joined += 1
            if after < self.head:
                subscriber.pending.append(rendition.renderer.backlog(after))
            rendition.subscribers.add(subscriber)
            self.streams += 1
            self.seat_streams += grant is not None
        finally:
            self.joining -= 1
            self.joining_as[key] -= 1
            if not self.joining_as[key]:
                del self.joining_as[key]
                left = self.renditions.get(key)
                if left is not None and not left.subscribers:  # built for a stream that left meanwhile
                    del self.renditions[key]
            if self.streams == 0 and self.joining == 0:
                self.close()
        if grant is not None:
            self.check_seats()  # read after it joined: its backlog is sent once its grant holds
        return subscriber

    def leave(self, subscriber: Subscriber) -> None:
        rendition = self.renditions.get(subscriber.key)
        if rendition is None or subscriber not in rendition.subscribers:
            return
        rendition.subscribers.discard(subscriber)
        self.streams -= 1
        self.seat_streams -= subscriber.grant is not None
        if not rendition.subscribers and not self.joining_as[subscriber.key]:
            del self.renditions[subscriber.key]  # its renderer, and what it holds, goes with it
        if self.streams == 0 and self.joining == 0:
            self.close()

    async def _rendition(self, key: Hashable, make: Callable[[], Renderer]) -> _Rendition:
        found = self.renditions.get(key)
        if found is not None:
            return found
        building = self.building.get(key)
        if building is None:
            building = asyncio.create_task(self._build(key, make))
            self.building[key] = building
        return await asyncio.shield(building)

    async def _build(self, key: Hashable, make: Callable[[], Renderer]) -> _Rendition:
        """A renderer for ``key``'s viewer, started on the events the channel holds (in a worker
        thread), then given those that came meanwhile (on the loop, with no stream to send them to:
        a stream of this viewer joins after, its backlog has them)."""
        try:
            renderer = make()
            events = list(self.events)
            await asyncio.to_thread(renderer.start, events)
            if len(self.events) > len(events):
                renderer.more(self.events[len(events) :])
            rendition = _Rendition(renderer)
            if not self.closed:
                self.renditions[key] = rendition
            return rendition
        finally:
            del self.building[key]

    async def _run(self) -> None:
        """Take each batch the watcher hands on; between batches, the heartbeats and seat checks."""
        assert self.queue is not None
        while True:
            try:
                async with asyncio.timeout(self.hub.tick):
                    batch: list[Event] | None = await self.queue.get()
            except TimeoutError:
                batch = None
            try:
                if batch is not None:
                    self._take(batch)
                self._tick()
            except Exception:  # noqa: BLE001 - the channel's streams end and reconnect; the service goes on
                _log.warning("a game's streams stopped", game=self.log.name, exc_info=True)
                self.close()
            if self.closed:
                return

    def _take(self, batch: list[Event]) -> None:
        fresh = [event for event in batch if event.seq > self.head]
        if not fresh:
            return
        if [event.seq for event in fresh] != list(range(self.head + 1, self.head + 1 + len(fresh))):
            raise LogError(f"seqs {fresh[0].seq}.. do not follow seq {self.head}: reading the game again")
        self.events.extend(fresh)
        for key, rendition in list(self.renditions.items()):
            try:
                parts = rendition.renderer.more(fresh)
            except Exception:  # noqa: BLE001 - MemoryError included: this viewer's streams end, the rest go on
                _log.warning("a viewer's streams stopped", game=self.log.name, exc_info=True)
                self._drop(key, rendition)
                continue
            if not parts:
                continue
            shared = Batch(parts)
            seats = False
            for subscriber in rendition.subscribers:
                if subscriber.grant is None:
                    subscriber.push(shared, self.hub.limits.lag)
                else:
                    seats = True
            if seats:
                self.held.append((rendition, shared))
        if self.streams == 0 and self.joining == 0:
            self.close()  # every stream's rendering failed
        elif self.held:
            self.check_seats()

    def _drop(self, key: Hashable, rendition: _Rendition) -> None:
        self.renditions.pop(key, None)
        for subscriber in rendition.subscribers:
            subscriber.close()
            self.streams -= 1
            self.seat_streams -= subscriber.grant is not None
        rendition.subscribers.clear()

    def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        if now >= self.next_beat:
            # each turn looks at its share of the streams: their heartbeats spread over the interval
            self.beat = (self.beat + 1) % self.hub.beats
            quiet = now - self.hub.heartbeat / 2
            for rendition in self.renditions.values():
                for subscriber in rendition.subscribers:
                    if subscriber.beat == self.beat and subscriber.last_sent <= quiet:
                        subscriber.say(HEARTBEAT)
            self.next_beat = now + self.hub.tick
        if now >= self.check_due and self.seat_streams:
            self.check_seats()

    # --- seats

    def check_seats(self) -> None:
        """Read the game's seats (again) soon, in a worker thread: the seat streams whose token no
        longer opens their seat are closed; the others are sent what was held for them."""
        self.check_again = True
        if self.checking is None and not self.closed:
            self.checking = asyncio.create_task(self._check_seats(), name=f"seats {self.log.name}")

    async def _check_seats(self) -> None:
        try:
            while self.check_again and not self.closed:
                self.check_again = False
                held, self.held = self.held, []
                seats = [s for r in self.renditions.values() for s in r.subscribers if s.grant is not None]
                grants = frozenset(s.grant for s in seats if s.grant is not None)
                try:
                    revoked = await asyncio.to_thread(self.hub.revoked, self.log, grants)
                except Exception:  # noqa: BLE001 - seats that cannot be read open nothing: closed, they reconnect
                    _log.warning("a game's seats could not be read", game=self.log.name, exc_info=True)
                    revoked = grants
                for subscriber in seats:
                    if subscriber.grant in revoked:
                        subscriber.close(SEAT_ENDED)
                    elif not subscriber.closed:
                        subscriber.confirm()
                for rendition, batch in held:
                    # a stream that joined during the reading has these events in its backlog
                    # (skipped by seq), and is confirmed or closed by the next reading
                    for subscriber in rendition.subscribers:
                        if subscriber.grant is not None:
                            subscriber.push(batch, self.hub.limits.lag)
                self.check_due = asyncio.get_running_loop().time() + self.hub.seat_check
        finally:
            self.checking = None

    # --- the end

    def close(self) -> None:
        """End every stream of the game (they reconnect if they will) and let go of the game."""
        if self.closed:
            return
        self.closed = True
        for rendition in self.renditions.values():
            for subscriber in rendition.subscribers:
                subscriber.close()
        self.renditions.clear()
        self.held.clear()
        self.events = []
        self.streams = self.seat_streams = 0
        for task in (self.task, self.checking):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        if self.queue is not None:
            self.watcher.unsubscribe(self.queue)
        self.hub._forget(self)
