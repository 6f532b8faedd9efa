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

A fork copies only what the forking referee may read, a public viewer like every
spectator (docs/service.md, "What each viewer sees"): a fork point is refused
while any event up to it is secret to a public viewer, judged against the
original's whole log now (:func:`check_nothing_secret`, through the redaction's own
:func:`~mortecouille.app.view.visible`), since the fork hands its referee every
seat and shows everything once it ends. So the fork's creation holds no secret
input and writes no ``nonce``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import msgspec

from mortecouille.app.commands import SeedCommitment, commit_to, create_game, secret_seed
from mortecouille.app.games import game_log
from mortecouille.app.seats import REFEREE
from mortecouille.app.view import Disclosure, disclosure, visible
from mortecouille.core.errors import BadInput, Phrase, joined, phrase
from mortecouille.core.game import evolve
from mortecouille.core.life_cycle import check_game_name, check_players_distinct
from mortecouille.core.limits import how_alike, name_clash
from mortecouille.core.questions import asked_named, asked_of
from mortecouille.core.state import EMPTY, GameState, state_hash
from mortecouille.events.base import Event
from mortecouille.events.game import GameCreated, GameEnded, TurnEnded, TurnStarted
from mortecouille.events.orders import OrderGiven, OrderWithdrawn
from mortecouille.events.secrecy import ORDERS
from mortecouille.events.storage.contract import GameStore


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
        raise BadInput("game", "the log does not start with game-created")
    mode = dice_mode or created.dice_mode
    secret = secret_seed(mode, seed, weak_seed=weak_seed)
    target = game_log(store, new_game)
    forked = fork_events(events, at_seq, new_game, mode, commit_to(secret))
    # no nonce: nothing secret is copied (check_nothing_secret), so the creation holds no secret input
    created_events = create_game(target, forked, secret, idempotency_digest=idempotency_digest)
    return Forked(created_events, mode)


def check_fork_point(events: Sequence[Event], at_seq: int) -> None:
    """A fork point is a seq in the log, at a command boundary, before any end of game."""
    last = len(events) - 1
    if not 0 <= at_seq <= last:
        raise BadInput("at", "seq {at_seq} is not in the log (0..{last})", at_seq=at_seq, last=last)
    opened: TurnStarted | None = None
    for event in events[: at_seq + 1]:
        if isinstance(event, GameEnded):
            raise BadInput("at", "the game ended at seq {seq}: fork before it", seq=event.seq)
        if isinstance(event, TurnStarted):
            opened = event
        elif isinstance(event, TurnEnded):
            opened = None
    following = events[at_seq + 1] if at_seq < last else None
    if isinstance(following, GameEnded) and following.reason == "victory":
        # the victory is part of the turn's outcome (T3): the turn is not over before it
        raise BadInput("at", "turn's victory follows at seq {seq}: fork before the turn", seq=following.seq)
    if opened is not None:
        ended = next(
            (e.seq for e in events[at_seq:] if isinstance(e, TurnEnded) and e.turn == opened.turn), None
        )
        if ended is None:
            raise BadInput(
                "at",
                "seq {at_seq} is inside the resolution of turn {turn} (from seq {start}); "
                "fork at a command boundary such as seq {before}",
                at_seq=at_seq,
                turn=opened.turn,
                start=opened.seq,
                before=opened.seq - 1,
            )
        raise BadInput(
            "at",
            "seq {at_seq} is inside the resolution of turn {turn} (seq {start}..{end}); "
            "fork at a command boundary such as seq {before} or {end}",
            at_seq=at_seq,
            turn=opened.turn,
            start=opened.seq,
            before=opened.seq - 1,
            end=ended,
        )


def _boundaries(events: Sequence[Event]) -> list[int]:
    """Every seq :func:`check_fork_point` takes, in order: each seq between two commands, up to
    the last before the game's end (a victory's turn included, as it belongs to that turn)."""
    found: list[int] = []
    opened = False
    for index, event in enumerate(events):
        if isinstance(event, GameEnded):
            if event.reason == "victory" and found and found[-1] == index - 1:
                found.pop()  # the turn's own end: the turn is not over before its victory
            break
        if isinstance(event, TurnStarted):
            opened = True
        elif isinstance(event, TurnEnded):
            opened = False
        if not opened:
            found.append(event.seq)
    return found


