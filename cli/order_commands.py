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

from mortecouille.app.commands import game_log, run_command
from mortecouille.cli.receipt_output import echo_receipt, receipts_option
from mortecouille.cli.shared import Context, echo_lines, pass_context, reports_errors
from mortecouille.core.errors import BadInput
from mortecouille.core.fleet.commands import resolve_ship
from mortecouille.core.mortecouille.orders import GiveOrder, WithdrawOrder
from mortecouille.events.orders import Advance, Attack, BecomeFireship, CatapultShot, Idle, Maneuver, Order

USAGE = (
    "advance | idle | fireship | maneuver 1/8|1/4|1/2 left|right [--sailing] | "
    "attack port|starboard|bow|stern TARGET [--burst] | catapult TARGET"
)


#: ``order --help``'s grammar of actions and its examples (issue 13.5): the words ``parse_action``
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
        "SHIP is matched as place matches it: case and spacing aside.",
    ]
)


def parse_action(words: list[str], position: int) -> Order:
    field = f"ACTION[{position}]"
    if not words:
        raise BadInput(field, f"empty action; expected {USAGE}")
    verb, rest = words[0].lower(), words[1:]
    flags = {w for w in rest if w.startswith("--")}
    args = [w for w in rest if not w.startswith("--")]
    allowed = {"maneuver": {"--sailing"}, "attack": {"--burst"}}.get(verb, set())
    if flags - allowed:
        raise BadInput(field, f"{verb} takes no {', '.join(sorted(flags - allowed))}")
    expected = {"advance": 0, "idle": 0, "fireship": 0, "maneuver": 2, "attack": 2, "catapult": 1}
    if verb not in expected:
        raise BadInput(field, f"{verb!r} is not an action; expected {USAGE}")
    if len(args) != expected[verb]:
        raise BadInput(field, f"{verb} takes {expected[verb]} argument(s), got {args}; expected {USAGE}")
    if verb == "advance":
        return Advance()
    if verb == "idle":
        return Idle()
    if verb == "fireship":
        return BecomeFireship()
    if verb == "maneuver":
        return Maneuver(turn=args[0], side=args[1].lower(), sailing="--sailing" in flags)
    if verb == "attack":
        return Attack(
            position=args[0].lower(), target=args[1], mode="burst" if "--burst" in flags else "normal"
        )
    return CatapultShot(target=args[0])


def parse_actions(words: tuple[str, ...]) -> tuple[Order, ...]:
    groups: list[list[str]] = [[]]
    for word in words:
        if word == "+":
            groups.append([])
        else:
            groups[-1].append(word)
    return tuple(parse_action(group, index + 1) for index, group in enumerate(groups))


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
    actions = parse_actions(action)
    outcome = run_command(
        game_log(ctx.games, game),
        lambda state: GiveOrder(ship=resolve_ship(state, ship), actions=actions, replace=replace_orders),
        expected_seq=expect_seq,
    )
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
    outcome = run_command(
        game_log(ctx.games, game),
        lambda state: WithdrawOrder(ship=resolve_ship(state, ship)),
        expected_seq=expect_seq,
    )
    echo_lines(outcome.lines())
    echo_receipt(outcome, receipts_file)


COMMANDS: tuple[click.Command, ...] = (order, unorder)
