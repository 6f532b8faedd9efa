"""The application's command path: every change to a game's log goes through this module.

The CLI, ``demo``, ``simulate``, ``fork`` and the coming HTTP service only parse their input and
print (or send) what this module returns; none of them decides a command or writes a log itself.
It owns, in the order of a command's life:

* where games live (``store_url``, ``open_games``: a store selected by URL, file or PostgreSQL), a
  game's log (``game_log``) and reading a game (``load``: read and fold; ``load_state``): these are
  defined in :mod:`mortecouille.app.games`, which a command that only reads imports without this
  module (the CLI's start-up), and re-exported here;
* the secret seed kept beside a seeded game's log until the game ends and reveals it (D2);
* the dice of one command (``dice_for``): seeded from the kept seed, or table dice from the values
  given or asked for through ``ask``, the shell's way of asking the referee (an input, not a hook);
* ``run_command``: lock, fold, decide, append (one write, one fsync), unlock. A refused command
  raises before anything is written, so the log stays byte-for-byte unchanged;
* a game's life cycle: ``new_game`` and ``start_game`` (the ``CreateGame`` decided, the secret seed
  kept, the log created exclusively), ``resolve_turn`` and ``end_game`` (the seed revealed);
* the players' contributions to a turn's dice (D3): ``commit_dice_contribution``, ``lock_turn``,
  ``reveal_dice_contribution`` for the two-step path of the service, and the one-step path of
  ``resolve_turn``, which draws a contribution for every player who committed none;
* the result as text lines (``Outcome.lines``), so a shell only prints them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict, Unpack

import msgspec

from mortecouille.app.games import SEED_SUFFIX, SIBLINGS, game_log, load
from mortecouille.app.snapshots import (
    SNAPSHOT_EVERY,
    Anchor,
    Folded,
    StoreFolded,
    fold_log,
    fold_stored,
    keep_snapshot,
    keep_stored_snapshot,
)
from mortecouille.core.contributions import (
    CommitDiceContribution,
    LockTurn,
    RevealDiceContribution,
    contributed,
    current_round,
)
from mortecouille.core.dice import (
    CONTRIBUTED,
    DiceSource,
    RollIdentity,
    SeededDice,
    TableDice,
    matches_commitment,
    salted_commitment,
)
from mortecouille.core.errors import BadInput, MortecouilleError
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import Command, CreateGame, EndGame, ResolveTurn
from mortecouille.core.narration import position_caption
from mortecouille.core.questions import asked_named
from mortecouille.core.state import EMPTY, GameState
from mortecouille.core.waiting import players_awaiting_orders
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.codec import NONCE_FIELD, LogError
from mortecouille.events.game import DieRolled, GameEnded
from mortecouille.events.house_log import get_logger
from mortecouille.events.secrecy import SECRET_TYPES, holds_secret_input
from mortecouille.events.storage.contract import (
    SEED,
    EventStore,
    FileStore,
    GameStore,
    KeepsSnapshots,
    SecretRefused,
    StoreCreation,
    StoreTransaction,
    events_from,
    secrets_of,
)
from mortecouille.events.storage.errors import Conflict, GameNotFound, StoreError
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.describe import describe_event

if TYPE_CHECKING:
    # only a command sent with an idempotency key (the service) uses the index: imported there
    from mortecouille.app.idempotency import IdempotencyIndex, Recorded

log = get_logger("mortecouille")


# --- a game's secrets ------------------------------------------------------------------------


def secret_text(log_: EventStore, kind: str, field: str) -> str | None:
    """A game's secret as text (None when it has none); a secret that cannot be read as kept
    (a link planted in its place) is BadInput naming ``field``."""
    try:
        data = secrets_of(log_).read(kind)
    except SecretRefused as error:
        raise BadInput(field, "{problem}", problem=str(error)) from None
    return None if data is None else data.decode("utf-8", "replace")


# --- the secret seed (D2) --------------------------------------------------------------------


def seed_path(log_: GameLog) -> Path:
    """Where a file store keeps a game's secret seed
    (:class:`~mortecouille.events.storage.contract.FileSecrets`)."""
    return log_.sibling(SEED_SUFFIX)


#: The shortest seed a referee may choose without ``--weak-seed`` (D2): every die of a seeded game
#: is public, so a short seed is found by trying them all, and with it every die to come.
MIN_SEED_LENGTH = 16


def new_seed() -> str:
    import secrets  # only where a secret is drawn: not imported by every command

    return secrets.token_hex(16)


#: The dice scheme of every new seeded game (D3): each turn's dice from the seed and every
#: player's contribution. Games created before it keep theirs (``None``: the seed alone, D2).
NEW_GAME_DICE_SCHEME: str | None = CONTRIBUTED


def new_contribution() -> str:
    """A fresh random contribution to a turn's dice (D3): 128 bits, 32 hex digits. Drawn by a
    shell (the player's page, or the referee's CLI on the one-step path), never by the core."""
    import secrets  # only where a secret is drawn: not imported by every command

    return secrets.token_hex(16)


def secret_seed(dice_mode: str, seed: str | None, *, weak_seed: bool) -> str | None:
    """A new game's secret seed: the one given, else a random one; none for table dice.

    ``weak_seed=False`` refuses a chosen seed shorter than :data:`MIN_SEED_LENGTH`.
    """
    if dice_mode == "table" and seed is not None:
        raise BadInput("seed", "a table-dice game has no seed")
    if seed is not None and len(seed) < MIN_SEED_LENGTH and not weak_seed:
        raise BadInput(
            "seed",
            "{count} characters: a seed shorter than {min_seed_length} can be guessed from the dice "
            "and its commitment; choose a longer one, or pass --weak-seed if the table accepts it",
            count=len(seed),
            min_seed_length=MIN_SEED_LENGTH,
        )
    return (seed or new_seed()) if dice_mode == "seeded" else None


class SeedCommitment(NamedTuple):
    """What a new seeded game publishes about its secret seed (D2): a fresh random salt and the
    seed's HMAC under it, so the commitment reveals nothing a brute force can start from."""

    seed_salt: str | None
    seed_hmac: str | None


