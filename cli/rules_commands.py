"""Commands that answer rule questions without a game: hit odds (S3, S4, K)."""

from __future__ import annotations

import click
import msgspec

from mortecouille.cli.shared import reports_errors
from mortecouille.core.errors import BadInput
from mortecouille.core.mortecouille.gunnery import (
    OddsCell,
    catapult_odds_cell,
    odds_cell,
    odds_tables,
    render_odds_table,
)


def describe_cell(cell: OddsCell) -> str:
    shooter = "catapult" if cell.cannons is None else f"{cell.cannons} cannon(s)"
    if cell.needed == "hit":
        need = "an automatic hit"
    elif cell.needed == "miss":
        need = "an automatic miss"
    else:
        need = f"needs {cell.needed} or more on {cell.dice}d6" + (f" + {cell.bonus}" if cell.bonus else "")
    return (
        f"[{cell.rule}] {shooter} at distance {cell.distance}: {need}; "
        f"P(hit) = {cell.probability} = {cell.probability_float:.4f}"
    )


@click.command()
@click.option("--cannons", type=int, default=None, help="Cannons firing (1-5); omit with --catapult.")
@click.option("--distance", type=int, default=None, help="Distance in king steps (B3).")
@click.option("--burst", is_flag=True, help="Burst fire (S4).")
@click.option("--catapult", is_flag=True, help="A catapult shot (K).")
@click.option("--elite", is_flag=True, help="Elite gunner: +1d6 (F2).")
@click.option(
    "--bonus",
    type=click.IntRange(0, 20),
    default=0,
    show_default=True,
    help="Numerical superiority bonus (S6).",
)
@click.option("--json", "as_json", is_flag=True)
@reports_errors
def odds(
    cannons: int | None,
    distance: int | None,
    burst: bool,
    catapult: bool,
    elite: bool,
    bonus: int,
    as_json: bool,
) -> None:
    """Exact chance to hit, by enumerating every throw; without --distance, the whole S3, S4 and K tables."""
    if distance is None:
        if cannons is not None:
            raise BadInput("--distance", "give the distance with --cannons (or neither, for the tables)")
        tables = odds_tables(elite=elite, bonus=bonus)
        if as_json:
            click.echo(
                msgspec.json.encode(
                    [msgspec.to_builtins(t, builtin_types=()) for t in tables], enc_hook=str
                ).decode()
            )
        else:
            click.echo("\n\n".join(render_odds_table(t) for t in tables))
        return
    if catapult:
        if cannons is not None or burst:
            raise BadInput("--catapult", "a catapult shot takes no --cannons or --burst (K)")
        cell = catapult_odds_cell(distance, elite=elite, bonus=bonus)
    else:
        if cannons is None:
            raise BadInput("--cannons", "say how many cannons fire (1-5), or use --catapult")
        if not 1 <= cannons <= 5:
            raise BadInput("--cannons", f"{cannons} is outside 1-5 (S2)")
        cell = odds_cell(cannons, distance, burst=burst, elite=elite, bonus=bonus)
    if as_json:
        body = msgspec.to_builtins(cell, enc_hook=str)
        click.echo(msgspec.json.encode(body).decode())
    else:
        click.echo(describe_cell(cell))


COMMANDS: tuple[click.Command, ...] = (odds,)
