"""Live push: every game's new events, as each listener may see them, by server-sent
events, with the work shared by all the streams of a game, and bounded.

One watcher per game with listeners hands every new event on:

* a game in files: a :class:`GameWatcher` tails the game's log file: it polls the file's size
  every ``interval`` seconds (0.2 s by default), so events appended by anyone, the service or the
  CLI on the same games directory, reach listeners within a second. It decodes only the complete
  lines appended since it last looked. The service's own appends wake it at once;
* a game in PostgreSQL: a :class:`StoreWatcher` reads the game from the next seq it has not handed
  on whenever it is woken: by the store's change feed (one LISTEN connection per process,
  :mod:`mortecouille.events.storage.postgres_feed`), which sees every append by every process on the same
  database, so several ``serve`` processes push every event to every listener; and by this
  service's own appends (a store without a feed: by a tick as well). The feed reads the store's
  global order after its last position, so a notification lost while its connection was down is
  caught up when it connects again; a watcher reads by seq, so nothing is handed on twice.

**One channel per game with streams** (:class:`GameChannel`) is the watcher's one listener: it
reads the game's log once, when its first stream opens, then follows the watcher; it keeps the
log's events, and, for each *viewer* with streams open (the spectators, the referee, each player:
whatever key the stream names), one :class:`Renderer` that renders every event once for all the
streams of that viewer (the service's is ``access.SharedView``). A stream (:func:`event_stream`)
is then a place in that rendering: it sends the rendering's messages after the client's
``Last-Event-ID``, then each batch the channel hands it, the same bytes every stream of that viewer
is sent. Joining the channel (its backlog taken, its place registered) happens at one instant on
the event loop, so a resume is exact: an event is in the backlog or in a batch, never both, never
neither. What a stream holds is a few references; what a channel holds is released when its last
stream closes.

**Bounds.** :meth:`LiveHub.reserve` refuses a stream past the caps (:class:`StreamLimits`: per
game, per client address, in all; :class:`StreamsFull`, a 503 with ``Retry-After``). A stream
whose reader falls more than ``lag`` events behind (batches pile up that it could not send) is
closed, its batches dropped: the client reconnects with ``Last-Event-ID`` and loses nothing. A
stream takes its backlog, and sends it, in its turn (:class:`SendGate`: a few at a time, a turn
taken back after a few seconds), so what the process holds of backlogs being sent does not grow
with the number of streams opening at once. A failure inside one stream ends that stream; inside
one viewer's rendering, the streams of that viewer; a channel that cannot go on (a gap in the
seqs) closes its streams, which reconnect.

**Seats.** A stream opened with a seat's token carries its grant (``access.SeatGrant``): it is
sent nothing until the seats, read after it joined, say the token still opens that seat, and
every batch is held for it until the seats are read again after that batch: a new link (``seats
--reissue`` in any process, the referee's page) closes the stream before it is sent anything of
the seat's that came after. The seats are read again every ``seat_check`` seconds as well, so the
stream stops even when nothing is appended.

Each message is ``id: SEQ``, ``event: event``, ``data: <EventView JSON>`` as that listener's viewer
may see the event. When an event makes earlier sealed events visible (a turn resolved, the last
fleet sealed, the game ended), an ``event: revealed`` message follows, with ``id:`` that event's
seq and ``data: {"seq": N, "events": [...]}``: the EventViews that this viewer had been sent sealed
and may now read. A comment line (``: heartbeat``) goes out to each stream that sent nothing for
about ``heartbeat`` seconds, the streams of a game spread over the interval.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Hashable, Sequence
from typing import Protocol

import structlog

from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import LogError, check_line, decode_line, decode_lines
from mortecouille.events.storage.contract import EventStore, FeedsAppends, GameStore, events_from
from mortecouille.events.storage.errors import StoreError
from mortecouille.events.storage.file_log import GameLog
from mortecouille.web.live_channel import GameChannel
from mortecouille.web.live_streams import (
    HEARTBEAT_SECONDS,
    POLL_SECONDS,
    SEAT_CHECK_SECONDS,
    GrantCheck,
    Renderer,
    SendGate,
    Slot,
    StreamLimits,
    StreamsFull,
    Subscriber,
    no_grants,
    problem_message,
)

_log = structlog.get_logger("mortecouille.web")


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
    :mod:`mortecouille.events.storage.postgres_feed`), by this service's own appends, and, for a store
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
    """The watchers and channels of a service's games, created as streams come and dropped when
    they go, and the caps on the streams.

    A game in files is tailed by a :class:`GameWatcher` (its file polled every ``interval``
    seconds, so the CLI's appends arrive too); a game in another store by a :class:`StoreWatcher`,
    woken by the store's change feed (:meth:`wake_game`, from the feed's thread) and by this
    service's appends; ``store_interval``: its tick, for a store without a feed (None: none).
    ``heartbeat``: a stream's comment when idle; ``seat_check``: how often the seats of a game with
    seat streams are read again; ``limits``: the caps; ``revoked``: which grants of seat streams no
    longer open their seat."""

    def __init__(
        self,
        interval: float = POLL_SECONDS,
        store_interval: float | None = POLL_SECONDS,
        *,
        heartbeat: float = HEARTBEAT_SECONDS,
        seat_check: float = SEAT_CHECK_SECONDS,
        limits: StreamLimits | None = None,
        revoked: GrantCheck = no_grants,
    ) -> None:
        self.interval = interval
        self.store_interval = store_interval
        self.heartbeat = heartbeat
        self.seat_check = seat_check
        self.limits = limits if limits is not None else StreamLimits()
        self.total = self.limits.in_all()
        #: turns to send a backlog (:class:`SendGate`)
        self.gate = SendGate()
        self.revoked = revoked
        #: how often each channel looks at its streams (heartbeats, seat checks), and in how many
        #: turns its heartbeats are spread
        self.tick = min(1.0, heartbeat / 4, seat_check)
        self.beats = max(1, round(heartbeat / self.tick))
        self.watchers: dict[str, Watcher] = {}
        self.channels: dict[str, GameChannel] = {}
        self._per_game: collections.Counter[str] = collections.Counter()
        self._per_address: collections.Counter[str] = collections.Counter()
        self._open = 0
        #: the event loop the watchers run on, once the service has started (see :meth:`wake`)
        self.loop: asyncio.AbstractEventLoop | None = None

    # --- the caps

    def reserve(self, game: str, address: str) -> Slot:
        """A place for a new stream of ``game`` from ``address``, or :class:`StreamsFull`."""
        limits = self.limits
        if self._open >= self.total:
            raise StreamsFull(
                f"the service has {self._open} streams open, its limit; retry later", limits.retry_after
            )
        if self._per_game[game] >= limits.per_game:
            raise StreamsFull(
                f"game {game!r} has {self._per_game[game]} streams open, the limit per game; retry later",
                limits.retry_after,
            )
        if self._per_address[address] >= limits.per_address:
            raise StreamsFull(
                f"this address has {self._per_address[address]} streams open, the limit per client "
                "address; close some, or retry later",
                limits.retry_after,
            )
        self._open += 1
        self._per_game[game] += 1
        self._per_address[address] += 1
        return Slot(self, game, address)

    def _free(self, slot: Slot) -> None:
        self._open -= 1
        for counts, key in ((self._per_game, slot.game), (self._per_address, slot.address)):
            counts[key] -= 1
            if counts[key] <= 0:
                del counts[key]

    def open_streams(self) -> int:
        """How many streams hold a place under the caps."""
        return self._open

    # --- games

    def channel(self, log_: EventStore) -> GameChannel:
        """The channel of ``log_``'s game, opened by its first stream (on the event loop)."""
        channel = self.channels.get(log_.name)
        if channel is None or channel.closed:
            channel = GameChannel(self, log_)
            self.channels[log_.name] = channel
        return channel

    def _forget(self, channel: GameChannel) -> None:
        name = channel.log.name
        if self.channels.get(name) is channel:
            del self.channels[name]
        watcher = self.watchers.get(name)
        if watcher is not None and not watcher.listeners:
            del self.watchers[name]

    def seats_changed(self, game: str) -> None:
        """A seat of ``game`` was given a new link (called from any thread): its seat streams are
        checked now rather than at the next check."""
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self._seats_changed, game)

    def _seats_changed(self, game: str) -> None:
        channel = self.channels.get(game)
        if channel is not None:
            channel.check_seats()

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
            files = log_.as_files()
            if files is not None:
                watcher = GameWatcher(files, self.interval)
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
        """End every stream and stop every watcher (the service stops)."""
        for channel in list(self.channels.values()):
            channel.close()
        for watcher in self.watchers.values():
            if watcher.task is not None:
                watcher.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher.task
                watcher.task = None


