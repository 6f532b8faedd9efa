"""Creating a game under races, planted links, over-long names and
failing disks. Each test reproduces an attack or failure found by the red-team sweep."""

from __future__ import annotations

import errno
import multiprocessing
import os
from pathlib import Path

import pytest

from mortecouille.app.commands import create_game, load_seed, new_game, seed_path, store_seed
from mortecouille.app.games import game_log
from mortecouille.core.dice import matches_commitment
from mortecouille.core.errors import BadInput
from mortecouille.core.game import fold
from mortecouille.core.limits import NAME_MAX
from mortecouille.events.board import Board
from mortecouille.events.game import TurnStarted
from mortecouille.events.storage.errors import Conflict, Unwritable
from mortecouille.events.storage.file_log import GameLog
from tests.cli_helpers import ok, run, tree_digest
from tests.conftest import SEED, created_log

pytestmark = pytest.mark.slow

# --- item 4: racing `new` ------------------------------------------------------------------------

RACERS = 4
RACES = 12


def race_new(games: str, number: int, start: multiprocessing.synchronize.Barrier, results: object) -> None:
    start.wait()
    try:
        new_game(
            game_log(Path(games), "g"),
            players=("Anne", "Bart"),
            ruleset="blockade",
            budget=0,
            board=Board(width=8, height=8),
            dice_mode="seeded",
            seed=f"the-seed-of-racer-{number}",
        )
        outcome = "created"
    except Conflict:
        outcome = "conflict"
    results.put((number, outcome))  # type: ignore[attr-defined]


