"""The games list the service answers anyone (``GET /api/games``; docs/service.md): each game as
a spectator may know it, from the spectator's public fold like every field of a view, so that
no secret (a ship bought and placed before every fleet is sealed) shows in who the turn waits
for; a game whose log cannot be read is listed with its problem as a client may read it
(:mod:`mortecouille.app.problems`: never the log's bytes).

The CLI's ``games`` lists the full state (:func:`mortecouille.app.commands.list_games`): its user
holds the files."""

from __future__ import annotations

import shlex

from mortecouille.app.commands import GameSummary, summarise_game
from mortecouille.app.games import game_log
from mortecouille.app.problems import problem_text
from mortecouille.app.seats import SPECTATOR
from mortecouille.app.view import public_state
from mortecouille.core.errors import MortecouilleError
from mortecouille.events.codec import LogError
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.contract import GameStore
from mortecouille.events.storage.errors import Conflict, GameNotFound, StoreError, Unwritable

log = get_logger("mortecouille")


def public_games(store: GameStore) -> list[GameSummary]:
    """Every game of ``store``, by name, as a spectator may know it. Reads only."""
    summaries = []
    for name in store.names():
        try:
            events = game_log(store, name).read()
            summaries.append(summarise_game(name, public_state(events, SPECTATOR)))
        except (LogError, Unwritable, StoreError) as error:
            log.warning("game not listed", game=name, problem=str(error))
            summaries.append(GameSummary(name=name, status="unreadable", problem=problem_text(error, name)))
        except GameNotFound:
            continue  # removed since the names were read
        except (MortecouilleError, Conflict) as error:  # a log that does not fold, or is locked
            log.warning("game not listed", game=name, problem=str(error))
            problem = f"game {name!r} cannot be read as a game; run `mortecouille verify {shlex.quote(name)}`"
            summaries.append(GameSummary(name=name, status="unreadable", problem=problem))
    return summaries