async def event_stream(
    hub: LiveHub,
    log_: EventStore,
    after: int,
    key: Hashable,
    make: Callable[[], Renderer],
    *,
    slot: Slot | None = None,
    grant: Hashable | None = None,
) -> AsyncIterator[bytes]:
    """The SSE body of one stream: every event after seq ``after`` as ``key``'s viewer may see it
    (``make`` makes that viewer's renderer, if the game's channel has none yet), then each new one
    as it is appended; see the module's docstring. ``slot``: its place under the caps, given back
    when it ends; ``grant``: what opened a seat's stream, checked against the game's seats."""
    channel: GameChannel | None = None
    subscriber: Subscriber | None = None
    turn: object | None = None
    loop = asyncio.get_running_loop()
    try:
        channel = hub.channel(log_)
        # a stream takes its backlog, and sends it, in its turn: what a stream holds of it, and
        # what it has written that its client has not read yet, is held in this process
        turn = await hub.gate.take()
        try:
            subscriber = await channel.join(key, make, after, grant)
        except (LogError, StoreError) as error:  # told as any answer tells it: never the log's bytes
            yield problem_message(error, log_.name)
            return
        if not subscriber.backlogged:
            hub.gate.give(turn)
            turn = None
        while True:
            sending = await subscriber.next()
            if sending is None:
                return
            pieces, backlog = sending
            for piece in pieces:
                yield piece
            subscriber.last_sent = loop.time()
            if backlog and turn is not None:
                hub.gate.give(turn)
                turn = None
    except Exception:  # noqa: BLE001 - MemoryError included: this stream ends, the service goes on
        _log.warning("a stream stopped", game=log_.name, exc_info=True)
    finally:
        if turn is not None:
            hub.gate.give(turn)
        if channel is not None and subscriber is not None:
            channel.leave(subscriber)
        if slot is not None:
            slot.release()


class AppendedRow(Protocol):
    """One row a change feed hands on (``events.storage.postgres_feed.FeedRow``): its game, seq, event
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
    """What sees every append to the store, by any process (``events.storage.postgres_feed.PostgresFeed``):
    started with the service, stopped with it; it calls its receiver from a thread of its own."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


#: How a service makes its change feed: given the receiver of each batch of rows.
FeedMaker = Callable[[Callable[[Sequence[AppendedRow]], None]], ChangeFeed]


def feed_for(store: GameStore) -> FeedMaker | None:
    """The change feed of ``store``, if it has one: a PostgreSQL store's (one LISTEN connection,
    :mod:`mortecouille.events.storage.postgres_feed`, imported only then); None for a file store, whose
    watchers poll the files."""
    if not isinstance(store, FeedsAppends):
        return None

    def make(receive: Callable[[Sequence[AppendedRow]], None]) -> ChangeFeed:
        return store.change_feed(receive)

    return make
