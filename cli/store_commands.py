"""Whole logs out of a store and between stores: ``export-log`` and ``store copy``.

Both move a game's lines as bytes (mortecouille.app.store_copy): the JSONL a file store would
hold, same hashes, whichever store the game is in.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mortecouille.app.games import game_log, open_games
from mortecouille.app.outputs import write_output
from mortecouille.app.store_copy import copy_games, verified_bytes
from mortecouille.cli.shared import Context, echo_lines, pass_context, reports_errors
from mortecouille.core.limits import shown

#: The names an exported log may have: what a file store calls a log.
JSONL_SUFFIXES = (".jsonl",)


@click.command(name="export-log")
@click.argument("game")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the log to this .jsonl file (default: standard output).",
)
@click.option("--force", is_flag=True, help="Replace the -o file if it exists.")
@pass_context
@reports_errors
def export_log(ctx: Context, game: str, output: Path | None, force: bool) -> None:
    """GAME's log as JSON lines, byte for byte as a file store holds it (same hashes), from any
    store; checked against the store's head first (exit 4 if it is corrupt or tampered)."""
    data = verified_bytes(game_log(ctx.store, game))
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    write_output(output, data, "-o", ctx.games_directory, force, JSONL_SUFFIXES)
    lines = data.count(b"\n")
    click.echo(f"wrote {output} ({lines} lines)", err=True)


@click.group(name="store")
def store_group() -> None:
    """Work on whole stores: copy games from one store to another."""


@store_group.command(name="copy")
@click.option("--from", "source_url", required=True, metavar="URL", help="The store to copy from.")
@click.option("--to", "target_url", required=True, metavar="URL", help="The store to copy into.")
@click.argument("games", nargs=-1)
@reports_errors
def store_copy(source_url: str, target_url: str, games: tuple[str, ...]) -> None:
    """Copy GAME ... (every game when none is named) from one store to another: the lines as
    bytes (never decoded and stamped again), the head, the secret seed and the seat hashes. A game
    already at the target is refused by name (exit 3) and nothing is written for it; a corrupt
    one too (exit 4); the others are copied."""
    source = open_games(source_url, "--from")
    try:
        target = open_games(target_url, "--to")
        try:
            result = copy_games(source, target, games)
        finally:
            target.close()
    finally:
        source.close()
    echo_lines(f"copied {name} ({lines} lines)" for name, lines in result.copied)
    for name, reason, _code in result.refused:
        click.echo(shown(f"refused {name}: {reason}"), err=True)
    click.echo(f"{len(result.copied)} game(s) copied, {len(result.refused)} refused")
    if result.exit_code:
        sys.exit(result.exit_code)


COMMANDS: tuple[click.Command, ...] = (export_log, store_group)
