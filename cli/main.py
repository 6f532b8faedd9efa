"""``mortecouille``: the referee's command line. Thin: parse the arguments, call the application
(mortecouille.app), print what it returns.

The group below is given its commands explicitly, from ``COMMANDS``: a command exists because it
is listed there, not because its module was imported.

Exit codes: 0 ok, 2 bad input or a rule refusal (the message names the field
or rule ID), 3 conflict or lock, 4 corrupt or tampered log.
"""

from __future__ import annotations

import click

from mortecouille.app.commands import games_dir as resolve_games_dir
from mortecouille.cli import (
    analytics_commands,
    board_commands,
    demo_command,
    fleet_commands,
    game_commands,
    order_commands,
    replay_commands,
    rules_commands,
)
from mortecouille.cli.shared import Context, configure_logging

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
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--games-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Where game logs live (default $MORTECOUILLE_GAMES or ./games).",
)
@click.option("-v", "--verbose", count=True, help="More detail on stderr (-vv for debug).")
@click.option("--log-json", is_flag=True, help="Structured JSON log lines on stderr.")
@click.pass_context
def cli(ctx: click.Context, games_dir: str | None, verbose: int, log_json: bool) -> None:
    """Mortecouille: an event-sourced referee for tabletop naval battles."""
    configure_logging(verbose, log_json)
    ctx.obj = Context(games=resolve_games_dir(games_dir))


for command in COMMANDS:
    cli.add_command(command)


def main() -> None:
    cli(prog_name="mortecouille")
