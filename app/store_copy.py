"""Whole games between stores, as bytes: ``export-log``, ``store copy``, and
the files the analytics read when the games are in a database.

A log moves as its **lines**, never as events decoded and stamped again: re-encoding can change
bytes (an int written in a float field, ``"damage":0``, comes back as ``0.0``, with another
hash), and a copy must verify against the hashes players noted at the table (head codes,
receipts). So every function here reads a game's bytes under its writer lock (no append in
between), checks them against the store's head (:meth:`EventStore.verify_chain`), and writes them
as they are (:func:`mortecouille.events.storage.contract.import_lines`), with the game's secrets (the seed
until the game reveals it, the seat hashes) in the same creation.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from mortecouille.app.games import game_log
from mortecouille.core.errors import BadInput
from mortecouille.events.codec import LogError
from mortecouille.events.storage.chain import Head
from mortecouille.events.storage.contract import SEATS, SEED, EventStore, GameStore, import_lines, secrets_of
from mortecouille.events.storage.errors import Conflict, GameNotFound, StoreError, Unwritable
from mortecouille.events.storage.file_log import GameLog

if TYPE_CHECKING:
    from mortecouille.app.turn_index import TurnLookups

#: The secrets a copy carries with a game's lines, in this order.
COPIED_SECRETS: tuple[str, ...] = (SEED, SEATS)


def verified_bytes(log: EventStore) -> bytes:
    """The game's log as the file store writes it, read under its writer lock and checked against
    the store's head (LogError names the first bad seq): what ``export-log`` prints."""
    data, _ = _held_read(log)
    log.verify_chain(data)
    return data


def _held_read(log: EventStore) -> tuple[bytes, Head | None]:
    """The log's bytes and its head, read under the writer lock, so no append falls between them
    (else a head read after an append would take the bytes read before it for a cut log). A file
    log the user may not write (a read-only folder, an archive) is read without the lock: a
    torn tail from an append in flight is then reported, not copied."""
    try:
        with log.transaction():
            return log.read_bytes(), log.read_head()
    except Unwritable:
        if log.as_files() is None:
            raise
        return log.read_bytes(), log.read_head()


class CopyResult(NamedTuple):
    """What ``store copy`` did: the games copied (name, lines) and those refused (name, why, exit)."""

    copied: list[tuple[str, int]]
    refused: list[tuple[str, str, int]]

    @property
    def exit_code(self) -> int:
        """0, else the highest exit of a refusal (3: already at the target, 4: a corrupt log)."""
        return max((code for _, _, code in self.refused), default=0)


def copy_game(source: GameStore, target: GameStore, game: str) -> int:
    """Copy ``game`` from ``source`` to ``target``: its lines as bytes (checked first), the head
    anchor a file target keeps, and its secrets; the number of lines. A game already at the
    target is a Conflict naming it, and nothing is written for it."""
    origin = game_log(source, game)
    destination = game_log(target, game)
    if destination.exists():
        raise Conflict(f"game {game!r} already exists in {target.url}: nothing copied for it")
    data = verified_bytes(origin)
    kept = secrets_of(origin)
    secrets = {kind: found for kind in COPIED_SECRETS if (found := kept.read(kind)) is not None}
    return import_lines(destination, data, secrets)


def copy_games(
    source: GameStore,
    target: GameStore,
    games: Sequence[str] = (),
    on_game: Callable[[str], None] | None = None,
) -> CopyResult:
    """Copy ``games`` (every game of ``source`` when none is named) one by one: a game refused
    (there already, corrupt, missing) is reported and the others are copied."""
    names = list(games) or source.names()
    result = CopyResult([], [])
    for name in names:
        try:
            result.copied.append((name, copy_game(source, target, name)))
        except Conflict as error:
            result.refused.append((name, str(error), 3))
        except LogError as error:
            result.refused.append((name, f"corrupt or tampered log: {error}", 4))
        except (GameNotFound, BadInput, StoreError) as error:
            result.refused.append((name, str(error), 2))
        if on_game is not None:
            on_game(name)
    return result


def mirror_game(log: EventStore, directory: Path) -> Path:
    """Write ``log``'s game into ``directory`` as the file store would hold it (``GAME.jsonl`` and
    its head anchor at the store's head) without checking it: a reader of the files (the archive,
    ``query --logs``) then finds exactly what the store holds, a tampered log included, and its
    own checks refuse it as they would a file's."""
    data, head = _held_read(log)
    mirrored = GameLog(directory / f"{log.name}.jsonl")
    mirrored.path.write_bytes(data)
    if head is not None:
        mirrored.start_head(head.seq, head.hash)
    return mirrored.path


@contextmanager
def log_as_file(log: EventStore) -> Iterator[GameLog]:
    """``log`` as a file log, for the readers that work on a file and the derived files beside it
    (the turn index of ``replay``, ``explain``, ``board --turn``): the log itself in the file
    store; another store's game mirrored into a temporary directory, removed afterwards (its
    derived files go with it)."""
    files = log.as_files()
    if files is not None:
        yield files
        return
    directory = Path(tempfile.mkdtemp(prefix="mortecouille-log-"))
    try:
        yield GameLog(mirror_game(log, directory))
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def turns_of(log: EventStore) -> Iterator[TurnLookups]:
    """The turn index of ``log``'s game, for ``replay``, ``explain`` and ``board --turn``: the file
    beside a file log (:func:`~mortecouille.app.turn_index.turn_index`); a PostgreSQL game's
    from its own tables (:mod:`mortecouille.app.stored_turns`: its turn marks and keyframes,
    never the whole game); another store's game mirrored into a temporary file (:func:`log_as_file`)."""
    # imported by the turn commands only (the CLI's start-up)
    from mortecouille.app.stored_turns import KeepsTurns, StoredTurnIndex
    from mortecouille.app.turn_index import turn_index

    if isinstance(log, KeepsTurns):
        yield StoredTurnIndex(log)
        return
    with log_as_file(log) as readable:
        yield turn_index(readable)


@contextmanager
def logs_as_files(store: GameStore) -> Iterator[Path]:
    """A directory holding the store's logs as files: the file store's own directory, or, for
    another store, a temporary one its games are written into one at a time (never all of them in
    memory), removed afterwards."""
    folder = store.folder()
    if folder is not None:
        yield folder
        return
    directory = Path(tempfile.mkdtemp(prefix="mortecouille-logs-"))
    try:
        for name in store.names():
            try:
                mirror_game(game_log(store, name), directory)
            except BadInput:
                continue  # a name no file could hold is not a game any command reaches
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)
