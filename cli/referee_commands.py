"""What a referee looks up at the table: ``games`` (where every game stands) and
``prices`` (the F1/F2 price list). Both only read."""

from __future__ import annotations

import sys

import click
import msgspec

from mortecouille.app.commands import GameSummary, list_games
from mortecouille.cli.shared import Context, echo_lines, pass_context, reports_errors
from mortecouille.core.fleet.catalogue import Catalogue, OptionSpec, catalogue_for

#: ``games`` exits with this when a log could not be read, like ``verify`` on a bad log.
UNREADABLE_EXIT = 4


def _summary_line(game: GameSummary) -> str:
    if game.problem is not None:
        return f"{game.name}: unreadable: {game.problem}"
    if game.status == "ended":
        return f"{game.name}: {game.ruleset}, {game.position}"
    status = game.status
    waiting = "; ".join(f"{player} ({', '.join(ships)})" for player, ships in sorted(game.waiting.items()))
    return f"{game.name}: {game.ruleset}, turn {game.turn}, {status}" + (
        f"; orders missing: {waiting}" if waiting else ""
    )


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object: {games: [...]}.")
@pass_context
@reports_errors
def games(ctx: Context, as_json: bool) -> None:
    """List the games of the store: ruleset, turn, status, whose orders are missing.

    A log that cannot be read is listed with its problem (run verify on it); exit 4 then."""
    summaries = list_games(ctx.store)
    if as_json:
        click.echo(msgspec.json.encode({"games": summaries}).decode())
    elif not summaries:
        click.echo(f"no games in {ctx.store.url}")
    else:
        echo_lines(_summary_line(game) for game in summaries)
    if any(game.problem is not None for game in summaries):
        sys.exit(UNREADABLE_EXIT)


def price_text(option: OptionSpec) -> str:
    """An option's price as the list states it: extra cannons are priced per cannon added (F2)."""
    return f"{option.price} per cannon added" if option.pricing == "per-added-cannon" else str(option.price)


def _prices_lines(catalogue: Catalogue) -> list[str]:
    lines = [f"price list, rules {catalogue.version}", "ships (F1): id, French / English name, class, price"]
    lines += [
        f"  {k.id:<14} {k.french_name} / {k.english_name}, {k.ship_class}, {k.price}"
        for k in catalogue.ships.values()
    ]
    lines.append("options (F2): id, French / English name, for, price")
    lines += [
        f"  {o.id:<20} {' / '.join((*o.french_names, o.english_name))}, "
        f"{'fleet' if o.scope == 'fleet' else '/'.join(o.allowed_classes) + ' ship'}, {price_text(o)}"
        for o in catalogue.options.values()
    ]
    return lines


@click.command()
@click.option("--json", "as_json", is_flag=True, help="The ship and option tables as JSON.")
@reports_errors
def prices(as_json: bool) -> None:
    """The price list: every ship kind and option with its price and names (F1, F2)."""
    catalogue = catalogue_for()
    if as_json:
        body = {
            "rules_version": catalogue.version,
            "ships": [
                {
                    "id": k.id,
                    "french_name": k.french_name,
                    "english_name": k.english_name,
                    "class": k.ship_class,
                    "price": k.price,
                }
                for k in catalogue.ships.values()
            ],
            "options": [
                {
                    "id": o.id,
                    "french_names": list(o.french_names),
                    "english_name": o.english_name,
                    "scope": o.scope,
                    "classes": list(o.allowed_classes),
                    "price": o.price,
                    "pricing": o.pricing,
                }
                for o in catalogue.options.values()
            ],
        }
        click.echo(msgspec.json.encode(body).decode())
        return
    echo_lines(_prices_lines(catalogue))


COMMANDS: tuple[click.Command, ...] = (games, prices)
