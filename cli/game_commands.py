"""Game life-cycle commands: log, state, verify, end, repair (``new``, which issues the seats, is in
mortecouille.cli.new_command, so that ``state`` does not import the seats; and ``state`` reads
through mortecouille.app.games, without the command path of mortecouille.app.commands)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
import msgspec

from mortecouille.app.games import game_log, load
from mortecouille.cli.shared import Context, echo_lines, fail, pass_context, reports_errors
from mortecouille.cli.state_output import state_lines
from mortecouille.core.errors import BadInput
from mortecouille.core.limits import shown
from mortecouille.events.storage.errors import AnchoredLoss
from mortecouille.replays.reading.describe import describe_state

if TYPE_CHECKING:  # read by verify only, imported there (the CLI's start-up)
    from mortecouille.replays.reading.witness import Witness


@click.command(name="log")
@click.argument("game")
@click.option("--json", "as_json", is_flag=True, help="The raw JSON lines.")
@pass_context
@reports_errors
def log_command(ctx: Context, game: str, as_json: bool) -> None:
    """Print GAME's events."""
    # the command path (run_command and what it imports), here for its event lines only: not
    # imported by ``state``, which reads and shows a game without it (issue 16)
    from mortecouille.app.commands import describe_events

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
    # the same lines as the launcher's own plain ``state GAME [--json]`` (cli.launch, issue 16);
    # described by this module's ``describe_state``, the name tests/test_hostile_input.py breaks
    # to see how a bug or a refusal of the system ends a command
    for line in state_lines(ctx.store, game, as_json, describe_state):
        click.echo(line)


@click.command()
@click.argument("game")
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--receipts",
    "receipts_files",
    type=click.Path(dir_okay=False, path_type=Path),
    multiple=True,
    help="A player's receipts file: each receipt's submission must be in the log, unchanged (repeatable).",
)
@click.option(
    "--head-code",
    "head_codes",
    multiple=True,
    metavar="SEQ:CODE",
    help="A head code noted at the table, e.g. 41:4831-9277-0015: the log must pass through it "
    "(repeatable; a 6-hex-digit code noted before is checked as well, as weak).",
)
@click.option(
    "--witness",
    "witness_files",
    type=click.Path(dir_okay=False, path_type=Path),
    multiple=True,
    help="A page's witness file (GAME-witness.json): the log must hold each head it saw (repeatable).",
)
@pass_context
@reports_errors
def verify(
    ctx: Context,
    game: str,
    as_json: bool,
    receipts_files: tuple[Path, ...],
    head_codes: tuple[str, ...],
    witness_files: tuple[Path, ...],
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
    receipts = []
    for receipts_file in receipts_files:
        entries = read_receipts_file(receipts_file)
        if not entries:
            # a player who passed the wrong file must not read "verified" as "my receipts hold"
            nothing = "holds no receipt: nothing to check against the log"
            raise BadInput("--receipts", f"{receipts_file} {nothing}")
        receipts.append((str(receipts_file), entries))
    witnesses = [(str(path), read_witness_file(path, game)) for path in witness_files]
    report = verify_log(game_log(ctx.store, game), receipts=receipts, head_codes=codes, witnesses=witnesses)
    if as_json:
        click.echo(msgspec.json.encode({"ok": report.ok, **msgspec.to_builtins(report)}).decode())
    else:
        for finding in report.findings:
            echo_lines([f"{'ok  ' if finding.ok else 'FAIL'} {finding.check:<8} {finding.detail}"])
        first = report.first_failure
        click.echo(f"{game}: " + ("verified" if first is None else f"FAILED at seq {first.seq}"))
    if not report.ok:
        sys.exit(4)


def read_witness_file(path: Path, game: str) -> Witness:
    """The witness file at ``path`` for ``game``; refused naming ``--witness`` (exit 2) when it
    cannot be read, is not a witness file, holds no head, or is another game's."""
    from mortecouille.replays.reading.witness import WitnessFileError, parse_witness

    try:
        witness = parse_witness(path.read_bytes())
    except OSError as error:
        raise BadInput("--witness", f"cannot read {path}: {error.strerror}") from None
    except WitnessFileError as error:
        raise BadInput("--witness", f"{path}: {error}") from None
    if witness.game != game:
        raise BadInput("--witness", f"{path} is the witness file of game {witness.game!r}, not {game!r}")
    return witness


@click.command()
@click.argument("game")
@click.option("--winner", default=None, help="The winning player, if the referee declares one.")
@click.option("--reason", default="referee", show_default=True)
@pass_context
@reports_errors
def end(ctx: Context, game: str, winner: str | None, reason: str) -> None:
    """End GAME and reveal its seed (D2)."""
    from mortecouille.app.commands import end_game  # the command path: see ``log``

    ended = end_game(game_log(ctx.store, game), winner=winner, reason=reason)
    seed, winner = ended.seed, ended.winner  # the winner as the game spells the name
    click.echo(
        f"ended {game}" + (f"; winner {shown(winner)}" if winner else "") + (f"; seed {seed}" if seed else "")
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
    log_ = game_log(ctx.store, game).as_files()
    if log_ is None:
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


COMMANDS: tuple[click.Command, ...] = (log_command, state, verify, end, repair)
