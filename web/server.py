"""The game service's HTTP application (issue 14, items 1, 4, 5, 7; docs/service.md).

:func:`build_app` makes the Litestar application for a games directory; ``mortecouille serve``
runs it under uvicorn and the tests drive it with Litestar's test client. Every command goes
through the application layer (``mortecouille.app.commands.run_command`` and friends), the very
path the CLI takes, so the rules, the refusals and the log are the same, and the game's lock is
shared with any CLI command running on the same games meanwhile.

Handlers that touch a log run in a worker thread (``sync_to_thread=True``): a command takes the
game's lock and fsyncs, which must not block the event loop. A command's answer is sent after
``run_command`` returned, that is after the fsync: no 2xx ever precedes the events on disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog
from litestar import Litestar, Request, delete, get, post
from litestar.datastructures import ResponseHeader
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.response import File, Stream

from mortecouille.app.commands import (
    Idempotency,
    Outcome,
    ending,
    game_log,
    list_games,
    load,
    new_game,
    resolve_turn,
    run_command,
)
from mortecouille.app.deadlines import deadline_in_force, deadline_passed, pass_deadline_if_due, set_deadline
from mortecouille.app.idempotency import IdempotencyIndex, key_digest
from mortecouille.app.order_grammar import parse_actions_text
from mortecouille.app.prices import price_list
from mortecouille.core.blockade.commands import GiveTokens
from mortecouille.core.board.geometry import parse_facing, parse_square
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.deadlines import parse_time
from mortecouille.core.errors import BadInput
from mortecouille.core.fleet.commands import (
    BuyShip,
    EquipFleet,
    EquipShip,
    SealFleet,
    WithdrawShip,
)
from mortecouille.core.life_cycle import Command
from mortecouille.core.mortecouille.orders import GiveOrder, WithdrawOrder
from mortecouille.core.rulings import RecordRuling, parse_adjustment
from mortecouille.core.state import GameState
from mortecouille.core.waiting import players_awaiting_orders
from mortecouille.events.store import GameLog, GameNotFound
from mortecouille.web import access
from mortecouille.web.access import builtins
from mortecouille.web.board import board_from
from mortecouille.web.bodies import (
    BuyBody,
    DeadlineBody,
    EndBody,
    EquipBody,
    NewGameBody,
    OrdersBody,
    PlaceBody,
    ResolveBody,
    RulingBody,
    SealBody,
    ShipBody,
    TokensBody,
)
from mortecouille.web.errors import EXCEPTION_HANDLERS, HEADERS, Forbidden
from mortecouille.web.live import HEARTBEAT_SECONDS, POLL_SECONDS, LiveHub, event_stream, parse_last_event_id
from mortecouille.web.targets import targets_for

_log = structlog.get_logger("mortecouille.web")

#: The largest request body the service reads (413 beyond): an order is a few hundred bytes.
MAX_BODY_BYTES = 64 * 1024

#: Where the pages are (another part of the project writes them; the service only serves them).
PAGES = Path(__file__).parent / "pages"
#: The kinds of file the pages' static folder serves, each with the type a browser must be told.
STATIC_MEDIA_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}

#: Sent with every answer: no inline script runs, no URL (and so no token) leaves in a Referer.
SECURITY_HEADERS = tuple(ResponseHeader(name=name, value=value) for name, value in HEADERS.items())

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


class Service:
    """What the handlers share: the games directory, the clock, the keys' index, the watchers."""

    def __init__(
        self, games: Path, base_url: str | None, clock: Clock, poll: float, heartbeat: float
    ) -> None:
        self.games = games
        self.base_url = base_url
        self.clock = clock
        self.heartbeat = heartbeat
        self.keys = IdempotencyIndex()
        self.hub = LiveHub(poll)
        #: the deadline in force of each game that has one (the only games the clock looks at);
        #: handlers (worker threads) and the clock's thread both change it, under ``pending_guard``
        self.pending: dict[str, datetime] = {}
        self.pending_guard = threading.Lock()

    # --------------------------------------------------------------- requests

    def existing_log(self, game: str) -> GameLog:
        """GAME's log, or 404 (GameNotFound) when it has none."""
        log_ = game_log(self.games, game)
        if not log_.exists():
            raise GameNotFound(f"game {game!r}: no such game")
        return log_

    def base(self, request: Request[Any, Any, Any]) -> str:
        """The URL the links start with: the one ``serve`` was given, else the request's own."""
        return self.base_url or str(request.base_url).rstrip("/")

    def idempotency(self, request: Request[Any, Any, Any]) -> Idempotency | None:
        key = request.headers.get("Idempotency-Key")
        return Idempotency(key_digest(key), self.keys) if key is not None else None

    def command(
        self,
        request: Request[Any, Any, Any],
        game: str,
        roles: tuple[str, ...],
        build: Callable[[access.Viewer, GameState], Command],
        *,
        table_values: list[int] | None = None,
    ) -> dict[str, Any]:
        """Identify the caller, check their role, run ``build``'s command on the command path and
        answer with what it appended, as the caller may see it."""
        log_ = self.existing_log(game)
        viewer = access.viewer_for(log_, request.headers.get("Authorization"))
        allow(viewer, roles)
        outcome = run_command(
            log_,
            lambda state: build(viewer, state),
            table_values=table_values,
            expected_seq=if_match(request),
            idempotency=self.idempotency(request),
        )
        return self.answer(log_, viewer, outcome)

    def answer(self, log_: GameLog, viewer: access.Viewer, outcome: Outcome) -> dict[str, Any]:
        """``{seq, events, lines}``: the appended events as ``viewer`` may see them (a player sees
        their own orders; a referee's resolve shows the outcome)."""
        events = log_.read()
        return access.answer(events, viewer, outcome.events)

    # --------------------------------------------------------------- after a crash

    def cut_torn_tails(self) -> list[str]:
        """Cut the torn tail a crash mid-append left on any game's log, as ``repair`` does, and
        return the games cut. Only a tail after the head anchor is cut: an append whose fsync never
        returned, so no client ever got a 2xx for it (a retry with its Idempotency-Key appends it
        again). A log missing lines its anchor vouches for is left alone: ``repair`` reports it."""
        cut = []
        for path in sorted(self.games.glob("*.jsonl")):
            if not _ends_torn(path):
                continue
            log_ = game_log(self.games, path.name.removesuffix(".jsonl"))
            try:
                plan = log_.repair_plan()
                if plan.lost or not plan.removed:
                    continue
                removed = log_.repair()
            except Exception:  # noqa: BLE001 - a log repair refuses stays as it is, for verify to tell
                _log.warning("torn tail not cut", game=log_.name, exc_info=True)
                continue
            _log.warning("cut a torn tail left by a crash", game=log_.name, bytes=len(removed))
            cut.append(log_.name)
        return cut

    # --------------------------------------------------------------- deadlines

    def find_deadlines(self) -> None:
        """Note every game's deadline in force (at start: deadlines outlive a restart)."""
        for path in sorted(self.games.glob("*.jsonl")):
            self.note_deadline(path.name.removesuffix(".jsonl"))

    def note_deadline(self, game: str) -> None:
        """Note ``game``'s deadline in force as its log says, or forget it if it has none."""
        try:
            events, state = load(game_log(self.games, game))
        except Exception:  # noqa: BLE001 - a log that cannot be read has no deadline to keep
            with self.pending_guard:
                self.pending.pop(game, None)
            return
        deadline = deadline_in_force(events, state.turn) if not state.ended else None
        with self.pending_guard:
            if deadline is None:
                self.pending.pop(game, None)
            else:
                self.pending[game] = parse_time("at", deadline.at)

    def check_deadlines(self) -> list[str]:
        """Pass every noted deadline the clock has reached (resolving a seeded-dice turn); return
        the games whose deadline passed. Only games with a deadline due are read, under their lock."""
        now = self.clock()
        passed = []
        with self.pending_guard:
            noted = sorted(self.pending.items())
        for game, at in noted:
            if at > now:
                continue
            try:
                if pass_deadline_if_due(game_log(self.games, game), now) is not None:
                    passed.append(game)
            except Exception:  # noqa: BLE001 - one game's problem never stops the others' deadlines
                _log.warning("deadline not passed", game=game, exc_info=True)
            self.note_deadline(game)  # passed, or moved meanwhile: the log says which
        return passed


