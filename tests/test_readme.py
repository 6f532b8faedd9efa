"""The README's walkthroughs are run as written, so they stay true."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


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


@pytest.mark.parametrize("heading", ["A referee's walkthrough (mortecouille)", "A referee's walkthrough (blockade)"])
def test_every_walkthrough_command_succeeds(heading: str, tmp_path: Path) -> None:
    for words in walkthrough(heading):
        result = CliRunner().invoke(cli, ["--games-dir", str(tmp_path), *words])
        assert result.exit_code == 0, (words, result.output)
