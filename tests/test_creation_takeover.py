"""A game whose creation died before its first line: the next creation takes the name over.

A file store creates a game's log exclusively and locks it, keeps the secret seed beside it, then
writes the first line (``GameLog.creating``). A creation killed between those steps (a crash, a
kill, the power lost) leaves an empty log, and perhaps a seed, that no line commits to. Refusing
every later creation of that name as "already exists" would leave it unusable until somebody
removed the file by hand, and a service's keyed retry would be refused after three attempts. So
a creation takes such a log over: only an empty regular file, whose lock nobody holds (a live
creation holds it from just after creating the file until its line is written) and with no head
anchor beside it (a game emptied after its creation is damage, never written over).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from litestar.testing import TestClient

import mortecouille.events.storage.file_log as store_module
from mortecouille.core.dice import matches_commitment
from mortecouille.events.game import GameCreated
from mortecouille.events.storage.contract import SEED, import_lines, secrets_of
from mortecouille.events.storage.errors import Conflict
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from mortecouille.web.server import build_app
from tests.helpers import GOLDEN, file_digests, new_blockade
from tests.test_web_create_idempotency import BODY

pytestmark = pytest.mark.slow

SEED_TEXT = "the-seed-of-the-second-creation"


def start(log: GameLog, seed: str = SEED_TEXT) -> None:
    new_blockade(log, seed)


def killed_while_creating(games: Path, name: str) -> None:
    """Run ``new`` in a process killed (SIGKILL) once it has created the log and kept its seed,
    just before writing the first line: what a crash at that moment leaves."""
    script = textwrap.dedent(
        f"""
        import os, signal
        import mortecouille.app.commands as commands
        from mortecouille.cli.main import cli

        def die(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)

        commands._write_creation = die
        cli(["--games-dir", {str(games)!r}, "new", {name!r}, "--players", "Anne,Bart",
             "--dice", "seeded", "--seed", "the-seed-of-the-dead-creation"])
        """
    )
    died = subprocess.run([sys.executable, "-c", script], capture_output=True, check=False)
    assert died.returncode == -9, died.stderr.decode()


def test_a_log_left_empty_by_a_killed_creation_is_taken_over_by_the_next(games: Path) -> None:
    killed_while_creating(games, "g")
    log = GameLog(games / "g.jsonl")
    assert log.path.read_bytes() == b""  # what the dead creation left: an empty log ...
    assert secrets_of(log).read(SEED) == b"the-seed-of-the-dead-creation\n"  # ... and its seed
    assert not log.head_path.exists()
    start(log)
    assert verify_log(log).ok
    created = log.read()[0]
    assert isinstance(created, GameCreated) and created.game == "g"
    # the seed kept is the new creation's, the one its first line commits to
    assert secrets_of(log).read(SEED) == (SEED_TEXT + "\n").encode()
    assert matches_commitment(SEED_TEXT, created)


def test_the_cli_creates_a_game_over_a_killed_creation(games: Path) -> None:
    from tests.cli_helpers import ok

    killed_while_creating(games, "g")
    ok(games, "new", "g", "--players", "Anne,Bart", "--dice", "table")
    assert "ok" in ok(games, "verify", "g")


def test_an_empty_log_whose_creation_is_alive_is_not_taken_over(games: Path) -> None:
    log = GameLog(games / "g.jsonl")
    # a creation under way: the log created empty, its lock held (another open file's, as
    # another process's would be)
    games.mkdir(exist_ok=True)
    living = os.open(log.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        fcntl.flock(living, fcntl.LOCK_EX)
        with pytest.raises(Conflict, match="already exists"):
            start(log)
        assert log.path.read_bytes() == b""
        assert not secrets_of(log).exists(SEED)
    finally:
        os.close(living)


def test_an_emptied_log_beside_its_head_anchor_is_never_written_over(games: Path) -> None:
    log = GameLog(games / "g.jsonl")
    start(log, seed="the-first-game-seed-long-enough")
    os.truncate(log.path, 0)  # damage after the creation: its head anchor says more was there
    before = file_digests(games)
    with pytest.raises(Conflict, match="already exists"):
        start(log)
    assert file_digests(games) == before
    assert not verify_log(log).ok


@pytest.mark.parametrize("kind", ["directory", "log with a line", "symbolic link"])
def test_what_is_not_an_empty_file_is_never_taken_over(games: Path, kind: str) -> None:
    games.mkdir(exist_ok=True)
    path = games / "g.jsonl"
    if kind == "directory":
        path.mkdir()
    elif kind == "log with a line":
        path.write_bytes(b'{"type":"x"}\n')
    else:
        (games / "elsewhere").write_bytes(b"")
        path.symlink_to(games / "elsewhere")
    before = file_digests(games)
    with pytest.raises(Conflict, match="already exists"):
        start(GameLog(path))
    assert file_digests(games) == before


def before_the_first_creation_locks(
    monkeypatch: pytest.MonkeyPatch, second: Callable[[], None]
) -> list[bool]:
    """Run ``second`` at the one moment a living creation's log looks abandoned: after its
    exclusive open, before its lock (the store's first blocking ``flock``). The list returned
    holds True once ``second`` has run."""
    real_flock = fcntl.flock
    ran: list[bool] = []

    def flock(fd: int, operation: int) -> None:
        if operation == fcntl.LOCK_EX and not ran:
            ran.append(True)
            with monkeypatch.context() as unpatched:
                unpatched.setattr(store_module.fcntl, "flock", real_flock)
                second()
        real_flock(fd, operation)

    monkeypatch.setattr(store_module.fcntl, "flock", flock)
    return ran


def test_a_creation_whose_empty_file_was_taken_over_before_its_lock_gives_the_name_up(
    games: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one moment a living creation's log looks abandoned: created, not yet locked. A second
    creation taking it over then owns the name; the first finds that under its lock, refuses, and
    removes nothing."""
    log = GameLog(games / "g.jsonl")
    second_ran = before_the_first_creation_locks(
        monkeypatch, lambda: start(GameLog(games / "g.jsonl"), seed="the-second-creation-seed")
    )
    with pytest.raises(Conflict, match="already exists"):
        start(log, seed="the-first-creation-seed")
    assert second_ran == [True]
    assert verify_log(log).ok
    assert secrets_of(log).read(SEED) == b"the-second-creation-seed\n"


def test_a_creation_whose_empty_file_was_taken_over_and_given_back_gives_the_name_up(
    games: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second creation failed and removed the file it took over: the first one, locking a
    file no path names any more, refuses instead of writing a game nobody can find."""
    log = GameLog(games / "g.jsonl")

    def second_fails() -> None:
        with pytest.raises(RuntimeError), GameLog(games / "g.jsonl").creating() as creation:
            assert creation.taken_over
            raise RuntimeError("the second creation fails")

    second_ran = before_the_first_creation_locks(monkeypatch, second_fails)
    with pytest.raises(Conflict, match="already exists"):
        start(log, seed="the-first-creation-seed")
    assert second_ran == [True]
    assert not log.path.exists() and not secrets_of(log).exists(SEED)
    start(log)  # the name is free
    assert verify_log(log).ok


def test_a_keyed_creation_retried_after_the_service_died_mid_creation_creates_the_game(games: Path) -> None:
    killed_while_creating(games, "g")
    with TestClient(build_app(games, deadline_seconds=None)) as client:
        answer = client.post("/api/games", json=BODY, headers={"Idempotency-Key": "retry-after-a-crash"})
        assert answer.status_code == 201, answer.text
        assert answer.json()["seq"] == 0
    assert verify_log(GameLog(games / "g.jsonl")).ok


def test_a_log_copied_in_over_a_killed_creation_takes_it_over_with_its_own_secrets(games: Path) -> None:
    killed_while_creating(games, "g")
    log = GameLog(games / "g.jsonl")
    data = sorted(GOLDEN.glob("*.jsonl"))[0].read_bytes()
    assert import_lines(log, data, {SEED: b"the-copied-game-seed\n"}) == data.count(b"\n")
    assert log.path.read_bytes() == data
    assert secrets_of(log).read(SEED) == b"the-copied-game-seed\n"
