"""What one live stream is (docs/service.md, "Live push"; the whole design in
:mod:`mortecouille.web.live`): its place under the caps, the batches and backlog it sends, the
turns taken to send a backlog, and the server-sent events' framing."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Protocol

import msgspec
import structlog

from mortecouille.app.problems import problem_text
from mortecouille.events.base import Event
from mortecouille.events.storage.contract import EventStore

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


class SlotOwner(Protocol):
    """What gives the places under the caps (the hub): takes one back."""

    def _free(self, slot: Slot) -> None: ...


class Slot:
    """One stream's place under the caps, taken by :meth:`LiveHub.reserve` and given back once,
    whichever of its stream's end or its garbage collection comes first."""

    __slots__ = ("_hub", "game", "address", "_held")

    def __init__(self, hub: SlotOwner, game: str, address: str) -> None:
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