#: Whether commands write a nonce on every line of a secret input (docs/service.md, "Nonces and
#: idempotency keys"): on, for every shell. The golden logs' builder turns it off to
#: rebuild logs written before nonces (as it turns off the dice scheme of newer games); a
#: deterministic shell (the demo's bots) passes ``nonce=False`` to :func:`run_command` instead.
NONCE_SECRET_BATCHES = True


def secret_nonces(events: Sequence[Event]) -> list[str | None]:
    """A fresh nonce (:func:`new_nonce`) for each of ``events`` that is a secret input
    (:data:`~mortecouille.events.secrecy.SECRET_TYPES`), None for the others: what the command
    path writes on a batch's lines. All None while :data:`NONCE_SECRET_BATCHES` is off."""
    if not NONCE_SECRET_BATCHES or not holds_secret_input(events):
        return [None] * len(events)
    return [new_nonce() if isinstance(event, SECRET_TYPES) else None for event in events]


def line_extras(nonces: Sequence[str | None], events: Sequence[Event]) -> list[dict[str, Any] | None]:
    """The envelope fields of each line of a batch of ``events`` whose lines carry ``nonces``."""
    return [{NONCE_FIELD: drawn} if drawn is not None else None for drawn in nonces] + [None] * (
        len(events) - len(nonces)
    )


def new_nonce() -> str:
    """A fresh nonce for a secret input's line: 16 random bytes, 32 hex digits
    (:data:`~mortecouille.events.codec.NONCE_HEX_DIGITS`). Drawn by the command path, never by the
    core, whose ``decide`` and ``evolve`` stay pure."""
    import secrets  # only where a secret is drawn: not imported by every command

    return secrets.token_hex(16)


def new_salt() -> str:
    """A fresh random salt for a seed's commitment (16 bytes, hex)."""
    import secrets  # only where a secret is drawn: not imported by every command

    return secrets.token_hex(16)


