"""The referee's first commands: new, log, state, verify, end, repair, and their exit codes."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest

from tests.cli_helpers import run, tree_digest


@pytest.fixture
def game(games: Path) -> Path:
    options = ("--seed", "s3cret", "--weak-seed", "--board", "12x10", "--rock", "C5", "--wind", "D4:E", "--whirlpool", "F6")
    result = run(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", *options)
    assert result.exit_code == 0, result.output
    return games


def test_new_writes_a_first_event_committing_to_rules_version_and_seed(game: Path) -> None:
    first = json.loads((game / "g.jsonl").read_text().splitlines()[0])
    assert first["type"] == "game-created" and first["seq"] == 0
    # salted: HMAC-SHA256 keyed with the game's own random salt, no plain SHA-256
    assert "seed_sha256" not in first or first["seed_sha256"] is None
    salted = hmac.new(first["seed_salt"].encode(), b"s3cret", hashlib.sha256).hexdigest()
    assert len(first["seed_salt"]) == 32 and first["seed_hmac"] == salted
    assert first["rules_version"] and first["players"] == ["Anne", "Bart"]
    assert first["board"]["rocks"] == [[2, 4]] and first["board"]["winds"] == [{"at": [3, 3], "dir": "E"}]
    assert "s3cret" not in (game / "g.jsonl").read_text()


def test_log_state_and_verify_on_a_real_game(game: Path) -> None:
    assert "game-created" in run(game, "log", "g").output
    raw = run(game, "log", "g", "--json").output.splitlines()
    assert json.loads(raw[0])["type"] == "game-created"
    state = json.loads(run(game, "state", "g", "--json").output)
    assert state["game"] == "g" and len(state["state_hash"]) == 64
    assert "board 12x10" in run(game, "state", "g").output
    verified = run(game, "verify", "g")
    assert verified.exit_code == 0 and "verified" in verified.output


def test_end_reveals_the_seed_and_verify_checks_it(game: Path) -> None:
    result = run(game, "end", "g", "--winner", "Anne")
    assert result.exit_code == 0, result.output
    last = json.loads((game / "g.jsonl").read_text().splitlines()[-1])
    assert last["type"] == "game-ended" and last["seed"] == "s3cret" and last["winner"] == "Anne"
    assert run(game, "verify", "g").exit_code == 0
    again = run(game, "end", "g")
    assert again.exit_code == 2 and "T3" in again.output


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["new", "h", "--players", "A,B", "--board", "5"], "--board"),
        (["new", "h", "--players", "A,A"], "--players"),
        (["new", "h", "--players", "A,B", "--budget", "-1"], "--budget"),
        (["new", "h", "--players", "A,B", "--rock", "Z99"], "--rock Z99: Z99 is off"),
        (["new", "h", "--players", "A,B", "--rock", "C3", "--whirlpool", "B2"], "B7"),
        (["new", "h", "--players", "A,B", "--wind", "C3:Q"], "--wind"),
        (["new", "h", "--players", "A,B", "--dice", "table", "--seed", "x"], "--seed"),
        (["new", "g", "--players", "A,B"], "already exists"),
        (["end", "g", "--winner", "Zed"], "--winner"),
        (["state", "nosuch"], "nosuch"),
    ],
)
def test_bad_input_exits_2_or_3_names_the_field_and_changes_nothing(
    game: Path, args: list[str], names: str
) -> None:
    before = tree_digest(game)
    result = run(game, *args)
    assert result.exit_code in (2, 3), result.output
    assert names in result.output
    assert tree_digest(game) == before


def test_verify_exits_4_on_a_tampered_log(game: Path) -> None:
    path = game / "g.jsonl"
    path.write_text(path.read_text().replace('"budget":100000', '"budget":900000'))
    result = run(game, "verify", "g")
    assert result.exit_code == 4 and "FAIL" in result.output


def test_a_torn_log_is_reported_with_exit_4_and_repair_restores_it(game: Path) -> None:
    # an unfinished append: a line torn after the anchored one (cutting into the anchored line
    # itself is a loss, which repair refuses: tests/test_repair_loss.py)
    run(game, "end", "g")
    path = game / "g.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + whole.splitlines(keepends=True)[-1][:-20])
    result = run(game, "state", "g")
    assert result.exit_code == 4 and "torn last line" in result.output
    refused = run(game, "repair", "g", input="n\n")
    assert refused.exit_code == 2 and path.read_bytes().startswith(whole) and path.read_bytes() != whole
    assert run(game, "repair", "g", "--yes").exit_code == 0
    assert path.read_bytes() == whole
    assert run(game, "verify", "g").exit_code == 0


def test_log_json_writes_structured_lines_on_stderr(game: Path) -> None:
    result = run(game, "-v", "--log-json", "end", "g")
    assert result.exit_code == 0
    record = json.loads(result.stderr.splitlines()[-1])
    assert record["event"] == "appended" and record["game"] == "g"
