"""A placement refusal is no oracle (F3, project ruling; RULES.md): before every fleet is sealed a
mortecouille ship is put on the board by nobody, so scanning every square with ``place`` (or a
ruling's ``position=``) answers the same whatever the sealed fleets hold: no occupied square, ship,
kind or owner can be read off a refusal, by a player, by the referee's page or from the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.core.board.geometry import square_name
from tests.cli_helpers import ok, run, tree_digest
from tests.helpers import file_digests
from tests.test_web_api import Game, create

BOARD = 10
SQUARES = [square_name((x, y)) for x in range(BOARD) for y in range(BOARD)]

#: Two tables that differ only in what is still secret: who bought the ship named Lantern, as
#: what, and which ship (if any) its owner tried to put on E5 before every fleet was sealed.
HIDDEN: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "Lantern is Anne's blue-big, tried on E5": [
        ("Anne", "buy", {"ship": "Lantern", "kind": "blue-big"}),
        ("Bart", "buy", {"ship": "Kraken", "kind": "red-small"}),
        ("Anne", "seal", {"forfeit": True}),
        ("Bart", "seal", {"forfeit": True}),
        ("Anne", "place", {"ship": "Lantern", "square": "E5"}),
    ],
    "Lantern is Bart's green-small, Kraken tried on E5": [
        ("Bart", "buy", {"ship": "Lantern", "kind": "green-small"}),
        ("Anne", "buy", {"ship": "Kraken", "kind": "yellow-big"}),
        ("Anne", "seal", {"forfeit": True}),
        ("Bart", "seal", {"forfeit": True}),
        ("Anne", "place", {"ship": "Kraken", "square": "E5", "facing": "S"}),
    ],
}


def hidden_table(client: TestClient[Litestar], story: str) -> Game:
    """Anne and Bart buy and seal as ``story`` says (a placement may be refused: it is what is
    tested), Cora buys and seals Minnow, Dan has not sealed."""
    game = create(client, ruleset="mortecouille", players=["Anne", "Bart", "Cora", "Dan"], budget=100000)
    for player, path, body in HIDDEN[story]:
        answer = client.post(f"/api/games/g/{path}", json=body, headers=game.players[player])
        assert answer.status_code in (200, 422), answer.text
    cora = game.players["Cora"]
    for path, body in (("buy", {"ship": "Minnow", "kind": "red-small"}), ("seal", {"forfeit": True})):
        assert client.post(f"/api/games/g/{path}", json=body, headers=cora).status_code == 200
    return game


def answers(client: TestClient[Litestar], game: Game, games: Path) -> tuple[dict[str, set[str]], bool]:
    """What each scan of every square is answered (status and body), and whether any wrote a byte."""
    before = file_digests(games)
    cora, referee = game.players["Cora"], game.referee
    scans: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {
        "Cora places her own Minnow": ("place", {"ship": "Minnow"}, cora),
        "Cora names a ship that may be another's": ("place", {"ship": "Lantern"}, cora),
        "the referee places Lantern as Cora's red-small": (
            "place", {"ship": "Lantern", "kind": "red-small", "owner": "Cora"}, referee
        ),
        "the referee places Kraken": ("place", {"ship": "Kraken"}, referee),
        "the referee rules Lantern onto the square": (
            "rulings", {"rule": "F3", "text": "placed by the referee", "adjust": [{"ship": "Lantern"}]}, referee
        ),
    }  # fmt: skip
    found: dict[str, set[str]] = {}
    for scan, (path, body, headers) in scans.items():
        for square in SQUARES:
            sent = dict(body, square=square) if path == "place" else with_position(body, square)
            answer = client.post(f"/api/games/g/{path}", json=sent, headers=headers)
            found.setdefault(scan, set()).add(f"{answer.status_code} {answer.text}")
    return found, file_digests(games) != before


def with_position(body: dict[str, Any], square: str) -> dict[str, Any]:
    adjust = [dict(entry, changes=f"position={square}") for entry in body["adjust"]]
    return dict(body, adjust=adjust)


@pytest.fixture
def client_for(games: Path) -> Any:
    from mortecouille.web.server import build_app

    def make(folder: str) -> TestClient[Litestar]:
        return TestClient(build_app(games / folder, deadline_seconds=None))

    return make


def test_F3_ruling_no_square_scanned_before_every_fleet_is_sealed_tells_what_it_holds(
    games: Path, client_for: Any
) -> None:
    """For a player and for the referee, every square gets one answer, the same in both tables,
    citing F3 and naming only who has not sealed (public); nothing is written."""
    scanned = {}
    for index, story in enumerate(HIDDEN):
        folder = games / str(index)
        folder.mkdir(parents=True)
        with client_for(str(index)) as client:
            game = hidden_table(client, story)
            scanned[story] = answers(client, game, folder)
    (one, one_wrote), (other, other_wrote) = scanned.values()
    for scan, answered in one.items():
        assert len(answered) == 1, (scan, sorted(answered)[:3])  # the same answer for every square
        assert answered == other[scan], (scan, answered, other[scan])  # whatever is hidden
    assert not one_wrote and not other_wrote
    refusals = {text for answered in one.values() for text in answered if text.startswith("422")}
    assert refusals and all('"rule":"F3"' in text and "not sealed yet: Dan" in text for text in refusals)
    for answered in one.values():
        for text in answered:
            for secret in ("blue-big", "green-small", "yellow-big", "Anne", "Bart", "E5", "holds"):
                assert secret not in text, (secret, text)


#: From the CLI, two games differing only in what is secret: Lantern's owner and kind, and whether
#: its owner tried to put it on E5 before Dan sealed.
CLI_HIDDEN = (
    ("a", (("Anne", "blue-big", "Lantern"), ("Bart", "red-small", "Kraken")), ("Lantern", "E5")),
    ("b", (("Bart", "green-small", "Lantern"), ("Anne", "yellow-big", "Kraken")), None),
)


def test_F3_ruling_the_cli_answers_every_square_alike_before_every_fleet_is_sealed(games: Path) -> None:
    """``place`` and ``ruling --adjust SHIP position=SQ`` from the CLI refuse as the service does
    (F3, exit 2, nothing written), whatever the sealed fleets hold; once every fleet is sealed the
    ships are placed (their purchases are public then)."""
    said: dict[int, set[str]] = {}
    for name, bought, tried in CLI_HIDDEN:
        ok(games, "new", name, "--players", "Anne,Bart,Dan", "--budget", "100000", "--board", f"{BOARD}x{BOARD}")
        for player, kind, ship in bought:
            ok(games, "buy", name, player, kind, ship)
            ok(games, "seal", name, player, "--forfeit")
        if tried is not None:
            run(games, "place", name, *tried)  # refused, or (before the ruling) a secret placement
        before = tree_digest(games)
        for square in SQUARES:
            scans = (
                ("place", name, "Lantern", square),
                ("place", name, "Kraken", square, "--kind", "red-small", "--owner", "Dan"),
                ("ruling", name, "--rule", "F3", "--text", "x", "--adjust", "Lantern", f"position={square}"),
            )
            for index, args in enumerate(scans):
                result = run(games, *args)
                said.setdefault(index, set()).add(f"{result.exit_code} {result.output}")
        assert tree_digest(games) == before
    for index, answered in said.items():
        assert len(answered) == 1, (index, sorted(answered)[:3])
        (only,) = answered
        assert only.startswith("2 ") and "[F3]" in only and "not sealed yet: Dan" in only, only
        assert not any(secret in only for secret in ("blue-big", "green-small", "holds", "E5", "Anne", "Bart"))
    ok(games, "seal", "a", "Dan", "--forfeit")
    assert "ship-placed" in ok(games, "place", "a", "Lantern", "E5")
