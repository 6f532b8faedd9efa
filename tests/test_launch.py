"""The launcher (the CLI's start-up): a plain ``state GAME [--json]`` is run without
click, and must be the click command exactly: for every game, good or bad, the same output, the
same error line and the same exit code. Any other command line is click's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mortecouille.cli.launch import COMPLETION_VARIABLE, PlainState, plain_state, streams_written_as_they_are
from tests.cli_helpers import run, tree_digest

pytestmark = pytest.mark.slow

#: the launcher, as the ``mortecouille`` script and ``python -m mortecouille`` run it
LAUNCHER = [sys.executable, "-m", "mortecouille"]
#: click's group with the same command line (what every other command line runs)
CLICK = [sys.executable, "-c", "from mortecouille.cli.main import main; main()"]


@pytest.mark.parametrize(
    ("args", "plain"),
    [
        (["state", "g"], ("g", False)),
        (["state", "g", "--json"], ("g", True)),
        (["state", "g h", "--json"], ("g h", True)),
        (["state"], None),
        (["state", "--json", "g"], None),
        (["state", "g", "--help"], None),
        (["state", "-h"], None),
        (["state", "-", "--json"], None),
        (["state", "g", "--json", "--json"], None),
        (["state", "g", "h"], None),
        (["state", "g", "--js"], None),
        (["state", "g", "-v"], None),
        (["--games-dir", "d", "state", "g"], None),
        (["log", "g"], None),
        (["State", "g"], None),
        ([], None),
    ],
)
def test_only_a_plain_state_command_line_is_run_without_click(
    args: list[str], plain: PlainState | None
) -> None:
    assert plain_state(args, {}) == plain


def test_shell_completion_is_clicks_even_for_a_plain_state_command_line() -> None:
    assert plain_state(["state", "g"], {COMPLETION_VARIABLE: ""}) == ("g", False)
    assert plain_state(["state", "g"], {COMPLETION_VARIABLE: "bash_complete"}) is None


class _Stream:
    def __init__(self, encoding: str | None) -> None:
        self.encoding = encoding


def test_the_launcher_writes_only_to_streams_click_writes_to_as_they_are() -> None:
    assert streams_written_as_they_are([_Stream("utf-8"), _Stream("UTF8"), _Stream("latin-1")])
    assert streams_written_as_they_are([_Stream("no-such-codec")])  # click leaves it as it is too
    assert not streams_written_as_they_are([_Stream("utf-8"), _Stream("ascii")])
    assert not streams_written_as_they_are([_Stream("ANSI_X3.4-1968")])  # ASCII by another name
    assert not streams_written_as_they_are([_Stream(None)])
    assert not streams_written_as_they_are([None])


def both_ways(games: Path, *args: str, **environ: str) -> tuple[subprocess.CompletedProcess[bytes], ...]:
    """``mortecouille ARGS`` by the launcher, then by click, on the store ``games`` named by the
    environment, as a referee's shell names it (``environ``: more variables)."""
    env = {name: value for name, value in os.environ.items() if name != "MORTECOUILLE_STORE"}
    env |= {"MORTECOUILLE_GAMES": str(games), **environ}
    done = []
    for program in (LAUNCHER, CLICK):
        done.append(subprocess.run([*program, *args], capture_output=True, env=env, timeout=120, check=False))
    return tuple(done)


def assert_the_same(games: Path, *args: str, **environ: str) -> subprocess.CompletedProcess[bytes]:
    """Run ``args`` both ways and check they agree byte for byte; the launcher's run."""
    before = tree_digest(games)
    launched, clicked = both_ways(games, *args, **environ)
    assert (launched.returncode, launched.stdout, launched.stderr) == (
        clicked.returncode,
        clicked.stdout,
        clicked.stderr,
    )
    if launched.returncode != 0:
        assert tree_digest(games) == before  # a refused read writes nothing
    return launched