def latest_fork_point(events: Sequence[Event]) -> int:
    """The latest seq a fork of the whole log ``events`` may be cut at now: a command boundary
    before the game's end with nothing secret to a public viewer (the referee, a spectator) up to
    it, judged against the whole log (what the table knows now). Seq 0 always is."""
    known = disclosure(events)
    limit = next((event.seq for event in events if not visible(event, REFEREE, known)), None)
    allowed = [seq for seq in _boundaries(events) if limit is None or seq < limit]
    return allowed[-1] if allowed else 0


def check_nothing_secret(events: Sequence[Event], at_seq: int) -> None:
    """Refuse (BadInput naming ``at``) a fork point up to which some event is secret to a public
    viewer, judged against the whole log ``events`` now: a fork copies only what the forking
    referee may read. The refusal says which secret, the latest seq a fork may be cut at, and
    when ``at_seq`` becomes allowed (no later seq is allowed sooner: a secret copied at
    ``at_seq`` is copied at every later seq too)."""
    known = disclosure(events)
    hidden = [event for event in events[1 : at_seq + 1] if not visible(event, REFEREE, known)]
    if not hidden:
        return
    orders = sorted({_turn_of(event, known) for event in hidden if isinstance(event, ORDERS)})
    why: list[Phrase] = []
    when: list[Phrase] = []
    if orders:
        turns = ", ".join(str(turn) for turn in orders)
        kind = asked_named(known.ruleset).inputs
        secret = (
            "the tokens of turn {turns} are still secret"
            if kind == "tokens"
            else "the orders of turn {turns} are still secret"
        )
        why.append(phrase(secret, turns=turns))
        when.append(phrase("turn {turns} is resolved", turns=turns))
    if any(not isinstance(event, ORDERS) for event in hidden):
        unsealed = ", ".join(p for p in known.players if p not in known.sealed)
        why.append(
            phrase(
                "purchases stay secret until every fleet is sealed (not sealed yet: {unsealed})",
                unsealed=unsealed,
            )
        )
        when.append(phrase("every fleet is sealed"))
    latest = latest_fork_point(events)
    raise BadInput(
        "at",
        "seq {at_seq} cannot be forked now: {why}, and a fork copies only what its referee may read "
        "(the fork's referee holds every seat); the latest seq a fork may copy up to now is {latest}, "
        "and seq {at_seq} may be forked once {when} (or once the game has ended)",
        at_seq=at_seq,
        why=joined(why, "; "),
        latest=latest,
        when=joined(when, " and "),
    )


def _turn_of(event: Event, known: Disclosure) -> int:
    """The turn a secret order (tokens: the turn being ordered when they were given) is for."""
    if isinstance(event, OrderGiven | OrderWithdrawn):
        return event.turn
    return known.turn_of(event.seq)


def fork_events(
    events: Sequence[Event], at_seq: int, new_game: str, dice_mode: str, commitment: SeedCommitment
) -> list[Event]:
    """The fork's events, unstamped: a new ``GameCreated`` then the copies up to ``at_seq``."""
    if not events or not isinstance(events[0], GameCreated):
        raise BadInput("game", "the log does not start with game-created")
    check_game_name(new_game)
    check_fork_point(events, at_seq)
    check_nothing_secret(events, at_seq)
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
        check_players_distinct(original.players, "game")
    except BadInput as refused:
        raise BadInput(
            "game", "{game!r} cannot be forked: {message}", game=original.game, message=refused.phrase
        ) from None
    clash = name_clash(forked.ships)
    if clash is not None:
        earlier, later = clash
        rule = asked_of(forked).naming_rule
        raise BadInput(
            "game",
            "{game!r} cannot be forked: its ships {later!r} and {earlier!r} {alike}: every ship needs "
            "a name of its own ({rule_id}, project ruling)",
            game=original.game,
            later=later,
            earlier=earlier,
            alike=how_alike(earlier, later),
            rule_id=rule,
        )


E = TypeVar("E", bound=Event)


def _unstamped(event: E, **changes: Any) -> E:
    """A copy of ``event`` with ``changes`` and the placeholder envelope the store stamps over."""
    return msgspec.structs.replace(event, seq=-1, prev="", hash="", **changes)