def commit_to(secret: str | None) -> SeedCommitment:
    """The commitment a new game publishes for ``secret`` (none for table dice)."""
    if secret is None:
        return SeedCommitment(None, None)
    salt = new_salt()
    return SeedCommitment(salt, salted_commitment(secret, salt))


def store_seed(log_: EventStore, seed: str, creation: object | None = None) -> None:
    """Keep the secret seed beside the log, readable by its owner only, until it is revealed.

    Created exclusively and never through a link: a seed already there, or a
    link planted where it goes, is refused rather than overwritten or followed. ``creation``: the
    game's creation under way, which a store of its own (PostgreSQL) writes the seed with."""
    secrets_of(log_, creation).create(SEED, (seed + "\n").encode("utf-8"))


def load_seed(log_: EventStore, state: GameState) -> str:
    where = secrets_of(log_).where(SEED)
    text = secret_text(log_, SEED, "seed")
    if text is None:
        raise BadInput(
            "seed",
            "the secret seed of {game!r} is missing ({where}); cannot roll seeded dice",
            game=state.game,
            where=where,
        )
    seed = text.strip()
    if not matches_commitment(seed, state):
        raise BadInput("seed", "{where} does not match the game's commitment (D2)", where=where)
    return seed


def revealed_seed(log_: EventStore, state: GameState) -> str | None:
    """The seed a seeded game reveals as it ends (D2); none for table dice."""
    return load_seed(log_, state) if state.dice_mode == "seeded" else None


# --- dice ------------------------------------------------------------------------------------

#: How a shell asks the referee what a physical die showed: ``ask(identity, label) -> value``.
AskDie = Callable[[RollIdentity, str], int]

#: How a shell asks the referee to confirm the table dice a command read, before anything is
#: written: ``confirm(rolls) -> True`` to write (an input, like ``ask``).
ConfirmDice = Callable[[Sequence[DieRolled]], bool]


class NotConfirmed(MortecouilleError):
    """The referee answered no when shown the table dice: nothing is written (exit 1)."""

    exit_code = 1

    def __init__(self) -> None:
        super().__init__("table dice not confirmed: nothing written (resolve again to re-enter them)")


def dice_for(
    log_: EventStore, state: GameState, table_values: list[int] | None, ask: AskDie | None
) -> DiceSource:
    """Seeded dice from the kept seed, or table dice: ``table_values`` first, then ``ask``."""
    if state.dice_mode == "seeded":
        if table_values:
            raise BadInput("dice", "this game rolls seeded dice; --dice is for table-dice games")
        return SeededDice(load_seed(log_, state))
    return TableDice(table_values or (), ask)


# --- one command -----------------------------------------------------------------------------


def describe_events(events: Sequence[Event]) -> list[str]:
    """One text line per event, as the log and every command print them."""
    return [describe_event(event) for event in events]


class _OutcomeFields(NamedTuple):
    events: list[Event]
    state: GameState


class Outcome(_OutcomeFields):
    """What one command appended and the state after it; unpacks as ``(events, state)``.

    ``nonces``: the random ``nonce`` each appended line carries (None for a line without), which
    the decoded events do not hold: a receipt commits to the lines as written, nonces included
    (docs/service.md, "A receipt"); empty when no line carries one."""

    nonces: tuple[str | None, ...] = ()

    @classmethod
    def with_nonces(cls, events: list[Event], state: GameState, nonces: Sequence[str | None]) -> Outcome:
        """The outcome of a batch whose lines carry ``nonces`` (one per line, or fewer: the rest none)."""
        made = cls(events, state)
        if any(nonces):
            made.nonces = tuple(nonces)
        return made

    def nonce_of(self, index: int) -> str | None:
        """The nonce of the ``index``-th appended line (None: none)."""
        return self.nonces[index] if index < len(self.nonces) else None

    def lines(self) -> list[str]:
        return describe_events(self.events)


