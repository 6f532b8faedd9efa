"""``mortecouille demo``: a whole seeded game between the two built-in bots, on disk, verified."""

from __future__ import annotations

import click

from mortecouille.app.botgame import play_demo
from mortecouille.cli.shared import Context, pass_context, reports_errors
from mortecouille.replays.pictures.board_text import render_board


@click.command()
@click.option(
    "--seed", default=None, help="The dice seed: same seed, same game (default: a random one, shown)."
)
@click.option("--game", "name", default=None, help="Game name (default demo-SEED, numbered if taken).")
@click.option("--max-turns", type=click.IntRange(1, 500), default=60, show_default=True)
@pass_context
@reports_errors
def demo(ctx: Context, seed: str | None, name: str | None, max_turns: int) -> None:
    """Play a whole seeded game between two bots and print the winner, the board and a summary."""
    run = play_demo(ctx.games, seed, name, max_turns)
    summary, report = run.summary, run.report
    click.echo(render_board(run.state))
    click.echo("")
    click.echo(f"game {run.game}: {summary.turns} turns, {summary.events} events, {summary.dice} dice")
    click.echo(
        f"shots {summary.shots} ({summary.hits} hits), collisions {summary.collisions}, "
        f"fire checks {summary.fire_checks}"
    )
    for ship in summary.ships:
        click.echo(
            f"  {ship['owner']:<5} {ship['ship']:<12} {ship['kind']:<13} "
            f"structure {ship['structure']:>8}  {ship['status']}"
        )
    click.echo(f"winner: {summary.winner or 'none (draw)'} ({summary.reason})")
    click.echo(
        f"verify: {'verified' if report.ok else 'FAILED'} ({report.events} events); log at {run.log.path}"
    )
    if run.state.revealed_seed is not None:  # revealed by the game's end (D2); secret until then
        click.echo(f"seed {run.state.revealed_seed}: `mortecouille demo --seed ...` plays this game again")
    click.echo(f"replay it: mortecouille log {run.game} | mortecouille board {run.game} --turn 1")


COMMANDS: tuple[click.Command, ...] = (demo,)
