"""Game life-cycle commands: new, log, state, verify, end, repair."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import msgspec

from mortecouille.app.commands import describe_events, describe_location, end_game, game_log, load, new_game
from mortecouille.app.seats import DEFAULT_BASE_URL, issue_seats, refuse_leftover_seats, seat_links
from mortecouille.cli.seat_commands import URL_HELP, seat_link_lines
from mortecouille.cli.shared import Context, echo_lines, fail, pass_context, reports_errors
from mortecouille.core.board.geometry import parse_facing, parse_square
from mortecouille.core.board.terrain import validate_board
from mortecouille.core.errors import BadInput
from mortecouille.core.state import state_as_dict, state_hash
from mortecouille.events.board import Board, WindTile
from mortecouille.events.store import AnchoredLoss, Conflict, GameLog
from mortecouille.replays.reading.describe import describe_state


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
    if log_.exists():  # said the same way by every store (the creation would refuse it too)
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


@click.command(name="log")
@click.argument("game")
@click.option("--json", "as_json", is_flag=True, help="The raw JSON lines.")
@pass_context
@reports_errors
def log_command(ctx: Context, game: str, as_json: bool) -> None:
    """Print GAME's events."""
    log_ = game_log(ctx.store, game)
    events_, _ = load(log_)
    if as_json:
        sys.stdout.buffer.write(log_.read_bytes())
        return
    echo_lines(describe_events(events_))


@click.command()
@click.argument("game")
@click.option("--json", "as_json", is_flag=True)
@pass_context
@reports_errors
def state(ctx: Context, game: str, as_json: bool) -> None:
    """Print GAME's current state (the fold of its log)."""
    _, folded = load(game_log(ctx.store, game))
    if as_json:
        body = state_as_dict(folded)
        body["state_hash"] = state_hash(folded)
        click.echo(msgspec.json.encode(body).decode())
    else:
        click.echo(describe_state(folded))
        click.echo(f"state hash {state_hash(folded)}")


@click.command()
@click.argument("game")
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--receipts",
    "receipts_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A player's receipts file: each receipt's submission must be in the log, unchanged.",
)
@click.option(
    "--head-code",
    "head_codes",
    multiple=True,
    metavar="SEQ:CODE",
    help="A head code noted at the table, e.g. 41:3fa9c2: the log must pass through it (repeatable).",
)
@pass_context
@reports_errors
def verify(
    ctx: Context, game: str, as_json: bool, receipts_file: Path | None, head_codes: tuple[str, ...]
) -> None:
    """Check GAME's hash chain, dice and recorded outcomes, and the receipts and head codes given.
    Exit 4 on any failure."""
    # imported here, not at start-up: only `verify` reads receipts and re-derives (issue 16)
    from mortecouille.app.receipts import read_receipts_file
    from mortecouille.replays.reading.receipts import parse_head_code
    from mortecouille.replays.reading.verify import verify_log

    codes = []
    for text in head_codes:
        parsed = parse_head_code(text)
        if isinstance(parsed, str):
            raise BadInput("--head-code", parsed)
        codes.append(parsed)
    receipts = read_receipts_file(receipts_file) if receipts_file is not None else []
    report = verify_log(game_log(ctx.store, game), receipts=receipts, head_codes=codes)
    if as_json:
        click.echo(msgspec.json.encode({"ok": report.ok, **msgspec.to_builtins(report)}).decode())
    else:
        for finding in report.findings:
            echo_lines([f"{'ok  ' if finding.ok else 'FAIL'} {finding.check:<8} {finding.detail}"])
        first = report.first_failure
        click.echo(f"{game}: " + ("verified" if first is None else f"FAILED at seq {first.seq}"))
    if not report.ok:
        sys.exit(4)


@click.command()
@click.argument("game")
@click.option("--winner", default=None, help="The winning player, if the referee declares one.")
@click.option("--reason", default="referee", show_default=True)
@pass_context
@reports_errors
def end(ctx: Context, game: str, winner: str | None, reason: str) -> None:
    """End GAME and reveal its seed (D2)."""
    seed = end_game(game_log(ctx.store, game), winner=winner, reason=reason).seed
    click.echo(
        f"ended {game}" + (f"; winner {winner}" if winner else "") + (f"; seed {seed}" if seed else "")
    )


@click.command()
@click.argument("game")
@click.option("--yes", is_flag=True, help="Cut without asking.")
@click.option(
    "--record-loss",
    is_flag=True,
    help="If complete events the head anchor vouches for are gone, record the loss as an event "
    "in the log and go on (without it, such a log is refused with exit 4).",
)
@pass_context
@reports_errors
def repair(ctx: Context, game: str, yes: bool, record_loss: bool) -> None:
    """Cut a torn last line (left by a crash mid-append) off GAME's log, after showing it.

    Only a tail after the head anchor is cut: a log missing events the anchor vouches for was cut,
    not torn, and is refused (exit 4) unless --record-loss writes the loss into the log."""
    log_ = game_log(ctx.store, game)
    if not isinstance(log_, GameLog):
        fail(
            f"repair: {game!r} is in {ctx.store.url}, where an append is one transaction: it commits "
            "whole or not at all, so no torn line is ever left to cut. Nothing to repair; "
            f"`mortecouille verify {game}` checks the log",
            2,
        )
    plan = log_.repair_plan()
    if plan.lost and not record_loss:
        raise AnchoredLoss(plan)
    if not plan.removed and not plan.lost:
        click.echo(f"{game}: the log is whole; nothing to repair")
        return
    if plan.removed:
        torn = plan.removed
        click.echo(f"the last line is torn ({len(torn)} bytes): {torn[:200].decode('utf-8', 'replace')!r}")
    if plan.lost:
        click.echo(f"{plan.lost} event(s) the head anchor vouches for are gone; the loss will be recorded")
    if not yes and not click.confirm("repair it?", default=False):
        fail("nothing changed", 2)
    removed = log_.repair(record_loss=record_loss)
    loss = f"; recorded the loss of {plan.lost} event(s)" if plan.lost else ""
    click.echo(f"removed {len(removed)} bytes{loss}; run `mortecouille verify {game}`")


COMMANDS: tuple[click.Command, ...] = (new, log_command, state, verify, end, repair)
