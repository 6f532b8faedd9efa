"""Fleet commands of a mortecouille game: buy, equip, seal (F1-F3), sheet (F4) and audit (F3)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

import click
import msgspec

from mortecouille.app.commands import run_command
from mortecouille.app.games import game_log, load
from mortecouille.app.requests.bodies import BuyRequest, EquipRequest, SealRequest, UnbuyRequest
from mortecouille.app.requests.commands import AT_THE_TABLE, builder, decode, for_player
from mortecouille.cli.receipt_output import echo_receipt, receipts_option
from mortecouille.cli.referee_commands import price_text
from mortecouille.cli.shared import Context, echo_text, pass_context, reports_errors, typed_as
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.fleet.catalogue import catalogue_for
from mortecouille.core.fleet.commands import (
    find_purchase,
    fleet_of,
    resolve_player,
)
from mortecouille.core.fleet.purchase import FleetSheet, OptionLine, ShipSheet, status_sheet
from mortecouille.core.questions import asked_of
from mortecouille.core.state import GameState
from mortecouille.events.fleet import FleetEquipped, FleetSealed, ShipBought, ShipEquipped, ShipWithdrawn
from mortecouille.replays.reading.audit import AuditReport, audit_events

#: ``audit`` exits with this when a price disagrees with the list, like ``verify`` on a bad log.
AUDIT_MISMATCH_EXIT = 4


def _options_text(options: tuple[str, ...]) -> str:
    return f" with {', '.join(options)}" if options else ""


def _buy_epilog() -> str:
    """``buy --help``'s kinds and options, from the price list itself (``prices`` has it all)."""
    catalogue = catalogue_for()
    kinds = [f"  {k.id} ({k.french_name}): {k.price}" for k in catalogue.ships.values()]
    options = [
        f"  {o.id} ({o.french_name}): {price_text(o)}"
        for o in catalogue.options.values()
        if o.scope == "ship"
    ]
    return "\n".join(
        ["\b", "KIND (id or French name): price", *kinds, "--option (id or French name): price", *options]
        + ["\b", "Fleet options are bought with equip --fleet; mortecouille prices lists everything."]
    )


@click.command(epilog=_buy_epilog())
@click.argument("game")
@click.argument("player")
@click.argument("kind")
@click.argument("name")
@click.option(
    "--option", "options", multiple=True, help="An individual option, id or French name (repeatable)."
)
@receipts_option
@pass_context
@reports_errors
def buy(
    ctx: Context,
    game: str,
    player: str,
    kind: str,
    name: str,
    options: tuple[str, ...],
    receipts_file: Path | None,
) -> None:
    """PLAYER buys a ship of KIND called NAME, with its options (F1-F3). KIND may be French."""
    with typed_as({"ship": "NAME", "kind": "KIND", "options": "--option"}):
        request = decode(BuyRequest, {"ship": name, "kind": kind, "options": list(options)})
        outcome = run_command(game_log(ctx.store, game), builder(for_player(player), request))
    appended, after = outcome
    bought = appended[0]
    assert isinstance(bought, ShipBought)
    left = after.fleets[bought.player].money_left
    click.echo(
        f"{bought.player} bought {bought.kind} {bought.ship!r}{_options_text(bought.options)} "
        f"for {bought.price}; {left} left"
    )
    echo_receipt(outcome, receipts_file)


