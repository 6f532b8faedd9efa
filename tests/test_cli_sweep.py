"""A bad-input sweep of the whole CLI (issue 8): every command, given missing, malformed or
out-of-range arguments, exits 2 with a message naming the argument and changes no file.

The table lists, per command, the arguments and a piece of text the message must contain (the
argument's name). Every command of ``mortecouille --help`` must appear in the table.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from cli.main import cli

G = "b"  # a blockade game with two ships
M = "m"  # a mortecouille game, nothing bought

CASES: list[Any] = [
    # (command, arguments after it, text the message must contain)
    ("new", [], "GAME"),
    ("new", ["x"], "--players"),
    ("new", ["x", "--players", "A,B", "--board", "0x0"], "board"),
    ("new", ["x", "--players", "A,B", "--board", "axb"], "--board"),
    ("new", ["x", "--players", "A,B", "--budget", "ten"], "--budget"),
    ("new", ["x", "--players", "A,B", "--ruleset", "chess"], "--ruleset"),
    ("new", ["x", "--players", "A,B", "--dice", "loaded"], "--dice"),
    ("new", ["x/y", "--players", "A,B"], "GAME"),
    ("new", ["x", "--players", ""], "--players"),
    ("log", [], "GAME"),
    ("log", ["nosuch"], "nosuch"),
    ("log", ["../b"], "GAME"),
    ("state", [], "GAME"),
    ("state", ["nosuch"], "nosuch"),
    ("verify", [], "GAME"),
    ("verify", ["nosuch"], "nosuch"),
    ("end", [], "GAME"),
    ("end", [G, "--winner", "Zed"], "--winner"),
    ("repair", [], "GAME"),
    ("repair", ["nosuch"], "nosuch"),
    ("place", [G, "S"], "SQUARE"),
    ("place", [G, "S", "Z99", "--kind", "sloop"], "B4"),  # names the rule; shows (25, 98), not Z99
    ("place", [G, "S", "C7", "--kind", "sloop", "--facing", "UP"], "--facing"),
    ("place", [G, "S", "C7", "--kind", "boat"], "--kind"),
    ("place", [G, "S", "C7", "--kind", "sloop", "--owner", "Zed"], "--owner"),
    ("place", [G, "S", "C7", "--kind", "sloop", "--expect-seq", "x"], "--expect-seq"),
    ("place", [G, "S", "C99", "--kind", "sloop"], "B4"),
    ("tokens", [G, "Sloopy"], "TOKENS"),
    ("tokens", [G, "Sloopy", "Q"], "TOKENS"),
    ("tokens", [G, "Sloopy", "F", "F", "F", "F", "F"], "TOKENS"),
    ("tokens", [G, "Nobody", "F"], "SHIP"),
    ("tokens", [G, "Sloopy", "F", "--expect-seq", "-"], "--expect-seq"),
    ("resolve", [], "GAME"),
    ("resolve", [G, "--dice", "x,y"], "--dice"),
    ("resolve", [G, "--expect-seq", "1.5"], "--expect-seq"),
    ("board", [], "GAME"),
    ("board", [G, "--turn", "x"], "--turn"),
    pytest.param(
        "board",
        [G, "--turn", "99"],
        "--turn",
    ),
    ("scenario", [], "FILE"),
    ("scenario", ["no-such-file.json"], "FILE"),
    ("buy", [M, "Anne", "red-small"], "NAME"),
    ("buy", [M, "Zed", "red-small", "S"], "Zed"),
    ("buy", [M, "Anne", "dragon", "S"], "dragon"),
    ("buy", [M, "Anne", "red-small", "S", "--option", "nope"], "nope"),
    ("equip", [M, "Nobody"], "OPTION"),
    ("equip", [M, "Nobody", "nope"], "Nobody"),
    ("seal", [M], "PLAYER"),
    ("seal", [M, "Zed"], "Zed"),
    ("sheet", [], "GAME"),
    ("sheet", [M, "Zed"], "Zed"),
    ("audit", [], "GAME"),
    ("audit", ["nosuch"], "nosuch"),
    ("order", [M, "S"], "ACTION"),
    ("order", [M, "Nobody", "advance"], "Nobody"),
    ("explain", [G], "--turn"),
    ("explain", [G, "--turn", "x"], "--turn"),
    ("explain", [G, "--turn", "99"], "99"),
    ("export", [G], "--html"),
    ("fork", [G, "f2"], "--at"),
    ("fork", [G, "f2", "--at", "999"], "--at"),
    ("fork", [G, "f2", "--at", "-1"], "--at"),
    ("odds", ["--cannons", "x"], "--cannons"),
    ("odds", ["--cannons", "9", "--distance", "1"], "--cannons"),
    ("odds", ["--bonus", "99"], "--bonus"),
    ("render", [G, "--turn", "0"], "--svg"),
    ("render", [G, "--svg", "x.svg"], "--turn"),
    ("render", [G, "--turn", "99", "--svg", "x.svg"], "99"),
    ("replay", [G, "--turn", "x"], "--turn"),
    ("replay", [G, "--seq", "999"], "999"),
    ("ruling", [G, "--text", "t"], "--rule"),
    ("ruling", [G, "--rule", "M3", "--text", "t", "--adjust", "Nobody", "damage=+1"], "Nobody"),
    ("ruling", [G, "--rule", "M3", "--text", "t", "--adjust", "Sloopy", "colour=red"], "colour"),
    ("demo", ["--max-turns", "0"], "--max-turns"),
]


def run(games: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--games-dir", str(games), *args])


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sweep")
    games = root / "games"
    for args in (
        ["new", G, "--ruleset", "blockade", "--players", "Anne,Bart", "--board", "8x8", "--seed", "s"],
        ["place", G, "Sloopy", "C2", "--kind", "sloop", "--owner", "Anne"],
        ["place", G, "Frig", "C4", "--kind", "war-frigate", "--owner", "Bart", "--facing", "S"],
        ["new", M, "--players", "Anne,Bart", "--budget", "100000", "--seed", "s"],
    ):
        result = run(games, *args)
        assert result.exit_code == 0, result.output
    return root


def command_of(case: Any) -> str:
    values = getattr(case, "values", case)  # a pytest.param or a plain tuple
    return str(values[0])


def test_every_command_is_in_the_table() -> None:
    listed = set(cli.commands)  # type: ignore[attr-defined]
    assert listed - {command_of(case) for case in CASES} == set()


@pytest.mark.parametrize(
    ("command", "args", "names"), CASES, ids=[f"{command_of(c)}-{i}" for i, c in enumerate(CASES)]
)
def test_bad_input_exits_2_names_the_argument_and_changes_nothing(
    workspace: Path, command: str, args: list[str], names: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)  # relative output files (x.svg) land where the digest sees them
    before = tree_digest(workspace)
    result = run(workspace / "games", command, *args)
    shown = f"mortecouille {command} {' '.join(args)} -> exit {result.exit_code}\n{result.output}"
    assert result.exception is None or isinstance(result.exception, SystemExit), shown + repr(
        result.exception
    )
    assert result.exit_code == 2, shown
    assert names in result.output, shown
    assert "Traceback" not in result.output, shown
    assert tree_digest(workspace) == before, shown
