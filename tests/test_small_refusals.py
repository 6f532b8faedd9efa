"""The store's small refusals: a stale-looking ``--expect-seq -1`` is bad input, not a
conflict, and a torn tail is reported at its seq (never "FAILED at seq None")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import ok, run, tree_digest


@pytest.fixture
def game(games: Path) -> Path:
    ok(games, "new", "g", "--ruleset", "blockade", "--players", "Anne,Bart")
    return games


@pytest.mark.parametrize("command", [["place", "g", "A", "C3", "--kind", "sloop"], ["tokens", "g", "A", "F"]])
def test_a_negative_expect_seq_exits_2_naming_the_option_and_writes_nothing(
    game: Path, command: list[str]
) -> None:
    if command[0] == "tokens":
        ok(game, "place", "g", "A", "C3", "--kind", "sloop")
    before = tree_digest(game)
    result = run(game, *command, "--expect-seq", "-1")
    assert result.exit_code == 2, result.output
    assert "--expect-seq" in result.output
    assert tree_digest(game) == before


def test_verify_of_a_torn_log_names_the_seq_of_the_torn_line(game: Path) -> None:
    ok(game, "place", "g", "A", "C3", "--kind", "sloop")
    path = game / "g.jsonl"
    path.write_bytes(path.read_bytes() + b'{"seq":2,"ty')
    result = run(game, "verify", "g")
    assert result.exit_code == 4, result.output
    assert "seq None" not in result.output
    assert "FAILED at seq 2" in result.output
