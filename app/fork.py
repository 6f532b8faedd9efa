"""What-if: a new game that starts from another game's log up to a chosen seq.

The fork's first event is a ``GameCreated`` naming the game it came from and the
seq it was cut at; then every event after the original's first, up to and
including that seq, is copied and stamped into the fork's own chain. The
original is only read.

Two things cannot be copied byte for byte, and both are deliberate:

* the envelope (``seq`` stays, ``prev`` and ``hash`` are the fork's chain);
* each ``TurnEnded.state_hash``: the state includes the game's name, seed
  commitment and origin, so the fork's turns end in states with other hashes.
  They are recomputed by folding the fork, exactly as the decider would have
  recorded them, so ``verify`` checks and re-derives the fork like any game.

Seeded dice copied from the original were derived from the *original's* seed
and game id; ``verify`` accepts them as copied (seq <= ``forked_at_seq``) and
checks only the fork's own rolls against the fork's fresh seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import msgspec

from mortecouille.app.commands import SeedCommitment, commit_to, create_game, secret_seed
from mortecouille.app.games import game_log
from mortecouille.core.errors import BadInput
from mortecouille.core.game import evolve
from mortecouille.core.life_cycle import check_game_name, check_players_distinct
from mortecouille.core.limits import how_alike, name_clash
from mortecouille.core.state import EMPTY, GameState, state_hash
from mortecouille.events.base import Event
from mortecouille.events.game import GameCreated, GameEnded, TurnEnded, TurnStarted
from mortecouille.events.stores import GameStore


class Forked(NamedTuple):
    """The fork's stamped events and the dice it rolls from now on."""

    events: list[Event]
    dice_mode: str


def fork_game(
    store: GameStore | Path,
    game: str,
    new_game: str,
    at_seq: int,
    dice_mode: str | None,
    seed: str | None,
    *,
    weak_seed: bool = False,
    idempotency_digest: str | None = None,
) -> Forked:
    """Copy ``game``'s log up to ``at_seq`` into the new game ``new_game`` of the same ``store`` (a
    games directory: its file store) (created exclusively,
    its own secret seed kept beside it); ``dice_mode``: the original's unless given.
    ``weak_seed``: accept a chosen seed shorter than the minimum, as ``new --weak-seed`` does (D2).
    ``idempotency_digest``: the service's ``Idempotency-Key``, kept on the fork's first line
    (:func:`~mortecouille.app.commands.create_game`); the CLI passes none."""
    events = game_log(store, game).read()
    created = events[0] if events else None
    if not isinstance(created, GameCreated):
        raise BadInput("GAME", "the log does not start with game-created")
    mode = dice_mode or created.dice_mode
    secret = secret_seed(mode, seed, weak_seed=weak_seed)
    target = game_log(store, new_game)
    forked = fork_events(events, at_seq, new_game, mode, commit_to(secret))
    # nonce: the copied events may be secret inputs, now in the fork's creation batch
    created_events = create_game(target, forked, secret, idempotency_digest=idempotency_digest, nonce=True)
    return Forked(created_events, mode)


def check_fork_point(events: Sequence[Event], at_seq: int) -> None:
    """A fork point is a seq in the log, at a command boundary, before any end of game."""
    last = len(events) - 1
    if not 0 <= at_seq <= last:
        raise BadInput("--at", f"seq {at_seq} is not in the log (0..{last})")
    opened: TurnStarted | None = None
    for event in events[: at_seq + 1]:
        if isinstance(event, GameEnded):
            raise BadInput("--at", f"the game ended at seq {event.seq}: fork before it")
        if isinstance(event, TurnStarted):
            opened = event
        elif isinstance(event, TurnEnded):
            opened = None
    following = events[at_seq + 1] if at_seq < last else None
    if isinstance(following, GameEnded) and following.reason == "victory":
        # the victory is part of the turn's outcome (T3): the turn is not over before it
        raise BadInput("--at", f"turn's victory follows at seq {following.seq}: fork before the turn")
    if opened is not None:
        ended = next(
            (e.seq for e in events[at_seq:] if isinstance(e, TurnEnded) and e.turn == opened.turn), None
        )
        where = f"seq {opened.seq}..{ended}" if ended is not None else f"from seq {opened.seq}"
        raise BadInput(
            "--at",
            f"seq {at_seq} is inside the resolution of turn {opened.turn} ({where}); "
            f"fork at a command boundary such as seq {opened.seq - 1}"
            + (f" or {ended}" if ended is not None else ""),
        )


def fork_events(
    events: Sequence[Event], at_seq: int, new_game: str, dice_mode: str, commitment: SeedCommitment
) -> list[Event]:
    """The fork's events, unstamped: a new ``GameCreated`` then the copies up to ``at_seq``."""
    if not events or not isinstance(events[0], GameCreated):
        raise BadInput("GAME", "the log does not start with game-created")
    check_game_name(new_game)
    check_fork_point(events, at_seq)
    original = events[0]
    created = _unstamped(
        original,
        game=new_game,
        dice_mode=dice_mode,
        # the fork's own seed, never the original's commitment (it rolls its own dice)
        seed_sha256=None,
        seed_salt=commitment.seed_salt if dice_mode == "seeded" else None,
        seed_hmac=commitment.seed_hmac if dice_mode == "seeded" else None,
        forked_from=original.game,
        forked_at_seq=at_seq,
    )
    forked: list[Event] = [created]
    state = evolve(EMPTY, created)
    for event in events[1 : at_seq + 1]:
        copy = _unstamped(event)
        if isinstance(copy, TurnEnded):
            copy = msgspec.structs.replace(copy, state_hash=state_hash(state))
        state = evolve(state, copy)
        forked.append(copy)
    _check_names_distinct(original, state)
    return forked


def _check_names_distinct(original: GameCreated, forked: GameState) -> None:
    """Refuse (BadInput naming GAME) a fork whose copied players or ships look alike (one name case
    and spacing aside, or drawn alike: ``core.limits.look_alike``): a log written before the
    rulings (T3; F1, P1) may hold such a pair, and the fork is a new game, where a command or a
    reader would take one for the other."""
    try:
        check_players_distinct(original.players, "GAME")
    except BadInput as refused:
        raise BadInput("GAME", f"{original.game!r} cannot be forked: {refused.message}") from None
    clash = name_clash(forked.ships)
    if clash is not None:
        earlier, later = clash
        rule = "P1" if forked.ruleset == "blockade" else "F1"
        raise BadInput(
            "GAME",
            f"{original.game!r} cannot be forked: its ships {later!r} and {earlier!r} "
            f"{how_alike(earlier, later)}: every ship needs a name of its own ({rule}, project ruling)",
        )


E = TypeVar("E", bound=Event)


def _unstamped(event: E, **changes: Any) -> E:
    """A copy of ``event`` with ``changes`` and the placeholder envelope the store stamps over."""
    return msgspec.structs.replace(event, seq=-1, prev="", hash="", **changes)
