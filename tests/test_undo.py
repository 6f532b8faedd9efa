"""Undo before it counts: a purchase withdrawn before sealing (F3) and orders withdrawn
before the turn is resolved (T1), both as events, never an erasure; verify, re-derivation and
the F3 audit keep working on logs that hold them."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from mortecouille.app.games import game_log, load
from mortecouille.events.fleet import ShipWithdrawn
from tests.cli_helpers import ok, run, tree_digest
from tests.forgery import log_bodies, write_forged_events
from tests.test_mortecouille_cli import set_up


def new_game(games: Path) -> Path:
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10",
       "--seed", "s1", "--weak-seed")  # fmt: skip
    return games


def types(games: Path) -> list[object]:
    return [e["type"] for e in log_bodies(games / "g.jsonl")]


# --- F3: withdrawing a purchase -----------------------------------------------------------------


def test_F3_unbuy_refunds_the_ship_and_its_options_and_keeps_both_events(games: Path) -> None:
    new_game(games)
    ok(games, "buy", "g", "Anne", "red-small", "Hope", "--option", "extra-crew")
    _, before = load(game_log(games, "g"))
    paid = before.fleets["Anne"].spent
    assert paid > 0
    out = ok(games, "unbuy", "g", "hope")  # case aside, as buy and place read names
    assert f"Anne withdrew 'Hope'; {paid} refunded, 100000 left" in out
    _, after = load(game_log(games, "g"))
    assert after.fleets["Anne"].spent == 0 and after.fleets["Anne"].ships == ()
    assert "Hope" not in after.ships
    assert types(games)[-2:] == ["ship-bought", "ship-withdrawn"]  # an event, never an erasure
    ok(games, "buy", "g", "Anne", "red-small", "Hope")  # the name is free again
    assert run(games, "verify", "g").exit_code == 0


def test_F3_unbuy_after_sealing_is_refused_naming_F3_and_writes_nothing(games: Path) -> None:
    new_game(games)
    ok(games, "buy", "g", "Anne", "red-small", "Hope")
    ok(games, "seal", "g", "Anne", "--forfeit")
    before = tree_digest(games)
    refused = run(games, "unbuy", "g", "Hope")
    assert refused.exit_code == 2, refused.output
    assert "[F3]" in refused.output and "sealed" in refused.output and "ruling" in refused.output
    assert tree_digest(games) == before


def test_F3_audit_prices_a_fleet_with_a_withdrawal(games: Path) -> None:
    new_game(games)
    ok(games, "buy", "g", "Anne", "red-small", "Hope", "--option", "extra-crew")
    ok(games, "buy", "g", "Anne", "blue-big", "Black Pearl")
    ok(games, "unbuy", "g", "Hope")
    ok(games, "seal", "g", "Anne", "--forfeit")
    _, state = load(game_log(games, "g"))
    kept = state.fleets["Anne"].spent
    out = ok(games, "audit", "g")
    assert f"Anne: recorded {kept}, price list {kept}, budget 100000, forfeited {100000 - kept}  ok" in out
    assert json.loads(ok(games, "audit", "g", "--json"))["ok"] is True


def test_F3_audit_catches_a_refund_larger_than_the_price_paid(games: Path) -> None:
    new_game(games)
    ok(games, "buy", "g", "Anne", "red-small", "Hope")
    ok(games, "unbuy", "g", "Hope")
    events = game_log(games, "g").read()
    forged = [msgspec.structs.replace(e, refund=e.refund + 5000) if isinstance(e, ShipWithdrawn) else e
              for e in events]  # fmt: skip
    write_forged_events(games / "g.jsonl", forged)
    result = run(games, "audit", "g")
    assert result.exit_code == 4, result.output
    assert "withdrawal of 'Hope' refunded" in result.output


# --- T1: withdrawing orders ---------------------------------------------------------------------


def test_T1_unorder_withdraws_a_ships_orders_before_the_turn_is_resolved(games: Path) -> None:
    set_up(games)
    ok(games, "order", "g", "Hope", "advance")
    ok(games, "unorder", "g", "hope")
    _, state = load(game_log(games, "g"))
    assert "Hope" not in state.orders
    assert types(games)[-2:] == ["order-given", "order-withdrawn"]  # an event, never an erasure
    ok(games, "order", "g", "Hope", "idle")  # no --replace needed: Hope has no orders again
    for ship in ("Black Pearl", "Kraken"):
        ok(games, "order", "g", ship, "idle")
    ok(games, "resolve", "g")
    assert run(games, "verify", "g").exit_code == 0  # verify re-derives the turn
    assert "Hope's orders for turn 1 are withdrawn" in ok(games, "explain", "g", "--turn", "1")


def test_T1_unorder_after_the_turn_is_resolved_is_refused_naming_T1(games: Path) -> None:
    set_up(games)
    for ship in ("Hope", "Black Pearl", "Kraken"):
        ok(games, "order", "g", ship, "idle")
    ok(games, "resolve", "g")
    before = tree_digest(games)
    refused = run(games, "unorder", "g", "Hope")
    assert refused.exit_code == 2 and "[T1]" in refused.output, refused.output
    assert "carried out" in refused.output
    assert tree_digest(games) == before


def test_T1_unorder_of_a_ship_without_orders_is_refused(games: Path) -> None:
    set_up(games)
    before = tree_digest(games)
    refused = run(games, "unorder", "g", "Hope")
    assert refused.exit_code == 2 and "[T1]" in refused.output and "no orders" in refused.output
    assert tree_digest(games) == before
