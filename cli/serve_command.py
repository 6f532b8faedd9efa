"""``mortecouille serve``: the game service for the table (docs/service.md) on the store of games
(``--store URL``: a games directory, or a PostgreSQL database).

The web part (Litestar, uvicorn) is imported inside the command, so every other command starts
without loading it. The CLI keeps working on the same games while the service runs: both take the
game's lock, and the service's live push follows the logs (files: it polls them; PostgreSQL: its
change feed, LISTEN/NOTIFY).

``--workers N`` runs N service processes on the one port (uvicorn's workers: each a whole service
with its own connections and its own change feed, the kernel spreading the connections between
them, a worker that dies started again). On PostgreSQL every process sees every append at once;
on files the other processes' appends reach their listeners at the next poll (0.2 s).
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
from urllib.parse import quote

import click

from mortecouille.app.commands import list_games
from mortecouille.app.games import game_log
from mortecouille.cli.shared import Context, pass_context, reports_errors
from mortecouille.core.errors import BadInput
from mortecouille.web.access_log import AccessLog, write_access_log

LOOPBACK_NAMES = frozenset({"localhost"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine (127.0.0.0/8, ::1, localhost)."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def base_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    if host in ("0.0.0.0", "::"):
        shown = "127.0.0.1"  # every interface: this machine's own address works for the links
    return f"http://{shown}:{port}"


def bound_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (as uvicorn binds one: IPv6 when the host holds a
    colon, the address reusable), before anything is printed: a port in use or an address this
    machine does not have is refused naming the option (exit 2), never after the links were shown."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
    except OSError as error:
        sock.close()
        reason = error.strerror or str(error)
        if error.errno == errno.EADDRINUSE:
            # the words the OS says (tests/web_server.py starts again on another port on them)
            raise BadInput("--port", f"{port} on {host}: address already in use (another server "
                                     "listens there); choose another port") from None  # fmt: skip
        if error.errno == errno.EACCES:
            raise BadInput("--port", f"{port} needs privileges this user does not have ({reason})") from None
        raise BadInput("--host", f"cannot listen on {host!r}: {reason}") from None
    return sock


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="The port.")
@click.option(
    "--url", "public_url", default=None, help="The URL the links start with (default: http://HOST:PORT)."
)
@click.option(
    "--access-log/--no-access-log",
    default=False,
    show_default=True,
    help="Log each request on stderr: client, method, path (no query string), status, duration.",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Service processes on the port (several: best on a PostgreSQL store, see docs/service.md).",
)
@click.option(
    "--max-streams",
    type=click.IntRange(1),
    default=None,
    help="Live streams open at once, in all, per process (default: the open-file limit less 256).",
)
@click.option(
    "--max-streams-per-game",
    type=click.IntRange(1),
    default=None,
    help="Live streams open at once on one game, per process (default 256).",
)
@click.option(
    "--max-streams-per-address",
    type=click.IntRange(1),
    default=None,
    help="Live streams open at once from one client address, per process (default 1024).",
)
@pass_context
@reports_errors
def serve(
    ctx: Context,
    host: str,
    port: int,
    public_url: str | None,
    access_log: bool,
    workers: int,
    max_streams: int | None,
    max_streams_per_game: int | None,
    max_streams_per_address: int | None,
) -> None:
    """Run the game service on the store of games: the table, player and referee pages, the
    JSON API and live push (docs/service.md). Ctrl-C stops it."""
    import msgspec
    import uvicorn

    from mortecouille.events.house_log import structlog_module
    from mortecouille.events.storage.contract import SEATS, secrets_of

    structlog_module()  # configured as -v/--log-json asked before the service's modules log with it
    from mortecouille.web.guards import HostPolicy
    from mortecouille.web.live_streams import StreamLimits
    from mortecouille.web.server import (
        SERVE_ACCESS_LOG_VARIABLE,
        SERVE_BASE_URL_VARIABLE,
        SERVE_HOST_VARIABLE,
        SERVE_STORE_VARIABLE,
        SERVE_STREAMS_VARIABLE,
        build_app,
    )

    caps = {"total": max_streams, "per_game": max_streams_per_game, "per_address": max_streams_per_address}
    streams = StreamLimits(**{name: value for name, value in caps.items() if value is not None})

    sock = bound_socket(host, port)
    url = (public_url or base_url(host, port)).rstrip("/")
    if not is_loopback(host):
        click.echo(
            f"warning: listening on {host}, beyond this machine: the seat links are bearer secrets, "
            "anyone who can read one can play that seat; share them only with their players",
            err=True,
        )
    store = ctx.store
    processes = f" ({workers} processes)" if workers > 1 else ""
    click.echo(f"serving {store.url} at {url}{processes}")
    summaries = list_games(store)
    for game in summaries:
        has_seats = secrets_of(game_log(store, game.name)).exists(SEATS)
        seats = "seats issued" if has_seats else "no seats yet"
        click.echo(f"  {game.name}: table {url}/table/{quote(game.name, safe='')} ({seats})")
    if summaries:
        click.echo(
            "seat links are shown once, when issued (only their hashes are kept); "
            "to give a player a new one: mortecouille seats GAME --reissue PLAYER"
        )
    # Open streams never end on their own: on Ctrl-C they are given a moment, then closed.
    # uvicorn's own access log stays off (it would write query strings): AccessLog writes the lines
    if workers == 1:
        hosts = HostPolicy.serving(host, public_url)
        app = build_app(store, base_url=public_url, hosts=hosts, streams=streams)
        if access_log:
            write_access_log()
        config = uvicorn.Config(
            AccessLog(app) if access_log else app,
            host=host,
            port=port,
            access_log=False,
            log_level="warning",
            timeout_graceful_shutdown=2,
        )
        uvicorn.Server(config).run(sockets=[sock])  # the socket bound above, so no race for it
        return
    sock.close()  # uvicorn's workers bind their own (the check above has told a port in use)
    # each worker is a process of its own (started afresh, not forked) that opens the store itself,
    # from the URL it finds in its environment (uvicorn passes it an import path, not arguments)
    os.environ[SERVE_STORE_VARIABLE] = ctx.store_url
    os.environ[SERVE_BASE_URL_VARIABLE] = public_url or ""
    os.environ[SERVE_STREAMS_VARIABLE] = msgspec.json.encode(streams).decode()
    os.environ[SERVE_HOST_VARIABLE] = host
    os.environ[SERVE_ACCESS_LOG_VARIABLE] = "1" if access_log else ""
    ctx.close()  # the workers open their own connections
    uvicorn.run(
        "mortecouille.web.server:worker_app",
        factory=True,
        workers=workers,
        host=host,
        port=port,
        access_log=False,
        log_level="warning",
        timeout_graceful_shutdown=2,
    )


COMMANDS: tuple[click.Command, ...] = (serve,)
