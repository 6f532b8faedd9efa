"""Rules F1-F4 from the command line: buy, equip, seal, place, sheet and audit on real game logs.

Expected numbers are worked out from rules.md by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from mortecouille.app.games import game_log, load
from mortecouille.cli.fleet_commands import sheets_for
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.game import fold
from mortecouille.events.fleet import ShipBought
from mortecouille.events.movement import DamageTaken
from tests.cli_helpers import ok, run, tree_digest
from tests.forgery import log_bodies, write_forged_events


@pytest.fixture
def game(games: Path) -> Path:
    options = ("--seed", "s3cret", "--weak-seed", "--board", "12x10", "--rock", "C5")
    result = run(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", *options)
    assert result.exit_code == 0, result.output
    return games


# --- F1-F2 purchases ---------------------------------------------------------------------------


def test_F1_F2_french_names_are_accepted_and_the_log_stores_canonical_ids(game: Path) -> None:
    out = ok(game, "buy", "g", "Anne", "Rouge small", "Hope", "--option", "Super boulet de canon")
    assert "red-small 'Hope' with super-shot for 10000; 90000 left" in out
    ok(game, "equip", "g", "Hope", "Perfectionnement de coque niveau 1")
    ok(game, "equip", "g", "anne", "Tentative suicide universel", "--fleet")
    bought, fitted, fleet = log_bodies(game / "g.jsonl")[1:]
    assert (bought["type"], bought["kind"], bought["options"], bought["price"]) == (
        "ship-bought",
        "red-small",
        ["super-shot"],
        10000,
    )
    assert (fitted["type"], fitted["ship"], fitted["option"], fitted["price"]) == (
        "ship-equipped",
        "Hope",
        "hull-1",
        5000,
    )
    assert (fleet["type"], fleet["player"], fleet["option"], fleet["price"]) == (
        "fleet-equipped",
        "Anne",
        "fireship-fleet",
        20000,
    )
    assert bought["rules"] == ["F1", "F2", "F3"] and fleet["rules"] == ["F2", "F3"]


REFUSALS: list[tuple[list[list[str]], list[str], str]] = [
    # (set-up commands, the refused command, words its message must contain)
    ([["buy", "g", "Anne", "blue-big", "Fury"]], ["buy", "g", "Anne", "green-big", "Gale"], "[F3]"),
    ([], ["buy", "g", "Anne", "red-smal", "Hope"], "did you mean 'red-small'"),
    ([], ["buy", "g", "Anne", "red-small", "Hope", "--option", "super shoot"], "did you mean 'super-shot'"),
    (
        [["buy", "g", "Anne", "red-small", "Hope", "--option", "catapult"]],
        ["equip", "g", "Hope", "Catapulte"],
        "at most once",
    ),
    ([], ["buy", "g", "Anne", "green-small", "Hope", "--option", "hull-4"], "big ships only"),
    (
        [["buy", "g", "Anne", "red-small", "Hope", "--option", "elite-gunner"]],
        ["equip", "g", "Anne", "elite-gunner-fleet", "--fleet"],
        "individual one is owned",
    ),
    (
        [["equip", "g", "Anne", "elite-gunner-fleet", "--fleet"]],
        ["buy", "g", "Anne", "red-small", "Hope", "--option", "Canonnier d'élite"],
        "covers every ship",
    ),
    ([], ["equip", "g", "Anne", "super-shot", "--fleet"], "its fleet variant is super-shot-fleet"),
    (
        [["buy", "g", "Anne", "red-small", "Hope"], ["seal", "g", "Anne", "--forfeit"]],
        ["buy", "g", "Anne", "red-small", "Grace"],
        "sealed",
    ),
    (
        [["buy", "g", "Anne", "red-small", "Hope"], ["seal", "g", "Anne", "--forfeit"]],
        ["equip", "g", "Hope", "siren"],
        "sealed",
    ),
    (
        [["buy", "g", "Anne", "red-small", "Hope"]],
        ["buy", "g", "Bart", "blue-small", "hope"],
        "already in the game",
    ),
    ([], ["buy", "g", "Zed", "red-small", "Hope"], "PLAYER"),
    ([], ["equip", "g", "Hope", "siren"], "SHIP"),
    ([["buy", "g", "Anne", "blue-big", "Fury"]], ["seal", "g", "Anne"], "spend it or seal with a forfeit"),
    ([["buy", "g", "Anne", "red-small", "Hope"]], ["place", "g", "Hope", "B2"], "not sealed"),
    (
        [["buy", "g", "Anne", "red-small", "Hope"], ["seal", "g", "Anne", "--forfeit"]],
        ["place", "g", "Hope", "B2"],
        "[F3] a ship is placed once every fleet is sealed (the fleets are secret until then); not sealed yet: Bart",
    ),
    (
        [["buy", "g", "Anne", "red-small", "Hope"], ["seal", "g", "Anne", "--forfeit"], ["seal", "g", "Bart", "--forfeit"]],
        ["place", "g", "Hope", "C5"],
        "[B4]",
    ),
    ([["seal", "g", "Anne", "--forfeit"], ["seal", "g", "Bart", "--forfeit"]], ["place", "g", "Ghost", "B2"], "SHIP"),
    ([], ["sheet", "g", "Nobody"], "SHIP|PLAYER"),
]


@pytest.mark.parametrize(
    ("setup", "refused", "words"), REFUSALS, ids=[" ".join(r[1][:1] + r[1][2:]) for r in REFUSALS]
)
def test_F1_F3_a_refusal_exits_2_with_its_reason_and_leaves_the_games_dir_unchanged(
    game: Path, setup: list[list[str]], refused: list[str], words: str
) -> None:
    for command in setup:
        ok(game, *command)
    before = tree_digest(game)
    result = run(game, *refused)
    assert result.exit_code == 2, result.output
    assert words in result.output
    assert tree_digest(game) == before


def test_F1_buying_in_a_blockade_game_is_refused_citing_F1(games: Path) -> None:
    ok(games, "new", "b", "--players", "Anne,Bart", "--ruleset", "blockade", "--seed", "x", "--weak-seed")
    before = tree_digest(games)
    result = run(games, "buy", "b", "Anne", "red-small", "Hope")
    assert result.exit_code == 2 and "[F1]" in result.output
    assert tree_digest(games) == before


# --- F4 status sheets ----------------------------------------------------------------------------


def buy_anne_fleet(games: Path) -> None:
    ok(games, "equip", "g", "Anne", "fireship-fleet", "--fleet")  # 20000
    # red small 5000 + super shot 5000 + hull-1 5000; then extra cannons on both sides, 2 x 5000
    ok(games, "buy", "g", "Anne", "red-small", "Hope", "--option", "super-shot", "--option", "hull-1")
    ok(games, "equip", "g", "Hope", "extra-cannons")
    ok(
        games, "buy", "g", "Anne", "Vert small", "Grace", "--option", "Perfectionnement de coque niv 3"
    )  # 30000


def test_F4_sheet_of_a_player_gives_exact_numbers(game: Path) -> None:
    buy_anne_fleet(game)
    (sheet,) = json.loads(ok(game, "sheet", "g", "Anne", "--json"))["fleets"]
    hope, grace = sheet["ships"]
    assert (hope["name"], hope["type_french"], hope["type_english"]) == ("Hope", "Rouge small", "Red small")
    # 38 + 10 (hull-1); speed 2 + 2; damage 3 + 5 + 4 / 9 + 9 + 6; 2 + 1 cannons a side
    assert (hope["structure_max"], hope["structure_current"], hope["speed"]) == (48, 48, 4)
    assert (hope["normal_damage"], hope["burst_damage"]) == (12, 24)
    assert hope["cannons"] == {"port": 3, "starboard": 3, "bow": 0, "stern": 0}
    assert [o["french_name"] for o in hope["options"]] == [
        "Super boulet de canon individuel",
        "Perfectionnement de coque niv 1",
        "Ajout de canons",
    ]
    assert [o["price"] for o in hope["options"]] == [5000, 5000, 10000] and hope["price"] == 25000
    # green small 37 + 15 (hull-3), speed 3 unchanged
    assert (grace["structure_max"], grace["speed"], grace["price"]) == (52, 3, 30000)
    assert [o["id"] for o in sheet["fleet_options"]] == ["fireship-fleet"]
    assert (sheet["total"], sheet["money_left"], sheet["budget"], sheet["sealed"]) == (
        75000,
        25000,
        100000,
        False,
    )

    text = ok(game, "sheet", "g", "Anne")
    assert "Hope: Rouge small / Red small (small)" in text
    assert "structure 48/48  speed 4" in text and "cannons port 3 starboard 3 bow 0 stern 0" in text
    assert "Perfectionnement de coque niv 1 (Hull upgrade 1, 5000)" in text
    assert "fleet options: Tentative suicide universel (Fireship (fleet), 20000)" in text
    assert "fleet total 75000; money left 25000 of 100000" in text


def test_F4_sheet_of_one_ship_and_of_every_fleet(game: Path) -> None:
    buy_anne_fleet(game)
    (one,) = json.loads(ok(game, "sheet", "g", "grace", "--json"))["fleets"]
    assert [s["name"] for s in one["ships"]] == ["Grace"] and one["total"] == 75000
    every = json.loads(ok(game, "sheet", "g", "--json"))["fleets"]
    assert [(f["player"], len(f["ships"]), f["money_left"]) for f in every] == [
        ("Anne", 2, 25000),
        ("Bart", 0, 100000),
    ]


def test_F3_F4_money_not_spent_at_a_forfeit_seal_reads_as_forfeited_not_as_money_left(game: Path) -> None:
    buy_anne_fleet(game)
    assert "money left 25000 of 100000" in ok(game, "sheet", "g", "Anne")  # open: still to spend
    ok(game, "seal", "g", "Anne", "--forfeit")
    sheet = ok(game, "sheet", "g", "Anne")
    assert "fleet total 75000; 25000 of 100000 forfeited at the seal" in sheet and "money left" not in sheet
    state = ok(game, "state", "g")
    assert "fleet Anne: 2 ships, spent 75000, 25000 forfeited (sealed)" in state


def test_F4_W1_the_sheet_shows_current_structure_and_the_speed_it_costs(game: Path) -> None:
    buy_anne_fleet(game)
    ok(game, "seal", "g", "Anne", "--forfeit")
    ok(game, "seal", "g", "Bart", "--forfeit")
    ok(game, "place", "g", "Hope", "B2", "--facing", "E")
    _, state = load(game_log(game, "g"))
    damage = DamageTaken(turn=1, round=1, phase="combat", step=1, ship="Hope", amount=24, cause="shot")
    (sheet,) = sheets_for(fold([damage], state), "Hope")
    # half of 48 lost: 24 left, speed 4 + 1 (W1)
    assert (sheet.ships[0].structure_max, sheet.ships[0].structure_current, sheet.ships[0].speed) == (
        48,
        24,
        5,
    )


# --- F3 audit ------------------------------------------------------------------------------------


def test_F3_audit_of_an_honest_game_exits_0(game: Path) -> None:
    buy_anne_fleet(game)
    out = ok(game, "audit", "g")
    assert "Anne: recorded 75000, price list 75000, budget 100000, not sealed  ok" in out
    assert json.loads(ok(game, "audit", "g", "--json"))["ok"] is True


def test_F3_audit_catches_a_price_edited_and_rechained_that_verify_cannot(game: Path) -> None:
    buy_anne_fleet(game)
    ok(game, "seal", "g", "Anne", "--forfeit")
    path = game / "g.jsonl"
    events = game_log(game, "g").read()
    # the Grace purchase (30000) rewritten as 10000, the seal's forfeit made to match
    forged = [
        msgspec.structs.replace(e, price=10000) if isinstance(e, ShipBought) and e.ship == "Grace" else e
        for e in events
    ]
    forged[-1] = msgspec.structs.replace(forged[-1], forfeited=45000)
    write_forged_events(path, forged)
    assert run(game, "verify", "g").exit_code == 0  # the chain is valid: only the audit can tell
    result = run(game, "audit", "g")
    assert result.exit_code == 4, result.output
    assert (
        f"green-small 'Grace' with hull-3 recorded at 10000, the {RULES_VERSION} price list says 30000"
        in result.output
    )
    assert "Anne: recorded 55000, price list 75000" in result.output and "MISMATCH" in result.output
    report = json.loads(run(game, "audit", "g", "--json").output)
    assert report["ok"] is False and report["findings"][0]["seq"] == 4


def test_F3_a_rechained_copy_of_an_honest_log_passes_the_audit(game: Path) -> None:
    buy_anne_fleet(game)
    path = game / "g.jsonl"
    original = path.read_bytes()
    write_forged_events(path, game_log(game, "g").read())
    assert path.read_bytes() == original  # the forger's tool is faithful: the edit alone is caught
    assert run(game, "audit", "g").exit_code == 0


# --- a whole set-up --------------------------------------------------------------------------------


def test_F1_F4_two_fleets_bought_equipped_sealed_and_placed_from_the_cli(game: Path) -> None:
    buy_anne_fleet(game)
    ok(game, "equip", "g", "Grace", "siren")  # 5000: Anne has 20000 left, enough for a ship
    ok(game, "seal", "g", "Anne", "--forfeit")
    ok(game, "buy", "g", "Bart", "Jaune big", "Kraken", "--option", "Catapulte")  # 50000 + 30000
    ok(game, "equip", "g", "Kraken", "hull-2")  # 10000
    ok(game, "buy", "g", "Bart", "red-small", "Imp", "--option", "extra-sail")  # 5000 + 5000: spent 100000
    assert "0 forfeited" in ok(game, "seal", "g", "Bart")
    ok(game, "place", "g", "Hope", "B2", "--facing", "NE")
    ok(game, "place", "g", "Grace", "D2", "--facing", "N")
    ok(game, "place", "g", "kraken", "F9", "--facing", "S")
    ok(game, "place", "g", "Imp", "H9", "--facing", "SW")
    placed = [line for line in log_bodies(game / "g.jsonl") if line["type"] == "ship-placed"]
    assert [(p["ship"], p["kind"], p["owner"], p["at"], p["facing"]) for p in placed] == [
        ("Hope", "red-small", "Anne", [1, 1], "NE"),
        ("Grace", "green-small", "Anne", [3, 1], "N"),
        ("Kraken", "yellow-big", "Bart", [5, 8], "S"),
        ("Imp", "red-small", "Bart", [7, 8], "SW"),
    ]
    state = json.loads(ok(game, "state", "g", "--json"))
    assert state["ships"]["Kraken"]["options"] == ["catapult", "hull-2"]
    assert state["fleets"]["Bart"]["spent"] == 100000 and state["fleets"]["Anne"]["sealed"] is True
    (bart,) = json.loads(ok(game, "sheet", "g", "Bart", "--json"))["fleets"]
    # yellow big 140 + 20 (hull-2), speed 5 + 1; red small speed 2 - 1
    assert [(s["structure_max"], s["speed"], s["price"]) for s in bart["ships"]] == [
        (160, 6, 90000),
        (38, 1, 10000),
    ]
    assert ok(game, "verify", "g").rstrip().endswith("verified")
    assert "audit ok" in ok(game, "audit", "g")
