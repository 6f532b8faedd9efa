"""Names that differ only in case and spacing are one name (project rulings under T3, F1, P1).

Every command reads a player's or a ship's name case and spacing aside
(:func:`mortecouille.core.limits.name_key`), so a game that held ``Anne`` beside ``anne``, or the
ships ``Sloopy`` beside ``sloopy``, could never be told which one a command means. The second name
is refused where it is introduced: a game's players (``new``, ``POST /api/games``, ``fork``), a
ship bought (F1) or placed (P1), a scenario's ships and owners; exit 2 (400, or 422 for a rule the
ship breaks), naming the field and the rule, every file left as it was. The refusal and the
matching use the one key, so a command can always tell the names a game holds apart (names that a
reader could not, drawn alike, are refused too: tests/test_names_look_alike.py).

Logs written before the rulings may hold such a pair: they still fold, verify and replay (the
refusal lives in the deciders of new commands, never in ``evolve``); only a fork of one, a new
game, is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app.games import game_log
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import TableDice
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import CreateGame
from mortecouille.core.limits import name_clash, name_key, names_matching
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.board import Board
from mortecouille.events.movement import ShipSunk
from mortecouille.web.server import build_app
from tests.cli_helpers import ok, play_blockade_turn, refused, run_cli, set_up_harbour, tree_digest
from tests.forgery import forge_with_turn_hashes, log_bodies
from tests.helpers import ROOT

RULESETS = ("mortecouille", "blockade")


@pytest.fixture
def client(games: Path) -> Iterator[TestClient[Litestar]]:
    games.mkdir(parents=True, exist_ok=True)
    with TestClient(build_app(games, deadline_seconds=None)) as test_client:
        yield test_client


def _error(answer: Any, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    error: dict[str, Any] = answer.json()["error"]
    assert error["code"] == 2
    return error


def _create(client: TestClient[Litestar], ruleset: str, **body: Any) -> dict[str, Any]:
    answer = client.post(
        "/api/games",
        json={
            "name": "g",
            "ruleset": ruleset,
            "players": ["Anne", "Bart"],
            "board": {"width": 10, "height": 10},
            **body,
        },
    )
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _digests(games: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(games.iterdir()) if path.is_file()}


# ------------------------------------------------------------------------- the one key (unit)

names = st.lists(st.text(alphabet="aAbB ÉéßS\t", max_size=5).filter(str.strip), max_size=6)


@given(names)
def test_T3_F1_P1_names_are_refused_exactly_when_a_typed_name_would_match_two(typed: list[str]) -> None:
    """The clash the deciders refuse and the match the commands make are one key: of names with no
    character drawn like another (this alphabet), a list passes exactly when each of its names,
    typed back, matches itself alone."""
    unambiguous = all(names_matching(name, typed) == [name] for name in typed)
    assert (name_clash(typed) is None) == unambiguous


def test_T3_F1_P1_the_key_puts_case_and_spacing_aside_and_nothing_else() -> None:
    assert name_key("  Black \t PEARL ") == name_key("black pearl") == "black pearl"
    assert name_key("Straße") == name_key("STRASSE")  # casefold, as the commands read names
    assert name_key("Zoé") != name_key("Zoe")  # accents are letters, not case
    assert name_clash(["Anne", "Bart", "anne"]) == ("Anne", "anne")
    assert name_clash(["Anne", "Anne"]) == ("Anne", "Anne")
    assert name_clash(["Anne", "Bart"]) is None


# ------------------------------------------------------------------------- players (T3 ruling)


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("players", ["Anne,anne", "Anne,ANNE", "Anne,Bart,anne", "Anne Marie,anne  marie"])
def test_T3_ruling_new_refuses_players_that_are_one_name_case_and_spacing_aside(
    games: Path, ruleset: str, players: str
) -> None:
    output = refused(
        games, "new", "g", "--ruleset", ruleset, "--players", players, "--seed", "s1", "--weak-seed"
    )
    assert "--players" in output and "T3" in output and "one name, case and spacing aside" in output
    assert not (games / "g.jsonl").exists()


@pytest.mark.parametrize("ruleset", RULESETS)
def test_T3_ruling_the_same_player_twice_is_refused_the_same_way(games: Path, ruleset: str) -> None:
    output = refused(
        games, "new", "g", "--ruleset", ruleset, "--players", "Anne,Anne", "--seed", "s1", "--weak-seed"
    )
    assert "--players" in output and "T3" in output and "same name" in output


@pytest.mark.parametrize("ruleset", RULESETS)
def test_T3_ruling_players_whose_names_differ_in_letters_are_taken(games: Path, ruleset: str) -> None:
    ok(games, "new", "g", "--ruleset", ruleset, "--players", "Zoé,Zoe,Anne", "--seed", "s1", "--weak-seed")
    assert log_bodies(games / "g.jsonl")[0]["players"] == ["Zoé", "Zoe", "Anne"]


@pytest.mark.parametrize("ruleset", RULESETS)
def test_T3_ruling_the_service_refuses_players_that_are_one_name_with_400_naming_players(
    client: TestClient[Litestar], games: Path, ruleset: str
) -> None:
    answer = client.post("/api/games", json={"name": "g", "ruleset": ruleset, "players": ["Anne", " anne "]})
    error = _error(answer, 400)
    assert error["field"] == "players" and "T3" in error["message"]
    assert list(games.iterdir()) == []


def test_T3_ruling_simulate_refuses_a_fleets_file_whose_players_are_one_name(tmp_path: Path) -> None:
    fleets = tmp_path / "fleets.json"
    fleets.write_text(
        json.dumps(
            {
                "Anne": [{"kind": "red-small", "name": "Hope"}],
                "ANNE": [{"kind": "red-small", "name": "Grace"}],
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = run_cli("simulate", "--fleets", str(fleets), "--games", "1", "--seed", "s", "--to", str(out))
    assert result.exit_code == 2, result.output
    assert "--fleets" in result.output and "T3" in result.output and "'ANNE' and 'Anne'" in result.output
    assert tree_digest(out) == tree_digest(tmp_path / "nothing")


def test_T3_ruling_the_decider_refuses_and_names_the_field() -> None:
    with pytest.raises(BadInput, match="T3") as refusal:
        decide(EMPTY, _create_command(("Bart", "BART")), TableDice())
    assert refusal.value.field == "players"


# ------------------------------------------------------------------------- ships (F1, P1 rulings)


@pytest.mark.parametrize("typed", ["hope", "HOPE", "  Hope  "])
def test_F1_ruling_a_ship_bought_under_another_ships_name_case_and_spacing_aside_isrefused(
    games: Path, typed: str
) -> None:
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--seed", "s1", "--weak-seed")
    ok(games, "buy", "g", "Anne", "red-small", "Hope")
    for buyer in ("Anne", "Bart"):  # the own fleet and another's
        output = refused(games, "buy", "g", buyer, "red-small", typed)
        assert "[F1]" in output and "already in the game" in output and "case and spacing" in output


def test_F1_ruling_a_ship_placed_in_mortecouille_is_the_bought_one_never_a_new_name(games: Path) -> None:
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "5000", "--seed", "s1", "--weak-seed")
    ok(games, "buy", "g", "Anne", "red-small", "Hope")
    ok(games, "seal", "g", "Anne")
    ok(games, "seal", "g", "Bart", "--forfeit")
    ok(games, "place", "g", "  HOPE ", "C3")
    placed = log_bodies(games / "g.jsonl")[-1]
    assert placed["type"] == "ship-placed" and placed["ship"] == "Hope"
    assert sorted(fold_log(games).ships) == ["Hope"]


@pytest.mark.parametrize("typed", ["sloopy", "SLOOPY", "  Sloopy "])
def test_P1_ruling_a_blockade_ship_placed_under_another_ships_name_case_and_spacing_aside_isrefused(
    games: Path, typed: str
) -> None:
    set_up_harbour(games, "b")
    output = refused(games, "place", "b", typed, "E2", "--kind", "sloop", "--owner", "Bart")
    assert "[P1]" in output and "SHIP" in output and "'Sloopy' is already on the board" in output


def test_P1_ruling_a_sunk_blockade_ships_name_stays_taken() -> None:
    """A sunk ship stays in the game's record (its wreck, its story): its name is not free again."""
    state = fold(decide(EMPTY, _create_command(("Anne", "Bart")), TableDice()))
    state = fold(
        decide(state, PlaceShip(ship="Sloopy", at=(1, 1), facing="N", kind="sloop"), TableDice()), state
    )
    state = fold([ShipSunk(turn=1, round=1, phase="damage", ship="Sloopy", at=(1, 1), rules=("P3",))], state)
    assert not state.ships["Sloopy"].afloat
    with pytest.raises(RuleViolation, match="'Sloopy' is already on the board") as refusal:
        decide(state, PlaceShip(ship="sloopy", at=(3, 3), facing="N", kind="sloop"), TableDice())
    assert refusal.value.rule == "P1"


