"""``mortecouille``: the referee's command line. Thin: parse, call the core, print.

Exit codes: 0 ok, 2 bad input or a rule refusal (the message names the field
or rule ID), 3 conflict or lock, 4 corrupt or tampered log. Each module below
adds its commands to the one click group.
"""

from __future__ import annotations

from mortecouille.cli import analytics_commands as analytics_commands  # noqa: F401
from mortecouille.cli import board_commands as board_commands  # noqa: F401
from mortecouille.cli import demo_command as demo_command  # noqa: F401
from mortecouille.cli import fleet_commands as fleet_commands  # noqa: F401
from mortecouille.cli import game_commands as game_commands  # noqa: F401
from mortecouille.cli import order_commands as order_commands  # noqa: F401
from mortecouille.cli import replay_commands as replay_commands  # noqa: F401
from mortecouille.cli import rules_commands as rules_commands  # noqa: F401
from mortecouille.cli.app import cli

__all__ = ["cli", "main"]


def main() -> None:
    cli(prog_name="mortecouille")
