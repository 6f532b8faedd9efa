"""A game name ending with the suffix of a game's own file (``new x.jsonl``) is refused with the name
to use instead: it would otherwise create ``x.jsonl.jsonl``, a game no later command finds."""

from __future__ import annotations

from pathlib import Path

import pytest

from mortecouille.app.games import SIBLINGS
from mortecouille.core.limits import GAME_FILE_SUFFIXES
from tests.cli_helpers import ok, play_blockade_turn, run, tree_digest


@pytest.mark.parametrize("name", ["x.jsonl", "x.head", "x.seed", "x.lock", "x.seats", "x.seats-new", "x.JSONL"])
def test_new_refuses_a_game_name_ending_with_a_game_file_suffix_naming_the_stem(
    name: str, games: Path
) -> None:
    games.mkdir()
    result = run(games, "new", name, "--players", "Anne,Bart")
    assert result.exit_code == 2 and "GAME" in result.output and "name the game 'x'" in result.output, (
        result.output
    )
    assert "Traceback" not in result.output
    assert list(games.iterdir()) == []


def test_fork_refuses_a_new_game_name_ending_with_jsonl(games: Path) -> None:
    play_blockade_turn(games)
    before = tree_digest(games)
    result = run(games, "fork", "b", "c.jsonl", "--at", "1")
    assert result.exit_code == 2 and "name the game 'c'" in result.output, result.output
    assert tree_digest(games) == before


def test_a_dot_inside_a_game_name_is_still_accepted(games: Path) -> None:
    ok(games, "new", "spring.2026", "--players", "Anne,Bart")
    assert (games / "spring.2026.jsonl").exists()


def test_every_file_kept_beside_a_log_is_a_game_file_suffix() -> None:
    """The files the app keeps beside a log (seed, seats) are game files too: no game may be named
    after them and no output may overwrite them."""
    assert set(SIBLINGS) <= GAME_FILE_SUFFIXES
