"""``simulate``: the built-in bots play many complete seeded games, each a normal verifiable log.

Game ``i`` of a run with seed ``S`` is named ``sim-S-i`` and rolls its dice with seed ``S-i``, so a
run is reproducible game by game and a bigger run with the same seed extends a smaller one. Each
game is played in memory (decide and fold, no disk) and written in one go, its seed kept beside
it like every seeded game's, through :func:`mortecouille.app.commands.create_game`: one write and
one fsync per log.

Only the mortecouille ruleset has bots (mortecouille.bots.player); blockade is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import msgspec

from mortecouille.app.botgame import HOME_SQUARES, FixedFleets, play_in_memory
from mortecouille.app.commands import create_game
from mortecouille.app.games import game_log
from mortecouille.core.errors import BadInput
from mortecouille.core.life_cycle import check_players_distinct
from mortecouille.events.base import Event
from mortecouille.events.storage.contract import EventStore, GameStore
from mortecouille.events.storage.errors import Conflict

DEFAULT_BUDGET = 100_000
DEFAULT_MAX_TURNS = 60
BOT_RULESETS = ("mortecouille",)


def game_name(seed: str, index: int) -> str:
    """``sim-SEED-i``, with anything a game name may not hold in the seed replaced by ``_``."""
    return f"sim-{re.sub(r'[^A-Za-z0-9_.-]', '_', seed)}-{index}"


def game_seed(seed: str, index: int) -> str:
    return f"{seed}-{index}"


#: ``--fleets``: each side buys a random legal fleet (seeded by the game's seed), the demo's two
#: fixed fleets, or the fleets of a JSON file (:func:`load_fleets`).
Fleets = FixedFleets | Literal["demo", "random"]


def load_fleets(path: Path) -> FixedFleets:
    """Two fixed fleets from a JSON file: ``{"Anne": [{"kind": "red-small", "name": "Hope",
    "options": ["siren"]}], "Bart": [...]}``, each player's ships in buying order. Only the shape
    is checked here; kinds, options, names and prices are the ``buy`` command's to judge."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise BadInput(
            "fleets", "cannot read {path}: {strerror}", path=path, strerror=error.strerror
        ) from None
    try:
        fleets = msgspec.json.decode(data, type=FixedFleets)
    except msgspec.DecodeError as error:
        raise BadInput("fleets", "{path}: {error}", path=path, error=str(error)) from None
    if len(fleets) != len(HOME_SQUARES):
        raise BadInput(
            "fleets",
            "{path}: bots play {count} players, the file has {given}",
            path=path,
            count=len(HOME_SQUARES),
            given=len(fleets),
        )
    for player, ships in fleets.items():
        if not ships:
            raise BadInput("fleets", "{path}: {player} has no ship", path=path, player=player)
    try:
        check_players_distinct(fleets, "fleets")  # the players of the file are the game's (T3)
    except BadInput as refused:
        raise BadInput("fleets", "{path}: {message}", path=path, message=refused.phrase) from None
    return fleets


def play_bot_game(
    game: str, seed: str, budget: int, max_turns: int, fleets: Fleets = "random"
) -> list[Event]:
    """One whole bot game in memory (``mortecouille.app.botgame.play_in_memory``)."""
    return play_in_memory(game, seed, max_turns=max_turns, budget=budget, fleets=fleets)


def check_ruleset(ruleset: str) -> None:
    if ruleset not in BOT_RULESETS:
        raise BadInput(
            "ruleset",
            "only {bot_rulesets} has built-in bots; {ruleset!r} games are played at the table",
            bot_rulesets=", ".join(BOT_RULESETS),
            ruleset=ruleset,
        )


def where(store: GameStore | Path) -> str:
    """A store as a message names it: a directory by its path, another store by its URL."""
    if isinstance(store, Path):
        return str(store)
    folder = store.folder()
    return store.url if folder is None else str(folder)


def simulate(
    directory: GameStore | Path,
    games: int,
    seed: str,
    budget: int = DEFAULT_BUDGET,
    max_turns: int = DEFAULT_MAX_TURNS,
    ruleset: str = "mortecouille",
    fleets: Fleets = "random",
    on_game: Callable[[str], None] | None = None,
) -> list[EventStore]:
    """Play ``games`` seeded bot games into ``directory``; refuse (nothing written) if any exists.

    Each game is created like any seeded game (``mortecouille.app.commands.create_game``): its
    secret seed kept beside its log, the log created exclusively. ``fleets``: see :data:`Fleets`
    (random ones are seeded by each game's seed, so a run stays reproducible game by game).
    ``on_game`` is told each game's name once its log is written (for a progress bar).
    """
    check_ruleset(ruleset)
    if games < 0:
        raise BadInput("games", "must be 0 or more, not {games}", games=games)
    logs = [game_log(directory, game_name(seed, i)) for i in range(games)]
    taken = [log.name for log in logs if log.exists()]
    if taken:
        raise Conflict(
            f"{len(taken)} game(s) of seed {seed!r} already exist in {where(directory)} (first: {taken[0]}); "
            "use another seed or directory"
        )
    folder = directory if isinstance(directory, Path) else directory.folder()
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    for index, log in enumerate(logs):
        dice_seed = game_seed(seed, index)
        create_game(log, play_bot_game(log.name, dice_seed, budget, max_turns, fleets), dice_seed)
        if on_game is not None:
            on_game(log.name)
    return logs
