"""The games service: one object that the HTTP service and any long-running shell share to run
commands on a store of games (docs/service.md).

It owns what outlives one command: the state each game was last seen with (so a command does not
fold the log again), the snapshots written off the requests' path, the receipts' salts of
idempotent retries, a creation's retries under its key, the deadline clock
(:class:`~mortecouille.app.service_clock.DeadlineClock`) and, at start, the torn tails a crash
left. Every write goes through :func:`~mortecouille.app.commands.run_command` (or a creation), so
the rules, the refusals and the log are the CLI's. Shells identify the caller and render; the
methods here take a seat's name and a key, never a request.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import NamedTuple, Protocol, runtime_checkable

from mortecouille.app import auto_lock
from mortecouille.app.commands import (
    PLAIN,
    CommandOptions,
    Idempotency,
    KnownState,
    Outcome,
    run_command,
)
from mortecouille.app.creation_retry import KEY_HEADER, CreationInProgress, KeyUsedSince, reissue_for_retry
from mortecouille.app.deadlines import set_deadline
from mortecouille.app.games import game_log
from mortecouille.app.idempotency import IdempotencyIndex, key_digest, seat_digest
from mortecouille.app.receipts import is_submission, new_receipt_salt, receipt_for
from mortecouille.app.requests.bodies import ResolveRequest
from mortecouille.app.requests.commands import resolve
from mortecouille.app.seats import IssuedSeats, issue_seats
from mortecouille.app.service_clock import REVEAL_GRACE_SECONDS, Clock, DeadlineClock, system_clock
from mortecouille.app.service_repair import cut_torn_tails
from mortecouille.app.snapshot_keeper import SnapshotKeeper
from mortecouille.core.errors import BadInput, MortecouilleError
from mortecouille.core.life_cycle import Command
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.contract import EventStore, GameStore, events_from
from mortecouille.events.storage.errors import Conflict, GameNotFound, Unwritable
from mortecouille.replays.reading.receipts import Receipt, check_salt

_log = get_logger("mortecouille.service")

#: How many receipts' salts the service remembers, to answer an idempotent retry the very receipt
#: it answered first (:meth:`GamesService.receipt_salt`); the oldest are forgotten first.
REMEMBERED_SALTS = 100_000

#: How many times a creation finding its name's log empty (a racing creation under way, or one
#: taken back) is tried again before it is refused.
CREATION_ATTEMPTS = 3


@runtime_checkable
class OneConnection(Protocol):
    """A log that can run a block on one connection of its store (the PostgreSQL store's)."""

    def session(self) -> contextlib.AbstractContextManager[None]: ...


class KeyConflict(MortecouilleError):
    """A creation's ``Idempotency-Key`` that cannot be answered again (HTTP 409, naming the
    header): the game moved on since, or a racing request with the key answered it."""

    exit_code = 3

    def __init__(self, key: str, /, **params: str) -> None:
        super().__init__(key, field=KEY_HEADER, **params)


class CreationKey(NamedTuple):
    """A creation's ``Idempotency-Key``: its digest scoped to creations (or forks), written on the
    new log's first line, and its unscoped digest, which a game created before keys were scoped
    keeps."""

    digest: str
    legacy: str

    @classmethod
    def of(cls, seat: str, key: str | None) -> CreationKey | None:
        """The key sent to create a game (``seat``: ``CREATION`` or ``FORK``), if one was sent."""
        return cls(seat_digest(seat, key), key_digest(key)) if key is not None else None


class Created(NamedTuple):
    """A game's creation: its events and the seats issued for it (fresh tokens)."""

    events: list[Event]
    seats: IssuedSeats


class Seen(NamedTuple):
    """A command's outcome and the game's events up to it."""

    outcome: Outcome
    events: list[Event]


class Submitted(NamedTuple):
    """A submission's outcome, the game's events up to it and its receipt (None: not a submission)."""

    outcome: Outcome
    events: list[Event]
    receipt: Receipt | None


def check_receipt_salt(salt: str | None) -> None:
    """Refuse (BadInput naming ``salt``) a receipt salt that is not 32 to 128 lowercase hex digits."""
    if salt is not None and (problem := check_salt(salt)) is not None:
        raise BadInput("salt", "{problem}", problem=problem)


def key_salt(key: str) -> str:
    """The receipt salt of a submission sent with the ``Idempotency-Key`` ``key`` and no salt: 32
    hex digits derived from the key (random, as a client's key is, and the same for every retry of
    it). Not the key's digest the log keeps (``idem``), so the log does not give it away."""
    return hashlib.sha256(b"mortecouille receipt salt v1\n" + key.encode("utf-8")).hexdigest()[:32]


class GamesService(DeadlineClock):
    """A store of games served by one process: commands with the state cache, receipts,
    creations under a key, the deadline clock and the snapshots kept."""

    def __init__(
        self,
        store: GameStore,
        clock: Clock = system_clock,
        *,
        reveal_grace: timedelta = timedelta(seconds=REVEAL_GRACE_SECONDS),
        lock_when_all_in: bool = True,
        appended: Callable[[EventStore], None] | None = None,
    ) -> None:
        super().__init__(store, clock, reveal_grace=reveal_grace)
        self.lock_when_all_in = lock_when_all_in
        #: told of each game this service appended to (the live push, when nothing else tells it)
        self.appended = appended
        self.keys = IdempotencyIndex()
        #: (game, idempotency key digest) -> the salt of the receipt first answered for that key
        self.salts: dict[tuple[str, str], str] = {}
        self.salts_guard = threading.Lock()
        #: game -> the events this service last saw of it, with the state they fold to
        #: (:meth:`events_after`); the next command checks them against the log's head
        self.seen: dict[str, tuple[list[Event], GameState]] = {}
        self.seen_guard = threading.Lock()
        #: writes the snapshot of the games this service plays, off the commands' path: its commands
        #: carry the state on, so they never fold enough events to make one due themselves
        self.snapshots = SnapshotKeeper()

    # --------------------------------------------------------------- logs

    @contextlib.contextmanager
    def session(self, game: str) -> Iterator[EventStore]:
        """GAME's log (GameNotFound when it has none) for one request, on one connection of a
        store that has them (PostgreSQL): the caller's seat, the game's lock, its reads, its seed
        and its append then cost one connection, lent once by the pool."""
        log_ = game_log(self.store, game)
        with log_.session() if isinstance(log_, OneConnection) else contextlib.nullcontext():
            if not log_.exists():
                raise GameNotFound(f"game {game!r}: no such game")
            yield log_

    def existing_log(self, game: str) -> EventStore:
        """GAME's log, or GameNotFound when it has none."""
        log_ = game_log(self.store, game)
        if not log_.exists():
            raise GameNotFound(f"game {game!r}: no such game")
        return log_

    def idempotency(self, seat: str, key: str | None) -> Idempotency | None:
        """The idempotency of a command ``seat`` sent with ``key`` (none without a key)."""
        if key is None:
            return None
        return Idempotency(seat_digest(seat, key), self.keys, seat=seat, legacy=key_digest(key))

    # --------------------------------------------------------------- commands

    def run(
        self,
        log_: EventStore,
        make_command: Callable[[GameState], Command],
        options: CommandOptions = PLAIN,
    ) -> Seen:
        """Run one command on ``log_`` from the state last seen of it; its outcome and events."""
        outcome = run_command(log_, make_command, options._replace(known=self.known_state(log_)))
        return Seen(outcome, self.events_after(log_, outcome))

    def submit(
        self,
        log_: EventStore,
        make_command: Callable[[GameState], Command],
        options: CommandOptions,
        *,
        salt: str | None,
        key: str | None,
    ) -> Submitted:
        """A player's submission (or the referee's, for a player): :meth:`run` and the
        submission's receipt, salted with ``salt`` (checked before anything is written: BadInput
        naming ``salt``). Then, in a game of contributed dice, the turn is locked if everything
        is in (:func:`~mortecouille.app.auto_lock.lock_when_all_in`)."""
        check_receipt_salt(salt)
        outcome = run_command(log_, make_command, options._replace(known=self.known_state(log_)))
        salt = self.receipt_salt(log_, key, options.idempotency, salt)
        if auto_lock.all_in(outcome.state):  # checked again under the lock: another append may come first
            self.lock_if_all_in(log_)
        events = self.events_after(log_, outcome)
        receipt = receipt_for(outcome, salt) if is_submission(outcome.events) else None
        return Submitted(outcome, events, receipt)

    def record(self, log_: EventStore, outcome: Outcome) -> list[Event]:
        """The events up to ``outcome`` of a command run on ``log_`` without :meth:`run` (a
        resolution), kept as the state last seen."""
        return self.events_after(log_, outcome)

    def resolve(self, log_: EventStore, request: ResolveRequest, options: CommandOptions = PLAIN) -> Seen:
        """Resolve the current turn as ``request`` asks
        (:func:`~mortecouille.app.requests.commands.resolve`)."""
        outcome = resolve(log_, request, expected_seq=options.expected_seq, idempotency=options.idempotency)
        return Seen(outcome, self.events_after(log_, outcome))

    def set_deadline(self, log_: EventStore, seconds: int, options: CommandOptions = PLAIN) -> Seen:
        """Set the current turn's deadline ``seconds`` from now, noted by the clock at once."""
        outcome = set_deadline(
            log_, seconds, self.clock(), expected_seq=options.expected_seq, idempotency=options.idempotency
        )
        self.note_deadline(log_.name)
        return Seen(outcome, self.events_after(log_, outcome))

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

    def lock_if_all_in(self, log_: EventStore) -> None:
        """Lock a contributed turn that waits for nobody any more (when enabled). Never fails the
        submission that led here, which is on disk already: a problem is logged."""
        if not self.lock_when_all_in:
            return
        try:
            locked = auto_lock.lock_when_all_in(log_)
        except Exception:  # noqa: BLE001 - the submission was appended: its answer must be sent
            _log.warning("turn not locked", game=log_.name, exc_info=True)
            return
        if locked is not None:
            _log.info("turn locked: every order and commitment is in", game=log_.name)

    # --------------------------------------------------------------- the last log each game was seen with

    def events_after(self, log_: EventStore, outcome: Outcome) -> list[Event]:
        """The game's events up to what ``outcome`` appended: the events this service last saw
        followed by the appended ones when these chain on to them (the first one's seq and prev
        are the next seq and the last hash: by the hash chain, nobody appended in between), else
        the log read again. Kept (:attr:`seen`) with the state they fold to, for the next
        command's :meth:`known_state`: on a database, a command then reads the game once (the
        head) instead of whole twice."""
        if self.appended is not None:
            self.appended(log_)
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
            # the game's snapshot is rewritten each time it passes a multiple of SNAPSHOT_EVERY
            # events, in the keeper's thread
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

    # --------------------------------------------------------------- creations

    def create_once(
        self,
        log_: EventStore,
        key: CreationKey | None,
        create: Callable[[], list[Event]],
        *,
        forked_from: str | None = None,
    ) -> Created:
        """Create a game (``create`` writes its log, the ``key``'s digest on its first line) and
        issue its seats.

        With an ``Idempotency-Key`` (``key``), a name already taken by a creation under that
        very key, and nothing appended since, answers that creation again with fresh seats
        (:func:`~mortecouille.app.creation_retry.reissue_for_retry`); appended since:
        :class:`KeyConflict`. Two creations racing with one key: one creates, the other answers
        the re-issue (or a KeyConflict if its re-issue came first and the creator's seats could
        not be issued)."""
        for _attempt in range(CREATION_ATTEMPTS):  # a log found empty: a racing creation under way
            try:
                created = create()
            except (Conflict, MortecouilleError) as refused:
                if key is None:
                    raise
                try:
                    again = self._created_under(log_, key, refused, forked_from)
                except CreationInProgress:
                    continue
                return again
            try:
                return Created(created, issue_seats(log_))
            except Conflict:
                if key is None:
                    raise
                # a retry with this key re-issued the seats between our write and our issue:
                # that answer holds the working tokens; ours would not open them
                raise KeyConflict(
                    "{header}: a retry with this key was answered meanwhile with the game's seats; "
                    "use that answer",
                    header=KEY_HEADER,
                ) from None
        raise KeyConflict(
            "{header}: game {game!r} is being created by another request; retry",
            header=KEY_HEADER,
            game=log_.name,
        )

    def _created_under(
        self, log_: EventStore, key: CreationKey, refused: Exception, forked_from: str | None
    ) -> Created:
        """The creation ``key`` made, answered again, after ``refused`` (the name taken, or a body
        the rules refuse); ``refused`` itself when the name is not this key's creation.
        CreationInProgress: the log is empty, a racing creation is under way (try again)."""
        try:
            again = reissue_for_retry(log_, key.digest, self.keys, forked_from=forked_from, legacy=key.legacy)
        except CreationInProgress:
            if isinstance(refused, Conflict):
                raise
            raise refused from None
        except (GameNotFound, Unwritable):
            raise refused from None  # no game (or none to open): the body's own refusal
        except KeyUsedSince as error:
            raise KeyConflict(error.message) from None
        if again is None:
            raise refused  # the name is taken by another creation, or the body refused: it stands
        return Created(again.events, again.seats)

    # --------------------------------------------------------------- life

    def cut_torn_tails(self) -> list[str]:
        """Cut the torn tail a crash mid-append left on any game's log, as ``repair`` does, and
        return the games cut. Only a tail after the head anchor is cut: an append whose fsync never
        returned, so nobody was ever answered for it (a retry with its Idempotency-Key appends it
        again). A log missing lines its anchor vouches for is left alone: ``repair`` reports it.
        A log that commits an append whole or not at all (a database's) is never torn."""
        return cut_torn_tails(self.store)

    def close(self) -> None:
        """Write the snapshots due; the store stays open (its owner closes it)."""
        self.snapshots.close()
