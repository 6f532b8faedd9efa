"""The README's walkthroughs are run as written, so they stay true."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from mortecouille.cli.main import cli
from tests.helpers import ROOT

README = (ROOT / "README.md").read_text()


def walkthrough(heading: str) -> list[list[str]]:
    section = README.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, heading
    text = block.group(1).replace("\\\n", " ")
    commands = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            assert words[0] == "mortecouille", line
            commands.append(words[1:])
    return commands


@pytest.mark.parametrize(
    "heading",
    [
        "A referee's walkthrough (mortecouille)",
        "A referee's walkthrough (blockade)",
        "For the game designer: many games, one SQL engine",
    ],
)
def test_every_walkthrough_command_succeeds(
    heading: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the commands write relative paths (sims/, archive/, gunnery.svg)
    for words in walkthrough(heading):
        result = CliRunner().invoke(cli, ["--games-dir", "games", *words])
        assert result.exit_code == 0, (words, result.output)


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """The README opens with two commands (demo, tests); CI runs the second one, word for word."""
    blocks = re.findall(r"```sh\n(.*?)\n```", README, re.S)
    demo, tests = blocks[0], blocks[1]
    assert "mortecouille demo" in demo and tests.endswith(".venv/bin/pytest")
    assert tests in (ROOT / ".ci" / "run").read_text().splitlines()
