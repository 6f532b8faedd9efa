"""``mortecouille demo``: a whole seeded game between the two built-in bots, on disk, verified."""

from __future__ import annotations

import shlex

import click

from mortecouille.app.botgame import play_demo
from mortecouille.app.games import describe_location
from mortecouille.cli.shared import Context, pass_context, reports_errors
from mortecouille.core.narration import ending_text
from mortecouille.replays.pictures.board_text import render_board

#: The turns a demo plays at most unless told (a longer game ends by the referee's decision).
DEFAULT_MAX_TURNS = 60


@click.command()
@click.option(
    "--seed", default=None, help="The dice seed: same seed, same game (default: a random one, shown)."
)
@click.option("--game", "name", default=None, help="Game name (default demo-SEED, numbered if taken).")
@click.option("--max-turns", type=click.IntRange(1, 500), default=DEFAULT_MAX_TURNS, show_default=True)
@pass_context
@reports_errors
def demo(ctx: Context, seed: str | None, name: str | None, max_turns: int) -> None:
    """Play a whole seeded game between two bots and print the winner, the board and a summary."""
    run = play_demo(ctx.store, seed, name, max_turns)
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
    if summary.reason is None:
        click.echo(f"not over after {summary.turns} turns (--max-turns)")
    else:
        click.echo(f"game over: {ending_text(summary.reason, summary.winner).render()}")
    verdict = "verified" if report.ok else "FAILED"
    click.echo(f"verify: {verdict} ({report.events} events); log at {describe_location(run.log)}")
    for line in next_commands(store_option(ctx), run.game, run.state.revealed_seed, max_turns):
        click.echo(line)


def store_option(ctx: Context) -> str:
    """The option naming the store the demo ran in: ``--games-dir DIR`` for a file store (as the
    hint always read), ``--store URL`` for another (its password, if any, left out)."""
    directory = ctx.games_directory
    if directory is not None:
        return f"--games-dir {shlex.quote(str(directory))}"
    return f"--store {shlex.quote(ctx.store.url)}"


def next_commands(store: str, game: str, seed: str | None, max_turns: int) -> list[str]:
    """The closing hint: commands that run as printed, from the folder the demo ran in (a test runs
    each one). The store is named (``store``: its option), since the demo may have been told another one."""
    folder = f"mortecouille {store}"
    name = shlex.quote(game)
    lines = []
    if seed is not None:  # revealed by the game's end (D2); secret until then
        turns = "" if max_turns == DEFAULT_MAX_TURNS else f" --max-turns {max_turns}"
        lines.append(f"play it again: {folder} demo --seed {shlex.quote(seed)}{turns}")
    lines += [
        "look back:",
        f"  {folder} board {name} --turn 1",
        f"  {folder} explain {name} --turn 1",
        f"  {folder} export {name} --html {shlex.quote(game + '.html')}",
    ]
    return lines


COMMANDS: tuple[click.Command, ...] = (demo,)