class Idempotency(NamedTuple):
    """A command's idempotency key (its digest, :func:`~mortecouille.app.idempotency.seat_digest`
    for the service's seats) and the index of the keys the logs hold. ``seat`` and ``legacy``:
    the seat that sent it and the key's unscoped digest
    (:func:`~mortecouille.app.idempotency.key_digest`), which logs written before keys were
    scoped keep: a batch found under it answers the retry only if it is that seat's
    (:func:`~mortecouille.app.idempotency.batch_seat`)."""

    digest: str
    keys: IdempotencyIndex
    seat: str | None = None
    legacy: str | None = None


class KnownState(msgspec.Struct, frozen=True):
    """A state folded earlier and the log position it stands for (next seq, last hash)."""

    next_seq: int
    last_hash: str
    state: GameState


class CommandOptions(NamedTuple):
    """How :func:`run_command` runs a command; every field is optional.

    ``table_values``: a table-dice game's dice, in the order asked; any left unused refuse the
    command, since the referee meant them for something else. ``ask``: how the shell asks for
    more. ``expected_seq``: refuse unless the log is at this seq. ``known``: a state the caller
    folded before, used instead of folding the log again only if the log still ends where it did
    (same next seq and last hash). ``confirm``: shown the table dice the command read (if any), it
    says whether to write (a no: :class:`NotConfirmed`). ``idempotency``: the key the command was
    sent with (:mod:`mortecouille.app.idempotency`). ``nonce``: write a fresh random nonce on every
    line of a secret input (:func:`secret_nonces`), so that no line hash can be used to test
    guesses of it; off only for a deterministic shell (``demo --seed``'s bots).
    """

    table_values: list[int] | None = None
    ask: AskDie | None = None
    expected_seq: int | None = None
    known: KnownState | None = None
    confirm: ConfirmDice | None = None
    idempotency: Idempotency | None = None
    nonce: bool = True


class OptionFields(TypedDict, total=False):
    """:class:`CommandOptions`' fields, given to :func:`run_command` as keywords."""

    table_values: list[int] | None
    ask: AskDie | None
    expected_seq: int | None
    known: KnownState | None
    confirm: ConfirmDice | None
    idempotency: Idempotency | None
    nonce: bool


#: A command run with no option.
PLAIN = CommandOptions()


def run_command(
    log_: EventStore,
    make_command: Callable[[GameState], Command],
    options: CommandOptions = PLAIN,
    /,
    **fields: Unpack[OptionFields],
) -> Outcome:
    """Lock, fold, decide and append one command; return the appended events and the new state.

    ``make_command`` builds the command from the locked state (e.g. to reveal the seed);
    ``options`` (or its ``fields`` as keywords) say how (:class:`CommandOptions`). A refused
    command raises before anything is written. With an idempotency key already in the log, the
    batch appended under it is returned and nothing is decided or written (checked under the
    lock, so a retry racing its first attempt waits for it); else the key is written with the
    events, on the batch's first line, in the same append.
    """
    if fields:
        options = options._replace(**fields)
    if options.expected_seq is not None and options.expected_seq < 0:  # seqs start at 0
        raise BadInput(
            "expected_seq", "{expected_seq} is not a seq (0 or more)", expected_seq=options.expected_seq
        )
    with log_.transaction() as tx:
        if options.idempotency is not None:
            earlier = _answered_before(log_, tx, options.idempotency)
            if earlier is not None:
                return earlier
        locked = _locked_state(log_, tx, options.known)
        command = make_command(locked.state)
        produced = _decided(log_, locked.state, command, options)
        appended, drawn = _append(log_, tx, produced, options)
        log.info("appended", game=log_.name, command=type(command).__name__, events=len(appended))
        after = fold(appended, locked.state)
        files = log_.as_files()
        end = tx.offset()
        if locked.folded is not None and appended and files is not None and end is not None:
            # the command succeeded: a snapshot left far behind is rewritten (derived, so a
            # failure to write it is only logged)
            last = appended[-1]
            anchor = Anchor(last.seq, last.hash, end)
            keep_snapshot(files, Folded(after, anchor, locked.folded.folded + len(appended)))
    if locked.stored is not None and appended and isinstance(log_, KeepsSnapshots):
        # the command succeeded and its lock is released: a snapshot left far behind is rewritten
        # in a statement of its own, after the append's exchange and the unlock (so the append's
        # round trips and the time the game is locked do not grow), only when due; a failure to
        # write it is logged by the store and changes nothing
        last = appended[-1]
        stored = locked.stored
        keep_stored_snapshot(
            log_, StoreFolded(after, (last.seq, last.hash), stored.folded + len(appended), stored.start)
        )
    return Outcome.with_nonces(appended, after, drawn)


