"""What every request is checked for before its handler runs (docs/service.md, "Requests").

- **Host** (with a :class:`HostPolicy`, which ``serve`` always gives): only a name the service
  answers to: the address it is bound to, loopback names, the host of ``--url``, and, bound to
  every interface, any IP address or this machine's own name. Another name is a page of some other
  site whose name was made to point here (DNS rebinding): refused, 421, before anything is read,
  and never used to build a link.
- **Origin** (a request that may change something: POST, PUT, PATCH, DELETE): a browser sends the
  page's origin; one that is not this service's own (the request's scheme and Host, or ``--url``'s)
  is a cross-site request, refused 403. A request without ``Origin`` (curl, the CLI's clients, a
  test) is taken: no browser sends a cross-site request without it.
- **Content-Type**: a request with a body must say ``application/json`` (415 otherwise): a page of
  another site can send a ``text/plain`` or form body without asking, never a JSON one.
- **The body**: decoded here, once (the handler reads the decoded value Litestar keeps), so that a
  body nested deeper than the JSON decoder goes is a 400 rather than a 500.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import msgspec
from litestar import Request
from litestar.exceptions import SerializationException

from mortecouille.web.errors import Refused

#: The methods whose requests may carry a body or change something.
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: The names every service answers to: this machine itself (``*.localhost`` too, which browsers
#: resolve to loopback without asking any DNS).
LOOPBACK_NAMES = frozenset({"localhost"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
DEFAULT_PORTS = {"http": 80, "https": 443}


class BadHost(Refused):
    """A ``Host`` this service does not answer to (421, naming the header)."""

    status = 421


class CrossSite(Refused):
    """A request from a page of another origin (403, naming ``Origin``)."""

    status = 403


class NotJson(Refused):
    """A body that does not say it is JSON (415, naming ``Content-Type``)."""

    status = 415


def host_name(authority: str) -> str | None:
    """The host of a ``Host`` header or a URL's authority, lower case, without port or brackets
    (``[::1]:8000`` -> ``::1``); None when it is not one."""
    text = authority.strip().lower()
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or (text[end + 1 :] and not _port_part(text[end + 1 :])):
            return None
        return text[1:end]
    name, colon, port = text.rpartition(":") if text.count(":") == 1 else (text, "", "")
    if colon and not port.isdigit():
        return None
    name = name.rstrip(".")
    return name or None


def _port_part(text: str) -> bool:
    return text.startswith(":") and text[1:].isdigit()


def ip_address(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of ``url`` (default port left out), lower case; None if it has none."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    shown = "" if port is None or DEFAULT_PORTS.get(parts.scheme) == port else f":{port}"
    return f"{parts.scheme.lower()}://{host.lower()}{shown}"


class HostPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """The names a service answers to (``Host``), and the origin of its ``--url``, if any."""

    names: frozenset[str]
    #: bound to every interface: any IP address is one of this machine's (or a proxy's)
    any_address: bool = False
    #: ``--url``'s origin: the pages' origin behind a proxy, whatever ``Host`` the proxy sends
    public_origin: str | None = None

    @classmethod
    def serving(cls, host: str, public_url: str | None = None, *, also: Iterable[str] = ()) -> HostPolicy:
        """The policy of a service bound to ``host`` (``serve --host``), its links from
        ``public_url`` (``--url``) if given; ``also``: more names to answer to."""
        bound = host.strip().strip("[]").lower()
        names = {*LOOPBACK_NAMES, *(name.lower() for name in also)}
        any_address = bound in WILDCARD_HOSTS
        if any_address:  # phones reach it by the machine's address or its name on the network
            machine = socket.gethostname().lower()
            names |= {machine, f"{machine}.local", socket.getfqdn().lower()}
        else:
            names.add(bound)
        public = origin_of(public_url) if public_url else None
        if public_url:
            named = urlsplit(public_url.strip()).hostname
            if named:
                names.add(named.lower())
        return cls(names=frozenset(names), any_address=any_address, public_origin=public)

    def answers_to(self, name: str) -> bool:
        """Whether a request for the host ``name`` (from :func:`host_name`) is meant for this service."""
        if name in self.names or name.endswith(".localhost"):
            return True
        address = ip_address(name)
        return address is not None and (address.is_loopback or self.any_address)


class RequestGuard:
    """Litestar's ``before_request`` of the service: the checks of the module's docstring, in
    that order; ``hosts`` None checks no ``Host`` (an application embedded in a test)."""

    def __init__(self, hosts: HostPolicy | None) -> None:
        self.hosts = hosts

    async def __call__(self, request: Request[Any, Any, Any]) -> None:
        host = request.headers.get("Host")
        if self.hosts is not None and host is not None:
            name = host_name(host)
            if name is None or not self.hosts.answers_to(name):
                raise BadHost(
                    f"Host: {host!r} is not a name this service answers to (a page of another site "
                    "pointing its name here is refused); use the address the links give, or start "
                    "serve with --url naming the address the table uses",
                    field="Host",
                )
        if request.method not in UNSAFE_METHODS:
            return
        origin = request.headers.get("Origin")
        if origin is not None and not self.same_origin(origin, request, host):
            raise CrossSite(
                f"Origin: a request from {origin!r}, a page of another site, may not change anything here",
                field="Origin",
            )
        if not has_body(request):
            return
        media_type = request.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        if media_type != "application/json":
            raise NotJson(
                f"Content-Type: {media_type or 'none'!r}; a body is JSON, sent as application/json",
                field="Content-Type",
            )
        too_deep = f"body: nested too deeply (no body of this API nests beyond {MAX_NESTING} levels)"
        try:
            body = await request.json()
        except RecursionError:
            raise Refused(too_deep) from None
        except SerializationException:
            return  # malformed JSON: the handler's own reading refuses it, naming the problem
        # the decoder's own limit follows the interpreter's recursion limit: the refusal must not
        if nesting(body) > MAX_NESTING:
            raise Refused(too_deep)

    def same_origin(self, origin: str, request: Request[Any, Any, Any], host: str | None) -> bool:
        """Whether ``origin`` is this service's own: the request's scheme and ``Host``, or ``--url``'s."""
        sent = origin_of(origin)
        if sent is None:  # "null" (a sandboxed frame, a file) or garbage
            return False
        if self.hosts is not None and sent == self.hosts.public_origin:
            return True
        return host is not None and sent == origin_of(f"{request.url.scheme}://{host}")


#: The deepest nesting of arrays and objects a body may have (the deepest body of the API has 3).
MAX_NESTING = 32


def nesting(value: Any) -> int:
    """How deeply arrays and objects nest in a decoded JSON ``value`` (a scalar: 0), without recursion.

    >>> nesting({"adjust": [{"ship": "Hope"}]}), nesting(3)
    (3, 0)
    """
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in children)
    return deepest


def has_body(request: Request[Any, Any, Any]) -> bool:
    """Whether the request says it carries a body (a length above 0, or chunks)."""
    length = request.headers.get("Content-Length")
    if length is not None:
        return length.strip() not in ("", "0")
    return "Transfer-Encoding" in request.headers