def test_P1_F1_ruling_the_service_refuses_a_second_ship_name_with_the_rule_and_writes_nothing(
    client: TestClient[Litestar], games: Path
) -> None:
    created = _create(client, "blockade")
    anne, bart = (_bearer(created["players"][p]["token"]) for p in ("Anne", "Bart"))
    referee = _bearer(created["referee"]["token"])
    placed = client.post(
        "/api/games/g/place", json={"ship": "Sloopy", "square": "B2", "kind": "sloop"}, headers=anne
    )
    assert placed.status_code == 200, placed.text
    before = _digests(games)
    for body, headers in (
        ({"ship": "SLOOPY", "square": "H8", "kind": "sloop"}, bart),
        ({"ship": "sloopy", "square": "H8", "kind": "sloop", "owner": "Bart"}, referee),
    ):
        error = _error(client.post("/api/games/g/place", json=body, headers=headers), 422)
        assert error["rule"] == "P1" and error["field"] == "ship"
        assert _digests(games) == before


def test_F1_ruling_the_service_refuses_a_purchase_under_a_name_taken_case_aside_and_writes_nothing(
    client: TestClient[Litestar], games: Path
) -> None:
    created = _create(client, "mortecouille", budget=100000)
    anne, bart = (_bearer(created["players"][p]["token"]) for p in ("Anne", "Bart"))
    bought = client.post("/api/games/g/buy", json={"ship": "Hope", "kind": "red-small"}, headers=anne)
    assert bought.status_code == 200, bought.text
    before = _digests(games)
    error = _error(
        client.post("/api/games/g/buy", json={"ship": "hope ", "kind": "red-small"}, headers=bart), 422
    )
    assert error["rule"] == "F1" and "'hope'" in error["message"]
    # Anne's purchase is still secret: the refusal does not spell the ship it matched
    assert "'Hope'" not in error["message"]
    assert _digests(games) == before


