"""What ``state`` prints, without click: shared by the ``state`` command (click's, in
:mod:`mortecouille.cli.game_commands`) and the launcher's own plain ``state GAME [--json]``
(:mod:`mortecouille.cli.launch`), so both print the same lines."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from mortecouille.app.games import game_log, load_state
from mortecouille.core.state import GameState, state_as_dict, state_hash
from mortecouille.events.storage.contract import GameStore
from mortecouille.replays.reading.describe import describe_state


def state_lines(
    store: GameStore, game: str, as_json: bool, describe: Callable[[GameState], str] = describe_state
) -> list[str]:
    """What ``state GAME`` prints: the state described (by ``describe``) and its hash, or
    (``--json``) one line of JSON with every field and the hash. Reads through
    :mod:`mortecouille.app.games` (no locking, dice or deciding); a snapshot left behind is
    rewritten, as any reading command does."""
    folded = load_state(game_log(store, game), keep=True)
    if as_json:
        body = state_as_dict(folded)
        body["state_hash"] = state_hash(folded)
        return [msgspec.json.encode(body).decode()]
    return [describe(folded), f"state hash {state_hash(folded)}"]
