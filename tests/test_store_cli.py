"""Every command on either store: the README's duel played through the
command line on a games folder and on PostgreSQL gives the same outputs and the same log bytes,
and verifies on both.

The randomness a command draws (seed salts, the players' dice contributions, the nonces of secret
batches, seat tokens, receipt salts) is replaced by counters, the same for both runs, so two runs
of the same commands write the same lines: any difference is the store's.
"""

from __future__ import annotations

import itertools
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mortecouille.cli.main import cli
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.postgres

STORES = ["file", "postgres"]


def postgres_url(request: pytest.FixtureRequest) -> str:
    """A fresh schema of the session's cluster, as a ``--store`` URL."""
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return f"{server.url}?schema=cli_{uuid.uuid4().hex[:12]}"


@pytest.fixture(params=STORES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store of each kind, as the ``--store`` URL that names it."""
    if request.param == "file":
        return f"file:{tmp_path / 'games'}"
    return postgres_url(request)


def predictable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counters for everything a command draws at random (seed salts, dice contributions, nonces,
    seat tokens, receipt salts), from zero again: two runs of the same commands write the same
    bytes."""
    counter = itertools.count()

    def draw(width: int = 32) -> str:
        return f"{next(counter):0{width}x}"

    monkeypatch.setattr("mortecouille.app.commands.new_salt", draw)
    monkeypatch.setattr("mortecouille.app.commands.new_contribution", draw)
    monkeypatch.setattr("mortecouille.app.commands.new_nonce", draw)
    monkeypatch.setattr("mortecouille.app.seats.new_token", lambda: draw(43))
    monkeypatch.setattr("mortecouille.cli.receipt_output.new_receipt_salt", draw)


def invoke(store: str, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--store", store, *args], input=input)


#: The README's duel, then every command that reads or changes a game: (arguments, exit code).
DUEL: list[tuple[tuple[str, ...], int]] = [
    (("new", "duel", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10", "--rock", "E5",
      "--wind", "C7:E", "--seed", "duel-seed-0123456789"), 0),
    (("buy", "duel", "Anne", "Rouge small", "Hope", "--option", "Super boulet de canon",
      "--receipts", "{tmp}/anne.json"), 0),
    (("buy", "duel", "Anne", "blue-big", "Black Pearl", "--option", "extra-crew"), 0),
    (("equip", "duel", "Hope", "hull-1"), 0),
    (("equip", "duel", "Anne", "fireship-fleet", "--fleet"), 0),
    (("seal", "duel", "Anne"), 0),
    (("buy", "duel", "Bart", "yellow-big", "Kraken", "--option", "catapult"), 0),
    (("buy", "duel", "Bart", "red-small", "Spare"), 0),
    (("unbuy", "duel", "Spare"), 0),
    (("seal", "duel", "Bart", "--forfeit"), 0),
    (("place", "duel", "Hope", "C3", "--facing", "N", "--receipts", "{tmp}/anne.json"), 0),
    (("place", "duel", "Black Pearl", "E3", "--facing", "E"), 0),
    (("place", "duel", "Kraken", "E6", "--facing", "S"), 0),
    (("sheet", "duel", "Anne"), 0),
    (("order", "duel", "Black Pearl", "attack", "port", "Kraken", "+", "maneuver", "1/8", "left"), 0),
    (("order", "duel", "Hope", "advance", "--receipts", "{tmp}/anne.json"), 0),
    (("unorder", "duel", "Hope", "--receipts", "{tmp}/anne.json"), 0),
    (("order", "duel", "Hope", "advance", "--receipts", "{tmp}/anne.json"), 0),
    (("order", "duel", "Kraken", "attack", "bow", "Black Pearl", "+", "catapult", "Hope"), 0),
    (("order", "duel", "Kraken", "advance", "--replace", "--expect-seq", "3"), 3),  # stale: a Conflict, nothing written
    (("resolve", "duel"), 0),
    (("board", "duel"), 0),
    (("explain", "duel", "--turn", "1"), 0),
    (("state", "duel"), 0),
    (("log", "duel"), 0),
    (("replay", "duel", "--seq", "5"), 0),
    (("audit", "duel"), 0),
    (("games",), 0),
    (("seats", "duel"), 0),
    (("seats", "duel", "--reissue", "Anne"), 0),
    (("render", "duel", "--turn", "1", "--svg", "{tmp}/duel.svg"), 0),
    (("export", "duel", "--html", "{tmp}/duel.html"), 0),
    (("fork", "duel", "what-if", "--at", "13", "--seed", "fork-seed-0123456789"), 0),
    (("order", "what-if", "Hope", "advance", "--replace"), 0),
    (("verify", "duel", "--receipts", "{tmp}/anne.json"), 0),
    (("ruling", "duel", "--rule", "A1", "--text", "Hope's advance stands", "--adjust", "Hope", "wind=1"), 0),
    (("end", "duel", "--winner", "Anne"), 0),
    # the README's blockade harbour: tokens instead of orders
    (("new", "harbour", "--ruleset", "blockade", "--players", "Anne,Bart", "--board", "8x8", "--rock", "E5",
      "--seed", "harbour-seed-0123456789"), 0),
    (("place", "harbour", "Sloopy", "C2", "--kind", "sloop", "--owner", "Anne", "--facing", "N"), 0),
    (("place", "harbour", "Frig", "C4", "--kind", "war-frigate", "--owner", "Bart", "--facing", "S"), 0),
    (("tokens", "harbour", "Sloopy", "F", "F", "L", "-"), 0),
    (("tokens", "harbour", "Frig", "F", "-", "R", "F"), 0),
    (("resolve", "harbour"), 0),
    (("board", "harbour", "--turn", "0"), 0),
    (("verify", "harbour"), 0),
    (("verify", "duel"), 0),
    (("verify", "what-if"), 0),
    (("new", "duel", "--players", "Anne,Bart"), 3),  # exists: refused
    (("state", "nobody"), 2),
]


def normalised(text: str, store: str, tmp: Path) -> str:
    """An output with what names the store or the test's folder taken out."""
    text = text.replace(store, "STORE").replace(str(tmp), "TMP")
    # the file store anchors its head in GAME.head, PostgreSQL in the game's row: said so in verify
    text = re.sub(r"(head anchor at seq \d+ matches) the last line", r"\1", text)
    text = text.replace("store head at seq", "head anchor at seq")
    text = re.sub(r"game '([^']+)': (no log at \S+|not in the store '[^']+')", r"game '\1': NOT THERE", text)
    text = re.sub(r"at (TMP/games|games)/(\S+)\.jsonl", r"at LOCATION(\2)", text)
    return re.sub(r"at game '([^']+)' in the store", r"at LOCATION(\1)", text)


def play_duel(store: str, tmp: Path) -> list[str]:
    """Every command of :data:`DUEL` on ``store``; its normalised outputs, checking each exit."""
    outputs = []
    for arguments, expected in DUEL:
        args = [argument.replace("{tmp}", str(tmp)) for argument in arguments]
        result = invoke(store, *args)
        assert result.exit_code == expected, (args, result.output)
        outputs.append(normalised(result.output, store, tmp))
    return outputs


def test_the_duel_gives_the_same_outputs_and_bytes_on_both_stores(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: dict[str, tuple[list[str], bytes, bytes]] = {}
    for kind in STORES:
        predictable(monkeypatch)  # the same draws for each store
        folder = tmp_path / kind
        folder.mkdir()
        store = f"file:{folder / 'games'}" if kind == "file" else postgres_url(request)
        outputs = play_duel(store, folder)
        exported = invoke(store, "export-log", "duel")
        assert exported.exit_code == 0, exported.output
        forked = invoke(store, "export-log", "what-if")
        runs[kind] = (outputs, exported.stdout_bytes, forked.stdout_bytes)
    file_run, postgres_run = runs["file"], runs["postgres"]
    for (arguments, _), on_files, on_postgres in zip(DUEL, file_run[0], postgres_run[0], strict=True):
        assert on_files == on_postgres, arguments
    assert file_run[1] == postgres_run[1]
    assert file_run[2] == postgres_run[2]
    # and the file store's export is the file itself, byte for byte
    assert file_run[1] == (tmp_path / "file" / "games" / "duel.jsonl").read_bytes()


def test_every_store_takes_the_demo_simulate_archive_and_query(store_url: str, tmp_path: Path) -> None:
    demo = invoke(store_url, "demo", "--seed", "store-demo-seed", "--max-turns", "3")
    assert demo.exit_code == 0, demo.output
    assert "verify: verified" in demo.output
    simulated = CliRunner().invoke(cli, ["simulate", "--games", "2", "--seed", "s", "--max-turns", "4",
                                         "--to", store_url])
    assert simulated.exit_code == 0, simulated.output
    listed = invoke(store_url, "games", "--json")
    names = [game["name"] for game in json.loads(listed.output)["games"]]
    assert names == ["demo-store-demo-seed", "sim-s-0", "sim-s-1"]
    archived = invoke(store_url, "archive", "--to", str(tmp_path / "archive"))
    assert archived.exit_code == 0, archived.output
    queried = CliRunner().invoke(
        cli, ["query", "--logs", store_url, "--format", "json", "SELECT count(DISTINCT game) AS games FROM events"]
    )
    assert queried.exit_code == 0, queried.output
    assert json.loads(queried.output) == {"games": 3} or json.loads(queried.output) == [{"games": 3}]


def test_repair_on_postgres_says_why_it_is_not_needed(request: pytest.FixtureRequest) -> None:
    store = postgres_url(request)
    assert invoke(store, "new", "g", "--players", "Anne,Bart").exit_code == 0
    result = invoke(store, "repair", "g", "--yes")
    assert result.exit_code == 2
    assert "one transaction" in result.output and "nothing to repair" in result.output.lower()


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("MORTECOUILLE_STORE", raising=False)
    monkeypatch.delenv("MORTECOUILLE_GAMES", raising=False)
    yield


@pytest.mark.usefixtures("clean_environment")
def test_the_store_is_chosen_by_option_then_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["--store", "file:a", "new", "g", "--players", "A,B"]).exit_code == 0
    assert (tmp_path / "a" / "g.jsonl").is_file()
    assert runner.invoke(cli, ["new", "g", "--players", "A,B", "--store", str(tmp_path / "b")]).exit_code == 0
    assert (tmp_path / "b" / "g.jsonl").is_file()
    monkeypatch.setenv("MORTECOUILLE_STORE", f"file://{tmp_path / 'c'}")
    assert runner.invoke(cli, ["new", "g", "--players", "A,B"]).exit_code == 0
    assert (tmp_path / "c" / "g.jsonl").is_file()
    # an option wins over the environment
    assert runner.invoke(cli, ["--games-dir", "d", "new", "g", "--players", "A,B"]).exit_code == 0
    assert (tmp_path / "d" / "g.jsonl").is_file()
    monkeypatch.delenv("MORTECOUILLE_STORE")
    assert runner.invoke(cli, ["new", "g", "--players", "A,B"]).exit_code == 0
    assert (tmp_path / "games" / "g.jsonl").is_file()  # the default: file:./games


@pytest.mark.usefixtures("clean_environment")
def test_a_store_given_twice_is_refused_naming_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    both = CliRunner().invoke(cli, ["--store", "file:a", "--games-dir", "b", "new", "g", "--players", "A,B"])
    assert both.exit_code == 2
    assert "--store" in both.output and "--games-dir" in both.output
    after = CliRunner().invoke(cli, ["--store", "file:a", "new", "g", "--players", "A,B", "--games-dir", "b"])
    assert after.exit_code == 2
    monkeypatch.setenv("MORTECOUILLE_STORE", "file:a")
    monkeypatch.setenv("MORTECOUILLE_GAMES", "b")
    environment = CliRunner().invoke(cli, ["games"])
    assert environment.exit_code == 2
    assert "MORTECOUILLE_STORE" in environment.output and "MORTECOUILLE_GAMES" in environment.output
    assert not any(tmp_path.iterdir())  # nothing written anywhere


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("mysql://db/games", "unknown kind of store 'mysql'"),
        ("file:", "name the directory"),
        ("file://elsewhere/games", "on this machine"),
        ("postgresql://nobody@127.0.0.1:1/none", "cannot reach"),
        ("postgresql://anne:s3cret@127.0.0.1:1/none", "anne:***@"),
    ],
)
@pytest.mark.usefixtures("clean_environment")
def test_a_bad_store_url_is_refused_naming_the_option(url: str, named: str) -> None:
    result = CliRunner().invoke(cli, ["--store", url, "games"])
    assert result.exit_code == 2
    assert result.output.startswith("error: --store")
    assert named in result.output
    assert "s3cret" not in result.output
    assert "Traceback" not in result.output


@pytest.mark.usefixtures("clean_environment")
def test_a_bad_store_from_the_environment_is_named_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MORTECOUILLE_STORE", "mysql://db/games")
    result = CliRunner().invoke(cli, ["games"])
    assert result.exit_code == 2
    assert result.output.startswith("error: $MORTECOUILLE_STORE mysql://db/games: unknown kind of store")


@pytest.mark.usefixtures("clean_environment")
def test_commands_that_need_no_store_do_not_open_one() -> None:
    # an unreachable database is never contacted by the price list or the odds
    for args in (["prices"], ["odds", "--distance", "3", "--cannons", "2"]):
        result = CliRunner().invoke(cli, ["--store", "postgresql://nobody@127.0.0.1:1/none", *args])
        assert result.exit_code == 0, result.output


def test_a_missing_driver_is_named_with_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "mortecouille.events.storage.postgres", None)
    result = CliRunner().invoke(cli, ["--store", "postgresql://db/games", "games"])
    assert result.exit_code == 2
    assert "--store" in result.output and "driver is not installed" in result.output