@pytest.fixture
def games(tmp_path: Path) -> Path:
    """A games folder: ``g``, a mortecouille game where A bought Hope; ``b``, a blockade game
    with a sloop placed."""
    games = tmp_path / "games"
    assert run(games, "new", "g", "--players", "A,B", "--budget", "100000").exit_code == 0
    assert run(games, "buy", "g", "A", "red-small", "Hope").exit_code == 0
    assert run(games, "new", "b", "--ruleset", "blockade", "--players", "A,B").exit_code == 0
    placed = run(games, "place", "b", "S1", "B2", "--kind", "sloop", "--owner", "A")
    assert placed.exit_code == 0, placed.output
    return games


@pytest.mark.parametrize("game", ["g", "b"])
@pytest.mark.parametrize("json_option", [[], ["--json"]])
def test_state_of_a_game_is_the_same_launched_or_through_click(
    games: Path, game: str, json_option: list[str]
) -> None:
    shown = assert_the_same(games, "state", game, *json_option)
    assert shown.returncode == 0, shown.stderr
    assert (b'"state_hash"' if json_option else b"state hash") in shown.stdout


@pytest.mark.parametrize(
    ("game", "code", "says"),
    [
        ("nosuch", 2, b"nosuch"),
        ("../g", 2, b"not a valid game name"),
        ("g\x1b[2Jx", 2, b"\\x1b"),  # the name escaped in the error line, never sent to the terminal
    ],
)
def test_a_game_that_cannot_be_named_or_found_is_refused_alike(
    games: Path, game: str, code: int, says: bytes
) -> None:
    refused = assert_the_same(games, "state", game)
    assert refused.returncode == code and says in refused.stderr and refused.stdout == b""


def test_a_corrupt_line_exits_4_alike(games: Path) -> None:
    path = games / "g.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([lines[0], b'{"seq": 2, "type": \n', *lines[2:]]))
    refused = assert_the_same(games, "state", "g")
    assert refused.returncode == 4, refused.stderr


def test_a_torn_log_exits_4_alike(games: Path) -> None:
    path = games / "g.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + whole.splitlines(keepends=True)[-1][:-20])
    refused = assert_the_same(games, "state", "g", "--json")
    assert refused.returncode == 4 and b"torn last line" in refused.stderr


def test_a_log_the_system_will_not_read_exits_1_alike(games: Path) -> None:
    (games / "g.jsonl").unlink()
    (games / "g.jsonl").mkdir()  # a directory where the log should be: reading it fails
    refused = assert_the_same(games, "state", "g")
    assert refused.returncode in (1, 2, 4) and refused.stderr.startswith(b"error: ")


def test_two_stores_named_by_the_environment_are_refused_alike(games: Path) -> None:
    refused = assert_the_same(games, "state", "g", MORTECOUILLE_STORE=f"file:{games}")
    assert refused.returncode == 2 and b"$MORTECOUILLE_STORE" in refused.stderr


def test_the_store_named_by_its_url_is_read_alike(games: Path) -> None:
    env = {**os.environ, "MORTECOUILLE_STORE": f"file:{games}"}
    env.pop("MORTECOUILLE_GAMES", None)
    launched, clicked = (
        subprocess.run([*program, "state", "b"], capture_output=True, env=env, timeout=120, check=False)
        for program in (LAUNCHER, CLICK)
    )
    assert launched.returncode == 0 and (launched.stdout, launched.stderr) == (clicked.stdout, clicked.stderr)


def test_a_name_ascii_cannot_write_is_shown_alike_on_an_ascii_stdout(tmp_path: Path) -> None:
    games = tmp_path / "games"
    assert run(games, "new", "u", "--players", "Zoë,Bob").exit_code == 0
    shown = assert_the_same(games, "state", "u", PYTHONIOENCODING="ascii")
    assert shown.returncode == 0 and "Zoë".encode() in shown.stdout


def test_any_other_state_command_line_is_clicks(games: Path) -> None:
    helped = assert_the_same(games, "state", "--help")
    assert helped.returncode == 0 and b"Usage: " in helped.stdout
    misused = assert_the_same(games, "state", "g", "--json", "extra")
    assert misused.returncode == 2 and b"Got unexpected extra argument" in misused.stderr
