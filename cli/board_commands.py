"""Commands on the board: place ships, give blockade tokens, resolve a turn, draw the board."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click
import msgspec

from mortecouille.app.commands import (
    AskDie,
    ConfirmDice,
    describe_events,
    lock_turn,
    run_command,
)
from mortecouille.app.games import game_log, load_state
from mortecouille.app.receipts import turn_head_code
from mortecouille.app.requests.bodies import PlaceRequest, ResolveRequest, TokensRequest
from mortecouille.app.requests.commands import AT_THE_TABLE, builder, decode
from mortecouille.app.requests.commands import resolve as resolving
from mortecouille.app.scenario import parse_scenario, run_scenario, scenario_output
from mortecouille.app.store_copy import turns_of
from mortecouille.cli.receipt_output import echo_receipt, receipts_option
from mortecouille.cli.shared import Context, echo_lines, pass_context, reports_errors, typed_as
from mortecouille.core.dice import RollIdentity
from mortecouille.core.errors import BadInput
from mortecouille.core.limits import shown as shown_text
from mortecouille.core.scenario import ScenarioProblems
from mortecouille.events.game import DieRolled
from mortecouille.replays.pictures.board_text import render_board


def parse_dice_values(text: str | None) -> list[int] | None:
    if text is None:
        return None
    if not text.strip():
        return []
    values = text.replace(" ", "").split(",")
    for position, value in enumerate(values, start=1):
        if not value:
            # a die left out: taking the rest in order would give each later die the value meant
            # for the one after it
            raise BadInput(
                "--dice", f"{text!r}: value {position} is missing; give every die in order, such as 3,5,6"
            )
    try:
        return [int(v) for v in values]
    except ValueError:
        raise BadInput("--dice", f"{text!r} is not a list of die values such as 3,5,6") from None


def prompt_for_die(identity: RollIdentity, label: str) -> int:
    """Ask the referee what a physical die showed, saying what it is for (D1)."""
    # the label already names the die (``Hope2, wind, 1d6``): click adds the ": "
    value: int = click.prompt(label, type=click.IntRange(1, identity.sides))
    return value


def confirm_table_dice(rolls: Sequence[DieRolled]) -> bool:
    """Show the table dice a resolve read, each named (ship, purpose), and ask before writing:
    a mistyped die is caught before it is in the log for good."""
    click.echo("table dice:")
    for roll in rolls:
        ship = roll.ship if roll.ship is not None else "table"
        click.echo(shown_text(f"  {ship}, {roll.purpose}, 1d{roll.sides}: {roll.value}"))
    answer: bool = click.confirm("write these dice?", default=False)
    return answer


@click.command()
@click.argument("game")
@click.argument("ship")
@click.argument("square")
@click.option(
    "--facing", default="N", show_default=True, help="N, NE, E, SE, S, SW, W or NW; French O, SO, NO (B2)."
)
@click.option("--kind", default=None, help="Blockade ship kind, e.g. sloop (P2).")
@click.option("--owner", default=None, help="The player the ship belongs to.")
@click.option("--expect-seq", type=int, default=None, help="Refuse unless the log is at this seq.")
@receipts_option
@pass_context
@reports_errors
def place(
    ctx: Context,
    game: str,
    ship: str,
    square: str,
    facing: str,
    kind: str | None,
    owner: str | None,
    expect_seq: int | None,
    receipts_file: Path | None,
) -> None:
    """Put SHIP on SQUARE, a name such as C5, with its --facing (B1, B2)."""
    typed = {"ship": ship, "square": square, "facing": facing, "kind": kind, "owner": owner}
    words = {"ship": "SHIP", "square": "SQUARE", "facing": "--facing", "kind": "--kind", "owner": "--owner"}
    with typed_as(words):
        request = decode(PlaceRequest, typed)
        command = builder(AT_THE_TABLE, request)
        outcome = run_command(game_log(ctx.store, game), command, expected_seq=expect_seq)
    echo_lines(outcome.lines())
    echo_receipt(outcome, receipts_file)


@click.command()
@click.argument("game")
@click.argument("ship")
@click.argument("tokens", nargs=-1, required=True)
@click.option("--replace", "replace_tokens", is_flag=True, help="Replace the ship's tokens for this turn.")
@click.option("--expect-seq", type=int, default=None, help="Refuse unless the log is at this seq.")
@receipts_option
@pass_context
@reports_errors
def tokens(
    ctx: Context,
    game: str,
    ship: str,
    tokens: tuple[str, ...],
    replace_tokens: bool,
    expect_seq: int | None,
    receipts_file: Path | None,
) -> None:
    """Give a blockade SHIP its TOKENS for this turn, one per round: F, L, R or - (P1)."""
    with typed_as({"ship": "SHIP", "tokens": "TOKENS"}):
        request = decode(TokensRequest, {"ship": ship, "tokens": list(tokens), "replace": replace_tokens})
        command = builder(AT_THE_TABLE, request)
        outcome = run_command(game_log(ctx.store, game), command, expected_seq=expect_seq)
    echo_lines(outcome.lines())
    echo_receipt(outcome, receipts_file)


@click.command()
@click.argument("game")
@click.option("--partial", is_flag=True, help="Ships without orders do nothing instead of blocking.")
@click.option(
    "--idle-turn", is_flag=True, help="Play the turn even though no ship has orders or tokens (T1, P1)."
)
@click.option("--dice", "dice_text", default=None, help="Table dice values in the order asked, e.g. 3,5,6.")
@click.option(
    "--prompt/--no-prompt",
    "prompt",
    default=None,
    help="Ask for each table die as it is needed (default: when stdin is a terminal).",
)
@click.option("--yes", "-y", "assume_yes", is_flag=True, help="Write the table dice without confirming them.")
@click.option("--expect-seq", type=int, default=None, help="Refuse unless the log is at this seq.")
@click.option(
    "--lock",
    "lock_only",
    is_flag=True,
    help="Only lock the turn, so the players reveal their dice contributions from their pages (D3).",
)
@click.option(
    "--without-missing",
    "absent_reason",
    metavar="REASON",
    default=None,
    help="Resolve without the dice contributions still unrevealed, logging REASON (D3).",
)
@pass_context
@reports_errors
def resolve(
    ctx: Context,
    game: str,
    partial: bool,
    idle_turn: bool,
    dice_text: str | None,
    prompt: bool | None,
    assume_yes: bool,
    expect_seq: int | None,
    lock_only: bool,
    absent_reason: str | None,
) -> None:
    """Resolve the current turn (P1 / T2) and print what happened, with rule IDs.

    In a table-dice game the dice read are shown and confirmed before anything is written
    (--yes skips the question); a no writes nothing and exits 1.

    In a game whose dice take the players' contributions (D3), the referee's resolve draws one
    for every player who committed none and reveals it at once (one step); players who committed
    from their pages reveal after `resolve --lock`, then `resolve` plays the turn, or
    `--without-missing REASON` plays it without a contribution still withheld."""
    if lock_only:
        if absent_reason is not None or partial or idle_turn or dice_text:
            raise BadInput("--lock", "only locks the turn: give the other options to the resolve after it")
        echo_lines(lock_turn(game_log(ctx.store, game), expected_seq=expect_seq).lines())
        return
    interactive = sys.stdin.isatty() if prompt is None else prompt
    ask: AskDie | None = prompt_for_die if interactive else None
    confirm: ConfirmDice | None = None if assume_yes else confirm_table_dice
    typed = {
        "dice": parse_dice_values(dice_text),
        "partial": partial,
        "idle_turn": idle_turn,
        "absent_reason": absent_reason,
    }
    with typed_as({"dice": "--dice", "absent_reason": "--without-missing"}):
        request = decode(ResolveRequest, typed)
    log_ = game_log(ctx.store, game)
    outcome = resolving(log_, request, ask=ask, confirm=confirm, expected_seq=expect_seq)
    echo_lines(outcome.lines())
    click.echo(render_board(outcome.state))
    after_turn = turn_head_code(outcome.events)
    if after_turn is not None:  # read aloud: whoever notes it can catch a later cut or rewrite
        turn, code = after_turn
        click.echo(f"head code after turn {turn}: {code.code} (seq {code.seq})")


@click.command()
@click.argument("game")
@click.option("--turn", type=int, default=None, help="The board as turn N left it (0: before turn 1).")
@click.option("--color/--no-color", default=None, help="Force colour on or off (default: when a terminal).")
@pass_context
@reports_errors
def board(ctx: Context, game: str, turn: int | None, color: bool | None) -> None:
    """Draw GAME's board: ships with facing arrows, rocks, wind, whirlpools."""
    log_ = game_log(ctx.store, game)
    if turn is None:  # the current board: from the snapshot and the events after it
        click.echo(render_board(load_state(log_, keep=True)), color=color)
        return
    with turns_of(log_) as index:  # a past board: from the keyframe before that turn
        resolved = len(index.resolved_turns())
        if not 0 <= turn <= resolved:
            raise BadInput(
                "--turn", f"{turn} is not a resolved turn of {game!r}: 0 (the start) to {resolved}"
            )
        shown, _ = index.state_at(index.position_after_turn(turn))
        index.keep()
    click.echo(render_board(shown), color=color)


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Ships, collisions and outcome events as JSON.")
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Keep the log the scenario builds at this path.",
)
@reports_errors
def scenario(file: Path, as_json: bool, log_path: Path | None) -> None:
    """Resolve the one-turn situation in FILE.json and print its outcome.

    The format, with a complete example for each ruleset, is docs/scenario.md in the repository
    (squares as "C5" or [x, y]). Every problem of a file is listed at once, each with its path
    (ships[1].kind, orders.B[0]); then nothing is written (exit 2).
    """
    try:
        data = file.read_bytes()
    except OSError as error:
        raise BadInput("FILE", f"cannot read {file}: {error.strerror}") from None
    try:
        run = run_scenario(
            parse_scenario(data), log_path, name=file.stem if file.stem.isidentifier() else "scenario"
        )
    except ScenarioProblems as error:
        if len(error.problems) == 1:
            raise
        # one line each: a designer reads the list and fixes the file in one pass
        click.echo(f"error: {file}: {len(error.problems)} problems, nothing written:", err=True)
        for field, message in error.problems:
            click.echo(shown_text(f"  {field}: {message}"), err=True)
        sys.exit(BadInput.exit_code)
    if as_json:
        click.echo(msgspec.json.encode(scenario_output(run)).decode())
        return
    echo_lines(describe_events(run.outcome))
    click.echo(render_board(run.state))
    if log_path is not None:
        click.echo(f"log kept at {log_path}")


COMMANDS: tuple[click.Command, ...] = (place, tokens, resolve, board, scenario)