class _Locked(NamedTuple):
    """The state of a locked log, and how it was folded when from a snapshot (to rewrite it)."""

    state: GameState
    folded: Folded | None = None
    stored: StoreFolded | None = None


def _answered_before(log_: EventStore, tx: StoreTransaction, idempotency: Idempotency) -> Outcome | None:
    """The batch the log already holds under ``idempotency``'s key, as its outcome, or None."""
    found = _earlier_batch(log_, tx, idempotency)
    if found is None:
        return None
    earlier, events = found
    # the batch is acknowledged now: no later repair may cut it (see anchor_through)
    tx.acknowledge(events[-1])
    batch = events[earlier.first : earlier.first + earlier.count]
    return Outcome.with_nonces(batch, fold(events), earlier.nonces)


def _locked_state(log_: EventStore, tx: StoreTransaction, known: KnownState | None) -> _Locked:
    """The state of the log ``tx`` holds locked: ``known`` if the log still ends where it did,
    else folded from the snapshot and the events after it."""
    if known is not None and tx.position() == (known.next_seq, known.last_hash):
        return _Locked(known.state)
    if (files := log_.as_files()) is not None and (end := tx.offset()) is not None:
        # from the snapshot and the events after it, up to where the locked log ends
        folded = fold_log(files, end=end, settle=False)
        return _Locked(folded.state, folded=folded)
    # a store without files beside it (PostgreSQL: its snapshot in a table, if any)
    state, stored = _fold_from_store(log_, tx.position(), known)
    return _Locked(state, stored=stored)


def _decided(log_: EventStore, state: GameState, command: Command, options: CommandOptions) -> list[Event]:
    """The events ``command`` produces on ``state`` with its dice; refused if table dice given
    were left unused, or the referee does not confirm the table dice read."""
    table_values = options.table_values
    dice = dice_for(log_, state, table_values, options.ask)
    produced = decide(state, command, dice)
    if table_values and isinstance(dice, TableDice) and dice.pending:
        raise BadInput(
            "dice", "{count} value(s) left unused: {pending}", count=len(dice.pending), pending=dice.pending
        )
    if options.confirm is not None:
        table_rolls = [e for e in produced if isinstance(e, DieRolled) and e.source == "table"]
        if table_rolls and not options.confirm(table_rolls):
            raise NotConfirmed()
    return produced


def _append(
    log_: EventStore, tx: StoreTransaction, produced: list[Event], options: CommandOptions
) -> tuple[list[Event], list[str | None]]:
    """Append ``produced`` with their nonces and the command's key; the appended events and the
    nonces drawn."""
    idempotency = options.idempotency
    drawn = secret_nonces(produced) if options.nonce else []
    extras = line_extras(drawn, produced)
    if idempotency is not None and produced:
        # imported only with a key to write (the service): the CLI's commands never send one
        from mortecouille.app.idempotency import envelope

        extras[0] = {**envelope(idempotency.digest, len(produced)), **(extras[0] or {})}
    appended = tx.append(produced, options.expected_seq, extras if any(extras) else None)
    if idempotency is not None and appended and tx.offset() is None:
        idempotency.keys.appended(log_, idempotency.digest, appended[0].seq, len(appended), tuple(drawn))
    return appended, drawn


