"""The shell around the pure core: where games live, their secret seeds, and running a command.

``run_command`` is the one path by which any CLI command changes a log: lock,
read, fold, decide, append (one write, one fsync), unlock. A refused command
raises before anything is written, so the log stays byte-for-byte unchanged.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
import structlog

import mortecouille.core.rulesets  # noqa: F401 - registers every ruleset's commands
from mortecouille.core.dice import DiceSource, SeededDice, TableDice, seed_commitment
from mortecouille.core.errors import BadInput
from mortecouille.core.game import Command, decide, fold
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.store import Conflict, GameLog

log = structlog.get_logger("mortecouille")

DEFAULT_GAMES_DIR = "games"


def games_dir(option: str | None) -> Path:
    return Path(option or os.environ.get("MORTECOUILLE_GAMES") or DEFAULT_GAMES_DIR)


def game_log(directory: Path, game: str) -> GameLog:
    if not game or "/" in game or game.startswith("."):
        raise BadInput("GAME", f"{game!r} is not a valid game name")
    return GameLog(directory / f"{game}.jsonl")


def seed_path(log_: GameLog) -> Path:
    return log_.path.with_suffix(".seed")


def new_seed() -> str:
    return secrets.token_hex(16)


def secret_seed(dice_mode: str, seed: str | None) -> str | None:
    """A new game's secret seed: the one given, else a random one; none for table dice."""
    if dice_mode == "table" and seed is not None:
        raise BadInput("--seed", "a table-dice game has no seed")
    return (seed or new_seed()) if dice_mode == "seeded" else None


def store_seed(log_: GameLog, seed: str) -> None:
    """Keep the secret seed beside the log, readable by its owner only, until it is revealed."""
    path = seed_path(log_)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(seed + "\n")


def load_seed(log_: GameLog, state: GameState) -> str:
    path = seed_path(log_)
    try:
        seed = path.read_text().strip()
    except FileNotFoundError:
        raise BadInput(
            "seed", f"the secret seed of {state.game!r} is missing ({path}); cannot roll seeded dice"
        ) from None
    if seed_commitment(seed) != state.seed_sha256:
        raise BadInput("seed", f"{path} does not match the game's commitment (D2)")
    return seed


def create_game(log_: GameLog, events: Sequence[Event], secret: str | None) -> list[Event]:
    """Start a new log with ``events`` and keep its secret seed beside it; refuse an existing game
    before the seed of the game already there is overwritten."""
    if log_.exists():
        raise Conflict(f"game {log_.name!r} already exists at {log_.path}")
    if secret is not None:
        log_.path.parent.mkdir(parents=True, exist_ok=True)
        store_seed(log_, secret)
    return log_.create(events)


def revealed_seed(log_: GameLog, state: GameState) -> str | None:
    """The seed a seeded game reveals as it ends (D2); none for table dice."""
    return load_seed(log_, state) if state.dice_mode == "seeded" else None


AskDie = Callable[..., int]


def dice_for(
    log_: GameLog, state: GameState, table_values: list[int] | None, ask: AskDie | None
) -> DiceSource:
    if state.dice_mode == "seeded":
        if table_values:
            raise BadInput("--dice", "this game rolls seeded dice; --dice is for table-dice games")
        return SeededDice(load_seed(log_, state))
    return TableDice(table_values or (), ask)


def load(log_: GameLog) -> tuple[list[Event], GameState]:
    events = log_.read()
    return events, fold(events)


class KnownState(msgspec.Struct, frozen=True):
    """A state folded earlier and the log position it stands for (next seq, last hash)."""

    next_seq: int
    last_hash: str
    state: GameState


def run_command(
    log_: GameLog,
    make_command: Callable[[GameState], Command],
    table_values: list[int] | None = None,
    ask: AskDie | None = None,
    expected_seq: int | None = None,
    known: KnownState | None = None,
) -> tuple[list[Event], GameState]:
    """Lock, fold, decide and append one command; return the appended events and the new state.

    ``known``: a state the caller folded before; it is used instead of folding the log again
    only if the log still ends where it did (same next seq and last hash), so a long
    sequence of commands (the demo) does not fold the whole log for each one.
    """
    with log_.transaction() as tx:
        if known is not None and tx.position() == (known.next_seq, known.last_hash):
            state = known.state
        else:
            state = fold(tx.read())
        command = make_command(state)
        dice = dice_for(log_, state, table_values, ask)
        produced = decide(state, command, dice)
        if table_values and isinstance(dice, TableDice) and dice.pending:
            raise BadInput("--dice", f"{len(dice.pending)} value(s) left unused: {dice.pending}")
        appended = tx.append(produced, expected_seq)
        log.info("appended", game=log_.name, command=type(command).__name__, events=len(appended))
        return appended, fold(appended, state)
