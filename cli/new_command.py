"""``new``: create a game and print its seat links.

Apart from the other life-cycle commands (mortecouille.cli.game_commands) because it alone issues
seats: ``state``, ``log`` and ``verify`` do not import the seats (issue 16, the CLI's start-up).
"""

from __future__ import annotations

import click

from mortecouille.app.commands import new_game
from mortecouille.app.games import describe_location, game_log
from mortecouille.app.seats import DEFAULT_BASE_URL, issue_seats, refuse_leftover_seats, seat_links
from mortecouille.cli.seat_commands import URL_HELP, seat_link_lines
from mortecouille.cli.shared import Context, echo_lines, pass_context, reports_errors
from mortecouille.core.board.geometry import parse_facing, parse_square
from mortecouille.core.board.terrain import validate_board
from mortecouille.core.errors import BadInput
from mortecouille.events.board import Board, WindTile
from mortecouille.events.storage.errors import Conflict


def _option_square(option: str, text: str) -> tuple[int, int]:
    try:
        return parse_square(text)
    except ValueError as error:
        raise BadInput(f"{option} {text}", str(error)) from None


def parse_board(size: str, rocks: tuple[str, ...], winds: tuple[str, ...], pools: tuple[str, ...]) -> Board:
    """The board the options describe, checked (B1-B7) with each refusal naming the option as typed
    (``--rock Z99``), not the board's internal field (``board.rocks[0]``)."""
    try:
        width_text, height_text = size.lower().split("x")
        width, height = int(width_text), int(height_text)
    except ValueError:
        raise BadInput("--board", f"{size!r} is not WIDTHxHEIGHT, e.g. 20x36") from None
    wind_tiles = []
    for wind in winds:
        square_text, _, direction = wind.partition(":")
        try:
            wind_tiles.append(WindTile(at=_option_square("--wind", square_text), dir=parse_facing(direction)))
        except ValueError as error:
            raise BadInput(f"--wind {wind}", str(error)) from None
    board = Board(
        width=width,
        height=height,
        rocks=tuple(_option_square("--rock", r) for r in rocks),
        winds=tuple(wind_tiles),
        whirlpools=tuple(_option_square("--whirlpool", p) for p in pools),
    )
    try:
        validate_board(board)
    except BadInput as error:
        raise BadInput(_option_for(error.field, size, rocks, winds, pools), error.message) from None
    return board


def _option_for(
    field: str, size: str, rocks: tuple[str, ...], winds: tuple[str, ...], pools: tuple[str, ...]
) -> str:
    """The option as typed behind a board field: ``board.rocks[0]`` -> ``--rock Z99``."""
    kind, _, rest = field.removeprefix("board.").partition("[")
    typed = {"rocks": ("--rock", rocks), "winds": ("--wind", winds), "whirlpools": ("--whirlpool", pools)}
    if kind in typed and rest[:1].isdigit():
        option, values = typed[kind]
        return f"{option} {values[int(rest.split(']')[0])]}"
    return f"--board {size} {kind}"  # width or height


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
    "--dice", "dice_mode", type=click.Choice(["seeded", "table"]), default="seeded", show_default=True
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
    new_game(
        log_,
        players=tuple(p.strip() for p in players.split(",")),
        ruleset=ruleset,
        budget=budget,
        board=parse_board(board_size, rocks, winds, pools),
        dice_mode=dice_mode,
        seed=seed,
        weak_seed=weak_seed,
    )
    click.echo(f"created {game} ({ruleset}, {dice_mode} dice) at {describe_location(log_)}")
    echo_lines(seat_link_lines(seat_links(base_url, game, issue_seats(log_)), game))


COMMANDS: tuple[click.Command, ...] = (new,)
