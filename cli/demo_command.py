"""``mortecouille demo``: a whole seeded game between the two built-in bots, on disk, verified."""

from __future__ import annotations

import click

from mortecouille.app.botgame import demo_game, play_turns, set_up_demo_fleets, summarise
from mortecouille.app.session import KnownState, create_game, game_log, run_command
from mortecouille.cli.app import Context, cli, pass_context, reports_errors
from mortecouille.core.dice import TableDice
from mortecouille.core.game import Command, decide, fold
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.replays.pictures.board_text import render_board
from mortecouille.replays.reading.verify import verify_log


@cli.command()
@click.option("--seed", default="demo", show_default=True, help="The dice seed: same seed, same game.")
@click.option("--game", "name", default=None, help="Game name (default demo-SEED, numbered if taken).")
@click.option("--max-turns", type=click.IntRange(1, 500), default=60, show_default=True)
@pass_context
@reports_errors
def demo(ctx: Context, seed: str, name: str | None, max_turns: int) -> None:
    """Play a whole seeded game between two bots and print the winner, the board and a summary."""
    base = name or f"demo-{seed}"
    game, number = base, 1
    while game_log(ctx.games, game).exists():
        if name is not None:
            click.echo(f"error: game {name!r} already exists", err=True)
            raise SystemExit(3)
        number += 1
        game = f"{base}-{number}"
    log_ = game_log(ctx.games, game)
    stamped = create_game(log_, decide(EMPTY, demo_game(game, seed), TableDice()), seed)
    known = KnownState(next_seq=len(stamped), last_hash=stamped[-1].hash, state=fold(stamped))

    def apply(command: Command) -> list[Event]:
        nonlocal known
        appended, state = run_command(log_, lambda _: command, known=known)
        if appended:
            known = KnownState(next_seq=appended[-1].seq + 1, last_hash=appended[-1].hash, state=state)
        return appended

    def current() -> GameState:
        return known.state

    set_up_demo_fleets(apply)
    state = play_turns(apply, current, seed, max_turns)
    events = log_.read()
    summary = summarise(events, state)
    click.echo(render_board(state))
    click.echo("")
    click.echo(f"game {game}: {summary.turns} turns, {summary.events} events, {summary.dice} dice")
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
    report = verify_log(log_, events=events)
    click.echo(
        f"verify: {'verified' if report.ok else 'FAILED'} ({report.events} events); log at {log_.path}"
    )
    click.echo(f"replay it: mortecouille log {game} | mortecouille board {game} --turn 1")
