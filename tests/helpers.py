"""Shared paths and builders of hand-made game logs for the archive, query and report tests."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from mortecouille.app.commands import new_game
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.game import fold
from mortecouille.core.state import state_hash
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.game import DieRolled, GameCreated, GameEnded, TurnEnded, TurnStarted
from mortecouille.events.storage import file_log, file_stream
from mortecouille.events.storage.contract import EventStore
from mortecouille.events.storage.file_log import GameLog

#: The repository's root (where ``pyproject.toml`` and ``README.md`` are).
ROOT = Path(__file__).resolve().parent.parent
#: The golden logs of the current schema and their expected state hashes (``tests/golden/``).
GOLDEN = Path(__file__).resolve().parent / "golden"


def golden_logs_with_bot_games(folder: Path, games: int, prefix: str, max_turns: int) -> Path:
    """``folder`` holding a copy of every golden log (both rulesets, an upcast line, contributed
    dice, rulings, a scenario), head anchors included, and ``games`` bot games simulated beside
    them (names from ``prefix``, at most ``max_turns`` turns each)."""
    from mortecouille.app.simulate import simulate  # only the tests that simulate pay for it

    for path in GOLDEN.iterdir():
        if path.suffix in (".jsonl", ".head"):
            shutil.copy(path, folder / path.name)
    simulate(folder, games, prefix, max_turns=max_turns)
    return folder


def write_game(
    directory: Path,
    name: str,
    body: Sequence[Event] = (),
    *,
    ended: bool = True,
    winner: str | None = None,
    dice_mode: str = "table",
) -> GameLog:
    """A hand-made, verifiable table-dice game: game-created, ``body``, then game-ended. Dice
    belong in a turn's resolution (``verify`` refuses any other): a ``body`` with dice
    and no turn of its own is played as turn 1."""
    created = GameCreated(
        game=name,
        ruleset="mortecouille",
        players=("Anne", "Bart"),
        budget=100000,
        board=Board(width=10, height=10),
        rules_version=RULES_VERSION,
        dice_mode=dice_mode,
    )
    if any(isinstance(e, DieRolled) for e in body) and not any(isinstance(e, TurnStarted) for e in body):
        opened = [created, TurnStarted(turn=1), *body]
        body = [*opened[1:], TurnEnded(turn=1, state_hash=state_hash(fold(opened)))]
    ending = [GameEnded(reason="referee", winner=winner)] if ended else []
    log = GameLog(directory / f"{name}.jsonl")
    log.create([created, *body, *ending])
    return log


def file_digests(directory: Path) -> dict[str, str]:
    """Every file below ``directory`` (its path relative to it) and the sha256 of its bytes, but
    lock files: compare two to see which files a command wrote."""
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.name != ".lock"
    }


def new_blockade(log: EventStore, seed: str | None, *, dice_mode: str = "seeded", weak_seed: bool = False) -> None:
    """Create ``log``'s game as the tests' usual blockade: Anne and Bart on an 8x8 board, no budget."""
    new_game(
        log,
        players=("Anne", "Bart"),
        ruleset="blockade",
        budget=0,
        board=Board(width=8, height=8),
        dice_mode=dice_mode,
        seed=seed,
        weak_seed=weak_seed,
    )


def read_in_chunks(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """Make the file store read a log ``size`` bytes at a time (its streams and its readers)."""
    for module in (file_log, file_stream):
        monkeypatch.setattr(module, "STREAM_CHUNK_BYTES", size)
