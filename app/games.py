"""Where games live and reading one: the store a command works on (``store_url``, ``open_games``),
a game's log (``game_log``, with the files an app keeps beside it) and its state (``load``,
``load_state``).

Apart from :mod:`mortecouille.app.commands` (which re-exports every name here) so that a command
that only reads a game, ``state`` above all, does not import the command path: locking, dice,
deciding, idempotency keys, a game's life cycle (the CLI's start-up).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import overload

from mortecouille.app.snapshots import current_state
from mortecouille.core.errors import BadInput
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.storage.contract import (
    DEFAULT_STORE_URL,
    EventStore,
    FileStore,
    GameStore,
    open_store,
)
from mortecouille.events.storage.file_log import GameLog

# --- where games live ------------------------------------------------------------------------

DEFAULT_GAMES_DIR = "games"


def games_dir(option: str | None) -> Path:
    """The games directory: the one given, else $MORTECOUILLE_GAMES, else ./games."""
    return Path(option or os.environ.get("MORTECOUILLE_GAMES") or DEFAULT_GAMES_DIR)


#: The environment variables naming the store: a URL, or a games directory (``file:DIR``).
STORE_VARIABLE = "MORTECOUILLE_STORE"
GAMES_VARIABLE = "MORTECOUILLE_GAMES"


def store_url(store_option: str | None, games_option: str | None) -> str:
    """The URL of the store a command works on: ``--store URL``, else ``--games-dir DIR``
    (shorthand for ``file:DIR``), else ``$MORTECOUILLE_STORE``, else ``$MORTECOUILLE_GAMES``, else
    ``file:./games``. An option wins over the environment; both options given (or, without
    either, both variables set) are refused, naming both: which one was meant is not for us to guess."""
    if store_option is not None and games_option is not None:
        raise BadInput("store", "give --store URL or --games-dir DIR, not both (--games-dir D is file:D)")
    if store_option is not None:
        return store_option
    if games_option is not None:
        return f"file:{games_option}"
    from_store, from_games = os.environ.get(STORE_VARIABLE), os.environ.get(GAMES_VARIABLE)
    if from_store and from_games:
        raise BadInput(
            f"${STORE_VARIABLE}",
            "both ${store_variable} and ${games_variable} are set: unset one (${games_variable}=D "
            "means ${store_variable}=file:D)",
            store_variable=STORE_VARIABLE,
            games_variable=GAMES_VARIABLE,
        )
    if from_store:
        return from_store
    if from_games:
        return f"file:{from_games}"
    return DEFAULT_STORE_URL


def store_source(store_option: str | None, games_option: str | None) -> str:
    """Where the store's URL came from (see :func:`store_url`), to name it in a refusal."""
    if store_option is not None:
        return "--store"
    if games_option is not None:
        return "--games-dir"
    if os.environ.get(STORE_VARIABLE):
        return f"${STORE_VARIABLE}"
    return f"${GAMES_VARIABLE}" if os.environ.get(GAMES_VARIABLE) else "--store"


def open_games(url: str, option: str = "store") -> GameStore:
    """The store of games ``url`` names (:func:`mortecouille.events.storage.contract.open_store`): a
    refusal (an unknown URL, a missing driver, an unreachable server) names ``option``."""
    return open_store(url, option)


def check_game_name(game: str) -> None:
    """Refuse a game name that could reach outside a store's directory: the same names on every
    store, so a game copies from one to another."""
    if not game or "/" in game or game.startswith(".") or "\0" in game:
        raise BadInput("game", "{game!r} is not a valid game name", game=game)


@overload
def game_log(store: Path, game: str) -> GameLog: ...


@overload
def game_log(store: FileStore, game: str) -> GameLog: ...


@overload
def game_log(store: GameStore, game: str) -> EventStore: ...


def game_log(store: GameStore | Path, game: str) -> EventStore:
    """GAME's log in ``store`` (a :class:`GameStore`, or a games directory, the file store of it);
    a name that could reach outside a directory, or whose files (the log, its head anchor and
    temporary file, its seed and seats) the file system would refuse, is refused before anything
    is read or written, whatever the store (so games copy between stores)."""
    check_game_name(game)
    files = FileStore(store) if isinstance(store, Path) else store
    log_ = files.log(game)
    problem = (log_.as_files() or GameLog(Path(f"{game}.jsonl"))).path_problem(SIBLINGS)
    if problem is not None:
        raise BadInput("game", "{problem}", problem=problem)
    return log_


def describe_location(log_: EventStore) -> str:
    """Where a game's log is, for a message: its path, or the game in its store."""
    return log_.describe()


# --- the files beside a game's log -----------------------------------------------------------

#: The files an app keeps beside a game's log, besides the store's own (the head anchor): the
#: secret seed, and the hashes of the seat tokens (mortecouille.app.seats) with the temporary
#: file that replaces them.
SEED_SUFFIX = ".seed"
SEATS_SUFFIX = ".seats"
SEATS_TEMPORARY_SUFFIX = ".seats-new"
SIBLINGS: tuple[str, ...] = (SEED_SUFFIX, SEATS_SUFFIX, SEATS_TEMPORARY_SUFFIX)


# --- reading ---------------------------------------------------------------------------------


def load(log_: EventStore) -> tuple[list[Event], GameState]:
    """The game's events and their fold, for a reader that needs every event (a page's view, the
    log printed); one that needs the state only calls :func:`load_state`."""
    # imported here: load_state, which a current snapshot spares any folding, does not need it
    from mortecouille.core.game import fold

    events = log_.read()
    return events, fold(events)


def load_state(log_: EventStore, *, keep: bool = False) -> GameState:
    """The game's current state, folded from its snapshot and the events after it
    (:mod:`mortecouille.app.snapshots`): the cost of a read does not grow with the log.
    ``keep``: called on a reading command's success path, which may then rewrite a snapshot left
    far behind (never on a path that can still refuse: a refused command writes nothing)."""
    return current_state(log_, keep=keep)
