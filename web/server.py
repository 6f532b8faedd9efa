"""The game service's HTTP application (issue 14, items 1, 4, 5, 7; docs/service.md).

:func:`build_app` makes the Litestar application for a games directory; ``mortecouille serve``
runs it under uvicorn and the tests drive it with Litestar's test client. Every command goes
through the application layer (``mortecouille.app.commands.run_command`` and friends), the very
path the CLI takes, so the rules, the refusals and the log are the same, and the game's lock is
shared with any CLI command running on the same games meanwhile.

Handlers that touch a log run in a worker thread (``sync_to_thread=True``): a command takes the
game's lock and fsyncs, which must not block the event loop. A command's answer is sent after
``run_command`` returned, that is after the fsync: no 2xx ever precedes the events on disk.

Fair play (issue 15; docs/service.md, "Receipts and head codes" and "Dice nobody can foresee"):
every player's submission is answered with its receipt, the view and a resolve carry the head code,
and a game of contributed dice takes its players' commitments and reveals, locks its turn once
everything is in (:mod:`mortecouille.app.auto_lock`) or at the deadline, and resolves a turn locked
at its deadline once the reveals are in or its grace period is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

import msgspec
import structlog
from litestar import Litestar, Request, Response, delete, get, post
from litestar.datastructures import ResponseHeader
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.response import File, Stream

from mortecouille.app import auto_lock
from mortecouille.app.commands import (
    Idempotency,
    KnownState,
    Outcome,
    ending,
    new_game,
    resolve_turn,
    run_command,
)
from mortecouille.app.creation_retry import KEY_HEADER, CreationInProgress, KeyUsedSince, reissue_for_retry
from mortecouille.app.deadlines import (
    deadline_in_force,
    deadline_passed,
    iso,
    pass_deadline_if_due,
    resolve_after_deadline,
    reveal_wait,
    set_deadline,
)
from mortecouille.app.fork import fork_game, latest_fork_point
from mortecouille.app.games import game_log, load
from mortecouille.app.idempotency import (
    CREATION,
    FORK,
    REFEREE_SEAT,
    IdempotencyIndex,
    key_digest,
    player_seat,
    seat_digest,
)
from mortecouille.app.listing import public_games
from mortecouille.app.order_grammar import parse_actions_text, with_targets_named
from mortecouille.app.prices import price_list
from mortecouille.app.receipts import is_submission, new_receipt_salt, receipt_for, turn_head_code
from mortecouille.app.snapshot_keeper import SnapshotKeeper
from mortecouille.core.board.geometry import parse_facing, parse_square
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.contributions import CommitDiceContribution, LockTurn, RevealDiceContribution
from mortecouille.core.deadlines import parse_time
from mortecouille.core.errors import BadInput, MortecouilleError
from mortecouille.core.fleet.commands import (
    BuyShip,
    EquipFleet,
    EquipShip,
    SealFleet,
    WithdrawShip,
)
from mortecouille.core.life_cycle import Command, check_game_name
from mortecouille.core.limits import name_key
from mortecouille.core.rulings import RecordRuling, parse_adjustment
from mortecouille.core.state import GameState
from mortecouille.core.turn_commands import GiveOrder, GiveTokens, WithdrawOrder
from mortecouille.events.base import Event
from mortecouille.events.game import GameCreated
from mortecouille.events.storage.contract import EventStore, FileStore, GameStore, events_from
from mortecouille.events.storage.errors import Conflict, GameNotFound, Unwritable
from mortecouille.replays.reading.receipts import check_salt
from mortecouille.web import access
from mortecouille.web.access import builtins
from mortecouille.web.access_log import AccessLog, ASGIApp, write_access_log
from mortecouille.web.board import board_from
from mortecouille.web.bodies import (
    BuyBody,
    CommitBody,
    DeadlineBody,
    EndBody,
    EquipBody,
    ForkBody,
    NewGameBody,
    OrdersBody,
    PlaceBody,
    ResolveBody,
    RevealBody,
    RulingBody,
    SealBody,
    ShipBody,
    TokensBody,
    WithdrawBody,
)
from mortecouille.web.errors import EXCEPTION_HANDLERS, HEADERS, Forbidden, error_response
from mortecouille.web.guards import HostPolicy, RequestGuard
from mortecouille.web.live import (
    HEARTBEAT_SECONDS,
    POLL_SECONDS,
    SEAT_CHECK_SECONDS,
    AppendedRow,
    ChangeFeed,
    FeedMaker,
    LiveHub,
    StreamLimits,
    StreamsFull,
    event_stream,
    feed_for,
    parse_last_event_id,
)
from mortecouille.web.log_lines import LogLines
from mortecouille.web.targets import targets_for

_log = structlog.get_logger("mortecouille.web")

#: The largest request body the service reads (413 beyond): an order is a few hundred bytes.
MAX_BODY_BYTES = 64 * 1024

#: Where the pages are (another part of the project writes them; the service only serves them).
PAGES = Path(__file__).parent / "pages"
#: The kinds of file the pages' static folder serves, each with the type a browser must be told.
STATIC_MEDIA_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}

#: Sent with every answer: no inline script runs, no URL (and so no token) leaves in a Referer.
SECURITY_HEADERS = tuple(ResponseHeader(name=name, value=value) for name, value in HEADERS.items())

#: How long a turn locked at its deadline waits for its players' reveals before it is resolved
#: without those still missing (D3): time for every page to see the lock and send its reveal.
REVEAL_GRACE_SECONDS = 30.0

#: The event types after which a game's deadline (or its reveal wait) may have changed.
DEADLINE_TYPES = frozenset({"deadline-set", "deadline-passed", "turn-locked"})

#: How many receipts' salts the service remembers, to answer an idempotent retry the very receipt
#: it answered first (:meth:`Service.receipt_salt`); the oldest are forgotten first.
REMEMBERED_SALTS = 100_000

Clock = Callable[[], datetime]


@runtime_checkable
class OneConnection(Protocol):
    """A log that can run a block on one connection of its store (the PostgreSQL store's)."""

    def session(self) -> contextlib.AbstractContextManager[None]: ...


def system_clock() -> datetime:
    return datetime.now(UTC)


class Service:
    """What the handlers share: the store of games, the clock, the keys' index, the watchers."""

    def __init__(
        self,
        store: GameStore,
        base_url: str | None,
        clock: Clock,
        poll: float,
        heartbeat: float,
        *,
        reveal_grace: timedelta = timedelta(seconds=REVEAL_GRACE_SECONDS),
        lock_when_all_in: bool = True,
        streams: StreamLimits | None = None,
        seat_check: float = SEAT_CHECK_SECONDS,
    ) -> None:
        self.store = store
        self.base_url = base_url
        self.clock = clock
        self.heartbeat = heartbeat
        self.reveal_grace = reveal_grace
        self.lock_when_all_in = lock_when_all_in
        self.keys = IdempotencyIndex()
        self.hub = LiveHub(
            poll, heartbeat=heartbeat, seat_check=seat_check, limits=streams, revoked=access.revoked_grants
        )
        #: the deadline in force of each game that has one (the only games the clock looks at);
        #: handlers (worker threads) and the clock's thread both change it, under ``pending_guard``
        self.pending: dict[str, datetime] = {}
        #: each game whose turn, locked at its deadline, waits for its reveals (D3): the turn, its
        #: deadline as set, and when the wait ends (the grace counted from when this service first
        #: saw the turn waiting, so a restart gives the pages the whole grace again); same guard
        self.waits: dict[str, Wait] = {}
        self.pending_guard = threading.Lock()
        #: (game, idempotency key digest) -> the salt of the receipt first answered for that key
        self.salts: dict[tuple[str, str], str] = {}
        self.salts_guard = threading.Lock()
        #: game -> the events this service last saw of it, with the state they fold to
        #: (:meth:`events_after`); the next command checks them against the log's head
        self.seen: dict[str, tuple[list[Event], GameState]] = {}
        self.seen_guard = threading.Lock()
        #: whether a change feed hands this service every append of the store (build_app sets it)
        self.followed = False
        #: writes the snapshot of the games this service plays (files or PostgreSQL), off the requests' path
        #: (:meth:`events_after`): its commands carry the state on, so they never fold enough
        #: events to make one due themselves (app/snapshot_keeper.py)
        self.snapshots = SnapshotKeeper()
        #: each game's lines as the log holds them, for the chain the pages witness
        #: (docs/service.md, "Phones as witnesses")
        self.lines = LogLines()

    # --------------------------------------------------------------- requests

    @contextlib.contextmanager
    def session(self, game: str) -> Iterator[EventStore]:
        """GAME's log (404 when it has none) for one request, on one connection of a store that
        has them (PostgreSQL: :meth:`PostgresGameLog.session`): the caller's seat, the game's lock,
        its reads, its seed and its append then cost one connection, lent once by the pool."""
        log_ = game_log(self.store, game)
        with log_.session() if isinstance(log_, OneConnection) else contextlib.nullcontext():
            if not log_.exists():
                raise GameNotFound(f"game {game!r}: no such game")
            yield log_

    def existing_log(self, game: str) -> EventStore:
        """GAME's log, or 404 (GameNotFound) when it has none."""
        log_ = game_log(self.store, game)
        if not log_.exists():
            raise GameNotFound(f"game {game!r}: no such game")
        return log_

    def base(self, request: Request[Any, Any, Any]) -> str:
        """The URL the links start with: the one ``serve`` was given, else the request's own."""
        return self.base_url or str(request.base_url).rstrip("/")

    def idempotency(self, request: Request[Any, Any, Any], viewer: access.Viewer) -> Idempotency | None:
        """The request's ``Idempotency-Key``, scoped to the seat of ``viewer`` (docs/service.md,
        "Idempotency-Key"), if it was sent with one."""
        key = request.headers.get(KEY_HEADER)
        if key is None:
            return None
        seat = player_seat(viewer.player) if viewer.player is not None else REFEREE_SEAT
        return Idempotency(seat_digest(seat, key), self.keys, seat=seat, legacy=key_digest(key))

    def command(
        self,
        request: Request[Any, Any, Any],
        game: str,
        roles: tuple[str, ...],
        build: Callable[[access.Viewer, GameState], Command],
        *,
        table_values: list[int] | None = None,
    ) -> dict[str, Any]:
        """Identify the caller, check their role, run ``build``'s command on the command path and
        answer with what it appended, as the caller may see it."""
        with self.session(game) as log_:
            viewer = access.viewer_for(log_, request.headers.get("Authorization"))
            allow(viewer, roles)
            outcome = run_command(
                log_,
                lambda state: build(viewer, state),
                table_values=table_values,
                expected_seq=if_match(request),
                known=self.known_state(log_),
                idempotency=self.idempotency(request, viewer),
            )
            return self.answer(log_, viewer, outcome)

    def answer(self, log_: EventStore, viewer: access.Viewer, outcome: Outcome) -> dict[str, Any]:
        """``{seq, events, lines}``: the appended events as ``viewer`` may see them (a player sees
        their own orders; a referee's resolve shows the outcome)."""
        if not self.followed:  # with a change feed, the append comes back through it, lines and all
            self.hub.wake(log_)
        return access.answer(self.events_after(log_, outcome), viewer, outcome.events)

    # --------------------------------------------------------------- the last log each game was seen with

    def events_after(self, log_: EventStore, outcome: Outcome) -> list[Event]:
        """The game's events up to what ``outcome`` appended: the events this service last saw
        followed by the appended ones when these chain on to them (the first one's seq and prev
        are the next seq and the last hash: by the hash chain, nobody appended in between), else
        the log read again. Kept (:attr:`seen`) with the state they fold to, for the next
        command's :meth:`known_state`: on a database, a command then reads the game once (the
        head) instead of whole twice."""
        appended = outcome.events
        with self.seen_guard:
            seen = self.seen.get(log_.name)
        before = seen[0] if seen is not None else []
        if before and appended and (appended[0].seq, appended[0].prev) == (len(before), before[-1].hash):
            events = [*before, *appended]
        elif before and appended and appended[0].seq > len(before):
            # another process appended in between: only what came after the events seen is read,
            # kept if it chains on to them (by the hash chain, they are then the log's first ones)
            later = list(events_from(log_, len(before)))
            chained = bool(later) and (later[0].seq, later[0].prev) == (len(before), before[-1].hash)
            events = [*before, *later] if chained else log_.read()
        else:
            events = log_.read()
        if appended and events and events[-1].hash == appended[-1].hash:
            # the state after an append is the fold of the log up to it (run_command's outcome)
            with self.seen_guard:
                self.seen[log_.name] = (events, outcome.state)
            # the game's snapshot (GAME.state on files, a row on PostgreSQL) is rewritten each
            # time it passes a multiple of SNAPSHOT_EVERY events, in the keeper's thread
            self.snapshots.appended(log_, appended, outcome.state)
        return events

    def known_state(self, log_: EventStore) -> KnownState | None:
        """The state folded from the events last seen of the game, for ``run_command``, which uses it
        only if the log still ends where they did (same next seq and last hash)."""
        with self.seen_guard:
            seen = self.seen.get(log_.name)
        if seen is None or not seen[0]:
            return None
        events, state = seen
        return KnownState(next_seq=len(events), last_hash=events[-1].hash, state=state)

    # --------------------------------------------------------------- submissions and receipts

    def submit(
        self,
        request: Request[Any, Any, Any],
        game: str,
        roles: tuple[str, ...],
        build: Callable[[access.Viewer, GameState], Command],
        salt: str | None,
    ) -> dict[str, Any]:
        """A player's submission (or the referee's, for a player): :meth:`command`'s answer with
        the submission's ``receipt`` (issue 15.1), salted with ``salt`` (checked before anything
        is written: 400 naming ``salt``). Then, in a game of contributed dice, the turn is locked
        if everything is in (:func:`~mortecouille.app.auto_lock.lock_when_all_in`)."""
        if salt is not None and (problem := check_salt(salt)) is not None:
            raise BadInput("salt", problem)
        with self.session(game) as log_:
            viewer = access.viewer_for(log_, request.headers.get("Authorization"))
            allow(viewer, roles)
            key = request.headers.get(KEY_HEADER)
            idempotency = self.idempotency(request, viewer)
            outcome = run_command(
                log_,
                lambda state: build(viewer, state),
                expected_seq=if_match(request),
                known=self.known_state(log_),
                idempotency=idempotency,
            )
            salt = self.receipt_salt(log_, key, idempotency, salt)
            if auto_lock.all_in(outcome.state):  # checked again under the lock: another append may come first
                self.lock_if_all_in(log_)
            answered = self.answer(log_, viewer, outcome)
            receipt = receipt_for(outcome, salt) if is_submission(outcome.events) else None
            answered["receipt"] = builtins(receipt) if receipt is not None else None
            return answered

    def receipt_salt(
        self, log_: EventStore, key: str | None, idempotency: Idempotency | None, sent: str | None
    ) -> str:
        """The salt of a submission's receipt. Under an ``Idempotency-Key`` the service answers a
        retry with the salt of the receipt it answered first, whatever salt the retry sent, as long
        as it remembers it (until it restarts, or :data:`REMEMBERED_SALTS` later); failing that,
        the salt sent, else one derived from the key (the same for every retry of the key, across
        a restart too). Without a key: the salt sent, else a fresh random one."""
        if idempotency is None or key is None:
            return sent or new_receipt_salt()
        remembered = (log_.name, idempotency.digest)
        with self.salts_guard:
            first = self.salts.get(remembered)
            if first is None:
                first = sent or key_salt(key)
                self.salts[remembered] = first
                while len(self.salts) > REMEMBERED_SALTS:
                    del self.salts[next(iter(self.salts))]
        return first

    def create_once(
        self,
        log_: EventStore,
        base: str,
        key: CreationKey | None,
        create: Callable[[], list[Event]],
        *,
        forked_from: str | None = None,
    ) -> tuple[dict[str, Any], Event]:
        """Create a game (``create`` writes its log, the ``key``'s digest on its first line) and
        issue its seats: the creation's answer, and its first event.

        With an ``Idempotency-Key`` (``key``), a name already taken by a creation under that
        very key, and nothing appended since, answers that creation again with fresh seats
        (:func:`~mortecouille.app.creation_retry.reissue_for_retry`); appended since: 409 naming
        the key. Two creations racing with one key: one creates, the other answers the re-issue
        (or a 409 if its re-issue came first and the creator's seats could not be issued)."""
        for _attempt in range(3):  # a log found empty: a racing creation under way or taken back
            try:
                created = create()
            except (Conflict, MortecouilleError) as refused:
                # the name taken, or a body the rules refuse (other players, another fork point):
                # under the key of this game's creation, a retry answers that creation
                if key is None:
                    raise
                try:
                    again = reissue_for_retry(
                        log_, key.digest, self.keys, forked_from=forked_from, legacy=key.legacy
                    )
                except CreationInProgress:
                    if isinstance(refused, Conflict):
                        continue
                    raise refused from None
                except (GameNotFound, Unwritable):
                    raise refused from None  # no game (or none to open): the body's own refusal
                except KeyUsedSince as error:
                    raise KeyConflict(str(error), field=error.field) from None
                if again is None:
                    raise  # the name is taken by another creation, or the body refused: it stands
                return access.seats_answer(log_, base, again.events, again.seats), again.events[0]
            try:
                answer = access.issue(log_, base, created)
            except Conflict:
                if key is None:
                    raise
                # a retry with this key re-issued the seats between our write and our issue:
                # that answer holds the working tokens; ours would not open them
                raise KeyConflict(
                    f"{KEY_HEADER}: a retry with this key was answered meanwhile with the game's "
                    "seats; use that answer",
                    field=KEY_HEADER,
                ) from None
            return answer, created[0]
        raise KeyConflict(
            f"{KEY_HEADER}: game {log_.name!r} is being created by another request; retry",
            field=KEY_HEADER,
        )

    def lock_if_all_in(self, log_: EventStore) -> None:
        """Lock a contributed turn that waits for nobody any more (when enabled). Never fails the
        submission that led here, which is on disk already: a problem is logged."""
        if not self.lock_when_all_in:
            return
        try:
            locked = auto_lock.lock_when_all_in(log_)
        except Exception:  # noqa: BLE001 - the submission was appended: its 2xx must be sent
            _log.warning("turn not locked", game=log_.name, exc_info=True)
            return
        if locked is not None:
            _log.info("turn locked: every order and commitment is in", game=log_.name)

    # --------------------------------------------------------------- appends by other processes

    def changed(self, rows: Sequence[AppendedRow]) -> None:
        """Rows appended to the store by any process, from its change feed (in the feed's thread):
        hand each game's new lines to its watcher (live push in every process, without reading the
        game again), and note again the deadline of a
        game whose new rows may change it (a deadline set, passed or a turn locked by another
        process, or any append to a game this service has a deadline or a reveal wait for), so
        that the clock of every process knows every deadline in force."""
        games = list(dict.fromkeys(row.game for row in rows))
        for game in games:
            self.hub.offer_lines(game, [(row.seq, row.line) for row in rows if row.game == game])
        with self.pending_guard:
            watched = set(self.pending) | set(self.waits)
        to_note = [
            game
            for game in games
            if game in watched or any(row.game == game and row.type in DEADLINE_TYPES for row in rows)
        ]
        loop = self.hub.loop
        for game in to_note:
            if loop is not None:
                asyncio.run_coroutine_threadsafe(asyncio.to_thread(self.note_deadline, game), loop)

    # --------------------------------------------------------------- after a crash

    def cut_torn_tails(self) -> list[str]:
        """Cut the torn tail a crash mid-append left on any game's log, as ``repair`` does, and
        return the games cut. Only a tail after the head anchor is cut: an append whose fsync never
        returned, so no client ever got a 2xx for it (a retry with its Idempotency-Key appends it
        again). A log missing lines its anchor vouches for is left alone: ``repair`` reports it."""
        cut: list[str] = []
        folder = self.store.folder()
        if folder is None:
            return cut  # a database commits an append whole or not at all: no torn tail
        for path in sorted(folder.glob("*.jsonl")):
            if not _ends_torn(path):
                continue
            log_ = game_log(self.store, path.name.removesuffix(".jsonl")).as_files()
            if log_ is None:
                continue
            try:
                plan = log_.repair_plan()
                if plan.lost or not plan.removed:
                    continue
                removed = log_.repair()
            except Exception:  # noqa: BLE001 - a log repair refuses stays as it is, for verify to tell
                _log.warning("torn tail not cut", game=log_.name, exc_info=True)
                continue
            _log.warning("cut a torn tail left by a crash", game=log_.name, bytes=len(removed))
            cut.append(log_.name)
        return cut

    # --------------------------------------------------------------- deadlines

    def find_deadlines(self) -> None:
        """Note every game's deadline in force (at start: deadlines outlive a restart)."""
        for game in self.store.names():
            self.note_deadline(game)

    def note_deadline(self, game: str) -> None:
        """Note ``game``'s deadline in force as its log says, or forget it if it has none; and
        whether its turn waits for its reveals after its deadline (:attr:`waits`)."""
        try:
            events, state = load(game_log(self.store, game))
        except Exception:  # noqa: BLE001 - a log that cannot be read has no deadline to keep
            with self.pending_guard:
                self.pending.pop(game, None)
                self.waits.pop(game, None)
            return
        deadline = deadline_in_force(events, state.turn) if not state.ended else None
        with self.pending_guard:
            if deadline is None:
                self.pending.pop(game, None)
            else:
                self.pending[game] = parse_time("at", deadline.at)
        self.note_wait(game, events, state)

    def note_wait(self, game: str, events: list[Event], state: GameState) -> Wait | None:
        """Note (or forget) ``game``'s reveal wait as ``events`` (its log, folded: ``state``) say;
        a wait already noted for the same turn keeps the end it was given."""
        found = reveal_wait(events, state)
        with self.pending_guard:
            if found is None:
                self.waits.pop(game, None)
                return None
            noted = self.waits.get(game)
            if noted is None or noted.turn != found.turn:
                noted = Wait(turn=found.turn, deadline=found.at, until=self.clock() + self.reveal_grace)
                self.waits[game] = noted
            return noted

    def check_deadlines(self) -> list[str]:
        """Pass every noted deadline the clock has reached (resolving a seeded-dice turn, or locking
        a contributed one whose players committed), and resolve every turn waiting for its reveals
        once they are in or its grace is over; return the games the clock wrote to. Only games with
        a deadline due or a turn waiting are read, under their lock. Never raises: a game's problem
        is logged and never stops the others'."""
        now = self.clock()
        acted = set()
        with self.pending_guard:
            noted = sorted(self.pending.items())
        for game, at in noted:
            if at > now:
                continue
            try:
                if pass_deadline_if_due(game_log(self.store, game), now) is not None:
                    acted.add(game)
            except Exception:  # noqa: BLE001 - one game's problem never stops the others' deadlines
                _log.warning("deadline not passed", game=game, exc_info=True)
            self.note_deadline(game)  # passed, or moved meanwhile: the log says which
        with self.pending_guard:
            waiting = sorted(self.waits)
        for game in waiting:
            if self.settle(game, now):
                acted.add(game)
        return sorted(acted)

    def settle(self, game: str, now: datetime) -> bool:
        """Resolve ``game``'s turn if it waits for its reveals after its deadline and they are all
        in, or its grace is over at ``now`` (then without the reveals still missing, the reason
        naming the deadline); whether it was resolved. Never raises (logged)."""
        with self.pending_guard:
            wait = self.waits.get(game)
        if wait is None:
            return False
        reason = (
            f"deadline {wait.deadline} passed and no reveal came within "
            f"{self.reveal_grace.total_seconds():g} s of the lock"
            if now >= wait.until
            else None
        )
        try:
            resolved = resolve_after_deadline(game_log(self.store, game), absent_reason=reason)
        except Exception:  # noqa: BLE001 - the clock's thread, or a reveal already answered
            _log.warning("turn waiting for its reveals not resolved", game=game, exc_info=True)
            resolved = None
        self.note_deadline(game)
        if resolved is not None:
            _log.info("turn resolved after its deadline", game=game, without_reveals=reason is not None)
        return resolved is not None


class Wait(msgspec.Struct, frozen=True, kw_only=True):
    """A turn locked at its deadline, waiting for its reveals until ``until`` (D3)."""

    turn: int
    deadline: str
    until: datetime


def key_salt(key: str) -> str:
    """The receipt salt of a submission sent with the ``Idempotency-Key`` ``key`` and no salt: 32
    hex digits derived from the key (random, as a client's key is, and the same for every retry of
    it). Not the key's digest the log keeps (``idem``), so the log does not give it away."""
    return hashlib.sha256(b"mortecouille receipt salt v1\n" + key.encode("utf-8")).hexdigest()[:32]


def _ends_torn(path: Path) -> bool:
    """Whether the file at ``path`` ends in a line without its newline (read from its end only)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"
    except OSError:
        return False


class KeyConflict(Forbidden):
    """A creation's ``Idempotency-Key`` that cannot be answered again (409, naming the header):
    the game moved on since its creation, or a racing request with the same key answered it.
    A :class:`Forbidden` for its handler, which sends a status and a field."""

    status = 409
    code = 3


class CreationKey(NamedTuple):
    """A creation's ``Idempotency-Key``: its digest scoped to creations (or forks), written on the
    new log's first line, and its unscoped digest, which a game created before keys were scoped
    keeps."""

    digest: str
    legacy: str


def creation_key(request: Request[Any, Any, Any], seat: str) -> CreationKey | None:
    """A creation's (``seat`` :data:`~mortecouille.app.idempotency.CREATION`) or a fork's
    (:data:`~mortecouille.app.idempotency.FORK`) ``Idempotency-Key``, if it was sent with one."""
    key = request.headers.get(KEY_HEADER)
    return CreationKey(seat_digest(seat, key), key_digest(key)) if key is not None else None


def allow(viewer: access.Viewer, roles: tuple[str, ...]) -> None:
    """Refuse (403) a viewer whose role may not use the endpoint."""
    if viewer.role not in roles:
        who = "a spectator" if viewer.role == "spectator" else f"the {viewer.role}"
        raise Forbidden(f"{who} may not do this; it is for the {' or '.join(roles)}")


def fork_target(store: GameStore, name: str) -> EventStore:
    """The fork's log, its name checked first so a bad one is refused naming ``name`` (the body's
    field; the command path would name the CLI's ``GAME``, here the game forked from)."""
    try:
        check_game_name(name)
        return game_log(store, name)
    except BadInput as error:
        raise BadInput("name", error.message) from None


def if_match(request: Request[Any, Any, Any]) -> int | None:
    """``If-Match: SEQ`` (the CLI's ``--expect-seq``): the seq the first new event must get."""
    header = request.headers.get("If-Match")
    if header is None:
        return None
    try:
        return int(header.strip().strip('"'))
    except ValueError:
        raise BadInput("If-Match", f"{header!r} is not a seq") from None


# ------------------------------------------------------------------- ownership checks


def own_ship(viewer: access.Viewer, state: GameState, ship: str) -> str:
    """The id of the calling player's ship ``ship`` (placed, or bought and not yet placed; case and
    spacing aside, as the CLI matches names), or 403 naming ``ship``.

    Only the caller's own ships are searched, and any other name is refused alike, whether another
    player's ship or none: a refusal that told them apart, or a "did you mean" over every fleet,
    would reveal a purchase still secret (F3)."""
    player = caller(viewer)
    folded = name_key(ship)
    placed = [sid for sid, placed_ship in state.ships.items() if placed_ship.owner == player]
    bought = [purchase.name for purchase in state.fleets[player].ships] if player in state.fleets else []
    for name in (*placed, *bought):
        if name == ship or name_key(name) == folded:
            return name
    mine = ", ".join(sorted({*placed, *bought})) or "none yet"
    raise Forbidden(f"{ship!r} is not one of {player}'s ships (theirs: {mine})", field="ship")


def caller(viewer: access.Viewer) -> str:
    assert viewer.player is not None  # allow() let only players through
    return viewer.player


def placing(viewer: access.Viewer, state: GameState, body: PlaceBody) -> PlaceShip:
    """The PlaceShip of ``body``: a player places only their own ships (a new blockade ship is
    theirs: ``owner`` defaults to them and may name nobody else), checked first, so another
    player's ship and no ship get one answer; the referee places any. In a mortecouille game
    ``kind`` never makes a new ship: every ship there is bought (F1)."""
    try:
        at = parse_square(body.square)
    except ValueError as error:
        raise BadInput("square", str(error)) from None
    try:
        facing = parse_facing(body.facing)
    except ValueError as error:
        raise BadInput("facing", str(error)) from None
    owner, ship = body.owner, body.ship
    if viewer.role == "player":
        player = caller(viewer)
        if owner is not None and owner != player:
            raise Forbidden(f"{player} may place only their own ships, not {owner}'s")
        if body.kind is not None and state.ruleset == "blockade" and body.ship not in state.ships:
            owner = player  # a new blockade ship, theirs (a name taken is the rules' refusal)
        else:
            ship = own_ship(viewer, state, body.ship)
    return PlaceShip(ship=ship, at=at, facing=facing, kind=body.kind, owner=owner)


# ------------------------------------------------------------------- the application


def build_app(
    games: GameStore | Path,
    *,
    base_url: str | None = None,
    clock: Clock = system_clock,
    poll_seconds: float = POLL_SECONDS,
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
    deadline_seconds: float | None = 1.0,
    reveal_grace_seconds: float = REVEAL_GRACE_SECONDS,
    lock_when_all_in: bool = True,
    cut_torn_tails: bool = True,
    change_feed: FeedMaker | None = None,
    close_store: bool = False,
    streams: StreamLimits | None = None,
    seat_check_seconds: float = SEAT_CHECK_SECONDS,
    hosts: HostPolicy | None = None,
    debug: bool = False,
) -> Litestar:
    """The game service on ``games``: a store of games (``app.commands.open_games``), or a games
    directory (its file store).

    ``base_url``: what links start with (default: the URL each request came to). ``clock``: the
    deadlines' time (tests pass a fake one). ``poll_seconds``: how often the live push looks at
    each watched log; ``heartbeat_seconds``: the stream's comment when idle. ``deadline_seconds``:
    how often deadlines are checked (None: never on their own; tests call
    ``app.state.service.check_deadlines()``). ``cut_torn_tails``: at start, cut the torn tail a
    crash mid-append left on a log (:meth:`Service.cut_torn_tails`), so the service serves the game
    again; an append cut so was never acknowledged. ``reveal_grace_seconds``: how long a
    contributed turn locked at its deadline waits for its reveals before it is resolved without
    them. ``lock_when_all_in``: lock a contributed turn as soon as every order and every
    commitment is in (:mod:`mortecouille.app.auto_lock`). ``change_feed``: makes the store's feed
    of every append by any process (PostgreSQL: ``events.storage.postgres_feed.PostgresFeed``), started
    with the service: live push and deadlines then follow other processes' appends at once
    (default: the store's own, if it has one). ``close_store``: close the store when the service
    stops (a store it opened itself). ``streams``: the caps on the live streams (``StreamLimits``:
    per game, per client address, in all; a 503 past them) and how far one may fall behind;
    ``seat_check_seconds``: how often the seats of a game are read again while streams opened with
    a seat's token follow it (a new link closes them). ``hosts``: the names the service answers to
    (``Host``; 421 for any other, against DNS rebinding: :mod:`mortecouille.web.guards`); ``serve``
    always gives them; None (an application a test drives) checks no ``Host``. ``Origin`` and
    ``Content-Type`` are checked either way.
    """
    store = FileStore(games) if isinstance(games, Path) else games
    if change_feed is None:
        change_feed = feed_for(store)
    service = Service(
        store,
        base_url,
        clock,
        poll_seconds,
        heartbeat_seconds,
        reveal_grace=timedelta(seconds=reveal_grace_seconds),
        lock_when_all_in=lock_when_all_in,
        streams=streams,
        seat_check=seat_check_seconds,
    )
    # with a feed, every append wakes its game's watcher: a store watcher need not tick as well
    service.hub.store_interval = None if change_feed is not None else poll_seconds
    service.followed = change_feed is not None

    # ------------------------------------------------------------- games

    @get("/api/games", sync_to_thread=True)
    def games_list(request: Request[Any, Any, Any]) -> dict[str, Any]:
        base = service.base(request)
        return {
            "games": [
                {**access.builtins(summary), "table": access.table_link(base, summary.name)}
                for summary in public_games(service.store)
            ]
        }

    @post("/api/games", sync_to_thread=True, status_code=201)
    def games_create(request: Request[Any, Any, Any], data: JSONBody[NewGameBody]) -> dict[str, Any]:
        request.state.creating = data.name  # the game a refusal names (web.errors.games_of)
        log_ = game_log(service.store, data.name)
        if data.dice not in ("seeded", "table"):
            raise BadInput("dice", f"{data.dice!r} is not seeded or table")
        players = tuple(p.strip() for p in data.players)
        board = board_from(data.board)
        key = creation_key(request, CREATION)

        def create() -> list[Event]:
            return new_game(
                log_,
                players=players,
                ruleset=data.ruleset,
                budget=data.budget,
                board=board,
                dice_mode=data.dice,
                seed=data.seed,
                idempotency_digest=key.digest if key is not None else None,
            )

        seats, _ = service.create_once(log_, service.base(request), key, create)
        return {"seq": seats["seq"], **seats}

    @post("/api/games/{game:str}/fork", sync_to_thread=True, status_code=201)
    def game_fork(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[ForkBody]
    ) -> dict[str, Any]:
        """What-if (the CLI's ``fork``): a new game from GAME's log up to ``at``, with its own
        fresh seed and its own seats, answered as a game's creation is. GAME is only read."""
        log_ = service.existing_log(game)
        viewer = access.viewer_for(log_, request.headers.get("Authorization"))
        allow(viewer, ("referee",))
        if data.dice is not None and data.dice not in ("seeded", "table"):
            raise BadInput("dice", f"{data.dice!r} is not seeded or table")
        target = fork_target(service.store, data.name)
        key = creation_key(request, FORK)

        def create() -> list[Event]:
            digest = key.digest if key is not None else None
            forked = fork_game(
                service.store, game, data.name, data.at, data.dice, None, idempotency_digest=digest
            )
            return forked.events

        seats, created = service.create_once(target, service.base(request), key, create, forked_from=game)
        # a retry answers the fork point the first request chose (its body may differ)
        forked_at = created.forked_at_seq if isinstance(created, GameCreated) else data.at
        return {"seq": seats["seq"], "forked_from": game, "forked_at_seq": forked_at, **seats}

    @get("/api/games/{game:str}/view", sync_to_thread=True)
    def game_view(
        request: Request[Any, Any, Any], game: FromPath[str], seq: FromQuery[int | None] = None
    ) -> dict[str, Any]:
        with service.session(game) as log_:
            viewer = access.viewer_for(log_, request.headers.get("Authorization"))
            events, state = load(log_)
        if seq is not None and not -1 <= seq < len(events):
            raise BadInput("seq", f"{seq} is not a seq of {game!r} (0 to {len(events) - 1})")
        shown = access.game_view(events, viewer, seq, service.lines.lines(log_, events))
        current = seq is None or seq == len(events) - 1
        deadline = deadline_in_force(events, state.turn) if current else None
        passed = deadline_passed(events, state.turn) if current else None
        shown["deadline"] = deadline.at if deadline is not None else None
        shown["deadline_passed"] = passed.at if passed is not None else None
        # from the viewer's public fold, as every field of the view: a secret (a ship bought and
        # placed before every fleet is sealed) must not change it
        shown["all_submitted"] = current and shown["status"] == "playing" and not shown["waiting"]
        shown["targets"] = builtins(targets_for(events, viewer)) if current else {}
        wait = service.note_wait(game, events, state) if current else None
        shown["reveal_deadline"] = iso(wait.until) if wait is not None else None
        # what the referee page's fork form proposes: a fork copies only what its referee may read
        shown["fork_at_most"] = latest_fork_point(events) if viewer.role == "referee" else None
        return shown

    @get("/api/games/{game:str}/chain", sync_to_thread=True)
    def game_chain(
        request: Request[Any, Any, Any], game: FromPath[str], since: FromQuery[int] = -1
    ) -> dict[str, Any]:
        """The events after ``since`` with what of the chain this viewer may be sent: what a page
        witnessing the log checks (docs/service.md, "Phones as witnesses")."""
        with service.session(game) as log_:
            viewer = access.viewer_for(log_, request.headers.get("Authorization"))
            events = log_.read()
        if since < -1:
            raise BadInput("since", f"{since} is not a seq (-1 or more)")
        # past the log's end: no event, and next_seq tells the page the log is shorter than it saw
        return access.chain(events, viewer, min(since, len(events) - 1), service.lines.lines(log_, events))

    @get("/api/prices", sync_to_thread=False)
    def prices() -> dict[str, Any]:
        return price_list()

    @get("/api/games/{game:str}/stream")
    async def game_stream(request: Request[Any, Any, Any], game: FromPath[str]) -> Stream:
        # a place under the caps first (503 past them), before anything is read
        slot = service.hub.reserve(game, request.client.host if request.client is not None else "")
        try:
            log_ = await asyncio.to_thread(service.existing_log, game)
            authorization = request.headers.get("Authorization")
            viewer, grant = await asyncio.to_thread(access.stream_viewer, log_, authorization)
        except BaseException:
            slot.release()
            raise
        after = parse_last_event_id(request.headers.get("Last-Event-ID"))

        def line(event: Event) -> bytes | None:
            return service.lines.line(log_, event)

        body = event_stream(
            service.hub, log_, after, viewer, partial(access.SharedView, viewer, line), slot=slot, grant=grant
        )
        weakref.finalize(body, slot.release)  # a stream never started gives its place back too
        return Stream(
            body,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    # ------------------------------------------------------------- a player's fleet

    @post("/api/games/{game:str}/buy", sync_to_thread=True, status_code=200)
    def buy(request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[BuyBody]) -> dict[str, Any]:
        return service.submit(
            request,
            game,
            ("player",),
            lambda viewer, state: BuyShip(
                player=caller(viewer), kind=data.kind, name=data.ship, options=data.options
            ),
            data.salt,
        )

    @post("/api/games/{game:str}/equip", sync_to_thread=True, status_code=200)
    def equip(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[EquipBody]
    ) -> dict[str, Any]:
        def build(viewer: access.Viewer, state: GameState) -> Command:
            if data.ship is None:
                return EquipFleet(player=caller(viewer), option=data.option)
            return EquipShip(ship=own_ship(viewer, state, data.ship), option=data.option)

        return service.submit(request, game, ("player",), build, data.salt)

    @post("/api/games/{game:str}/unbuy", sync_to_thread=True, status_code=200)
    def unbuy(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[ShipBody]
    ) -> dict[str, Any]:
        def build(viewer: access.Viewer, state: GameState) -> Command:
            return WithdrawShip(ship=own_ship(viewer, state, data.ship))

        return service.submit(request, game, ("player",), build, data.salt)

    @post("/api/games/{game:str}/seal", sync_to_thread=True, status_code=200)
    def seal(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[SealBody | None] = None
    ) -> dict[str, Any]:
        body = data or SealBody()
        return service.submit(
            request,
            game,
            ("player",),
            lambda viewer, state: SealFleet(player=caller(viewer), forfeit=body.forfeit),
            body.salt,
        )

    @post("/api/games/{game:str}/place", sync_to_thread=True, status_code=200)
    def place(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[PlaceBody]
    ) -> dict[str, Any]:
        def build(viewer: access.Viewer, state: GameState) -> Command:
            return placing(viewer, state, data)

        return service.submit(request, game, ("player", "referee"), build, data.salt)

    # ------------------------------------------------------------- a player's orders

    @post("/api/games/{game:str}/orders", sync_to_thread=True, status_code=200)
    def orders(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[OrdersBody]
    ) -> dict[str, Any]:
        actions = parse_actions_text(data.actions)
        return service.submit(
            request,
            game,
            ("player",),
            lambda viewer, state: GiveOrder(
                ship=own_ship(viewer, state, data.ship),
                actions=with_targets_named(state, actions),
                replace=data.replace,
            ),
            data.salt,
        )

    @delete("/api/games/{game:str}/orders/{ship:str}", sync_to_thread=True, status_code=200)
    def unorder(
        request: Request[Any, Any, Any],
        game: FromPath[str],
        ship: FromPath[str],
        data: JSONBody[WithdrawBody | None] = None,
    ) -> dict[str, Any]:
        return service.submit(
            request,
            game,
            ("player",),
            lambda viewer, state: WithdrawOrder(ship=own_ship(viewer, state, ship)),
            data.salt if data is not None else None,
        )

    @post("/api/games/{game:str}/tokens", sync_to_thread=True, status_code=200)
    def tokens(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[TokensBody]
    ) -> dict[str, Any]:
        given = tuple(None if t in (None, "-") else t.upper() for t in data.tokens)
        return service.submit(
            request,
            game,
            ("player",),
            lambda viewer, state: GiveTokens(
                ship=own_ship(viewer, state, data.ship), tokens=given, replace=data.replace
            ),
            data.salt,
        )

    # ------------------------------------------------------------- a player's dice contribution (D3)

    @post("/api/games/{game:str}/commit", sync_to_thread=True, status_code=200)
    def commit(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[CommitBody]
    ) -> dict[str, Any]:
        return service.submit(
            request,
            game,
            ("player",),
            lambda viewer, state: CommitDiceContribution(player=caller(viewer), commitment=data.commitment),
            data.salt,
        )

    @post("/api/games/{game:str}/reveal", sync_to_thread=True, status_code=200)
    def reveal(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[RevealBody]
    ) -> dict[str, Any]:
        answered = service.submit(
            request,
            game,
            ("player",),
            lambda viewer, state: RevealDiceContribution(
                player=caller(viewer), contribution=data.contribution
            ),
            data.salt,
        )
        service.settle(game, service.clock())  # the last reveal a turn locked at its deadline waited for
        return answered

    # ------------------------------------------------------------- the referee

    @post("/api/games/{game:str}/resolve", sync_to_thread=True, status_code=200)
    def resolve(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[ResolveBody | None] = None
    ) -> dict[str, Any]:
        body = data or ResolveBody()
        with service.session(game) as log_:
            viewer = access.viewer_for(log_, request.headers.get("Authorization"))
            allow(viewer, ("referee",))
            outcome = resolve_turn(
                log_,
                partial=body.partial,
                idle_turn=body.idle_turn,
                table_values=list(body.dice) if body.dice is not None else None,
                expected_seq=if_match(request),
                absent_reason=body.absent_reason,
                idempotency=service.idempotency(request, viewer),
            )
            answered = service.answer(log_, viewer, outcome)
            resolved = turn_head_code(outcome.events)
            answered["head_code"] = (
                {"turn": resolved[0], "seq": resolved[1].seq, "code": resolved[1].code} if resolved else None
            )
            return answered

    @post("/api/games/{game:str}/lock", sync_to_thread=True, status_code=200)
    def lock(request: Request[Any, Any, Any], game: FromPath[str]) -> dict[str, Any]:
        return service.command(request, game, ("referee",), lambda viewer, state: LockTurn())

    @post("/api/games/{game:str}/rulings", sync_to_thread=True, status_code=200)
    def rulings(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[RulingBody]
    ) -> dict[str, Any]:
        adjustments = tuple(
            parse_adjustment(adjust.ship, change.strip())
            for adjust in data.adjust
            for change in adjust.changes.split(",")
            if change.strip()
        )
        return service.command(
            request,
            game,
            ("referee",),
            lambda viewer, state: RecordRuling(rule=data.rule, text=data.text, adjustments=adjustments),
        )

    @post("/api/games/{game:str}/end", sync_to_thread=True, status_code=200)
    def end(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[EndBody | None] = None
    ) -> dict[str, Any]:
        body = data or EndBody()
        log_ = service.existing_log(game)
        make = ending(log_, winner=body.winner, reason=body.reason)
        return service.command(request, game, ("referee",), lambda viewer, state: make(state))

    @post("/api/games/{game:str}/deadline", sync_to_thread=True, status_code=200)
    def deadline(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[DeadlineBody]
    ) -> dict[str, Any]:
        log_ = service.existing_log(game)
        viewer = access.viewer_for(log_, request.headers.get("Authorization"))
        allow(viewer, ("referee",))
        outcome = set_deadline(
            log_,
            data.seconds,
            service.clock(),
            expected_seq=if_match(request),
            idempotency=service.idempotency(request, viewer),
        )
        service.note_deadline(game)
        return service.answer(log_, viewer, outcome)

    @post("/api/games/{game:str}/seats/{player:str}", sync_to_thread=True, status_code=200)
    def seats(request: Request[Any, Any, Any], game: FromPath[str], player: FromPath[str]) -> dict[str, Any]:
        """A new link for the seat of the player named exactly ``player`` (one called ``referee``
        included: the referee's seat has its own path, :func:`referee_seat`)."""
        log_ = service.existing_log(game)
        viewer = access.viewer_for(log_, request.headers.get("Authorization"))
        allow(viewer, ("referee",))
        players = load(log_)[1].players
        if player not in players:
            named = f"{player!r} is not a player of {game!r} (players: {', '.join(players)})"
            if name_key(player) == "referee":
                named += f"; the referee's own seat is POST /api/games/{game}/referee-seat"
            raise BadInput("player", named)
        answered = access.reissue_seat(log_, service.base(request), access.Viewer.of_player(player))
        service.hub.seats_changed(game)  # the old link's streams close now
        return answered

    @post("/api/games/{game:str}/referee-seat", sync_to_thread=True, status_code=200)
    def referee_seat(request: Request[Any, Any, Any], game: FromPath[str]) -> dict[str, Any]:
        """A new link for the referee's own seat: the token the request came with stops working."""
        log_ = service.existing_log(game)
        viewer = access.viewer_for(log_, request.headers.get("Authorization"))
        allow(viewer, ("referee",))
        answered = access.reissue_seat(log_, service.base(request), access.REFEREE)
        service.hub.seats_changed(game)  # the old link's streams close now
        return answered

    # ------------------------------------------------------------- pages

    def page(name: str) -> File:
        path = PAGES / name
        if not path.is_file():
            raise GameNotFound(f"no page {name!r}: the pages are not installed")
        return File(path, content_disposition_type="inline", media_type="text/html")

    @get("/", sync_to_thread=False)
    def index_page() -> File:
        return page("index.html")

    @get("/table/{game:str}", sync_to_thread=False)
    def table_page(game: FromPath[str]) -> File:
        return page("table.html")

    @get("/player/{game:str}", sync_to_thread=False)
    def player_page(game: FromPath[str]) -> File:
        return page("player.html")

    @get("/referee/{game:str}", sync_to_thread=False)
    def referee_page(game: FromPath[str]) -> File:
        return page("referee.html")

    @get("/static/{path:path}", sync_to_thread=False)
    def static(path: FromPath[str]) -> File:
        root = (PAGES / "static").resolve()
        try:
            target = (root / path.lstrip("/")).resolve()
            found = root in target.parents and target.is_file()
        except (ValueError, OSError):  # a NUL byte, a name too long for the file system: no such file
            found = False
        if not found or (media_type := STATIC_MEDIA_TYPES.get(target.suffix)) is None:
            raise GameNotFound(f"no file {path!r}")
        # named explicitly: with nosniff, a script sent as octet-stream is refused by the browser
        return File(target, content_disposition_type="inline", media_type=media_type)

    # ------------------------------------------------------------- life

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        service.hub.loop = asyncio.get_running_loop()
        if cut_torn_tails:
            await asyncio.to_thread(service.cut_torn_tails)
        feed: ChangeFeed | None = change_feed(service.changed) if change_feed is not None else None
        if feed is not None:  # listening before the deadlines are read: none set meanwhile is missed
            await asyncio.to_thread(feed.start)
        await asyncio.to_thread(service.find_deadlines)
        ticker = asyncio.create_task(deadline_ticker(service, deadline_seconds)) if deadline_seconds else None
        try:
            yield
        finally:
            if feed is not None:
                await asyncio.to_thread(feed.stop)
            await asyncio.to_thread(service.snapshots.close)  # the snapshots due, before the store closes
            if close_store:
                await asyncio.to_thread(store.close)
            if ticker is not None:
                ticker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await ticker
            await service.hub.close()

    app = Litestar(
        route_handlers=[
            games_list,
            games_create,
            game_fork,
            game_view,
            game_chain,
            game_stream,
            prices,
            buy,
            equip,
            unbuy,
            seal,
            place,
            orders,
            unorder,
            tokens,
            commit,
            reveal,
            resolve,
            lock,
            rulings,
            end,
            deadline,
            seats,
            referee_seat,
            index_page,
            table_page,
            player_page,
            referee_page,
            static,
        ],
        exception_handlers={**EXCEPTION_HANDLERS, StreamsFull: streams_full},
        before_request=RequestGuard(hosts),
        response_headers=list(SECURITY_HEADERS),
        request_max_body_size=MAX_BODY_BYTES,
        lifespan=[lifespan],
        openapi_config=None,
        debug=debug,
    )
    app.state.service = service
    return app


def streams_full(_: Request[Any, Any, Any], error: StreamsFull) -> Response[Any]:
    """A stream past a cap: 503, the service's error shape, and when to try again."""
    refused = error_response(error.status, error.code, str(error))
    refused.set_header("Retry-After", str(error.retry_after))
    return refused


# ------------------------------------------------------------------- several processes

#: Where ``serve --workers N`` tells its workers the store's URL, the links' base URL, the
#: address it listens on (the names it answers to, :class:`~mortecouille.web.guards.HostPolicy`)
#: and whether to write the access log.
SERVE_STORE_VARIABLE = "MORTECOUILLE_SERVE_STORE"
SERVE_BASE_URL_VARIABLE = "MORTECOUILLE_SERVE_BASE_URL"
#: ... and the caps on its live streams (``StreamLimits`` as JSON; each worker has them all)
SERVE_STREAMS_VARIABLE = "MORTECOUILLE_SERVE_STREAMS"
SERVE_HOST_VARIABLE = "MORTECOUILLE_SERVE_HOST"
SERVE_ACCESS_LOG_VARIABLE = "MORTECOUILLE_SERVE_ACCESS_LOG"


def worker_app() -> ASGIApp:
    """The service of one worker process of ``serve --workers N`` (uvicorn calls it in each
    worker): the store named by :data:`SERVE_STORE_VARIABLE`, opened by this process, closed
    when it stops; the links' base URL from :data:`SERVE_BASE_URL_VARIABLE` (empty: each
    request's own); the caps on its streams from :data:`SERVE_STREAMS_VARIABLE`; the names it answers
    to from :data:`SERVE_HOST_VARIABLE` and the base URL; one access log line per request when
    :data:`SERVE_ACCESS_LOG_VARIABLE` is ``1``."""
    from mortecouille.app.games import open_games

    url = os.environ.get(SERVE_STORE_VARIABLE)
    host = os.environ.get(SERVE_HOST_VARIABLE)
    if not url or host is None:
        raise RuntimeError(
            f"${SERVE_STORE_VARIABLE} or ${SERVE_HOST_VARIABLE} is not set: "
            "run the workers through serve --workers"
        )
    base_url = os.environ.get(SERVE_BASE_URL_VARIABLE) or None
    caps = os.environ.get(SERVE_STREAMS_VARIABLE)
    streams = msgspec.json.decode(caps, type=StreamLimits) if caps else None
    hosts = HostPolicy.serving(host, base_url)
    app = build_app(open_games(url), base_url=base_url, close_store=True, hosts=hosts, streams=streams)
    if os.environ.get(SERVE_ACCESS_LOG_VARIABLE) != "1":
        return app
    write_access_log()
    return AccessLog(app)


async def deadline_ticker(service: Service, every: float) -> None:
    """Check the deadlines every ``every`` seconds, in a worker thread (passing one writes)."""
    while True:
        await asyncio.sleep(every)
        passed = await asyncio.to_thread(service.check_deadlines)
        if passed:
            _log.info("deadlines passed", games=passed)
