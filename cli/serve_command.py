"""``mortecouille serve``: the game service for the table (docs/service.md) on the games directory.

The web part (Litestar, uvicorn) is imported inside the command, so every other command starts
without loading it. The CLI keeps working on the same games while the service runs: both take the
game's lock, and the service's live push tails the logs.
"""

from __future__ import annotations

import ipaddress
import logging
from urllib.parse import quote

import click

from mortecouille.app.commands import list_games
from mortecouille.cli.shared import Context, pass_context, reports_errors

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


class _NoQueryAccessLog(logging.Filter):
    """uvicorn's access log lines without their query strings (``?seq=`` is harmless, but a
    client that put a token in a URL must not find it in a log) and never a header."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and len(record.args) >= 3:
            args = list(record.args)
            args[2] = str(args[2]).split("?", 1)[0]
            record.args = tuple(args)
        return True


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="The port.")
@click.option(
    "--url", "public_url", default=None, help="The URL the links start with (default: http://HOST:PORT)."
)
@click.option("--access-log/--no-access-log", default=False, show_default=True, help="Log each request.")
@pass_context
@reports_errors
def serve(ctx: Context, host: str, port: int, public_url: str | None, access_log: bool) -> None:
    """Run the game service on the games directory: the table, player and referee pages, the
    JSON API and live push (docs/service.md). Ctrl-C stops it."""
    import uvicorn

    from mortecouille.events.house_log import structlog_module

    structlog_module()  # configured as -v/--log-json asked before the service's modules log with it
    from mortecouille.web.server import build_app

    url = (public_url or base_url(host, port)).rstrip("/")
    if not is_loopback(host):
        click.echo(
            f"warning: listening on {host}, beyond this machine: the seat links are bearer secrets, "
            "anyone who can read one can play that seat; share them only with their players",
            err=True,
        )
    click.echo(f"serving {ctx.games} at {url}")
    summaries = list_games(ctx.games)
    for game in summaries:
        seats = "seats issued" if (ctx.games / f"{game.name}.seats").exists() else "no seats yet"
        click.echo(f"  {game.name}: table {url}/table/{quote(game.name, safe='')} ({seats})")
    if summaries:
        click.echo(
            "seat links are shown once, when issued (only their hashes are kept); "
            "to give a player a new one: mortecouille seats GAME --reissue PLAYER"
        )
    app = build_app(ctx.games, base_url=public_url)
    # Open streams never end on their own: on Ctrl-C they are given a moment, then closed.
    config = uvicorn.Config(
        app, host=host, port=port, access_log=access_log, log_level="warning", timeout_graceful_shutdown=2
    )
    logging.getLogger("uvicorn.access").addFilter(_NoQueryAccessLog())
    uvicorn.Server(config).run()


COMMANDS: tuple[click.Command, ...] = (serve,)