@click.command()
@click.argument("game")
@click.argument("target", metavar="SHIP|PLAYER")
@click.argument("option")
@click.option("--fleet", "for_fleet", is_flag=True, help="TARGET is a player: buy the fleet option (F2).")
@receipts_option
@pass_context
@reports_errors
def equip(
    ctx: Context, game: str, target: str, option: str, for_fleet: bool, receipts_file: Path | None
) -> None:
    """Fit OPTION to the bought ship SHIP, or with --fleet buy it for all of PLAYER's ships (F2)."""
    log_ = game_log(ctx.store, game)
    with typed_as({"ship": "SHIP|PLAYER", "option": "OPTION"}):
        typed = {"option": option} if for_fleet else {"option": option, "ship": target}
        request = decode(EquipRequest, typed)
        outcome = run_command(log_, builder(for_player(target) if for_fleet else AT_THE_TABLE, request))
    appended, after = outcome
    bought = appended[0]
    if isinstance(bought, FleetEquipped):
        what = f"fleet option {bought.option}"
    elif isinstance(bought, ShipEquipped):
        what = f"{bought.option} for {bought.ship!r}"
    else:
        raise TypeError(f"equip appended {type(bought).__name__}")
    left = after.fleets[bought.player].money_left
    click.echo(f"{bought.player} bought {what} for {bought.price}; {left} left")
    echo_receipt(outcome, receipts_file)


@click.command()
@click.argument("game")
@click.argument("player")
@click.option("--forfeit", is_flag=True, help="Seal even though the money left could still buy something.")
@receipts_option
@pass_context
@reports_errors
def seal(ctx: Context, game: str, player: str, forfeit: bool, receipts_file: Path | None) -> None:
    """Close PLAYER's purchases so the ships can be placed (F3)."""
    request = decode(SealRequest, {"forfeit": forfeit})
    outcome = run_command(game_log(ctx.store, game), builder(for_player(player), request))
    sealed = outcome.events[0]
    assert isinstance(sealed, FleetSealed)
    click.echo(f"sealed {sealed.player}'s fleet; {sealed.forfeited} forfeited")
    echo_receipt(outcome, receipts_file)


@click.command()
@click.argument("game")
@click.argument("ship")
@receipts_option
@pass_context
@reports_errors
def unbuy(ctx: Context, game: str, ship: str, receipts_file: Path | None) -> None:
    """Withdraw the purchase of SHIP, refunding it and its options, before its fleet is sealed (F3).

    Logged as an event: the purchase and its withdrawal both stay in the log."""
    with typed_as({"ship": "SHIP"}):
        request = decode(UnbuyRequest, {"ship": ship})
        outcome = run_command(game_log(ctx.store, game), builder(AT_THE_TABLE, request))
    appended, after = outcome
    withdrawn = appended[0]
    assert isinstance(withdrawn, ShipWithdrawn)
    left = after.fleets[withdrawn.player].money_left
    click.echo(f"{withdrawn.player} withdrew {withdrawn.ship!r}; {withdrawn.refund} refunded, {left} left")
    echo_receipt(outcome, receipts_file)


# --- sheet (F4) ------------------------------------------------------------------------------


def sheets_for(state: GameState, which: str | None) -> list[FleetSheet]:
    """The F4 sheets asked for: every fleet, one player's, or one ship's (within its fleet's)."""
    if not asked_of(state).buys_fleets:
        raise RuleViolation(
            "F4", f"{state.game!r} is a {state.ruleset} game: status sheets are for mortecouille"
        )
    damage: Mapping[str, int] = {sid: int(ship.damage) for sid, ship in state.ships.items()}
    if which is None:
        return [status_sheet(fleet_of(state, player), damage) for player in state.players]
    try:
        player = resolve_player(state, which)
    except BadInput:
        try:
            fleet, purchase = find_purchase(state, which)
        except BadInput:
            raise BadInput(
                "SHIP|PLAYER", f"{which!r} is neither a player nor a ship of {state.game!r}"
            ) from None
        sheet = status_sheet(fleet, damage)
        return [
            msgspec.structs.replace(sheet, ships=tuple(s for s in sheet.ships if s.name == purchase.name))
        ]
    return [status_sheet(fleet_of(state, player), damage)]


def _option_text(line: OptionLine) -> str:
    return f"{line.french_name} ({line.english_name}, {line.price})"


