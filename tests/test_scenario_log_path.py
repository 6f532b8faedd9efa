"""``scenario --log X`` never clobbers a file beside X.

It used to overwrite X's ``.head`` sibling (making a real game fail ``verify`` with a false tamper
report), and ``--log out.head`` lost the log to its own anchor. Every refusal writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import ok, play_blockade_turn, tree_digest
from tests.test_scenario import EXAMPLE, run_file


@pytest.fixture
def games(tmp_path: Path) -> Path:
    games = tmp_path / "games"
    play_blockade_turn(games, "g")
    return games


@pytest.mark.parametrize("name", ["g.log", "g", "g.json"])
def test_a_log_whose_head_sibling_is_a_real_games_anchor_is_refused(
    games: Path, tmp_path: Path, name: str
) -> None:
    before = tree_digest(tmp_path)
    code, output = run_file(tmp_path, EXAMPLE, "--log", str(games / name))
    assert code == 3, output
    assert "g.head already exists" in output
    (tmp_path / "turn.json").unlink()
    assert tree_digest(tmp_path) == before
    assert "verified" in ok(games, "verify", "g")


@pytest.mark.parametrize("name", ["g.seed", "g.head", "g.jsonl"])
def test_a_log_naming_an_existing_games_file_is_refused(games: Path, tmp_path: Path, name: str) -> None:
    before = tree_digest(games)
    code, output = run_file(tmp_path, EXAMPLE, "--log", str(games / name))
    assert code in (2, 3), output
    assert tree_digest(games) == before


@pytest.mark.parametrize("suffix", [".head", ".seed", ".tmp"])
def test_a_log_named_like_a_sidecar_is_refused_and_nothing_is_written(tmp_path: Path, suffix: str) -> None:
    target = tmp_path / f"out{suffix}"
    code, output = run_file(tmp_path, EXAMPLE, "--log", str(target))
    assert code == 2, output
    assert "--log" in output and suffix in output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["turn.json"]


def test_a_log_whose_seed_sibling_exists_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out.seed").write_text("someone's seed\n")
    code, output = run_file(tmp_path, EXAMPLE, "--log", str(tmp_path / "out.jsonl"))
    assert code == 3, output
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "out.head").exists()


def test_a_link_planted_at_the_log_path_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "out.jsonl").symlink_to(victim)
    code, output = run_file(tmp_path, EXAMPLE, "--log", str(tmp_path / "out.jsonl"))
    assert code == 3, output
    assert victim.read_text() == "precious\n" and not (tmp_path / "out.head").exists()


def test_a_log_path_too_long_for_its_anchor_is_refused_naming_log(tmp_path: Path) -> None:
    code, output = run_file(tmp_path, EXAMPLE, "--log", str(tmp_path / ("n" * 247 + ".jsonl")))
    assert code == 2, output
    assert "--log" in output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["turn.json"]


def test_a_fresh_log_path_is_still_kept_and_verifies(tmp_path: Path) -> None:
    code, output = run_file(tmp_path, EXAMPLE, "--json", "--log", str(tmp_path / "kept.jsonl"))
    assert code == 0, output
    assert json.loads(output)["log"] == str(tmp_path / "kept.jsonl")
    assert (tmp_path / "kept.head").exists()
