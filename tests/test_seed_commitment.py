"""Weak seeds: the commitment is salted, short chosen seeds are refused unless
``--weak-seed``, the demo's seed is random unless given, and old unsalted logs still verify."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from mortecouille.app.commands import seed_path
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.cli_helpers import run, tree_digest
from tests.forgery import forge

GOLDEN = Path(__file__).parent / "golden"
BLOCKADE = ("--ruleset", "blockade", "--players", "Anne,Bart", "--board", "8x8")
LONG_SEED = "the sixteen-char seed"


def first_line(games: Path, game: str) -> dict[str, Any]:
    line = (games / f"{game}.jsonl").read_bytes().splitlines()[0]
    result: dict[str, Any] = json.loads(line)
    return result


def test_the_4711_brute_force_finds_nothing_in_a_salted_commitment(tmp_path: Path) -> None:
    """The red team's attack: every seed up to 99999 hashed, compared with the first line."""
    assert run(tmp_path, "new", "g", *BLOCKADE, "--seed", "4711", "--weak-seed").exit_code == 0
    first = first_line(tmp_path, "g")
    published = {value for value in first.values() if isinstance(value, str)}
    guessed = [n for n in range(100000) if hashlib.sha256(str(n).encode()).hexdigest() in published]
    assert guessed == []
    assert len(first["seed_salt"]) == 32 and len(first["seed_hmac"]) == 64


def test_two_games_with_one_seed_publish_unrelated_commitments(tmp_path: Path) -> None:
    for game in ("a", "b"):
        assert run(tmp_path, "new", game, *BLOCKADE, "--seed", LONG_SEED).exit_code == 0
    a, b = first_line(tmp_path, "a"), first_line(tmp_path, "b")
    assert a["seed_salt"] != b["seed_salt"] and a["seed_hmac"] != b["seed_hmac"]


def test_a_chosen_seed_shorter_than_16_characters_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    before = tree_digest(tmp_path)
    for seed in ("4711", "x" * 15):
        refused = run(tmp_path, "new", "g", *BLOCKADE, "--seed", seed)
        assert refused.exit_code == 2 and "--seed" in refused.output and "--weak-seed" in refused.output
        assert "Traceback" not in refused.output
        assert tree_digest(tmp_path) == before
    assert run(tmp_path, "new", "g", *BLOCKADE, "--seed", "x" * 16).exit_code == 0
    assert run(tmp_path, "new", "h", *BLOCKADE, "--seed", "4711", "--weak-seed").exit_code == 0
    assert seed_path(GameLog(tmp_path / "h.jsonl")).read_text().strip() == "4711"


def test_a_salted_game_reveals_its_seed_and_verifies_and_a_wrong_commitment_is_caught(tmp_path: Path) -> None:
    assert run(tmp_path, "new", "g", *BLOCKADE, "--seed", LONG_SEED).exit_code == 0
    assert run(tmp_path, "end", "g", "--winner", "Anne").exit_code == 0
    log = GameLog(tmp_path / "g.jsonl")
    assert verify_log(log).ok
    forge(log.path, {0: {"seed_salt": "00" * 16}})  # the seed no longer matches what was published
    report = verify_log(log)
    assert not report.ok and any(f.check == "dice" and "commitment" in f.detail for f in report.findings)


def test_the_demo_seed_is_random_unless_given_and_no_name_gives_it_away(tmp_path: Path) -> None:
    seeds = []
    for _ in range(2):
        result = run(tmp_path, "demo", "--max-turns", "1")
        assert result.exit_code == 0, result.output
    for log in sorted(tmp_path.glob("*.jsonl")):
        seed = seed_path(GameLog(log)).read_text().strip()
        assert len(seed) >= 16 and seed not in log.name
        seeds.append(seed)
    assert len(set(seeds)) == 2
    assert run(tmp_path, "demo", "--seed", "chosen", "--game", "c", "--max-turns", "1").exit_code == 0
    assert seed_path(GameLog(tmp_path / "c.jsonl")).read_text().strip() == "chosen"


def test_old_unsalted_logs_still_verify(tmp_path: Path) -> None:
    for name in ("mortecouille_seeded", "turn_started_v1", "mortecouille_scenario"):
        shutil.copy(GOLDEN / "before-salt" / f"{name}.jsonl", tmp_path / f"{name}.jsonl")
        shutil.copy(GOLDEN / "before-salt" / f"{name}.head", tmp_path / f"{name}.head")
        first = first_line(tmp_path, name)
        assert first["seed_sha256"] and "seed_salt" not in first
        assert verify_log(GameLog(tmp_path / f"{name}.jsonl")).ok


def test_the_current_seeded_golden_game_commits_with_the_salted_hmac_and_verifies(tmp_path: Path) -> None:
    for suffix in (".jsonl", ".head"):
        shutil.copy(GOLDEN / f"mortecouille_seeded{suffix}", tmp_path / f"mortecouille_seeded{suffix}")
    first = first_line(tmp_path, "mortecouille_seeded")
    assert first["seed_salt"] and first["seed_hmac"] and first["seed_sha256"] is None
    assert verify_log(GameLog(tmp_path / "mortecouille_seeded.jsonl")).ok
