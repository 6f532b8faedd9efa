"""What a client of the service is told when a game's log or the store fails (docs/service.md,
"Errors"): the game, the seq and what to do, never the log's bytes (a torn or corrupt line may be
a secret: an order, a purchase), a path of the server or the store's address. The whole story is
the server's own log's (``structlog``) and the CLI's (``verify``, ``repair``), for those who hold
the files.
"""

from __future__ import annotations

import shlex

from mortecouille.events.codec import LogError, TornTail
from mortecouille.events.storage.errors import StoreError, Unwritable

#: What a 503 asks a client to wait before it tries again (``Retry-After``), in seconds: long
#: enough for a store to come back or a disk to be freed, short for a table waiting.
RETRY_AFTER_SECONDS = 10


def transient(error: BaseException) -> bool:
    """Whether ``error`` is a state of the server the same request may outlive (HTTP 503 with
    ``Retry-After``): a torn tail (cut by the next start, or by ``repair``), a full or unwritable
    disk, a store that cannot be reached."""
    return isinstance(error, TornTail | Unwritable | StoreError)


def problem_text(error: BaseException, game: str | None) -> str:
    """``error`` (a :class:`LogError`, :class:`Unwritable` or :class:`StoreError`) as a client may
    read it about ``game`` (None: the game is not known here).

    >>> problem_text(TornTail(line=8, fragment=b'{"actions":[{"target":"Kraken"'), "duel")
    "game 'duel': torn last line at seq 7 (an append was cut short); nothing after seq 6 is read ..."
    >>> problem_text(LogError("line 3: field `type`: unknown event type 'x'", line=3, seq=2), "duel")
    "game 'duel': its log cannot be trusted at seq 2; run `mortecouille verify duel`"
    """
    named = f"game {game!r}" if game is not None else "the game"
    command_game = shlex.quote(game) if game is not None else "GAME"
    if isinstance(error, TornTail):
        seq = error.seq if error.seq is not None else 0
        return (
            f"{named}: torn last line at seq {seq} (an append was cut short); nothing after seq "
            f"{seq - 1} is read until `mortecouille repair {command_game}` cuts it"
        )
    if isinstance(error, LogError):
        where = f" at seq {error.seq}" if error.seq is not None else ""
        return f"{named}: its log cannot be trusted{where}; run `mortecouille verify {command_game}`"
    if isinstance(error, Unwritable):
        why = f" ({error.reason})" if error.reason else ""
        return f"{named} cannot be written now{why}: nothing was written; try again later"
    if isinstance(error, StoreError):
        return (
            "the store of games cannot be reached now: try again later (a command sent with an "
            "Idempotency-Key may be sent again with it: it is written once)"
        )
    return f"{named}: unexpected {type(error).__name__}"