def test_processes_racing_new_on_one_name_leave_one_game_whose_seed_matches_its_log(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    for race in range(RACES):
        games = tmp_path / f"race-{race}"
        start = context.Barrier(RACERS)
        results = context.Queue()
        workers = [
            context.Process(target=race_new, args=(str(games), n, start, results)) for n in range(RACERS)
        ]
        for worker in workers:
            worker.start()
        outcomes = dict(results.get(timeout=120) for _ in workers)
        for worker in workers:
            worker.join(timeout=120)
            assert worker.exitcode == 0
        winners = [n for n, outcome in outcomes.items() if outcome == "created"]
        assert len(winners) == 1, outcomes
        log = GameLog(games / "g.jsonl")
        state = fold(log.read())
        assert matches_commitment(f"the-seed-of-racer-{winners[0]}", state)
        assert load_seed(log, state) == f"the-seed-of-racer-{winners[0]}"
        assert sorted(p.name for p in games.iterdir()) == ["g.head", "g.jsonl", "g.seed"]


def test_a_new_refused_because_the_game_exists_leaves_every_file_as_it_was(games: Path) -> None:
    ok(games, "new", "g", "--players", "Anne,Bart", "--seed", "first-seed-of-the-table")
    before = tree_digest(games)
    result = run(games, "new", "g", "--players", "Anne,Bart", "--seed", "second-seed-of-the-table")
    assert result.exit_code == 3, result.output
    assert "already exists" in result.output
    assert tree_digest(games) == before


def test_a_creation_whose_write_fails_removes_the_log_and_the_seed_it_made(
    games: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = GameLog(games / "g.jsonl")
    events = created_log(games / "model").read()

    def no_space(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("mortecouille.events.storage.file_log.os.write", no_space)
    with pytest.raises(Unwritable, match="No space left"):
        create_game(log, events, "a-seed")
    assert list(games.glob("g.*")) == []


# --- item 11: writes never follow a symbolic link ------------------------------------------------


def test_a_link_planted_where_the_seed_goes_is_refused_and_its_target_untouched(
    games: Path, tmp_path: Path
) -> None:
    games.mkdir()
    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    (games / "g.seed").symlink_to(target)
    result = run(games, "new", "g", "--players", "Anne,Bart", "--seed", "s3cret-seed-of-the-table")
    assert result.exit_code == 3, result.output
    assert "g.seed already exists" in result.output
    assert target.read_text() == "precious\n"
    assert not (games / "g.jsonl").exists()  # a refused `new` writes nothing


def test_a_dangling_link_planted_where_the_seed_goes_creates_no_file_at_its_target(
    games: Path, tmp_path: Path
) -> None:
    games.mkdir()
    target = tmp_path / "exfiltrated-seed"
    (games / "g.seed").symlink_to(target)
    assert run(games, "new", "g", "--players", "Anne,Bart", "--seed", "s3cret-seed-of-the-table").exit_code == 3
    assert not target.exists()


def test_a_link_planted_as_the_temporary_head_file_is_replaced_not_followed(
    games: Path, tmp_path: Path
) -> None:
    log = created_log(games)
    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    (games / ".g.head.tmp").symlink_to(target)
    log.append([TurnStarted(turn=1)])
    assert target.read_text() == "precious\n"
    assert log.read_head() is not None and log.read_head().seq == 1  # type: ignore[union-attr]
    assert not (games / ".g.head.tmp").exists()
    assert log.verify_chain() == 2


def test_repair_refuses_a_log_that_is_a_link_and_leaves_its_target_whole(games: Path, tmp_path: Path) -> None:
    elsewhere = created_log(tmp_path / "elsewhere")
    torn = elsewhere.path.read_bytes() + b'{"seq":1,"ty'
    elsewhere.path.write_bytes(torn)
    games.mkdir()
    (games / "g.jsonl").symlink_to(elsewhere.path)
    result = run(games, "repair", "g", "--yes")
    assert result.exit_code == 2, result.output
    assert "symbolic link" in result.output
    assert elsewhere.path.read_bytes() == torn


def test_a_command_on_a_log_that_is_a_link_writes_nothing_through_it(games: Path, tmp_path: Path) -> None:
    elsewhere = created_log(tmp_path / "elsewhere")
    before = elsewhere.path.read_bytes()
    games.mkdir()
    (games / "g.jsonl").symlink_to(elsewhere.path)
    result = run(games, "place", "g", "A", "C3", "--kind", "sloop")
    assert result.exit_code == 2, result.output
    assert "symbolic link" in result.output
    assert elsewhere.path.read_bytes() == before


# --- item 13: names whose files the file system refuses ------------------------------------------


@pytest.mark.parametrize("length", [246, 247, 248, 249, 250, 251, 300])
def test_a_name_whose_files_would_be_too_long_is_refused_before_anything_is_written(
    games: Path, length: int
) -> None:
    name = "n" * length
    for _ in range(2):  # a retry finds nothing half-made either
        result = run(games, "new", name, "--players", "Anne,Bart")
        assert result.exit_code == 2, result.output
        assert "GAME" in result.output and "255" in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert tree_digest(games) == tree_digest(games / "nothing") and not list(games.glob("*"))


def test_the_longest_name_allowed_makes_a_game_that_verifies_and_one_more_character_is_refused(
    games: Path,
) -> None:
    name = "n" * NAME_MAX  # the name rule's cap comes long before the file system's 255 bytes
    ok(games, "new", name, "--ruleset", "blockade", "--players", "Anne,Bart")
    ok(games, "place", name, "A", "C3", "--kind", "sloop")
    assert "verified" in ok(games, "verify", name)
    longer = run(games, "new", name + "n", "--ruleset", "blockade", "--players", "Anne,Bart")
    assert longer.exit_code == 2 and f"at most {NAME_MAX}" in longer.output
    assert not list(games.glob(name + "n*"))


def test_a_name_holding_a_nul_character_is_refused_naming_the_game(tmp_path: Path) -> None:
    with pytest.raises(BadInput) as error:
        game_log(tmp_path, "a\0b")
    assert error.value.field == "game"


# --- item 16: unwritable places and a full disk --------------------------------------------------


def test_a_full_disk_during_an_append_leaves_the_log_as_it_was(
    games: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = created_log(games)
    store_seed(log, SEED)
    before = log.path.read_bytes(), log.head_path.read_bytes()
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("mortecouille.events.storage.file_log.os.write", half_then_full)
    result = run(games, "place", "g", "A", "C3", "--kind", "sloop")
    assert result.exit_code == 2, result.output
    assert "No space left on device" in result.output and "the log is as it was" in result.output
    assert (log.path.read_bytes(), log.head_path.read_bytes()) == before


@pytest.mark.parametrize("where", ["/proc", "/proc/no-such-dir/games"])
def test_new_in_an_unwritable_directory_exits_2_with_one_line(where: str) -> None:
    result = run(Path(where), "new", "g", "--players", "Anne,Bart")
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and result.output.startswith("error: cannot")
    assert isinstance(result.exception, SystemExit)


def test_a_seed_is_created_readable_by_its_owner_only(games: Path) -> None:
    ok(games, "new", "g", "--players", "Anne,Bart")
    assert seed_path(GameLog(games / "g.jsonl")).stat().st_mode & 0o777 == 0o600


def test_an_append_whose_head_anchor_cannot_be_replaced_succeeds_once_and_still_verifies(
    games: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = created_log(games)
    store_seed(log, SEED)
    head_before = log.head_path.read_bytes()

    def full_disk(self: GameLog, seq: int, digest: str) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(GameLog, "write_head", full_disk)
    result = run(games, "place", "g", "A", "C3", "--kind", "sloop")
    assert result.exit_code == 0, result.output  # done: a retry would place the ship twice
    assert "head anchor not replaced" in result.stderr
    monkeypatch.undo()
    assert log.head_path.read_bytes() == head_before
    assert log.verify_chain() == 2
