"""What every request is checked for before its handler runs (docs/service.md, "Requests"): a
body the JSON decoder cannot take (nested too deeply for it) is a 400, never a 500.
"""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.exceptions import SerializationException

from mortecouille.web.errors import Refused

#: The methods whose requests may carry a body (every other is read without one).
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def has_body(request: Request[Any, Any, Any]) -> bool:
    """Whether the request says it carries a body (a length above 0, or chunks)."""
    length = request.headers.get("Content-Length")
    if length is not None:
        return length.strip() not in ("", "0")
    return "Transfer-Encoding" in request.headers


async def check_request(request: Request[Any, Any, Any]) -> None:
    """Refuse a request the service must not read further (each a :class:`Refused`). The body is
    decoded here, once (the handler reads the decoded value Litestar keeps), so that a body nested
    deeper than the decoder can go is a 400 naming it rather than a 500."""
    if request.method not in BODY_METHODS or not has_body(request):
        return
    try:
        await request.json()
    except RecursionError:
        raise Refused("body: nested too deeply (no body of this API nests more than a few levels)") from None
    except SerializationException:
        return  # malformed JSON: the handler's own reading refuses it, naming the problem
