"""``new``: create a game and print its seat links.

Apart from the other life-cycle commands (mortecouille.cli.game_commands) because it alone issues
seats: ``state``, ``log`` and ``verify`` do not import the seats (the CLI's start-up).
"""

from __future__ import annotations

import re
from typing import Any

import click

from mortecouille.app.games import describe_location, game_log
from mortecouille.app.requests.bodies import CreateRequest
from mortecouille.app.requests.commands import create_game, decode
from mortecouille.app.seats import DEFAULT_BASE_URL, issue_seats, refuse_leftover_seats, seat_links
from mortecouille.cli.seat_commands import URL_HELP, seat_link_lines
from mortecouille.cli.shared import Context, echo_lines, pass_context, reports_errors
from mortecouille.core.errors import BadInput
from mortecouille.core.limits import DICE_MODES
from mortecouille.events.storage.errors import Conflict


def board_request(
    size: str, rocks: tuple[str, ...], winds: tuple[str, ...], pools: tuple[str, ...]
) -> dict[str, Any]:
    """The board the options describe, as the request's JSON object: ``--board 20x36`` its
    width and height, ``--wind D4:E`` a wind's square and direction."""
    try:
        width_text, height_text = size.lower().split("x")
        width, height = int(width_text), int(height_text)
    except ValueError:
        raise BadInput("--board", "{size!r} is not WIDTHxHEIGHT, e.g. 20x36", size=size) from None
    return {
        "width": width,
        "height": height,
        "rocks": list(rocks),
        "winds": [{"square": wind.partition(":")[0], "direction": wind.partition(":")[2]} for wind in winds],
        "whirlpools": list(pools),
    }


#: the request's fields, as ``new``'s arguments and options name them
_OPTIONS = {"name": "GAME", "players": "--players", "budget": "--budget", "dice": "--dice", "seed": "--seed"}
_BOARD_PART = re.compile(r"board\.(rocks|winds|whirlpools)\[(\d+)\].*")


def typed_words(error: BadInput, size: str, typed: dict[str, tuple[str, tuple[str, ...]]]) -> BadInput:
    """``error`` naming the option as typed behind its field: ``board.rocks[0]`` -> ``--rock Z99``,
    ``board.width`` -> ``--board 5x5 width``, ``players[1]`` -> ``--players``."""
    found = _BOARD_PART.fullmatch(error.field)
    if found is not None:
        option, values = typed[found.group(1)]
        field = f"{option} {values[int(found.group(2))]}"
    elif error.field in ("board.width", "board.height"):
        field = f"--board {size} {error.field.removeprefix('board.')}"
    elif (root := error.field.split("[")[0]) in _OPTIONS:
        field = _OPTIONS[root]
    else:
        return error
    return BadInput(field, error.key, rule=error.rule, **error.params)


@click.command()
@click.argument("game")
@click.option("--players", required=True, help="Comma-separated player names, e.g. Anne,Bart.")
@click.option("--budget", type=int, default=0, show_default=True, help="Starting money per player (F3).")
@click.option(
    "--ruleset", type=click.Choice(["mortecouille", "blockade"]), default="mortecouille", show_default=True
)
@click.option("--board", "board_size", default="20x20", show_default=True, help="WIDTHxHEIGHT.")
@click.option("--rock", "rocks", multiple=True, help="A rock square, e.g. C5 (repeatable).")
@click.option("--wind", "winds", multiple=True, help="A wind tile SQUARE:DIR, e.g. D4:E (repeatable).")
@click.option("--whirlpool", "pools", multiple=True, help="A whirlpool's south-west square (repeatable).")
@click.option(
    "--dice", "dice_mode", type=click.Choice(DICE_MODES), default="seeded", show_default=True
)
@click.option(
    "--seed",
    default=None,
    help="The secret seed, 16 characters or more (default: a random one, kept beside the log).",
)
@click.option(
    "--weak-seed", is_flag=True, help="Accept a --seed shorter than 16 characters (tests, demos): guessable."
)
@click.option("--url", "base_url", default=DEFAULT_BASE_URL, show_default=True, help=URL_HELP)
@pass_context
@reports_errors
def new(
    ctx: Context,
    game: str,
    players: str,
    budget: int,
    ruleset: str,
    board_size: str,
    rocks: tuple[str, ...],
    winds: tuple[str, ...],
    pools: tuple[str, ...],
    dice_mode: str,
    seed: str | None,
    weak_seed: bool,
    base_url: str,
) -> None:
    """Create GAME: its first event commits to the rules version and the dice seed. Prints the
    seat links (referee, each player), secrets shown once."""
    log_ = game_log(ctx.store, game)
    files = log_.as_files()
    if log_.exists() and not (files is not None and files.looks_abandoned()):
        # said the same way by every store (the creation would refuse it too); a log a creation
        # left empty as it died is the creation's to take over (GameLog.creating)
        raise Conflict(f"game {game!r} already exists in {ctx.store.url}")
    refuse_leftover_seats(log_)
    typed = {"rocks": ("--rock", rocks), "winds": ("--wind", winds), "whirlpools": ("--whirlpool", pools)}
    try:
        request = decode(
            CreateRequest,
            {
                "name": game,
                "players": players.split(","),
                "ruleset": ruleset,
                "budget": budget,
                "board": board_request(board_size, rocks, winds, pools),
                "dice": dice_mode,
                "seed": seed,
            },
        )
        create_game(log_, request, weak_seed=weak_seed)
    except BadInput as error:
        raise typed_words(error, board_size, typed) from None
    click.echo(f"created {game} ({ruleset}, {dice_mode} dice) at {describe_location(log_)}")
    echo_lines(seat_link_lines(seat_links(base_url, game, issue_seats(log_)), game))


COMMANDS: tuple[click.Command, ...] = (new,)
