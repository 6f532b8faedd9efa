"""Names that look identical are one name (project rulings under T3, F1, P1; core/limits).

Two rulings beside the case-and-spacing one (tests/test_names_one_key.py):

- a name holds no format character (Unicode category Cf: zero-width space and joiners, word
  joiner, soft hyphen, byte order mark...): drawn as nothing, it makes ``A\\u200b`` a second ``A``.
  Refused as bad input naming the field and showing the character escaped, like a control character;
- within a game no two players, nor two ships, have names with one Unicode TR39 skeleton, case kept
  or case aside (Cyrillic ``А``, Greek ``Α``, full-width ``Ａ`` beside Latin ``A``; ``I`` beside
  ``l``): the second is refused where it comes in, citing the rule the name rulings cite.

Matching a typed name stays on the case-and-spacing key: a look-alike typed back names nobody.
Logs written before may hold such names: they still fold, verify and replay; a fork of one (a new
game) is refused naming GAME.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.core.errors import BadInput
from mortecouille.core.limits import check_name, check_text, name_clash, names_matching, skeleton
from mortecouille.web.server import build_app
from tests.cli_helpers import ok, refused, set_up_harbour
from tests.forgery import forge_with_turn_hashes, log_bodies
from tests.test_names_one_key import _bearer, _create, _digests, _error, _old_harbour, fold_log

RULESETS = ("mortecouille", "blockade")


@pytest.fixture
def client(games: Path) -> Iterator[TestClient[Litestar]]:
    games.mkdir(parents=True, exist_ok=True)
    with TestClient(build_app(games, deadline_seconds=None)) as test_client:
        yield test_client


#: format characters (category Cf), each drawn as nothing or nearly
FORMAT_CHARACTERS = {
    "zero-width space": "\u200b",
    "zero-width non-joiner": "\u200c",
    "zero-width joiner": "\u200d",
    "word joiner": "\u2060",
    "soft hyphen": "\u00ad",
    "byte order mark": "\ufeff",
    "invisible times": "\u2062",
    "Mongolian vowel separator": "\u180e",
    "tag letter": "\U000e0041",
}

#: a name, and another a reader cannot tell from it
LOOK_ALIKES = {
    "Cyrillic capital A": ("Anne", "\u0410nne"),
    "Greek capital Alpha": ("Anne", "\u0391nne"),
    "Cyrillic letters among Latin (mixed script)": ("Kraken", "\u041araken"),
    "Cyrillic o inside a Latin name": ("Hope", "H\u043epe"),
    "a whole name in Cyrillic": ("Cape", "\u0421\u0430\u0440\u0435"),
    "full-width letters": ("Hope", "\uff28\uff4f\uff50\uff45"),
    "case aside too": ("anne", "\u0410NNE"),
    "capital I for small l": ("Sloopy", "SIoopy"),
    "digit one for small l": ("Ship l", "Ship 1"),
    "an accent composed or not": ("Zo\u00e9", "Zoe\u0301"),
}


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\u{code:x}"


# ------------------------------------------------------------------------- the rulings (unit)


@pytest.mark.parametrize("char", FORMAT_CHARACTERS.values(), ids=FORMAT_CHARACTERS.keys())
@pytest.mark.parametrize("where", ["A{}", "{}A", "An{}ne"])
def test_T3_F1_P1_ruling_a_name_with_a_format_character_is_refused_naming_the_field_and_the_character(
    char: str, where: str
) -> None:
    with pytest.raises(BadInput, match="format character") as refusal:
        check_name("--players", where.format(char))
    assert refusal.value.field == "--players"
    assert f"U+{ord(char):04X}" in refusal.value.message
    assert char not in refusal.value.message  # shown escaped, never as the invisible character


def test_T3_F1_P1_ruling_texts_keep_their_joiners() -> None:
    """The ruling is for names: a ruling's text may hold an emoji sequence joined by U+200D."""
    check_text("text", "the \U0001f469\u200d\U0001f692 of Hope put the fire out")