def _earlier_batch(
    log_: EventStore, tx: StoreTransaction, idempotency: Idempotency
) -> tuple[Recorded, list[Event]] | None:
    """The batch the log holds under ``idempotency``'s key and the log's events, or None: under
    its digest, else under its unscoped digest if that batch is the same seat's."""
    earlier = idempotency.keys.find_in(log_, tx, idempotency.digest)
    if earlier is not None:
        return earlier, tx.read()
    if idempotency.legacy is None or idempotency.seat is None:
        return None
    written_before = idempotency.keys.find_in(log_, tx, idempotency.legacy)
    if written_before is None:
        return None
    from mortecouille.app.idempotency import batch_seat  # only with a key (see run_command)

    events = tx.read()
    if batch_seat(events, written_before.first) != idempotency.seat:
        return None  # another seat's command under the same key: this one is new
    return written_before, events


def _fold_from_store(
    log_: EventStore, head: tuple[int, str], known: KnownState | None
) -> tuple[GameState, StoreFolded | None]:
    """The state of a game in a store without files beside it, its head ``head`` held under the
    writer lock, and how it was folded when from the store's snapshot (None otherwise: nothing
    to rewrite after the command). A ``known`` state a few events behind (another process
    appended since) is carried on by the events after it, when the first of them chains on to it
    (its prev is the known last hash: by the hash chain, the known events are the log's first
    ones); otherwise (or when it is :data:`SNAPSHOT_EVERY` or more events behind) the game is
    folded from the snapshot the store keeps and the events after it
    (:func:`~mortecouille.app.snapshots.fold_stored`), or from its start in a store keeping none."""
    if known is not None and 0 < known.next_seq < head[0] and head[0] - known.next_seq < SNAPSHOT_EVERY:
        later = list(events_from(log_, known.next_seq))
        if later and later[0].seq == known.next_seq and later[0].prev == known.last_hash:
            return fold(later, known.state), None
    if isinstance(log_, KeepsSnapshots):
        stored = fold_stored(log_)
        return stored.state, stored
    return fold(events_from(log_, 0)), None


# --- a game's life cycle ---------------------------------------------------------------------


def create_game(
    log_: EventStore,
    events: Sequence[Event],
    secret: str | None,
    *,
    idempotency_digest: str | None = None,
    nonce: bool = False,
) -> list[Event]:
    """Start a new log with ``events`` and keep its secret seed beside it.

    The log is created first, exclusively and locked, then the seed, then the events are written:
    of processes racing on one name only the one that created the log writes a
    seed, and a creation refused or failing at any step removes what it wrote, log and seed. On
    PostgreSQL the seed is written in the creation's own transaction: both commit or neither.

    ``idempotency_digest``: the digest of the ``Idempotency-Key`` the service's creation was sent
    with, written on the first line (``idem``) in the creation's own write, so a retry finds it
    even after a restart; None (the CLI) writes exactly the lines a creation always wrote.

    ``nonce``: write a nonce on every line of a secret input among ``events`` (as
    :func:`run_command` does for a command's batch); a new game's creation holds none, a fork
    copies nothing secret (:mod:`mortecouille.app.fork`), and the deterministic creations
    (``simulate``'s bot games, a scenario) write their lines as they always did."""
    if (files := log_.as_files()) is not None:
        problem = files.path_problem(SIBLINGS)
        if problem is not None:
            raise BadInput("game", "{problem}", problem=problem)
    with log_.creating() as creation:
        if creation.taken_over:
            # the log an earlier creation left empty as it died: the seed it may have kept first
            # commits no game (no line holds its commitment) and would refuse this one's
            secrets_of(log_, creation).remove(SEED)
        drawn = secret_nonces(events) if nonce else []
        if secret is None:
            return _write_creation(creation, events, idempotency_digest, drawn)
        kept = secrets_of(log_, creation)
        kept.create(SEED, (secret + "\n").encode("utf-8"))
        try:
            return _write_creation(creation, events, idempotency_digest, drawn)
        except BaseException:
            kept.remove(SEED)  # ours: created exclusively just above
            raise


