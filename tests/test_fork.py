"""``fork``: a what-if game from another game's log, the original untouched, verify still whole."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from mortecouille.core.dice import RollIdentity, seeded_value
from mortecouille.core.game import fold
from mortecouille.core.state import state_hash
from mortecouille.events.game import DieRolled, TurnEnded, TurnStarted
from mortecouille.events.storage.file_log import GameLog
from tests.cli_helpers import play_blockade_turn, run
from tests.forgery import log_bodies


def test_fork_copies_up_to_seq_and_records_its_origin(games: Path) -> None:
    original = play_blockade_turn(games)
    before = original.read_bytes()
    result = run(games, "fork", "b", "w", "--at", "4")
    assert result.exit_code == 0, result.output
    assert original.read_bytes() == before
    forked = log_bodies(games / "w.jsonl")
    assert len(forked) == 5
    created = forked[0]
    assert created["game"] == "w" and created["forked_from"] == "b" and created["forked_at_seq"] == 4
    copied, source = forked[1:], log_bodies(original)[1:5]
    # the envelope is each log's own: its chain, and the nonces of the batches that log appended
    # (the fork copies nothing secret, the tokens of a turn resolved: its creation draws none)
    assert all("nonce" not in line for line in forked)
    strip = ("prev", "hash", "nonce")
    assert [{k: v for k, v in e.items() if k not in strip} for e in copied] == [
        {k: v for k, v in e.items() if k not in strip} for e in source
    ]
    assert forked[1]["prev"] == created["hash"]  # stamped into the fork's own chain
    # what-if: the same position, other tokens
    assert run(games, "tokens", "w", "Frig", "-", "-", "-", "-", "--replace").exit_code == 0
    assert run(games, "resolve", "w").exit_code == 0
    assert run(games, "verify", "w").exit_code == 0
    state = json.loads(run(games, "state", "w", "--json").output)
    assert state["forked_from"] == "b" and state["ships"]["Frig"]["at"] == [2, 3]


def test_a_fork_after_a_turn_recomputes_its_state_hashes_and_verifies(games: Path) -> None:
    original = play_blockade_turn(games)
    end = len(log_bodies(original)) - 1
    assert run(games, "fork", "b", "w", "--at", str(end)).exit_code == 0
    ended = [e for e in log_bodies(games / "w.jsonl") if e["type"] == "turn-ended"]
    # the game's name is in the state
    assert ended[0]["state_hash"] != log_bodies(original)[end]["state_hash"]
    report = json.loads(run(games, "verify", "w", "--json").output)
    assert report["ok"], report
    explained = run(games, "explain", "w", "--turn", "1").output
    assert "collide over C3" in explained


def test_fork_refuses_a_seq_beyond_the_log_or_inside_a_turn(games: Path) -> None:
    original = play_blockade_turn(games)
    lines = log_bodies(original)
    started = next(int(str(e["seq"])) for e in lines if e["type"] == "turn-started")
    for at in (str(len(lines)), str(started), str(started + 3), "-1"):
        refused = run(games, "fork", "b", "w", "--at", at)
        assert refused.exit_code == 2 and "--at" in refused.output, (at, refused.output)
        assert not (games / "w.jsonl").exists()
    inside = run(games, "fork", "b", "w", "--at", str(started + 3)).output
    assert f"seq {started - 1}" in inside and "turn 1" in inside
    assert run(games, "fork", "b", "b", "--at", "2").exit_code == 3  # the name is taken


def test_fork_refuses_a_short_chosen_seed_unless_weak_seed(games: Path) -> None:
    """D2: a fork's dice are as public as any game's, so a short chosen seed is refused as ``new``
    refuses it (naming --seed), and accepted only when the table says so with --weak-seed."""
    play_blockade_turn(games)
    refused = run(games, "fork", "b", "w", "--at", "2", "--seed", "short")
    assert refused.exit_code == 2 and "--seed" in refused.output and "--weak-seed" in refused.output
    assert not (games / "w.jsonl").exists() and not (games / "w.seed").exists()
    assert run(games, "fork", "b", "w", "--at", "2", "--seed", "short", "--weak-seed").exit_code == 0
    assert run(games, "fork", "b", "x", "--at", "2", "--seed", "a-long-enough-seed-1234").exit_code == 0


def roll(game: str, seed: str, index: int, turn: int = 1) -> DieRolled:
    identity = RollIdentity(game, turn, "wind", "Sloopy", "wind", index)
    return DieRolled(
        turn=turn,
        phase="wind",
        ship="Sloopy",
        purpose="wind",
        index=index,
        sides=6,
        value=seeded_value(seed, identity),
        source="seeded",
    )


def append_turn(log: GameLog, turn: int, rolls: list[DieRolled]) -> None:
    """``rolls`` inside a turn's resolution, where dice belong (D2), its end hash as a fold gives it."""
    log.append([TurnStarted(turn=turn), *rolls])
    log.append([TurnEnded(turn=turn, state_hash=state_hash(fold(log.read())))])


def test_copied_seeded_rolls_are_accepted_and_the_forks_own_rolls_checked(
    games: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the turns appended here roll by D2 alone (the seed and the roll's identity): a game of the
    # scheme before the players' contributions (D3), as every game was when forks were written
    monkeypatch.setattr("mortecouille.app.commands.NEW_GAME_DICE_SCHEME", None)
    assert (
        run(
            games,
            "new",
            "o",
            "--ruleset",
            "blockade",
            "--players",
            "Anne,Bart",
            "--board",
            "8x8",
            "--seed",
            "original-seed",
            "--weak-seed",
        ).exit_code
        == 0
    )
    original = GameLog(games / "o.jsonl")
    append_turn(original, 1, [roll("o", "original-seed", i) for i in range(6)])  # seq 1..8
    assert run(games, "fork", "o", "f", "--at", "8", "--seed", "fork-seed", "--weak-seed").exit_code == 0
    # the copies would not pass as the fork's own: its seed and name give other values
    assert any(roll("f", "fork-seed", i).value != roll("o", "original-seed", i).value for i in range(6))
    fork = GameLog(games / "f.jsonl")
    append_turn(fork, 2, [roll("f", "fork-seed", i, turn=2) for i in range(3)])
    assert run(games, "end", "f").exit_code == 0
    report = json.loads(run(games, "verify", "f", "--json").output)
    dice = next(f for f in report["findings"] if f["check"] == "dice")
    assert dice["ok"] and "3 seeded rolls reproduced; 6 copied from o" in dice["detail"]
    # a roll of the fork's own that its seed does not give is still caught
    assert run(games, "fork", "o", "g", "--at", "8", "--seed", "fork-seed", "--weak-seed").exit_code == 0
    wrong = roll("g", "fork-seed", 0, turn=2)
    append_turn(GameLog(games / "g.jsonl"), 2, [msgspec.structs.replace(wrong, value=wrong.value % 6 + 1)])
    assert run(games, "end", "g").exit_code == 0
    failed = json.loads(run(games, "verify", "g", "--json").output)
    assert not failed["ok"] and any(f["check"] == "dice" and f["seq"] == 10 for f in failed["findings"])
