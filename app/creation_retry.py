"""A game's creation retried with its ``Idempotency-Key`` (docs/service.md, "Idempotency-Key").

A creation (``POST /api/games``) or a fork sent with a key writes the key's digest on the new
log's first line, in the creation's own write (:func:`mortecouille.app.commands.create_game`).
Its answer is the only one that ever carries the seat tokens: only their hashes are kept. A client
that lost that answer retries with the same key and finds the name taken; :func:`reissue_for_retry`
then answers it as the first answer did (the same events, the same ``seq``) with **fresh** tokens
for every seat, which end the lost ones that no client received.

That is only safe while nobody can have used the seats: under the game's writer lock, the log
must still hold exactly the creation's events. Once anything was appended after them, someone
holds working tokens, and re-issuing them would lock that table out: the retry is refused
(:class:`KeyUsedSince`, HTTP 409 naming ``Idempotency-Key``).
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec

from mortecouille.app.idempotency import IdempotencyIndex
from mortecouille.app.seats import IssuedSeats, SeatHashes, new_token, token_hash
from mortecouille.core.errors import MortecouilleError
from mortecouille.events.base import Event
from mortecouille.events.game import GameCreated
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.contract import SEATS, EventStore, secrets_of

log = get_logger("mortecouille")

#: The request header whose key a creation's retry is matched by (named in refusals).
KEY_HEADER = "Idempotency-Key"


class KeyUsedSince(MortecouilleError):
    """A creation's key sent again after the game moved on from its creation (HTTP 409)."""

    exit_code = 3

    def __init__(self, game: str, created: int, next_seq: int) -> None:
        super().__init__(
            "Idempotency-Key: game {game!r} was created with this key, but events were appended since "
            "(seq {created}..{last}): its seats are in use and are not issued again; "
            "the referee can give a lost seat a new token (POST /api/games/{{game}}/seats/{{player}}, "
            "or /referee-seat)",
            field=KEY_HEADER,
            game=game,
            created=created,
            last=next_seq - 1,
        )


class CreationInProgress(Exception):
    """The game's log was found empty: its creation is under way or was taken back. The caller
    tries its creation again (a creation is exclusive, so at most one of them creates it)."""


class Recreated(NamedTuple):
    """What a retried creation answers with: the creation's events and the seats issued again."""

    events: list[Event]
    seats: IssuedSeats


def reissue_for_retry(
    log_: EventStore,
    digest: str,
    keys: IdempotencyIndex,
    *,
    forked_from: str | None = None,
    legacy: str | None = None,
) -> Recreated | None:
    """The creation of ``log_``'s game answered again for the key ``digest``, with fresh tokens
    for every seat; None when the game was not created with that key (the caller's refusal, the
    name taken, stands). ``forked_from``: a fork's retry, which must name the game it forked.
    ``legacy``: the key's unscoped digest, which a game created before keys were scoped by seat
    keeps (only a creation, or a fork of ``forked_from``, is found at its first seq either way).

    Under the game's writer lock: the check that the log holds only its creation and the new
    seats are one step, so no command can slip in between. Raises :class:`KeyUsedSince` when
    events were appended after the creation, :class:`CreationInProgress` when the log is empty."""
    with log_.transaction() as tx:
        next_seq, _ = tx.position()
        if next_seq == 0:
            raise CreationInProgress(log_.name)
        recorded = keys.find_in(log_, tx, digest)
        if recorded is None and legacy is not None:
            recorded = keys.find_in(log_, tx, legacy)
        if recorded is None or recorded.first != 0:
            return None
        events = tx.read()[: recorded.count]
        created = events[0] if events else None
        if not isinstance(created, GameCreated) or created.forked_from != forked_from:
            return None
        if next_seq != recorded.count:
            raise KeyUsedSince(log_.name, recorded.count, next_seq)
        players = created.players
        issued = IssuedSeats(referee=new_token(), players={name: new_token() for name in players})
        hashes = SeatHashes(
            referee=token_hash(issued.referee or ""),
            players={name: token_hash(token) for name, token in issued.players.items()},
        )
        # replaced whole, atomically (the old hashes, or a crash's: never a mix)
        secrets_of(log_).replace(SEATS, msgspec.json.encode(hashes) + b"\n")
    log.info("seats reissued for a retried creation", game=log_.name, players=len(players))
    return Recreated(events, issued)
