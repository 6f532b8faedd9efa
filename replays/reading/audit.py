"""``audit``: price every fleet of a game again from its purchase events (F3).

The hash chain proves a log was not edited after it was written; it cannot prove
the prices were right when they were written (a log re-chained after an edit is
a valid chain). The audit reads the rules version from ``GameCreated`` and prices
every purchase against that version's list (:mod:`mortecouille.core.fleet.catalogue`), so a price
that disagrees with the list, a fleet that spent more than its budget, or a seal
that forfeited the wrong amount is reported with its ``seq``.

It works on the events alone, never through ``evolve``, so a log that would not
fold (an unknown kind, say) is still reported line by line instead of failing.
"""

from __future__ import annotations

import msgspec

from mortecouille.core.errors import BadInput
from mortecouille.core.fleet.catalogue import Catalogue, catalogue_for
from mortecouille.events.base import Event
from mortecouille.events.fleet import FleetEquipped, FleetSealed, ShipBought, ShipEquipped, ShipWithdrawn
from mortecouille.events.game import GameCreated


class AuditFinding(msgspec.Struct, frozen=True, kw_only=True):
    """One disagreement between the log and the price list (F3)."""

    seq: int | None
    player: str | None
    detail: str


class FleetAudit(msgspec.Struct, frozen=True, kw_only=True):
    """One player's money: what the log says was paid and what the price list says (F3)."""

    player: str
    budget: int
    recorded: int
    recomputed: int
    forfeited: int | None
    sealed: bool

    @property
    def ok(self) -> bool:
        return self.recorded == self.recomputed


class AuditReport(msgspec.Struct, kw_only=True):
    game: str
    rules_version: str
    fleets: list[FleetAudit] = []
    findings: list[AuditFinding] = []

    @property
    def ok(self) -> bool:
        return not self.findings


class _Tally(msgspec.Struct, kw_only=True):
    """A player's purchases as the audit reads them: ship name -> kind, and the two sums."""

    kinds: dict[str, str] = {}
    #: each ship still bought -> (recorded, list price) of it and its individual options, which a
    #: withdrawal takes back (F3)
    paid: dict[str, tuple[int, int]] = {}
    recorded: int = 0
    recomputed: int = 0
    forfeited: int | None = None
    sealed_at: int | None = None


def _list_price(catalogue: Catalogue, event: Event, kinds: dict[str, str]) -> int:
    """What ``event``'s purchase costs on the list; KeyError or BadInput if it names an unknown id."""
    if isinstance(event, ShipBought):
        ship = catalogue.ships[event.kind]
        return ship.price + sum(catalogue.option_price(o, ship.id) for o in event.options)
    if isinstance(event, ShipEquipped):
        return catalogue.option_price(event.option, kinds[event.ship])
    if isinstance(event, FleetEquipped):
        return catalogue.options[event.option].price
    raise TypeError(f"{type(event).__name__} is not a purchase")


def _describe(event: Event) -> str:
    if isinstance(event, ShipBought):
        options = f" with {', '.join(event.options)}" if event.options else ""
        return f"{event.kind} {event.ship!r}{options}"
    if isinstance(event, ShipEquipped):
        return f"{event.option} for {event.ship!r}"
    if isinstance(event, FleetEquipped):
        return f"fleet option {event.option}"
    if isinstance(event, ShipWithdrawn):
        return f"withdrawal of {event.ship!r}"
    return type(event).__name__


def _withdraw(report: AuditReport, tally: _Tally, event: ShipWithdrawn) -> None:
    """A withdrawn purchase leaves both sums; its refund must be what was recorded for it (F3)."""
    if tally.sealed_at is not None:
        detail = f"{_describe(event)} after the fleet was sealed at seq {tally.sealed_at}"
        report.findings.append(AuditFinding(seq=event.seq, player=event.player, detail=detail))
    if event.ship not in tally.paid:
        detail = f"{_describe(event)}: {event.player} holds no bought ship of that name"
        report.findings.append(AuditFinding(seq=event.seq, player=event.player, detail=detail))
        tally.recorded -= event.refund
        return
    recorded, listed = tally.paid.pop(event.ship)
    del tally.kinds[event.ship]
    if event.refund != recorded:
        detail = f"{_describe(event)} refunded {event.refund}, but {recorded} was paid for it"
        report.findings.append(AuditFinding(seq=event.seq, player=event.player, detail=detail))
    tally.recorded -= event.refund
    tally.recomputed -= listed


