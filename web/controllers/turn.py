"""The turn: the players' dice contributions (D3), its lock, its deadline and its resolution."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, post
from litestar.params import FromPath, JSONBody

from mortecouille.app.receipts import turn_head_code
from mortecouille.app.requests.bodies import (
    CommitRequest,
    DeadlineRequest,
    LockRequest,
    ResolveRequest,
    RevealRequest,
)
from mortecouille.web.controllers.ownership import commanding
from mortecouille.web.controllers.shared import answer, command, identify, options, roles, service_of, submit


class TurnController(Controller):
    path = "/api/games"
    tags = ["turn"]

    @post("/{game:str}/commit", sync_to_thread=True, status_code=200, opt=roles("player"))
    def commit(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[CommitRequest]
    ) -> dict[str, Any]:
        """Commit to the caller's secret contribution to the turn's dice (D3)."""
        return submit(request, game, commanding(data), data.salt)

    @post("/{game:str}/reveal", sync_to_thread=True, status_code=200, opt=roles("player"))
    def reveal(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[RevealRequest]
    ) -> dict[str, Any]:
        """Reveal the caller's contribution once the turn is locked (D3)."""
        answered = submit(request, game, commanding(data), data.salt)
        service_of(request).settle(game)  # the last reveal a turn locked at its deadline waited for
        return answered

    @post("/{game:str}/resolve", sync_to_thread=True, status_code=200, opt=roles("referee"))
    def resolve(
        self,
        request: Request[Any, Any, Any],
        game: FromPath[str],
        data: JSONBody[ResolveRequest | None] = None,
    ) -> dict[str, Any]:
        """Resolve the turn; the answer carries the turn's head code."""
        body = data or ResolveRequest()
        service = service_of(request)
        with service.session(game) as log_:
            viewer = identify(request, log_)
            seen = service.resolve(log_, body, options(request, viewer))
            answered = answer(viewer, seen.events, seen.outcome)
            resolved = turn_head_code(seen.outcome.events)
            answered["head_code"] = (
                {"turn": resolved[0], "seq": resolved[1].seq, "code": resolved[1].code} if resolved else None
            )
            return answered

    @post("/{game:str}/lock", sync_to_thread=True, status_code=200, opt=roles("referee"))
    def lock(self, request: Request[Any, Any, Any], game: FromPath[str]) -> dict[str, Any]:
        """Lock the turn (D3): its inputs are final, and the players may reveal."""
        return command(request, game, commanding(LockRequest()))

    @post("/{game:str}/deadline", sync_to_thread=True, status_code=200, opt=roles("referee"))
    def deadline(
        self, request: Request[Any, Any, Any], game: FromPath[str], data: JSONBody[DeadlineRequest]
    ) -> dict[str, Any]:
        """Set (or move) the turn's deadline, ``seconds`` from now."""
        service = service_of(request)
        log_ = service.existing_log(game)
        viewer = identify(request, log_)
        seen = service.set_deadline(log_, data.seconds, options(request, viewer))
        return answer(viewer, seen.events, seen.outcome)
