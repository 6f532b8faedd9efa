"""Live push (issue 14.5): every game's new events, as each listener may see them, by server-sent
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
from collections.abc import AsyncIterator, Callable, Hashable, Iterator, Sequence
from typing import Protocol

import msgspec
import structlog

from mortecouille.app.problems import problem_text
from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import LogError, check_line, decode_line, decode_lines
from mortecouille.events.storage.contract import EventStore, FeedsAppends, GameStore, events_from
from mortecouille.events.storage.errors import StoreError
from mortecouille.events.storage.file_log import GameLog

_log = structlog.get_logger("mortecouille.web")

#: How often a watcher looks at its log's size, in seconds.
POLL_SECONDS = 0.2
#: How often a stream sends a comment when nothing happens, in seconds.
HEARTBEAT_SECONDS = 15.0
#: How often the seats of a game with streams opened by a seat's token are read again, in seconds.
SEAT_CHECK_SECONDS = 2.0
#: The most a stream sends of its backlog in one piece, in bytes.
CHUNK_BYTES = 16 * 1024
#: How many streams of a process take and send their backlog at once (the others wait their turn):
#: a backlog is held in the process until sent, and what is written and not yet read by the client
#: too, up to about 100 KB a stream.
BACKLOG_SENDERS = 32
#: How long a stream may keep its turn to send its backlog before the next one is let in, in
#: seconds (a client that reads slowly, or not at all, then sends on without holding anyone up).
BACKLOG_PATIENCE_SECONDS = 5.0


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


# --- the caps ---------------------------------------------------------------------------------


class StreamLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The caps on a service's streams: ``per_game`` open on one game, ``per_address`` from one
    client address, ``total`` in all (None: the process's open-file limit less 256, at least 64:
    a stream holds a socket, and the service needs files and sockets for everything else); a
    stream past one is refused (503, ``Retry-After: retry_after`` seconds). ``lag``: how many
    events a stream may fall behind before it is closed."""

    per_game: int = 256
    per_address: int = 1024
    total: int | None = None
    lag: int = 1024
    retry_after: int = 10

    def __post_init__(self) -> None:
        for name in ("per_game", "per_address", "lag", "retry_after"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: at least 1")
        if self.total is not None and self.total < 1:
            raise ValueError("total: at least 1")

    def in_all(self) -> int:
        """The cap on all the streams of the process."""
        if self.total is not None:
            return self.total
        try:
            import resource
        except ImportError:  # not a POSIX system
            return 10_000
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return 10_000
        return max(64, soft - 256)


class StreamsFull(Exception):
    """A stream refused past a cap (503 with ``Retry-After``); the message names the cap."""

    status = 503
    code = 1

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Slot:
    """One stream's place under the caps, taken by :meth:`LiveHub.reserve` and given back once,
    whichever of its stream's end or its garbage collection comes first."""

    __slots__ = ("_hub", "game", "address", "_held")

    def __init__(self, hub: LiveHub, game: str, address: str) -> None:
        self._hub = hub
        self.game = game
        self.address = address
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._hub._free(self)


# --- what a stream is sent ---------------------------------------------------------------------


class Renderer(Protocol):
    """How the streams of one viewer of a game are sent its events, rendered once for all of them
    (the service's is ``access.SharedView``)."""

    def start(self, events: Sequence[Event]) -> None:
        """Take the log so far (run in a worker thread: nothing else holds the renderer yet)."""

    def backlog(self, after: int) -> list[bytes]:
        """The messages of the events after seq ``after``, as a stream opening now is sent them."""
        ...

    def more(self, events: Sequence[Event]) -> list[tuple[int, bytes]]:
        """The messages that new events (the next seqs, in order) send, by seq: each event's,
        with the ``revealed`` message it causes, if any."""
        ...


#: Given a game's log and the grants of its seat streams, the grants that no longer open their
#: seat (blocking: reads the game's seats; the service's is ``access.revoked_grants``).
GrantCheck = Callable[[EventStore, frozenset[Hashable]], frozenset[Hashable]]


def no_grants(log_: EventStore, grants: frozenset[Hashable]) -> frozenset[Hashable]:
    """A check for a hub whose streams carry no grant: every grant is revoked."""
    return grants


class Batch:
    """The messages of one batch of events for one viewer, the same bytes for every stream of
    that viewer: ``parts`` by seq, ``data`` all of them."""

    __slots__ = ("first", "last", "data", "parts")

    def __init__(self, parts: list[tuple[int, bytes]]) -> None:
        self.first = parts[0][0]
        self.last = parts[-1][0]
        self.parts = parts
        self.data = b"".join(part for _, part in parts)

    def after(self, seq: int) -> bytes:
        """What a stream that has sent up to ``seq`` sends of it."""
        if self.first > seq:
            return self.data
        return b"".join(part for at, part in self.parts if at > seq)


class Subscriber:
    """One stream's place in its channel: what it has still to send (its backlog, then batches
    and heartbeats, by reference), the last seq it sent, and whether it is closed.

    Batches it could not send pile up to ``lag`` events at most; one more and it is closed, its
    batches dropped (the client reconnects with ``Last-Event-ID``). A seat's stream (``grant``)
    sends nothing until its grant is confirmed by a reading of the seats made after it joined."""

    __slots__ = (
        "key", "grant", "after", "pending", "lag", "closed", "confirmed", "woken", "last_sent", "beat",
    )  # fmt: skip

    def __init__(self, key: Hashable, grant: Hashable | None, after: int, beat: int, now: float) -> None:
        self.key = key
        self.grant = grant
        self.after = after
        self.pending: collections.deque[Batch | bytes | list[bytes]] = collections.deque()
        self.lag = 0
        self.closed = False
        self.confirmed = grant is None
        self.woken = asyncio.Event()
        self.last_sent = now
        #: which of the channel's heartbeat turns looks at this stream
        self.beat = beat

    def push(self, batch: Batch, limit: int) -> None:
        """A batch to send; closed instead when it would leave the stream ``limit`` events behind."""
        if self.closed:
            return
        count = batch.last - batch.first + 1
        if self.lag and self.lag + count > limit:
            self.close()  # too far behind: it resumes from Last-Event-ID
            return
        self.pending.append(batch)
        self.lag += count
        self.woken.set()

    @property
    def backlogged(self) -> bool:
        """Whether it has its backlog still to send."""
        return bool(self.pending) and isinstance(self.pending[0], list)

    def say(self, message: bytes) -> None:
        """A message of no event (a heartbeat), sent only when nothing else is waiting."""
        if not self.closed and not self.pending:
            self.pending.append(message)
            self.woken.set()

    def confirm(self) -> None:
        self.confirmed = True
        self.woken.set()

    def close(self, last: bytes | None = None) -> None:
        """Close the stream: it sends ``last`` (if any), nothing else that was waiting, and ends."""
        self.closed = True
        self.pending.clear()
        self.lag = 0
        if last:
            self.pending.append(last)
        self.woken.set()

    async def next(self) -> tuple[Iterator[bytes], bool] | None:
        """What to send next (its pieces, joined as they are sent: a backlog is never copied
        whole) and whether it is the backlog, once there is something and the stream may send it;
        None when it is closed and has sent its last."""
        while True:
            if (self.confirmed or self.closed) and self.pending:
                item = self.pending.popleft()
                if isinstance(item, Batch):
                    self.lag -= item.last - item.first + 1
                    if item.last <= self.after:
                        continue
                    data = item.after(self.after)
                    self.after = item.last
                    return iter((data,)), False
                if isinstance(item, list):
                    return _chunks(item), True
                return iter((item,)), False
            if self.closed:
                return None
            self.woken.clear()
            await self.woken.wait()


def _chunks(messages: list[bytes]) -> Iterator[bytes]:
    """``messages`` joined into pieces of about :data:`CHUNK_BYTES`, one at a time."""
    piece: list[bytes] = []
    size = 0
    for message in messages:
        piece.append(message)
        size += len(message)
        if size >= CHUNK_BYTES:
            yield b"".join(piece)
            piece, size = [], 0
    if piece:
        yield b"".join(piece)


class SendGate:
    """Turns to send a backlog: at most ``width`` at once; a turn is given back by its stream, or
    after ``patience`` seconds, whichever comes first (so a client that never reads holds nobody
    up for long). Runs on the event loop."""

    def __init__(self, width: int = BACKLOG_SENDERS, patience: float = BACKLOG_PATIENCE_SECONDS) -> None:
        self.width = width
        self.patience = patience
        self.free = width
        self.waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self.turns: dict[object, asyncio.TimerHandle] = {}

    async def take(self) -> object:
        """A turn (wait for one to be free): a token for :meth:`give`."""
        loop = asyncio.get_running_loop()
        while self.free <= 0:
            turn: asyncio.Future[None] = loop.create_future()
            self.waiting.append(turn)
            try:
                await turn
            except BaseException:
                if turn.done() and not turn.cancelled():
                    self._next()  # handed a turn it will not take: to the next one
                else:
                    self.waiting.remove(turn)
                raise
        self.free -= 1
        token = object()
        self.turns[token] = loop.call_later(self.patience, self.give, token)
        return token

    def give(self, token: object) -> None:
        """Give a turn back (once: a turn given back already, by its stream or by the clock, is not)."""
        timer = self.turns.pop(token, None)
        if timer is None:
            return
        timer.cancel()
        self.free += 1
        self._next()

    def _next(self) -> None:
        while self.waiting:
            turn = self.waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                return


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

    def __init__(self, hub: LiveHub, log_: EventStore) -> None:
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


def problem_message(error: Exception, game: str) -> bytes:
    """The ``problem`` message a stream ends with when the game's log cannot be read, told as any
    answer tells it (:func:`~mortecouille.app.problems.problem_text`: never the log's bytes)."""
    return sse_message(event="problem", data=msgspec.json.encode({"message": problem_text(error, game)}))


#: What a seat's stream is sent last when its token no longer opens the seat (a new link replaced it).
SEAT_ENDED = sse_message(
    event="problem",
    data=msgspec.json.encode(
        {"message": "token: no longer opens a seat of this game (a new link replaced it); stream closed"}
    ),
)


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
