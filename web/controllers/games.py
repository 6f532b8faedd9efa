"""Games: the list, a creation, a fork, a game's view and its chain."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post
from litestar.params import FromPath, FromQuery, JSONBody

from mortecouille.app.creation_retry import KEY_HEADER
from mortecouille.app.deadlines import deadline_in_force, deadline_passed, iso
from mortecouille.app.fork import fork_game, latest_fork_point
from mortecouille.app.games import game_log, load
from mortecouille.app.idempotency import CREATION, FORK
from mortecouille.app.listing import public_games
from mortecouille.app.requests.bodies import CreateRequest, ForkRequest
from mortecouille.app.requests.commands import check_dice_mode, create_game
from mortecouille.app.service import Created, CreationKey
from mortecouille.app.service import KeyConflict as CreationKeyConflict
from mortecouille.core.errors import BadInput
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.game import GameCreated
from mortecouille.events.storage.contract import EventStore
from mortecouille.web import access
from mortecouille.web.access import builtins
from mortecouille.web.controllers.service import Service
from mortecouille.web.controllers.shared import KeyConflict, fork_target, identify, roles, service_of
from mortecouille.web.targets import targets_for


class GamesController(Controller):
    path = "/api/games"
    tags = ["games"]

    @get("/", sync_to_thread=True)
    def games_list(self, request: Request[Any, Any, Any]) -> dict[str, Any]:
        """Every game as a spectator may know it (their public fold, like a view): name, ruleset,
        turn, position, status, winner, waiting, and its table link; a game whose log cannot be
        read is ``unreadable``, with its ``problem``."""
        service = service_of(request)
        base = service.base(request)
        return {
            "games": [
                {**access.builtins(summary), "table": access.table_link(base, summary.name)}
                for summary in public_games(service.store)
            ]
        }

    @post("/", sync_to_thread=True, status_code=201)
    def games_create(self, request: Request[Any, Any, Any], data: JSONBody[CreateRequest]) -> dict[str, Any]:
        """A new game (201): the referee's and the seats' tokens and links, shown this once."""
        request.state.creating = data.name  # the game a refusal names (web.errors.games_of)
        service = service_of(request)
        log_ = game_log(service.store, data.name)
        key = CreationKey.of(CREATION, request.headers.get(KEY_HEADER))

        def create() -> list[Event]:
            return create_game(log_, data, idempotency_digest=key.digest if key is not None else None)

        seats = created_answer(service, request, log_, create_once(service, log_, key, create))
        return {"seq": seats["seq"], **seats}

    @post("/{game:str}/fork", sync_to_thread=True, status_code=201, opt=roles("referee"))
    def game_fork(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[ForkRequest]
    ) -> dict[str, Any]:
        """What-if (the CLI's ``fork``): a new game from GAME's log up to ``at``, with its own
        fresh seed and its own seats, answered as a game's creation is. GAME is only read."""
        service = service_of(request)
        identify(request, service.existing_log(game))
        check_dice_mode("dice", data.dice)
        target = fork_target(service.store, data.name)
        key = CreationKey.of(FORK, request.headers.get(KEY_HEADER))

        def create() -> list[Event]:
            digest = key.digest if key is not None else None
            forked = fork_game(
                service.store, game, data.name, data.at, data.dice, None, idempotency_digest=digest
            )
            return forked.events

        created = create_once(service, target, key, create, forked_from=game)
        seats = created_answer(service, request, target, created)
        first = created.events[0]
        # a retry answers the fork point the first request chose (its body may differ)
        forked_at = first.forked_at_seq if isinstance(first, GameCreated) else data.at
        return {"seq": seats["seq"], "forked_from": game, "forked_at_seq": forked_at, **seats}

    @get("/{game:str}/view", sync_to_thread=True)
    def game_view(
        self, request: Request[Any, Any, Any], game: FromPath[str], seq: FromQuery[int | None] = None
    ) -> dict[str, Any]:
        """The game as the caller may see it after seq ``seq`` (default: now)."""
        service = service_of(request)
        with service.session(game) as log_:
            viewer = identify(request, log_)
            events, state = load(log_)
        if seq is not None and not -1 <= seq < len(events):
            raise BadInput(
                "seq",
                "{seq} is not a seq of {game!r} (0 to {last})",
                seq=seq,
                game=game,
                last=len(events) - 1,
            )
        return view_answer(service, log_, viewer, events, state, seq)

    @get("/{game:str}/chain", sync_to_thread=True)
    def game_chain(
        self, request: Request[Any, Any, Any], game: FromPath[str], since: FromQuery[int] = -1
    ) -> dict[str, Any]:
        """The events after ``since`` (at most 1,000 an answer) with what of the chain this viewer
        may be sent: what a page witnessing the log checks (docs/service.md, "Phones as witnesses")."""
        service = service_of(request)
        with service.session(game) as log_:
            viewer = identify(request, log_)
            events = log_.read()
        if since < -1:
            raise BadInput("since", "{since} is not a seq (-1 or more)", since=since)
        # past the log's end: no event, and next_seq tells the page the log is shorter than it saw
        return access.chain(events, viewer, min(since, len(events) - 1), service.lines.lines(log_, events))


def create_once(
    service: Service,
    log_: EventStore,
    key: CreationKey | None,
    create: Any,
    *,
    forked_from: str | None = None,
) -> Created:
    """:meth:`~mortecouille.app.service.GamesService.create_once`, its key conflicts a 409."""
    try:
        return service.create_once(log_, key, create, forked_from=forked_from)
    except CreationKeyConflict as error:
        raise KeyConflict.of(error) from None


def created_answer(
    service: Service, request: Request[Any, Any, Any], log_: EventStore, created: Created
) -> dict[str, Any]:
    """A creation's answer: its seats' tokens and links, and its events as the referee sees them."""
    return access.seats_answer(log_, service.base(request), created.events, created.seats)


def view_answer(
    service: Service,
    log_: EventStore,
    viewer: access.Viewer,
    events: list[Event],
    state: GameState,
    seq: int | None,
) -> dict[str, Any]:
    """The view of ``events`` (``log_``'s, folding to ``state``) for ``viewer`` after ``seq``
    (None: now), with the deadline, the targets, the reveal wait and the fork point beside it."""
    shown = access.game_view(events, viewer, seq, service.lines.lines(log_, events))
    current = seq is None or seq == len(events) - 1
    deadline = deadline_in_force(events, state.turn) if current else None
    passed = deadline_passed(events, state.turn) if current else None
    shown["deadline"] = deadline.at if deadline is not None else None
    shown["deadline_passed"] = passed.at if passed is not None else None
    # from the viewer's public fold, as every field of the view: a secret (a ship bought and
    # placed before every fleet is sealed) must not change it
    shown["all_submitted"] = current and shown["status"] == "playing" and not shown["waiting"]
    shown["targets"] = builtins(targets_for(events, viewer)) if current else {}
    wait = service.note_wait(log_.name, events, state) if current else None
    shown["reveal_deadline"] = iso(wait.until) if wait is not None else None
    # what the referee page's fork form proposes: a fork copies only what its referee may read
    shown["fork_at_most"] = latest_fork_point(events) if viewer.role == "referee" else None
    return shown
