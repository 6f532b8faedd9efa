"""Driving the ``mortecouille`` command line in-process, and checking what it left on disk."""

from __future__ import annotations

import hashlib
from pathlib import Path

from click.testing import CliRunner, Result

from mortecouille.cli.main import cli


def run(games: Path, *args: str, input: str | None = None) -> Result:
    """``mortecouille --games-dir GAMES ARGS...`` (``input``: what is typed at its prompts)."""
    return CliRunner().invoke(cli, ["--games-dir", str(games), *args], input=input)


def run_cli(*args: str) -> Result:
    """``mortecouille ARGS...`` with no games directory: commands that are given their paths."""
    return CliRunner().invoke(cli, list(args))


def ok(games: Path, *args: str) -> str:
    """Run a command that must succeed (exit 0, else the test fails showing its output); its output."""
    result = run(games, *args)
    assert result.exit_code == 0, result.output
    return result.output


def refused(games: Path, *args: str) -> str:
    """Run a command that must be refused (exit 2) leaving every file byte for byte as it was, and
    no traceback; its output."""
    before = tree_digest(games)
    result = run(games, *args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert tree_digest(games) == before
    return result.output


def tree_digest(root: Path) -> str:
    """One digest of every file below ``root``, its path (relative to ``root``) and its bytes: equal
    digests mean that nothing was written, added or removed. A missing ``root`` is an empty tree."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")) if root.exists() else []:
        if path.is_file():
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def set_up_harbour(games: Path, name: str = "b") -> Path:
    """The README's blockade harbour: an 8x8 board with a rock, a wind tile and a whirlpool, the
    sloop Sloopy (Anne) on C2 and the war-frigate Frig (Bart) on C4 facing south; no turn yet."""
    harbour = ("--board", "8x8", "--rock", "E5", "--wind", "C3:E", "--whirlpool", "F2", "--seed", "1", "--weak-seed")
    assert run(games, "new", name, "--ruleset", "blockade", "--players", "Anne,Bart", *harbour).exit_code == 0
    assert run(games, "place", name, "Sloopy", "C2", "--kind", "sloop", "--owner", "Anne").exit_code == 0
    assert (
        run(
            games, "place", name, "Frig", "C4", "--kind", "war-frigate", "--owner", "Bart", "--facing", "S"
        ).exit_code
        == 0
    )
    return games


def play_blockade_turn(games: Path, name: str = "b") -> Path:
    """The README's harbour (``set_up_harbour``) and its turn 1, resolved: an M1e contest over C3
    and an M3 bump in the wind. Returns the log's path."""
    set_up_harbour(games, name)
    assert run(games, "tokens", name, "Sloopy", "F", "F", "L", "-").exit_code == 0
    assert run(games, "tokens", name, "Frig", "F", "-", "R", "F").exit_code == 0
    assert run(games, "resolve", name).exit_code == 0
    return games / f"{name}.jsonl"