def _ship_lines(ship: ShipSheet) -> list[str]:
    cannons = ship.cannons
    options = "; ".join(_option_text(o) for o in ship.options) or "-"
    return [
        f"  {ship.name}: {ship.type_french} / {ship.type_english} ({ship.ship_class})",
        f"    structure {ship.structure_current}/{ship.structure_max}  speed {ship.speed}  "
        f"damage {ship.normal_damage}/{ship.burst_damage} (normal/burst)",
        f"    cannons port {cannons.port} starboard {cannons.starboard} "
        f"bow {cannons.bow} stern {cannons.stern}",
        f"    options: {options}",
        f"    price {ship.price}",
    ]


def _sheet_text(sheet: FleetSheet) -> str:
    status = "sealed" if sheet.sealed else "open"
    lines = [f"{sheet.player} ({status}, rules {sheet.rules_version})"]
    for ship in sheet.ships:
        lines.extend(_ship_lines(ship))
    if not sheet.ships:
        lines.append("  no ships")
    fleet_options = "; ".join(_option_text(o) for o in sheet.fleet_options) or "-"
    lines.append(f"  fleet options: {fleet_options}")
    money = f"{sheet.money_left} of {sheet.budget}"
    # sealed, the money not spent is given up (F3), not money still to spend
    money = f"{money} forfeited at the seal" if sheet.sealed and sheet.money_left else f"money left {money}"
    lines.append(f"  fleet total {sheet.total}; {money}")
    return "\n".join(lines)


@click.command()
@click.argument("game")
@click.argument("which", metavar="[SHIP|PLAYER]", required=False)
@click.option("--json", "as_json", is_flag=True)
@pass_context
@reports_errors
def sheet(ctx: Context, game: str, which: str | None, as_json: bool) -> None:
    """The fiche d'état (F4) of every fleet, of one PLAYER's, or of one SHIP within its fleet."""
    _, state = load(game_log(ctx.store, game))
    sheets = sheets_for(state, which)
    if as_json:
        body = {"game": state.game, "fleets": msgspec.to_builtins(sheets)}
        click.echo(msgspec.json.encode(body).decode())
        return
    echo_text("\n\n".join(_sheet_text(s) for s in sheets))


# --- audit (F3) ------------------------------------------------------------------------------


def _audit_text(report: AuditReport) -> str:
    lines = [f"{report.game}: priced against rules {report.rules_version}"]
    for fleet in report.fleets:
        verdict = "ok" if fleet.ok else "MISMATCH"
        forfeited = f", forfeited {fleet.forfeited}" if fleet.forfeited is not None else ", not sealed"
        lines.append(
            f"  {fleet.player}: recorded {fleet.recorded}, price list {fleet.recomputed}, "
            f"budget {fleet.budget}{forfeited}  {verdict}"
        )
    for finding in report.findings:
        where = f"seq {finding.seq}" if finding.seq is not None else "log"
        lines.append(f"FAIL {where} {finding.player or '-'}: {finding.detail}")
    lines.append(f"{report.game}: " + ("audit ok" if report.ok else f"{len(report.findings)} mismatch(es)"))
    return "\n".join(lines)


@click.command()
@click.argument("game")
@click.option("--json", "as_json", is_flag=True)
@pass_context
@reports_errors
def audit(ctx: Context, game: str, as_json: bool) -> None:
    """Price every fleet again from GAME's purchases against its rules version (F3). Exit 4 on a mismatch."""
    # Read, not folded: the audit must report a log whose purchases would not fold.
    report = audit_events(game_log(ctx.store, game).read())
    if as_json:
        body = {"ok": report.ok, **msgspec.to_builtins(report)}
        click.echo(msgspec.json.encode(body).decode())
    else:
        echo_text(_audit_text(report))
    if not report.ok:
        sys.exit(AUDIT_MISMATCH_EXIT)


COMMANDS: tuple[click.Command, ...] = (buy, unbuy, equip, seal, sheet, audit)