def _ends_torn(path: Path) -> bool:
    """Whether the file at ``path`` ends in a line without its newline (read from its end only)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"
    except OSError:
        return False


def allow(viewer: access.Viewer, roles: tuple[str, ...]) -> None:
    """Refuse (403) a viewer whose role may not use the endpoint."""
    if viewer.role not in roles:
        who = "a spectator" if viewer.role == "spectator" else f"the {viewer.role}"
        raise Forbidden(f"{who} may not do this; it is for the {' or '.join(roles)}")


def if_match(request: Request[Any, Any, Any]) -> int | None:
    """``If-Match: SEQ`` (the CLI's ``--expect-seq``): the seq the first new event must get."""
    header = request.headers.get("If-Match")
    if header is None:
        return None
    try:
        return int(header.strip().strip('"'))
    except ValueError:
        raise BadInput("If-Match", f"{header!r} is not a seq") from None


# ------------------------------------------------------------------- ownership checks


def own_ship(viewer: access.Viewer, state: GameState, ship: str) -> str:
    """The id of the calling player's ship ``ship`` (placed, or bought and not yet placed; case and
    spacing aside, as the CLI matches names), or 403 naming ``ship``.

    Only the caller's own ships are searched, and any other name is refused alike, whether another
    player's ship or none: a refusal that told them apart, or a "did you mean" over every fleet,
    would reveal a purchase still secret (F3)."""
    player = caller(viewer)
    folded = " ".join(ship.split()).casefold()
    placed = [sid for sid, placed_ship in state.ships.items() if placed_ship.owner == player]
    bought = [purchase.name for purchase in state.fleets[player].ships] if player in state.fleets else []
    for name in (*placed, *bought):
        if name == ship or " ".join(name.split()).casefold() == folded:
            return name
    mine = ", ".join(sorted({*placed, *bought})) or "none yet"
    raise Forbidden(f"{ship!r} is not one of {player}'s ships (theirs: {mine})", field="ship")


def caller(viewer: access.Viewer) -> str:
    assert viewer.player is not None  # allow() let only players through
    return viewer.player


def placing(viewer: access.Viewer, state: GameState, body: PlaceBody) -> PlaceShip:
    """The PlaceShip of ``body``: a player places only their own ships (a new blockade ship is
    theirs: ``owner`` defaults to them and may name nobody else); the referee places any."""
    try:
        at = parse_square(body.square)
    except ValueError as error:
        raise BadInput("square", str(error)) from None
    try:
        facing = parse_facing(body.facing)
    except ValueError as error:
        raise BadInput("facing", str(error)) from None
    owner, ship = body.owner, body.ship
    if viewer.role == "player":
        player = caller(viewer)
        if owner is not None and owner != player:
            raise Forbidden(f"{player} may place only their own ships, not {owner}'s")
        if body.kind is not None and body.ship not in state.ships:
            owner = player  # a new blockade ship, theirs (a name taken is the rules' refusal)
        else:
            ship = own_ship(viewer, state, body.ship)
    return PlaceShip(ship=ship, at=at, facing=facing, kind=body.kind, owner=owner)


# ------------------------------------------------------------------- the application


def build_app(
    games: Path,
    *,
    base_url: str | None = None,
    clock: Clock = system_clock,
    poll_seconds: float = POLL_SECONDS,
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
    deadline_seconds: float | None = 1.0,
    cut_torn_tails: bool = True,
    debug: bool = False,
) -> Litestar:
    """The game service on ``games``.

    ``base_url``: what links start with (default: the URL each request came to). ``clock``: the
    deadlines' time (tests pass a fake one). ``poll_seconds``: how often the live push looks at
    each watched log; ``heartbeat_seconds``: the stream's comment when idle. ``deadline_seconds``:
    how often deadlines are checked (None: never on their own; tests call
    ``app.state.service.check_deadlines()``). ``cut_torn_tails``: at start, cut the torn tail a
    crash mid-append left on a log (:meth:`Service.cut_torn_tails`), so the service serves the game
    again; an append cut so was never acknowledged.
    """
    service = Service(games, base_url, clock, poll_seconds, heartbeat_seconds)

    # ------------------------------------------------------------- games

    @get("/api/games", sync_to_thread=True)
    def games_list(request: Request[Any, Any, Any]) -> dict[str, Any]:
        base = service.base(request)
        return {
            "games": [
                {**access.builtins(summary), "table": access.table_link(base, summary.name)}
                for summary in list_games(service.games)
            ]
        }

    @post("/api/games", sync_to_thread=True, status_code=201)
    def games_create(request: Request[Any, Any, Any], data: JSONBody[NewGameBody]) -> dict[str, Any]:
        log_ = game_log(service.games, data.name)
        if data.dice not in ("seeded", "table"):
            raise BadInput("dice", f"{data.dice!r} is not seeded or table")
        created = new_game(
            log_,
            players=tuple(p.strip() for p in data.players),
            ruleset=data.ruleset,
            budget=data.budget,
            board=board_from(data.board),
            dice_mode=data.dice,
            seed=data.seed,
        )
        seats = access.issue(log_, service.base(request), created)
        return {"seq": created[-1].seq, **seats}

    @get("/api/games/{game:str}/view", sync_to_thread=True)
    def game_view(
        request: Request[Any, Any, Any], game: FromPath[str], seq: FromQuery[int | None] = None
    ) -> dict[str, Any]:
        log_ = service.existing_log(game)
        viewer = access.viewer_for(log_, request.headers.get("Authorization"))
        events, state = load(log_)
        if seq is not None and not -1 <= seq < len(events):
            raise BadInput("seq", f"{seq} is not a seq of {game!r} (0 to {len(events) - 1})")
        shown = access.game_view(events, viewer, seq)
        current = seq is None or seq == len(events) - 1
        deadline = deadline_in_force(events, state.turn) if current else None
        passed = deadline_passed(events, state.turn) if current else None
        shown["deadline"] = deadline.at if deadline is not None else None
        shown["deadline_passed"] = passed.at if passed is not None else None
        shown["all_submitted"] = (
            current and state.created and not state.ended and not players_awaiting_orders(state)
        )
        shown["targets"] = builtins(targets_for(events, viewer)) if current else {}
        return shown

    @get("/api/prices", sync_to_thread=False)
    def prices() -> dict[str, Any]:
        return price_list()

    @get("/api/games/{game:str}/stream")
    async def game_stream(request: Request[Any, Any, Any], game: FromPath[str]) -> Stream:
        log_ = await asyncio.to_thread(service.existing_log, game)
        viewer = await asyncio.to_thread(access.viewer_for, log_, request.headers.get("Authorization"))
        after = parse_last_event_id(request.headers.get("Last-Event-ID"))
        body = event_stream(service.hub, log_, after, access.ListenerView(viewer), service.heartbeat)
        return Stream(
            body,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    # ------------------------------------------------------------- a player's fleet

    @post("/api/games/{game:str}/buy", sync_to_thread=True, status_code=200)
    def buy(request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[BuyBody]) -> dict[str, Any]:
        return service.command(
            request,
            game,
            ("player",),
            lambda viewer, state: BuyShip(
                player=caller(viewer), kind=data.kind, name=data.ship, options=data.options
            ),
        )

    @post("/api/games/{game:str}/equip", sync_to_thread=True, status_code=200)
    def equip(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[EquipBody]
    ) -> dict[str, Any]:
        def build(viewer: access.Viewer, state: GameState) -> Command:
            if data.ship is None:
                return EquipFleet(player=caller(viewer), option=data.option)
            return EquipShip(ship=own_ship(viewer, state, data.ship), option=data.option)

        return service.command(request, game, ("player",), build)

    @post("/api/games/{game:str}/unbuy", sync_to_thread=True, status_code=200)
    def unbuy(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[ShipBody]
    ) -> dict[str, Any]:
        def build(viewer: access.Viewer, state: GameState) -> Command:
            return WithdrawShip(ship=own_ship(viewer, state, data.ship))

        return service.command(request, game, ("player",), build)

    @post("/api/games/{game:str}/seal", sync_to_thread=True, status_code=200)
    def seal(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[SealBody | None] = None
    ) -> dict[str, Any]:
        forfeit = data.forfeit if data is not None else False
        return service.command(
            request,
            game,
            ("player",),
            lambda viewer, state: SealFleet(player=caller(viewer), forfeit=forfeit),
        )

    @post("/api/games/{game:str}/place", sync_to_thread=True, status_code=200)
    def place(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[PlaceBody]
    ) -> dict[str, Any]:
        return service.command(
            request, game, ("player", "referee"), lambda viewer, state: placing(viewer, state, data)
        )

    # ------------------------------------------------------------- a player's orders

    @post("/api/games/{game:str}/orders", sync_to_thread=True, status_code=200)
    def orders(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[OrdersBody]
    ) -> dict[str, Any]:
        actions = parse_actions_text(data.actions)
        return service.command(
            request,
            game,
            ("player",),
            lambda viewer, state: GiveOrder(
                ship=own_ship(viewer, state, data.ship), actions=actions, replace=data.replace
            ),
        )

    @delete("/api/games/{game:str}/orders/{ship:str}", sync_to_thread=True, status_code=200)
    def unorder(request: Request[Any, Any, Any], game: FromPath[str], ship: FromPath[str]) -> dict[str, Any]:
        return service.command(
            request,
            game,
            ("player",),
            lambda viewer, state: WithdrawOrder(ship=own_ship(viewer, state, ship)),
        )

    @post("/api/games/{game:str}/tokens", sync_to_thread=True, status_code=200)
    def tokens(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[TokensBody]
    ) -> dict[str, Any]:
        given = tuple(None if t in (None, "-") else t.upper() for t in data.tokens)
        return service.command(
            request,
            game,
            ("player",),
            lambda viewer, state: GiveTokens(
                ship=own_ship(viewer, state, data.ship), tokens=given, replace=data.replace
            ),
        )

    # ------------------------------------------------------------- the referee

    @post("/api/games/{game:str}/resolve", sync_to_thread=True, status_code=200)
    def resolve(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[ResolveBody | None] = None
    ) -> dict[str, Any]:
        body = data or ResolveBody()
        log_ = service.existing_log(game)
        viewer = access.viewer_for(log_, request.headers.get("Authorization"))
        allow(viewer, ("referee",))
        outcome = resolve_turn(
            log_,
            partial=body.partial,
            idle_turn=body.idle_turn,
            table_values=list(body.dice) if body.dice is not None else None,
            expected_seq=if_match(request),
            idempotency=service.idempotency(request),
        )
        return service.answer(log_, viewer, outcome)

    @post("/api/games/{game:str}/rulings", sync_to_thread=True, status_code=200)
    def rulings(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[RulingBody]
    ) -> dict[str, Any]:
        adjustments = tuple(
            parse_adjustment(adjust.ship, change.strip())
            for adjust in data.adjust
            for change in adjust.changes.split(",")
            if change.strip()
        )
        return service.command(
            request,
            game,
            ("referee",),
            lambda viewer, state: RecordRuling(rule=data.rule, text=data.text, adjustments=adjustments),
        )

    @post("/api/games/{game:str}/end", sync_to_thread=True, status_code=200)
    def end(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[EndBody | None] = None
    ) -> dict[str, Any]:
        body = data or EndBody()
        log_ = service.existing_log(game)
        make = ending(log_, winner=body.winner, reason=body.reason)
        return service.command(request, game, ("referee",), lambda viewer, state: make(state))

    @post("/api/games/{game:str}/deadline", sync_to_thread=True, status_code=200)
    def deadline(
        request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[DeadlineBody]
    ) -> dict[str, Any]:
        log_ = service.existing_log(game)
        viewer = access.viewer_for(log_, request.headers.get("Authorization"))
        allow(viewer, ("referee",))
        outcome = set_deadline(
            log_,
            data.seconds,
            service.clock(),
            expected_seq=if_match(request),
            idempotency=service.idempotency(request),
        )
        service.note_deadline(game)
        return service.answer(log_, viewer, outcome)

    @post("/api/games/{game:str}/seats/{player:str}", sync_to_thread=True, status_code=200)
    def seats(request: Request[Any, Any, Any], game: FromPath[str], player: FromPath[str]) -> dict[str, Any]:
        log_ = service.existing_log(game)
        viewer = access.viewer_for(log_, request.headers.get("Authorization"))
        allow(viewer, ("referee",))
        return access.reissue_seat(log_, service.base(request), player)

    # ------------------------------------------------------------- pages

    def page(name: str) -> File:
        path = PAGES / name
        if not path.is_file():
            raise GameNotFound(f"no page {name!r}: the pages are not installed")
        return File(path, content_disposition_type="inline", media_type="text/html")

    @get("/", sync_to_thread=False)
    def index_page() -> File:
        return page("index.html")

    @get("/table/{game:str}", sync_to_thread=False)
    def table_page(game: FromPath[str]) -> File:
        return page("table.html")

    @get("/player/{game:str}", sync_to_thread=False)
    def player_page(game: FromPath[str]) -> File:
        return page("player.html")

    @get("/referee/{game:str}", sync_to_thread=False)
    def referee_page(game: FromPath[str]) -> File:
        return page("referee.html")

    @get("/static/{path:path}", sync_to_thread=False)
    def static(path: FromPath[str]) -> File:
        root = (PAGES / "static").resolve()
        target = (root / path.lstrip("/")).resolve()
        media_type = STATIC_MEDIA_TYPES.get(target.suffix)
        if root not in target.parents or not target.is_file() or media_type is None:
            raise GameNotFound(f"no file {path!r}")
        # named explicitly: with nosniff, a script sent as octet-stream is refused by the browser
        return File(target, content_disposition_type="inline", media_type=media_type)

    # ------------------------------------------------------------- life

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        if cut_torn_tails:
            await asyncio.to_thread(service.cut_torn_tails)
        await asyncio.to_thread(service.find_deadlines)
        ticker = asyncio.create_task(deadline_ticker(service, deadline_seconds)) if deadline_seconds else None
        try:
            yield
        finally:
            if ticker is not None:
                ticker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await ticker
            await service.hub.close()

    app = Litestar(
        route_handlers=[
            games_list,
            games_create,
            game_view,
            game_stream,
            prices,
            buy,
            equip,
            unbuy,
            seal,
            place,
            orders,
            unorder,
            tokens,
            resolve,
            rulings,
            end,
            deadline,
            seats,
            index_page,
            table_page,
            player_page,
            referee_page,
            static,
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        response_headers=list(SECURITY_HEADERS),
        request_max_body_size=MAX_BODY_BYTES,
        lifespan=[lifespan],
        openapi_config=None,
        debug=debug,
    )
    app.state.service = service
    return app


async def deadline_ticker(service: Service, every: float) -> None:
    """Check the deadlines every ``every`` seconds, in a worker thread (passing one writes)."""
    while True:
        await asyncio.sleep(every)
        passed = await asyncio.to_thread(service.check_deadlines)
        if passed:
            _log.info("deadlines passed", games=passed)