def _write_creation(
    creation: StoreCreation, events: Sequence[Event], digest: str | None, nonces: Sequence[str | None]
) -> list[Event]:
    """Write a creation's events, with the key ``digest`` on the first line and ``nonces`` on
    their lines if there are (without either, the very call a creation always made)."""
    extras = line_extras(nonces, events)
    if digest is not None and events:
        from mortecouille.app.idempotency import envelope  # only with a key (see run_command)

        extras[0] = {**envelope(digest, len(events)), **(extras[0] or {})}
    return creation.write(events, extras) if any(extras) else creation.write(events)


def start_game(
    log_: EventStore, command: CreateGame, secret: str | None, *, idempotency_digest: str | None = None
) -> list[Event]:
    """Decide ``command`` and create the game's log with its events, keeping ``secret`` beside it
    (``idempotency_digest``: see :func:`create_game`)."""
    committed = command.seed_sha256 is not None or command.seed_hmac is not None
    if (secret is None and committed) or (secret is not None and not matches_commitment(secret, command)):
        raise ValueError(f"the secret seed kept for {command.game!r} must be the one it commits to")
    events = decide(EMPTY, command, TableDice())
    return create_game(log_, events, secret, idempotency_digest=idempotency_digest)


def new_game(
    log_: EventStore,
    *,
    players: Sequence[str],
    ruleset: str,
    budget: int,
    board: Board,
    dice_mode: str,
    seed: str | None,
    weak_seed: bool = False,
    idempotency_digest: str | None = None,
) -> list[Event]:
    """Create a referee's game: its first event commits to the rules version and the dice seed
    (the one given, else a random one), which is kept beside the log until the game ends.
    ``weak_seed``: the table accepts a chosen seed shorter than :data:`MIN_SEED_LENGTH`.
    ``idempotency_digest``: the service's ``Idempotency-Key``, kept on the first line (see
    :func:`create_game`)."""
    secret = secret_seed(dice_mode, seed, weak_seed=weak_seed)
    commitment = commit_to(secret)
    command = CreateGame(
        game=log_.name,
        ruleset=ruleset,
        players=tuple(players),
        budget=budget,
        board=board,
        dice_mode=dice_mode,
        seed_salt=commitment.seed_salt,
        seed_hmac=commitment.seed_hmac,
        dice_scheme=NEW_GAME_DICE_SCHEME if dice_mode == "seeded" else None,
        rules_version=RULES_VERSION,
    )
    return start_game(log_, command, secret, idempotency_digest=idempotency_digest)


def resolve_turn(
    log_: EventStore,
    *,
    partial: bool = False,
    idle_turn: bool = False,
    table_values: list[int] | None = None,
    ask: AskDie | None = None,
    expected_seq: int | None = None,
    confirm: ConfirmDice | None = None,
    absent_reason: str | None = None,
    idempotency: Idempotency | None = None,
) -> Outcome:
    """Resolve the current turn; a turn that ends the game reveals its seed (D2).

    The table's checks (mortecouille.core.readiness) run here, on the locked state, before any
    die is asked: fleets ready before turn 1, and some ship acting unless ``idle_turn``, which
    also lets every ship without orders do nothing (as ``partial``).

    In a contributed game (D3), the one-step path: a turn not locked yet gets a fresh contribution
    for every player who committed none (the referee acting for them), committed, locked and
    revealed with the resolution, in the same append. Contributions players committed themselves
    must have been revealed (after :func:`lock_turn`), or ``absent_reason`` resolves without them."""

    # the table's checks are imported by the command that resolves, not by every command
    from mortecouille.core.readiness import check_table_resolve

    def command(state: GameState) -> ResolveTurn:
        if state.created:  # (decide refuses a game not created)
            check_table_resolve(state, asked_named(state.ruleset), idle_turn=idle_turn)
        return ResolveTurn(
            partial=partial or idle_turn,
            reveal_seed=revealed_seed(log_, state),
            contribute=drawn_contributions(state),
            absent_reason=absent_reason,
        )

    return run_command(
        log_,
        command,
        table_values=table_values,
        ask=ask,
        expected_seq=expected_seq,
        confirm=confirm,
        idempotency=idempotency,
    )