@pytest.mark.parametrize(("name", "other"), LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_T3_F1_P1_ruling_names_with_one_confusable_skeleton_clash(name: str, other: str) -> None:
    assert name_clash([name, "Bart", other]) == (name, other)
    assert name_clash([other, name]) == (other, name)
    # ... and a typed name is still matched case and spacing aside only: neither names the other
    assert names_matching(other, [name]) == []


@pytest.mark.parametrize(
    ("name", "other"), [("Zo\u00e9", "Zoe"), ("Anne", "Anna"), ("Hope", "Hops"), ("Ana", "\u00c0na")]
)
def test_T3_F1_P1_ruling_names_that_differ_in_a_letter_stay_different(name: str, other: str) -> None:
    assert name_clash([name, other]) is None


def test_T3_F1_P1_the_skeleton_is_unicode_tr39s() -> None:
    assert skeleton("\u0410") == skeleton("\u0391") == skeleton("\uff21") == "A"
    assert skeleton("I") == skeleton("1") == "l"
    assert skeleton("m") == "rn"
    assert skeleton("A\u200bB\u00ad") == "AB"  # format characters aside


letters = st.lists(st.text(alphabet="aAlI1oО\u043eа\u0410 \u200b", min_size=1, max_size=4), max_size=6)


@given(letters)
def test_T3_F1_P1_names_a_game_holds_each_match_themselves_alone(names: list[str]) -> None:
    """Whatever the game was let hold, every name of it typed back matches it alone."""
    if name_clash(names) is None:
        assert all(names_matching(name, names) == [name] for name in names)


# ------------------------------------------------------------------------- players (T3)


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize(("name", "other"), LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_T3_ruling_new_refuses_players_that_look_alike(
    games: Path, ruleset: str, name: str, other: str
) -> None:
    output = refused(
        games, "new", "g", "--ruleset", ruleset, "--players", f"{name},{other}", "--seed", "s1", "--weak-seed"
    )
    assert "--players" in output and "T3" in output and "look alike" in output and "TR39" in output
    assert not (games / "g.jsonl").exists()


@pytest.mark.parametrize("char", FORMAT_CHARACTERS.values(), ids=FORMAT_CHARACTERS.keys())
def test_T3_ruling_new_refuses_a_player_with_a_format_character(games: Path, char: str) -> None:
    output = refused(games, "new", "g", "--players", f"Anne,Anne{char}", "--seed", "s1", "--weak-seed")
    assert "--players" in output and "format character" in output and _escaped(char) in output


def test_T3_ruling_the_service_refuses_such_players_with_400_naming_players(
    client: TestClient[Litestar], games: Path
) -> None:
    for players in (["Anne", "\u0410nne"], ["Anne", "Bart\u200b"], ["\ufeffAnne", "Bart"]):
        answer = client.post("/api/games", json={"name": "g", "ruleset": "blockade", "players": players})
        error = _error(answer, 400)
        assert error["field"] == "players", error
        assert list(games.iterdir()) == []


def test_T3_ruling_a_look_alike_typed_back_names_nobody(games: Path) -> None:
    """Matching stays on the case-and-spacing key: a Cyrillic ``Аnne`` typed (pasted) does not take
    Anne's seat, nor her purchase; it is refused as no player of the game."""
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--seed", "s1", "--weak-seed")
    output = refused(games, "seats", "g", "--reissue", "\u0410nne")
    assert "PLAYER" in output
    output = refused(games, "buy", "g", "\u0410nne", "red-small", "Hope")
    assert "PLAYER" in output


# ------------------------------------------------------------------------- ships (F1, P1)


@pytest.mark.parametrize(("name", "other"), LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_F1_ruling_a_ship_bought_under_a_name_that_looks_like_anothers_is_refused(
    games: Path, name: str, other: str
) -> None:
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--seed", "s1", "--weak-seed")
    ok(games, "buy", "g", "Anne", "red-small", name)
    for buyer in ("Anne", "Bart"):  # the own fleet and another's
        output = refused(games, "buy", "g", buyer, "red-small", other)
        assert "[F1]" in output and "looks like" in output and "already in the game" in output


@pytest.mark.parametrize("char", FORMAT_CHARACTERS.values(), ids=FORMAT_CHARACTERS.keys())
def test_F1_ruling_a_ship_bought_under_a_name_with_a_format_character_is_refused(
    games: Path, char: str
) -> None:
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--seed", "s1", "--weak-seed")
    output = refused(games, "buy", "g", "Anne", "red-small", f"Ho{char}pe")
    assert "NAME" in output and "format character" in output and _escaped(char) in output


@pytest.mark.parametrize("other", ["\u0405loopy", "SIoopy", "\uff33loopy", "Sl\u043eopy"])
def test_P1_ruling_a_blockade_ship_placed_under_a_name_that_looks_like_anothers_is_refused(
    games: Path, other: str
) -> None:
    set_up_harbour(games, "b")
    output = refused(games, "place", "b", other, "E2", "--kind", "sloop", "--owner", "Bart")
    assert "[P1]" in output and "SHIP" in output and "'Sloopy' is already on the board" in output
    assert "look alike" in output


def test_P1_ruling_a_blockade_ship_placed_under_a_name_with_a_format_character_is_refused(
    games: Path,
) -> None:
    set_up_harbour(games, "b")
    output = refused(games, "place", "b", "Sloopy\u00ad", "E2", "--kind", "sloop", "--owner", "Bart")
    assert "SHIP" in output and "format character" in output and "\\xad" in output


def test_F1_P1_ruling_the_service_refuses_look_alike_ships_with_422_and_a_format_character_with_400(
    client: TestClient[Litestar], games: Path
) -> None:
    created = _create(client, "mortecouille", budget=100000)
    anne, bart = (_bearer(created["players"][p]["token"]) for p in ("Anne", "Bart"))
    bought = client.post("/api/games/g/buy", json={"ship": "Hope", "kind": "red-small"}, headers=anne)
    assert bought.status_code == 200, bought.text
    before = _digests(games)
    buy = {"ship": "H\u043epe", "kind": "red-small"}
    error = _error(client.post("/api/games/g/buy", json=buy, headers=bart), 422)
    assert error["rule"] == "F1" and "looks like" in error["message"]
    error = _error(
        client.post("/api/games/g/buy", json={"ship": "Gr\u200bace", "kind": "red-small"}, headers=bart), 400
    )
    assert error["field"] and "format character" in error["message"] and "\\u200b" in error["message"]
    assert _digests(games) == before


def test_P1_ruling_the_service_refuses_a_look_alike_placement_with_422(
    client: TestClient[Litestar], games: Path
) -> None:
    created = _create(client, "blockade")
    anne, bart = (_bearer(created["players"][p]["token"]) for p in ("Anne", "Bart"))
    placed = client.post(
        "/api/games/g/place", json={"ship": "Sloopy", "square": "B2", "kind": "sloop"}, headers=anne
    )
    assert placed.status_code == 200, placed.text
    before = _digests(games)
    body = {"ship": "\u0405loopy", "square": "H8", "kind": "sloop"}
    error = _error(client.post("/api/games/g/place", json=body, headers=bart), 422)
    assert error["rule"] == "P1" and error["field"] == "ship"
    assert _digests(games) == before


# ------------------------------------------------------------------------- scenarios


@pytest.mark.parametrize(
    ("ruleset", "kind", "rule"), [("mortecouille", "red-small", "F1"), ("blockade", "sloop", "P1")]
)
def test_F1_P1_T3_ruling_a_scenarios_ships_and_owners_that_look_alike_are_refused_naming_them(
    games: Path, tmp_path: Path, ruleset: str, kind: str, rule: str
) -> None:
    scenario = {
        "ruleset": ruleset,
        "board": {"width": 8, "height": 8},
        "ships": [
            {"id": "Red", "kind": kind, "owner": "Anne", "at": [1, 1], "facing": "N"},
            {"id": "R\u0435d", "kind": kind, "owner": "Bart", "at": [3, 3], "facing": "N"},
            {"id": "Blue", "kind": kind, "owner": "\u0410nne", "at": [5, 5], "facing": "N"},
            {"id": "Gr\u200ben", "kind": kind, "owner": "Bart", "at": [7, 7], "facing": "N"},
        ],
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    output = refused(games, "scenario", str(path))
    assert "ships[1].id" in output and f"{rule}, project ruling" in output and "look alike" in output
    assert "ships[2].owner" in output and "T3, project ruling" in output
    assert "ships[3].id" in output and "format character" in output


# ------------------------------------------------------------------------- logs written before

#: Bart renamed a Cyrillic 'Аnne' beside Anne, his frigate Frig 'SIoopy' (capital I) beside Sloopy:
#: each sorts where the old name did, so the forged turn re-derives as played
LOOKING_ALIKE = {"Bart": "\u0410nne", "Frig": "SIoopy"}


def test_T3_P1_ruling_a_log_written_before_with_look_alikes_still_verifies_replays_and_folds(
    games: Path,
) -> None:
    log = _old_harbour(games, LOOKING_ALIKE)
    assert log_bodies(log)[0]["players"] == ["Anne", "\u0410nne"]
    assert "old: verified" in ok(games, "verify", "old")
    ok(games, "replay", "old")
    assert sorted(fold_log(games, "old").ships) == ["SIoopy", "Sloopy"]


def test_T3_ruling_a_fork_of_a_log_with_two_players_that_look_alike_is_refused_naming_game(
    games: Path,
) -> None:
    _old_harbour(games, {"Bart": "\u0410nne"})
    output = refused(games, "fork", "old", "new", "--at", "0")
    assert "GAME" in output and "T3" in output and "look alike" in output and "U+0410" in output


def test_T3_ruling_a_fork_of_a_log_with_a_player_spelled_with_a_zero_width_space_is_refused(
    games: Path,
) -> None:
    _old_harbour(games, {"Bart": "Anne\u200b"})
    output = refused(games, "fork", "old", "new", "--at", "0")
    assert "GAME" in output and "T3" in output and "\\u200b" in output


def test_P1_ruling_a_fork_of_a_log_with_two_ships_that_look_alike_is_refused_naming_game(games: Path) -> None:
    log = _old_harbour(games, {"Frig": "SIoopy"})
    placed = max(b["seq"] for b in log_bodies(log) if b["type"] == "ship-placed")
    output = refused(games, "fork", "old", "new", "--at", str(placed))
    assert "GAME" in output and "P1" in output and "'SIoopy'" in output and "'Sloopy'" in output
    ok(games, "fork", "old", "new", "--at", str(placed - 1))


def test_T3_ruling_the_service_refuses_such_a_fork_with_400_naming_game(
    client: TestClient[Litestar], games: Path
) -> None:
    created = _create(client, "blockade")
    referee = _bearer(created["referee"]["token"])
    forge_with_turn_hashes(games / "g.jsonl", lambda bodies: bodies[0].update(players=["Anne", "\u0391nne"]))
    before = _digests(games)
    error = _error(client.post("/api/games/g/fork", json={"name": "f", "at": 0}, headers=referee), 400)
    assert error["field"] == "game" and "T3" in error["message"]
    assert _digests(games) == before
