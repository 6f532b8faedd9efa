"""The shell's command path: a remembered state is used only while the log still ends where it did."""

from __future__ import annotations

from pathlib import Path

import pytest

from mortecouille.app.commands import KnownState, run_command, store_seed
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.game import fold
from mortecouille.core.state import GameState, state_hash
from mortecouille.events.store import GameLog
from tests.conftest import SEED, created_log


def place(name: str, square: tuple[int, int]) -> PlaceShip:
    return PlaceShip(ship=name, at=square, facing="N", kind="sloop")


@pytest.fixture
def log(tmp_path: Path) -> GameLog:
    log = created_log(tmp_path)
    store_seed(log, SEED)
    return log


def test_a_known_state_at_the_log_end_is_used_without_folding(log: GameLog) -> None:
    events = log.read()
    decoy = GameState(game="decoy")  # were it used, the decider would refuse: not created
    known = KnownState(next_seq=len(events), last_hash=events[-1].hash, state=fold(events))
    appended, state = run_command(log, lambda s: place("A", (1, 1)), known=known)
    assert state_hash(state) == state_hash(fold(log.read()))
    stale = KnownState(next_seq=appended[-1].seq, last_hash=appended[-1].prev, state=decoy)
    _, after = run_command(log, lambda s: place("B", (2, 2)), known=stale)  # stale: the log is folded
    assert state_hash(after) == state_hash(fold(log.read()))
    assert set(after.ships) == {"A", "B"}


def test_a_known_state_is_not_used_once_another_writer_appended(log: GameLog) -> None:
    events = log.read()
    known = KnownState(next_seq=len(events), last_hash=events[-1].hash, state=fold(events))
    run_command(log, lambda s: place("Other", (3, 3)))  # someone else's command
    _, state = run_command(log, lambda s: place("A", (1, 1)), known=known)
    assert set(state.ships) == {"Other", "A"}