def audit_events(events: list[Event]) -> AuditReport:
    """Recompute every fleet's cost from ``events`` against the game's own price list (F3)."""
    if not events or not isinstance(events[0], GameCreated):
        report = AuditReport(game="?", rules_version="?")
        report.findings.append(AuditFinding(seq=0, player=None, detail="the first event is not game-created"))
        return report
    created = events[0]
    report = AuditReport(game=created.game, rules_version=created.rules_version)
    purchases = [
        e
        for e in events
        if isinstance(e, (ShipBought, ShipEquipped, FleetEquipped, FleetSealed, ShipWithdrawn))
    ]
    if not purchases:
        return report
    try:
        catalogue = catalogue_for(created.rules_version)
    except BadInput as error:
        report.findings.append(AuditFinding(seq=0, player=None, detail=f"cannot price this game: {error}"))
        return report

    tallies: dict[str, _Tally] = {}
    for event in purchases:
        if event.player not in tallies and event.player not in created.players:
            report.findings.append(
                AuditFinding(seq=event.seq, player=event.player, detail="not a player of this game")
            )
        tally = tallies.setdefault(event.player, _Tally())
        if isinstance(event, FleetSealed):
            tally.forfeited, tally.sealed_at = event.forfeited, event.seq
            expected_left = created.budget - tally.recorded
            if event.forfeited != expected_left:
                detail = (
                    f"sealed forfeiting {event.forfeited}, but the budget {created.budget} "
                    f"less the {tally.recorded} paid leaves {expected_left}"
                )
                report.findings.append(AuditFinding(seq=event.seq, player=event.player, detail=detail))
            continue
        if isinstance(event, ShipWithdrawn):
            _withdraw(report, tally, event)
            continue
        if tally.sealed_at is not None:
            detail = f"{_describe(event)} bought after the fleet was sealed at seq {tally.sealed_at}"
            report.findings.append(AuditFinding(seq=event.seq, player=event.player, detail=detail))
        if isinstance(event, ShipBought):
            tally.kinds[event.ship] = event.kind
        if isinstance(event, ShipEquipped) and event.ship not in tally.kinds:
            detail = f"{_describe(event)}: {event.player} bought no ship of that name before"
            report.findings.append(AuditFinding(seq=event.seq, player=event.player, detail=detail))
            tally.recorded += event.price
            continue
        try:
            list_price = _list_price(catalogue, event, tally.kinds)
        except (KeyError, BadInput) as error:
            detail = f"{_describe(event)}: not on the {catalogue.version} price list ({error})"
            report.findings.append(AuditFinding(seq=event.seq, player=event.player, detail=detail))
            list_price = 0
        tally.recorded += event.price
        tally.recomputed += list_price
        if isinstance(event, (ShipBought, ShipEquipped)):
            before = tally.paid.get(event.ship, (0, 0))
            tally.paid[event.ship] = (before[0] + event.price, before[1] + list_price)
        if list_price != event.price and list_price:
            detail = (
                f"{_describe(event)} recorded at {event.price}, "
                f"the {catalogue.version} price list says {list_price}"
            )
            report.findings.append(AuditFinding(seq=event.seq, player=event.player, detail=detail))
        if tally.recorded > created.budget >= tally.recorded - event.price:
            detail = f"{tally.recorded} paid exceeds the budget of {created.budget}"
            report.findings.append(AuditFinding(seq=event.seq, player=event.player, detail=detail))

    for player, tally in sorted(tallies.items()):
        report.fleets.append(
            FleetAudit(
                player=player,
                budget=created.budget,
                recorded=tally.recorded,
                recomputed=tally.recomputed,
                forfeited=tally.forfeited,
                sealed=tally.sealed_at is not None,
            )
        )
    return report