# ------------------------------------------------------------------------- scenarios


@pytest.mark.parametrize(
    ("ruleset", "kind", "rule"), [("mortecouille", "red-small", "F1"), ("blockade", "sloop", "P1")]
)
def test_F1_P1_T3_ruling_a_scenarios_ships_and_owners_that_are_one_name_are_refused_naming_them(
    games: Path, tmp_path: Path, ruleset: str, kind: str, rule: str
) -> None:
    scenario = {
        "ruleset": ruleset,
        "board": {"width": 8, "height": 8},
        "ships": [
            {"id": "Red", "kind": kind, "owner": "Anne", "at": [1, 1], "facing": "N"},
            {"id": "RED", "kind": kind, "owner": "Bart", "at": [3, 3], "facing": "N"},
            {"id": "Blue", "kind": kind, "owner": "anne", "at": [5, 5], "facing": "N"},
        ],
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    output = refused(games, "scenario", str(path))
    assert "ships[1].id" in output and f"{rule}, project ruling" in output
    assert "ships[2].owner" in output and "T3, project ruling" in output


# ------------------------------------------------------------------------- logs written before


def _old_harbour(games: Path, renames: dict[str, str]) -> Path:
    """The README harbour's turn 1, forged as a log written before the rulings could be: each
    quoted name of ``renames`` renamed (to names sorting where the old ones did, so the turn
    re-derives as played), turn hashes and chain recomputed."""
    play_blockade_turn(games, "old")
    log = games / "old.jsonl"

    def rename(bodies: list[dict[str, Any]]) -> None:
        for body in bodies:
            text = json.dumps(body, ensure_ascii=False)
            for old, new in renames.items():
                text = text.replace(f'"{old}"', f'"{new}"')
            body.clear()
            body.update(json.loads(text))

    forge_with_turn_hashes(log, rename)
    return log


#: Bart renamed 'anne ' beside Anne, his frigate Frig 'SLOOPY' beside Sloopy
ONE_NAME_TWICE = {"Bart": "anne ", "Frig": "SLOOPY"}


def test_T3_P1_ruling_a_log_written_before_still_verifies_replays_and_folds(games: Path) -> None:
    log = _old_harbour(games, ONE_NAME_TWICE)
    assert log_bodies(log)[0]["players"] == ["Anne", "anne "]
    assert "old: verified" in ok(games, "verify", "old")
    ok(games, "replay", "old")
    assert sorted(fold_log(games, "old").ships) == ["SLOOPY", "Sloopy"]


def test_T3_ruling_a_fork_of_a_log_with_two_players_of_one_name_is_refused_naming_game(games: Path) -> None:
    _old_harbour(games, {"Bart": "anne "})
    output = refused(games, "fork", "old", "new", "--at", "0")
    assert "GAME" in output and "T3" in output and "'anne '" in output and "'Anne'" in output


def test_P1_ruling_a_fork_of_a_log_with_two_ships_of_one_name_is_refused_naming_game(games: Path) -> None:
    log = _old_harbour(games, {"Frig": "SLOOPY"})
    placed = max(b["seq"] for b in log_bodies(log) if b["type"] == "ship-placed")
    output = refused(games, "fork", "old", "new", "--at", str(placed))
    assert "GAME" in output and "P1" in output and "'SLOOPY'" in output and "'Sloopy'" in output
    # before the second ship came, the fork is an ordinary one
    ok(games, "fork", "old", "new", "--at", str(placed - 1))


def test_T3_ruling_the_service_refuses_such_a_fork_with_400_naming_game(
    client: TestClient[Litestar], games: Path
) -> None:
    created = _create(client, "blockade")
    referee = _bearer(created["referee"]["token"])
    forge_with_turn_hashes(games / "g.jsonl", lambda bodies: bodies[0].update(players=["Anne", "ANNE"]))
    before = _digests(games)
    error = _error(client.post("/api/games/g/fork", json={"name": "f", "at": 0}, headers=referee), 400)
    assert error["field"] == "game" and "T3" in error["message"]
    assert _digests(games) == before


def test_T3_F1_P1_no_golden_log_holds_two_names_that_are_one() -> None:
    """The golden logs must keep verifying: none holds a pair these rulings would now refuse."""
    logs = sorted((ROOT / "tests" / "golden").rglob("*.jsonl"))
    assert logs
    for path in logs:
        bodies = log_bodies(path)
        ships = [b["ship"] for b in bodies if b["type"] in ("ship-bought", "ship-placed", "ship-set-up")]
        assert name_clash(bodies[0]["players"]) is None, path
        assert name_clash(dict.fromkeys(ships)) is None, path


# ------------------------------------------------------------------------- helpers


def _create_command(players: tuple[str, ...]) -> CreateGame:
    """A blockade game with table dice on a 10x10 board, of ``players``."""
    return CreateGame(game="g", ruleset="blockade", players=players, budget=0, board=Board(width=10, height=10),
                      dice_mode="table")  # fmt: skip


def fold_log(games: Path, name: str = "g") -> GameState:
    """The state the log of game ``name`` folds to."""
    return fold(game_log(games, name).read())
