"""``mortecouille``: the referee's command line. Thin: parse the arguments, call the application
(mortecouille.app), print what it returns.

The group below is given its commands explicitly, from ``COMMANDS``: a command exists because it
is listed there, not because its module was imported.

Exit codes: 0 ok, 2 bad input or a rule refusal (the message names the field
or rule ID), 3 conflict or lock, 4 corrupt or tampered log; 1 interrupted, a file
the system would not read or write, or an unexpected error (one line, no traceback).
"""

from __future__ import annotations

import errno

import click
import structlog

from mortecouille.app.commands import games_dir as resolve_games_dir
from mortecouille.cli import (
    analytics_commands,
    board_commands,
    demo_command,
    fleet_commands,
    game_commands,
    order_commands,
    referee_commands,
    replay_commands,
    rules_commands,
    seat_commands,
    serve_command,
)
from mortecouille.cli.shared import (
    GAMES_DIR_HELP,
    LOG_JSON_HELP,
    VERBOSE_HELP,
    Context,
    configure_logging,
    fail,
    with_global_options,
)

__all__ = ["COMMANDS", "cli", "main"]

#: Every command of ``mortecouille``, by module; ``--help`` lists them sorted by name.
COMMANDS: tuple[click.Command, ...] = (
    *game_commands.COMMANDS,
    *fleet_commands.COMMANDS,
    *board_commands.COMMANDS,
    *order_commands.COMMANDS,
    *replay_commands.COMMANDS,
    *rules_commands.COMMANDS,
    *demo_command.COMMANDS,
    *analytics_commands.COMMANDS,
    *referee_commands.COMMANDS,
    *seat_commands.COMMANDS,
    *serve_command.COMMANDS,
)


class RefereeGroup(click.Group):
    """The group that keeps every traceback from the user: a command's deliberate errors are
    reported by ``reports_errors``; what is left becomes one line and exit 1 (README, exit
    codes), the traceback going to the debug log (``-vv``)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # click's own: usage errors exit 2, Ctrl-C and end of input "Aborted!" exit 1
        except OSError as error:
            if error.errno == errno.EPIPE:
                raise  # ``log | head -1``: click's main closes stdout quietly
            structlog.get_logger().debug("system error", exc_info=True)
            where = f": {error.filename}" if error.filename else ""
            fail(f"the system refused: {error.strerror or error}{where}", 1)
        except Exception as error:
            structlog.get_logger().debug("unexpected error", exc_info=True)
            fail(f"unexpected {type(error).__name__}: {error} (a bug: please report it with the command)", 1)


@click.group(cls=RefereeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--games-dir",
    type=click.Path(file_okay=False),
    default=None,
    help=GAMES_DIR_HELP,
)
@click.option("-v", "--verbose", count=True, help=VERBOSE_HELP)
@click.option("--log-json", is_flag=True, help=LOG_JSON_HELP)
@click.version_option(package_name="mortecouille", prog_name="mortecouille", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context, games_dir: str | None, verbose: int, log_json: bool) -> None:
    """Mortecouille: an event-sourced referee for tabletop naval battles."""
    configure_logging(verbose, log_json)
    ctx.obj = Context(games=resolve_games_dir(games_dir), verbose=verbose, log_json=log_json)


for command in COMMANDS:
    cli.add_command(with_global_options(command))


def main() -> None:
    cli(prog_name="mortecouille")
