"""``mortecouille order``: a mortecouille ship's orders for the turn (T1).

Actions are written as words, several joined with ``+`` (extra-crew, or an
action plus catapult shots)::

    order GAME Pearl advance
    order GAME Pearl maneuver 1/4 left --sailing
    order GAME Pearl attack port Kraken --burst + catapult Kraken
    order GAME Pearl idle
    order GAME Pearl fireship
"""

from __future__ import annotations

from pathlib import Path

import click

from mortecouille.app.commands import run_command
from mortecouille.app.games import game_log
from mortecouille.app.requests.bodies import OrderRequest, UnorderRequest
from mortecouille.app.requests.commands import AT_THE_TABLE, builder, decode
from mortecouille.cli.order_grammar import USAGE, parse_actions, typed_words
from mortecouille.cli.receipt_output import echo_receipt, receipts_option
from mortecouille.cli.shared import Context, echo_lines, pass_context, reports_errors
from mortecouille.core.errors import BadInput

#: ``order --help``'s grammar of actions and its examples: the words ``parse_action``
#: reads, each on a line (``\b`` keeps click from joining them).
GRAMMAR = "\n".join(
    [
        "\b",
        "ACTION is one of:",
        *(f"  {form}" for form in USAGE.split(" | ")),
        "Join several with + (extra crew, or an action and catapult shots). Examples:",
        "  order GAME Pearl advance",
        "  order GAME Pearl maneuver 1/4 left --sailing",
        "  order GAME Pearl attack port Kraken --burst + catapult Kraken",
        "SHIP and TARGET are matched as place matches a ship: case and spacing aside.",
        "What SHIP may be given now, with wind costs and chances to hit: actions GAME SHIP.",
    ]
)


@click.command(context_settings={"ignore_unknown_options": True}, epilog=GRAMMAR)
@click.argument("game")
@click.argument("ship")
@click.argument("action", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--replace", "replace_orders", is_flag=True, help="Replace the ship's orders for this turn.")
@click.option("--expect-seq", type=int, default=None, help="Refuse unless the log is at this seq.")
@receipts_option
@pass_context
@reports_errors
def order(
    ctx: Context,
    game: str,
    ship: str,
    action: tuple[str, ...],
    replace_orders: bool,
    expect_seq: int | None,
    receipts_file: Path | None,
) -> None:
    """Give SHIP its orders for this turn: ACTION [+ ACTION ...] (T1)."""
    try:
        typed = {"ship": ship, "actions": parse_actions(action), "replace": replace_orders}
        request = decode(OrderRequest, typed)
    except BadInput as error:
        raise typed_words(error) from None
    outcome = run_command(game_log(ctx.store, game), builder(AT_THE_TABLE, request), expected_seq=expect_seq)
    echo_lines(outcome.lines())
    echo_receipt(outcome, receipts_file)


@click.command()
@click.argument("game")
@click.argument("ship")
@click.option("--expect-seq", type=int, default=None, help="Refuse unless the log is at this seq.")
@receipts_option
@pass_context
@reports_errors
def unorder(ctx: Context, game: str, ship: str, expect_seq: int | None, receipts_file: Path | None) -> None:
    """Withdraw SHIP's orders for this turn before it is resolved: SHIP has no orders again (T1).

    Logged as an event: the orders and their withdrawal both stay in the log."""
    request = decode(UnorderRequest, {"ship": ship})
    outcome = run_command(game_log(ctx.store, game), builder(AT_THE_TABLE, request), expected_seq=expect_seq)
    echo_lines(outcome.lines())
    echo_receipt(outcome, receipts_file)


COMMANDS: tuple[click.Command, ...] = (order, unorder)
