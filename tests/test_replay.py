"""``replay``: any position of a log, keyframes, stepping; ``verify --json`` on a divergence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mortecouille.cli.replay_commands import step_interactively
from mortecouille.core.game import evolve, fold
from mortecouille.core.state import EMPTY, GameState, state_hash
from mortecouille.events.base import Event
from mortecouille.events.blockade import TokensGiven
from mortecouille.events.board import Board
from mortecouille.events.game import GameCreated
from mortecouille.events.movement import ShipPlaced
from mortecouille.replays.reading.replay import Replay, position_after_turn
from tests.cli_helpers import play_blockade_turn, run
from tests.forgery import forge, log_bodies


def long_log(length: int) -> list[Event]:
    """A log of ``length`` events whose every event changes the state (tokens alternate)."""
    created = GameCreated(
        game="long",
        ruleset="blockade",
        players=("A",),
        budget=0,
        board=Board(width=8, height=8),
        rules_version="t",
        dice_mode="table",
        seq=0,
    )
    placed = ShipPlaced(ship="S", at=(1, 1), facing="N", kind="sloop", seq=1)
    tokens = [TokensGiven(ship="S", tokens=(("F", "L", "R")[i % 3],), seq=i) for i in range(2, length)]
    return [created, placed, *tokens]


class CountingEvolve:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, state: GameState, event: Event) -> GameState:
        self.calls += 1
        return evolve(state, event)


def test_seeking_the_middle_of_10000_events_costs_at_most_one_fold() -> None:
    events = long_log(10_000)
    counter = CountingEvolve()
    replay = Replay(events, interval=256, evolve_fn=counter)
    middle = replay.seek(5_000)
    assert counter.calls == 5_000 <= len(events)
    assert middle == fold(events[:5_000])
    # every keyframe carries the hash of the position it summarises
    assert [k.position for k in replay.keyframes] == list(range(0, 5_001, 256))
    for keyframe in replay.keyframes:
        assert keyframe.state_hash == state_hash(fold(events[: keyframe.position]))
    # stepping back starts from the nearest keyframe, never from the beginning
    for target in range(4_999, 4_700, -1):
        before = counter.calls
        assert replay.seek(target) == fold(events[:target])
        assert counter.calls - before < replay.interval
    # going on to the end folds only what was never folded: the whole walk stays near one fold
    before = counter.calls
    replay.seek(len(events))
    assert counter.calls - before <= len(events) - 4_608
    assert replay.state == fold(events)


def test_seeking_never_refolds_from_the_start_once_past() -> None:
    events = long_log(3_000)
    counter = CountingEvolve()
    replay = Replay(events, interval=100, evolve_fn=counter)
    replay.seek(2_950)
    first = counter.calls
    replay.seek(1_234)  # back: from keyframe 1200
    assert counter.calls - first == 34
    replay.seek(2_999)  # forward again: from keyframe 2900, not from the cursor at 1234
    assert counter.calls - first == 34 + 99
    with pytest.raises(ValueError):
        Replay(events, interval=0)


def test_replay_at_a_turn_or_seq_shows_the_board_and_ship_list(games: Path) -> None:
    play_blockade_turn(games)
    start = json.loads(run(games, "replay", "b", "--turn", "0", "--json").output)
    assert start["state"]["ships"]["Frig"]["at"] == [2, 3]
    # seqs 5-9: the players' dice contributions (D3), then the turn from seq 10
    mid = json.loads(run(games, "replay", "b", "--seq", "12", "--json").output)
    assert mid["seq"] == 12 and mid["state"]["ships"]["Frig"]["at"] == [2, 2]  # Frig won C3 (M1e)
    text = run(games, "replay", "b", "--seq", "16").output
    assert "at seq 16" in text and "Sloopy (Anne): sloop at C2 facing N; damage 3" in text
    bad = run(games, "replay", "b", "--seq", "999")
    assert bad.exit_code == 2 and "--seq" in bad.output


def test_replay_step_json_walks_the_turn_and_meets_the_recorded_state_hash(games: Path) -> None:
    path = play_blockade_turn(games)
    result = run(games, "replay", "b", "--turn", "1", "--step", "--json")
    assert result.exit_code == 0, result.output
    steps = [json.loads(line) for line in result.output.splitlines()]
    recorded = log_bodies(path)
    ended = next(e for e in recorded if e["type"] == "turn-ended")
    assert [s["seq"] for s in steps] == list(range(1, int(str(ended["seq"])) + 1))
    # the step just before TurnEnded is the position whose hash the turn recorded
    assert steps[-2]["state_hash"] == ended["state_hash"]
    collision = next(s for s in steps if s["type"] == "collision")
    assert "M1e" in collision["rules"] and "C3" in collision["text"]
    assert steps[-1]["ships"]["Sloopy"] == {
        "at": "B4",
        "facing": "W",
        "damage": 6.0,
        "status": "afloat",
        "wind": 0,
        "fire": None,
        "countdown": None,
    }


def test_interactive_stepping_goes_forward_back_and_quits(games: Path) -> None:
    play_blockade_turn(games)
    from mortecouille.events.storage.file_log import GameLog

    events = GameLog(games / "b.jsonl").read()
    shown: list[str] = []
    keys = iter([" ", "\x1b[C", "\x1b[D", "x", "\x7f", "\x7f", "q"])
    replay = Replay(events)
    end = step_interactively(replay, 3, len(events), lambda: next(keys), shown.append)
    assert end == 3  # two forward, three back (the last one clamped at the first position)
    assert len(shown) == 7 and "step 1 of" in shown[1] and "space/right: next" in shown[0]
    assert position_after_turn(events, 1) == len(events)


def test_verify_json_reports_the_first_divergence_with_both_versions(games: Path) -> None:
    path = play_blockade_turn(games)
    damage = [e for e in log_bodies(path) if e["type"] == "damage"]
    first, second = int(str(damage[0]["seq"])), int(str(damage[1]["seq"]))
    # two edits, rechained so the hash chain and state hashes alone cannot tell
    forge(path, {first: {"amount": 7.5}, second: {"amount": 0.25}})
    result = run(games, "verify", "b", "--json")
    assert result.exit_code == 4
    report = json.loads(result.output)
    assert report["ok"] is False
    failed = [f for f in report["findings"] if not f["ok"]]
    rederived = next(f for f in failed if f["check"] == "rederive")
    assert rederived["seq"] == first
    assert '"amount":7.5' in rederived["detail"] and '"amount":0.5' in rederived["detail"]
    assert "the log says" in rederived["detail"] and "the rules give" in rederived["detail"]


def test_verify_json_names_a_state_hash_divergence(games: Path) -> None:
    path = play_blockade_turn(games)
    ended = next(e for e in log_bodies(path) if e["type"] == "turn-ended")
    forge(path, {int(str(ended["seq"])): {"state_hash": "0" * 64}})
    report = json.loads(run(games, "verify", "b", "--json").output)
    state = next(f for f in report["findings"] if f["check"] == "state")
    assert not state["ok"] and state["seq"] == ended["seq"] and "000000000000" in state["detail"]
    assert EMPTY.turn == 1  # the empty state starts before turn 1
