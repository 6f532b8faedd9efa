"""The application layer without click: mortecouille.app.commands is the one command path that the
CLI, ``demo``, ``simulate`` and ``fork`` share, and the CLI only parses and prints."""

from __future__ import annotations

import ast
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from mortecouille.app.botgame import play_demo
from mortecouille.app.commands import (
    KnownState,
    end_game,
    new_game,
    resolve_turn,
    run_command,
    seed_path,
    store_seed,
)
from mortecouille.app.fork import fork_game
from mortecouille.app.games import game_log, load
from mortecouille.app.simulate import simulate
from mortecouille.cli.main import COMMANDS, cli
from mortecouille.core.board.geometry import parse_square
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import salted_commitment, seed_commitment
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.game import fold
from mortecouille.core.life_cycle import Command
from mortecouille.core.state import GameState, state_hash
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.events.board import Board
from mortecouille.events.game import GameCreated, GameEnded
from mortecouille.events.storage.errors import Conflict
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.describe import describe_event
from mortecouille.replays.reading.verify import verify_log
from tests.cli_helpers import tree_digest
from tests.conftest import SEED, created_log
from tests.helpers import ROOT, new_blockade


def given(command: Command) -> Callable[[GameState], Command]:
    """The command whatever the state (the tests build their commands up front)."""
    return lambda state: command


def harbour(games: Path, name: str = "b", dice_mode: str = "seeded", seed: str | None = "s3cret") -> GameLog:
    """A blockade game on an 8x8 board, Anne's sloop on C2 and Bart's on F7, both facing north."""
    log = game_log(games, name)
    new_blockade(log, seed, dice_mode=dice_mode, weak_seed=True)  # a short seed: deterministic tests
    for ship, square, owner in (("Sloopy", "C2", "Anne"), ("Swift", "F7", "Bart")):
        run_command(
            log, given(PlaceShip(ship=ship, at=parse_square(square), facing="N", kind="sloop", owner=owner))
        )
    return log


def test_a_new_game_commits_to_its_seed_and_keeps_it_beside_the_log(games: Path) -> None:
    log = harbour(games)
    events, state = load(log)
    created = events[0]
    assert isinstance(created, GameCreated)
    assert created.game == "b" and created.ruleset == "blockade" and created.players == ("Anne", "Bart")
    assert created.seed_sha256 is None and created.seed_salt is not None
    assert created.seed_hmac == salted_commitment("s3cret", created.seed_salt)
    assert seed_path(log).read_text().strip() == "s3cret"
    assert stat.S_IMODE(seed_path(log).stat().st_mode) == 0o600
    assert set(state.ships) == {"Sloopy", "Swift"}


def test_creating_a_game_that_exists_is_refused_and_keeps_its_seed(games: Path) -> None:
    harbour(games)
    before = tree_digest(games)
    with pytest.raises(Conflict, match="already exists"):
        harbour(games, seed="another")
    assert tree_digest(games) == before


def test_a_mortecouille_game_needs_two_players_and_a_table_dice_game_no_seed(games: Path) -> None:
    board = Board(width=8, height=8)
    with pytest.raises(BadInput, match=r"at least 2 players \(T3\)"):
        new_game(
            game_log(games, "m"), players=("Anne",), ruleset="mortecouille", budget=0, board=board,
            dice_mode="seeded", seed=None,
        )  # fmt: skip
    with pytest.raises(BadInput, match="^seed: "):
        new_game(
            game_log(games, "t"), players=("Anne", "Bart"), ruleset="blockade", budget=0, board=board,
            dice_mode="table", seed="s",
        )  # fmt: skip
    assert not list(games.glob("*"))  # nothing written


def test_a_command_returns_its_events_the_new_state_and_their_lines(games: Path) -> None:
    log = harbour(games)
    outcome = run_command(log, lambda state: GiveTokens(ship="Sloopy", tokens=("F", "F", None, None)))
    assert [type(e).__name__ for e in outcome.events] == ["TokensGiven"]
    assert outcome.lines() == [describe_event(e) for e in outcome.events]
    assert state_hash(outcome.state) == state_hash(load(log)[1])
    appended, state = outcome  # unpacks as (events, state)
    assert appended == outcome.events and state is outcome.state


# --- a remembered state is used only while the log still ends where it did ---------------------


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


def test_a_refused_command_leaves_the_log_byte_for_byte_unchanged(games: Path) -> None:
    log = harbour(games)
    before = log.read_bytes()
    with pytest.raises(RuleViolation, match="B4"):  # off the board
        run_command(log, lambda state: PlaceShip(ship="Far", at=(20, 20), facing="N", kind="sloop"))
    with pytest.raises(BadInput, match="^ship: "):
        run_command(log, lambda state: GiveTokens(ship="Nobody", tokens=("F",)))
    with pytest.raises(Conflict):  # the log is at another seq than expected
        run_command(log, lambda state: GiveTokens(ship="Sloopy", tokens=("F",)), expected_seq=0)
    assert log.read_bytes() == before


