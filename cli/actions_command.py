"""``mortecouille actions GAME SHIP``: what SHIP may be ordered to do now, each order one line in
the ``order`` command's grammar (or the blockade tokens it may take), with its wind cost or its
distance and chance to hit; ``--json`` prints the read model's answer, as the service sends it."""

from __future__ import annotations

import shlex

import click
import msgspec

from mortecouille.app.games import game_log, load
from mortecouille.app.legal_actions import Combining, LegalAction, ShipActions, actions_for
from mortecouille.app.seats import REFEREE
from mortecouille.cli.shared import Context, echo_lines, pass_context, reports_errors

#: What each blockade token does (P1), beside the token.
TOKEN_MEANINGS = {"F": "forward", "L": "turn left", "R": "turn right", "-": "no token"}


@click.command(name="actions")
@click.argument("game")
@click.argument("ship")
@click.option("--json", "as_json", is_flag=True, help="The answer as JSON, as the service sends it.")
@pass_context
@reports_errors
def actions(ctx: Context, game: str, ship: str, as_json: bool) -> None:
    """The orders SHIP may be given now, with wind costs and odds (T1)."""
    events, _ = load(game_log(ctx.store, game))
    # what the referee's seat may know: orders and purchases not revealed yet are left out
    offered = actions_for(events, REFEREE, ship)
    if as_json:
        click.echo(msgspec.json.encode(offered).decode())
        return
    echo_lines(action_lines(offered))


def action_lines(offered: ShipActions) -> list[str]:
    """The answer in words: a heading, then each order (or token) with its note after ``#``, as a
    shell would ignore it, then how orders join."""
    game, ship = shlex.quote(offered.game), shlex.quote(offered.ship)
    owner = f" ({offered.owner})" if offered.owner else ""
    heading = f"{offered.ship}{owner}, turn {offered.turn}"
    if offered.wind is not None:
        heading += f", {offered.wind} wind point{'s' if offered.wind != 1 else ''} held"
    lines = [heading]
    if offered.ordered:
        lines.append("its orders for this turn are given: add --replace to change them")
    if offered.blocked is not None:
        return [*lines, f"nothing now: {offered.blocked.render()}"]
    if offered.rounds is not None:  # a ship given tokens, one per round (P1)
        lines.append(f"give 1 to {offered.rounds} tokens, one per round (P1): tokens {game} {ship} TOKEN ...")
        return [*lines, *(f"  {token}  # {TOKEN_MEANINGS.get(token, token)}" for token in offered.tokens)]
    lines.append(f"give one, or several joined with +: order {game} {ship} ACTION [+ ACTION ...]")
    width = max(len(action.order) for action in offered.actions)
    lines.extend(f"  {action.order.ljust(width)}  # {_note(action)}" for action in offered.actions)
    if offered.combining is not None:
        lines.append(_combining(offered.combining))
    return lines


def _note(action: LegalAction) -> str:
    rules = ", ".join(action.rules)
    if action.cost is not None:
        short = "" if action.affordable else ", more than held now"
        return f"{action.cost} wind point{'s' if action.cost != 1 else ''}{short} ({rules})"
    if action.odds is not None:
        return f"distance {action.distance}, {action.odds:.1%} to hit ({rules})"
    return f"({rules})"


def _combining(combining: Combining) -> str:
    if combining.actions == 0:
        return "idle alone (X1)"
    shots = f"; up to {combining.catapult_shots} catapult shot(s) beside" if combining.catapult_shots else ""
    kinds, rules = ", ".join(combining.action_kinds), ", ".join(combining.rules)
    return (
        f"join: at most {combining.actions} action(s) of different kinds ({kinds}), "
        f"at most {combining.moving} moving{shots}; idle only without actions ({rules})"
    )


COMMANDS: tuple[click.Command, ...] = (actions,)
