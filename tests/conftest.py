"""Shared fixtures: a fresh games directory and helpers to build real logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from mortecouille.core.dice import TableDice, seed_commitment
from mortecouille.core.game import decide
from mortecouille.core.life_cycle import CreateGame
from mortecouille.core.state import EMPTY
from mortecouille.events.board import Board
from mortecouille.events.store import GameLog

SEED = "test-seed"


def created_log(directory: Path, name: str = "g", ruleset: str = "blockade", seed: str = SEED) -> GameLog:
    log = GameLog(directory / f"{name}.jsonl")
    command = CreateGame(
        game=name,
        ruleset=ruleset,
        players=("Anne", "Bart"),
        budget=100000,
        board=Board(width=10, height=10),
        dice_mode="seeded",
        seed_sha256=seed_commitment(seed),
        rules_version="test",
    )
    log.create(decide(EMPTY, command, TableDice()))
    return log


@pytest.fixture
def games(tmp_path: Path) -> Path:
    return tmp_path / "games"


# The throw-away PostgreSQL cluster of the store conformance suite (session-scoped).
from tests.postgres_server import postgres_server  # noqa: E402, F401