def test_table_dice_values_left_unused_are_refused_and_seeded_games_take_none(games: Path) -> None:
    table = harbour(games, "t", dice_mode="table", seed=None)
    for ship in ("Sloopy", "Swift"):
        run_command(table, given(GiveTokens(ship=ship, tokens=(None, None, None, None))))
    before = table.read_bytes()
    with pytest.raises(BadInput, match="left unused"):
        resolve_turn(table, table_values=[3, 4, 5, 6, 1, 2] * 10)
    assert table.read_bytes() == before
    seeded = harbour(games, "s")
    with pytest.raises(BadInput, match="--dice"):
        resolve_turn(seeded, idle_turn=True, table_values=[3])  # no tokens: idle on purpose


def test_ending_a_game_reveals_its_seed(games: Path) -> None:
    log = harbour(games)
    ended = end_game(log, winner="Anne", reason="surrender")
    assert isinstance(ended, GameEnded)
    assert (ended.seed, ended.winner, ended.reason) == ("s3cret", "Anne", "surrender")
    _, state = load(log)
    assert state.ended and state.winner == "Anne"
    assert verify_log(log).ok
    table = harbour(games, "t", dice_mode="table", seed=None)
    assert end_game(table).seed is None  # table dice have nothing to reveal


def test_a_fork_is_created_through_the_app_with_its_own_seed(games: Path) -> None:
    log = harbour(games)
    original = log.read_bytes()
    events, mode = fork_game(games, "b", "w", 2, None, "fork-seed", weak_seed=True)
    assert mode == "seeded" and len(events) == 3
    fork = game_log(games, "w")
    assert seed_path(fork).read_text().strip() == "fork-seed"
    assert log.read_bytes() == original
    assert verify_log(fork).ok
    with pytest.raises(Conflict, match="already exists"):
        fork_game(games, "b", "w", 2, None, None)


def test_simulate_keeps_every_seed_beside_its_log(tmp_path: Path) -> None:
    logs = simulate(tmp_path, 2, "k", max_turns=2)
    assert [log.name for log in logs] == ["sim-k-0", "sim-k-1"]
    for index, log in enumerate(logs):
        created = log.read()[0]
        assert isinstance(created, GameCreated)
        assert seed_path(log).read_text().strip() == f"k-{index}"
        assert created.seed_sha256 == seed_commitment(f"k-{index}")
        assert stat.S_IMODE(seed_path(log).stat().st_mode) == 0o600


def test_the_demo_plays_through_the_app_and_refuses_a_name_taken(games: Path) -> None:
    run = play_demo(games, "demo", max_turns=2)
    assert run.game == "demo-demo" and run.report.ok
    assert seed_path(run.log).read_text().strip() == "demo"
    assert play_demo(games, "demo", max_turns=1).game == "demo-demo-2"  # numbered when taken
    before = tree_digest(games)
    with pytest.raises(Conflict, match="'demo-demo' already exists"):
        play_demo(games, "demo", "demo-demo", max_turns=1)
    assert tree_digest(games) == before


# --- the CLI only parses and prints --------------------------------------------------------------

#: What only the application may do: decide a command, or build the command that creates a game.
APPLICATION_ONLY = frozenset({"decide", "CreateGame"})


def names_used(tree: ast.AST) -> set[str]:
    """Every name ``tree`` calls (``f(...)``, ``module.f(...)``) or imports (``from m import f``)."""
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                used.add(func.id)
            elif isinstance(func, ast.Attribute):
                used.add(func.attr)
        elif isinstance(node, ast.ImportFrom):
            used.update(alias.name for alias in node.names)
    return used


def test_no_cli_module_decides_or_creates_a_game_itself() -> None:
    modules = sorted((ROOT / "cli").glob("*.py"))
    assert len(modules) > 5
    offenders = {
        path.name: sorted(names_used(ast.parse(path.read_text(), str(path))) & APPLICATION_ONLY)
        for path in modules
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_names_used_sees_calls_and_imports() -> None:
    """The walk above would catch an offender (guards against a test that can never fail)."""
    code = "from mortecouille.core.game import decide\ngame.CreateGame(game='x')\n"
    assert names_used(ast.parse(code)) >= APPLICATION_ONLY


def test_the_cli_group_holds_exactly_the_listed_commands() -> None:
    names = [command.name for command in COMMANDS]
    assert len(names) == len(set(names))
    assert sorted(cli.commands) == sorted(name for name in names if name is not None)
    assert all(cli.commands[command.name] is command for command in COMMANDS if command.name)
