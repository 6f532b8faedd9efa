"""``simulate``: seeded bot games into normal, verifiable logs, reproducible game by game."""

from __future__ import annotations

import stat
from pathlib import Path

from mortecouille.app.simulate import game_name
from mortecouille.core.dice import seed_commitment
from mortecouille.events.game import GameCreated, GameEnded
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.cli_helpers import run_cli


def test_simulated_games_are_verified_logs_with_their_seed_beside_them(tmp_path: Path) -> None:
    result = run_cli(
        "simulate", "--games", "2", "--seed", "s", "--to", str(tmp_path / "a"), "--max-turns", "6"
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("simulated 2 game(s)")
    names = sorted(path.stem for path in (tmp_path / "a").glob("*.jsonl"))
    assert names == ["sim-s-0", "sim-s-1"]
    for index, name in enumerate(names):
        log = GameLog(tmp_path / "a" / f"{name}.jsonl")
        report = verify_log(log)
        assert report.ok, report.findings
        events = log.read()
        created, ended = events[0], events[-1]
        assert isinstance(created, GameCreated) and isinstance(ended, GameEnded)
        assert ended.seed == f"s-{index}"  # game i rolls with seed S-i
        assert created.seed_sha256 == seed_commitment(f"s-{index}")
        seed_file = log.path.with_suffix(".seed")
        assert seed_file.read_text().strip() == f"s-{index}"
        assert stat.S_IMODE(seed_file.stat().st_mode) == 0o600
        assert log.read_head() is not None and log.read_head().seq == len(events) - 1  # type: ignore[union-attr]


def test_the_same_seed_plays_the_same_games(tmp_path: Path) -> None:
    for target in ("a", "b"):
        assert (
            run_cli(
                "simulate",
                "--games",
                "2",
                "--seed",
                "same",
                "--to",
                str(tmp_path / target),
                "--max-turns",
                "5",
            ).exit_code
            == 0
        )
    for name in ("sim-same-0", "sim-same-1"):
        assert (tmp_path / "a" / f"{name}.jsonl").read_bytes() == (
            tmp_path / "b" / f"{name}.jsonl"
        ).read_bytes()
    assert (
        run_cli(
            "simulate", "--games", "1", "--seed", "other", "--to", str(tmp_path / "c"), "--max-turns", "5"
        ).exit_code
        == 0
    )
    first = (tmp_path / "a" / "sim-same-0.jsonl").read_bytes()
    assert (tmp_path / "c" / "sim-other-0.jsonl").read_bytes() != first


def test_blockade_has_no_bots(tmp_path: Path) -> None:
    result = run_cli(
        "simulate", "--games", "1", "--seed", "s", "--to", str(tmp_path / "a"), "--ruleset", "blockade"
    )
    assert result.exit_code == 2
    assert "only mortecouille has built-in bots" in result.output
    assert not (tmp_path / "a").exists()


def test_existing_games_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    assert (
        run_cli(
            "simulate", "--games", "1", "--seed", "s", "--to", str(tmp_path), "--max-turns", "2"
        ).exit_code
        == 0
    )
    before = sorted(p.name for p in tmp_path.iterdir())
    result = run_cli("simulate", "--games", "3", "--seed", "s", "--to", str(tmp_path), "--max-turns", "2")
    assert result.exit_code == 3 and "sim-s-0" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_budget_too_small_for_the_fleets_is_refused(tmp_path: Path) -> None:
    result = run_cli("simulate", "--games", "1", "--seed", "s", "--to", str(tmp_path), "--budget", "1000")
    assert result.exit_code == 2 and "--budget" in result.output


def test_seed_characters_a_game_name_cannot_hold_are_replaced() -> None:
    assert game_name("my seed/1", 4) == "sim-my_seed_1-4"