# --- the players' contributions to a turn's dice (D3) ----------------------------------------


def drawn_contributions(state: GameState) -> dict[str, str]:
    """The one-step path (D3): a fresh contribution for each player who committed none to a turn
    not locked yet; none once it is locked (too late to commit) or in a game of another scheme."""
    if not contributed(state):
        return {}
    now = current_round(state)
    if now.locked:
        return {}
    return {player: new_contribution() for player in state.players if player not in now.commitments}


def commit_dice_contribution(
    log_: EventStore, player: str, commitment: str, *, expected_seq: int | None = None
) -> Outcome:
    """``player`` commits to their secret contribution to the current turn's dice (D3): the
    SHA-256 (hex) of 32 random hex digits their page drew and keeps until the turn is locked."""
    return run_command(
        log_,
        lambda state: CommitDiceContribution(player=player, commitment=commitment),
        expected_seq=expected_seq,
    )


def lock_turn(log_: EventStore, *, expected_seq: int | None = None) -> Outcome:
    """Lock the current turn (D3): its inputs are final, and the players may reveal."""
    return run_command(log_, lambda state: LockTurn(), expected_seq=expected_seq)


def reveal_dice_contribution(
    log_: EventStore, player: str, contribution: str, *, expected_seq: int | None = None
) -> Outcome:
    """``player`` reveals their contribution after the lock; one not matching their commitment is
    refused (D3) and nothing is written."""
    return run_command(
        log_,
        lambda state: RevealDiceContribution(player=player, contribution=contribution),
        expected_seq=expected_seq,
    )


def ending(
    log_: EventStore, *, winner: str | None = None, reason: str = "referee"
) -> Callable[[GameState], EndGame]:
    """The referee's EndGame for ``run_command``, revealing the seed kept beside ``log_`` (D2)."""
    return lambda state: EndGame(reason=reason, winner=winner, seed=revealed_seed(log_, state))


def end_game(log_: EventStore, *, winner: str | None = None, reason: str = "referee") -> GameEnded:
    """End the game by the referee's decision and reveal its seed (D2)."""
    appended, _ = run_command(log_, ending(log_, winner=winner, reason=reason))
    ended = appended[-1]
    assert isinstance(ended, GameEnded)
    return ended


# --- the games of a directory ---------------------------------------------------


class GameSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One line of ``games``: where a game stands. ``problem`` says why a log could not be
    read (the other fields are then empty); ``waiting`` maps each player the turn waits for to
    their ships still without orders (tokens in blockade)."""

    name: str
    ruleset: str = ""
    turn: int = 0
    #: the turn the position shows and how the game ended, as every output words it
    position: str = ""
    status: str = "playing"
    winner: str | None = None
    waiting: dict[str, tuple[str, ...]] = {}
    problem: str | None = None


def summarise_game(name: str, state: GameState) -> GameSummary:
    return GameSummary(
        name=name,
        ruleset=state.ruleset,
        turn=state.turn,
        position=position_caption(state).render(),
        status="ended" if state.ended else "playing",
        winner=state.winner,
        waiting=dict(players_awaiting_orders(state)),
    )


def list_games(store: GameStore | Path) -> list[GameSummary]:
    """Every game of ``store`` (or of a games directory), by name; a log that cannot be read or
    folded is listed with its problem instead of stopping the list (``verify`` tells the whole
    story). Reads only."""
    games = FileStore(store) if isinstance(store, Path) else store
    summaries = []
    for name in games.names():
        try:
            summaries.append(summarise_game(name, load(game_log(games, name))[1]))
        except (MortecouilleError, LogError, GameNotFound, Conflict, StoreError) as error:
            summaries.append(GameSummary(name=name, status="unreadable", problem=str(error)))
    return summaries
