"""A game ``serve`` plays on files keeps its snapshot (``GAME.state``), as the CLI's commands keep it.

The service carries each game's state from one command to the next, so its commands never fold
enough events to make a snapshot due (``run_command`` with ``known``); without more, a long served
game kept the snapshot it had before (or none), and the first CLI ``state`` or ``order`` after it
folded the game from there or from seq 0. The service hands every append it answers to its
snapshot keeper (``app/snapshot_keeper.py``), which writes ``GAME.state`` each time the game
passes a multiple of ``SNAPSHOT_EVERY`` events, in a thread of its own, exactly as a command that
folded through that line writes it. The PostgreSQL side is ``tests/test_pg_served_snapshots.py``.

Through the in-process service's HTTP API, on a games directory of the test's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app import snapshots
from mortecouille.app.games import open_games
from mortecouille.app.snapshot_keeper import SnapshotKeeper
from mortecouille.app.snapshots import (
    SNAPSHOT_EVERY,
    Anchor,
    current_state,
    fold_log,
    keep_snapshot,
    read_snapshot,
    snapshot_path,
    write_snapshot_through,
)
from mortecouille.core.game import fold
from mortecouille.events.base import Event
from mortecouille.events.storage.file_log import GameLog
from mortecouille.web.server import build_app
from tests.served_game import ServedGame

pytestmark = pytest.mark.slow


class Served(ServedGame):
    """The service on a games directory of its own, a game ready to be played."""

    def __init__(self, client: TestClient[Litestar], games: Path) -> None:
        super().__init__(client)
        self.games = games

    def log(self) -> GameLog:
        return GameLog(self.games / "g.jsonl")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    games = tmp_path / "games"
    app = build_app(open_games(f"file:{games}"), deadline_seconds=None, close_store=True)
    with TestClient(app) as client:
        yield Served(client, games)


def end_of_line(log_: GameLog, seq: int) -> int:
    """The byte just after line ``seq``'s newline, counted from the log's bytes."""
    return sum(len(line) + 1 for line in log_.read_bytes().split(b"\n")[: seq + 1])


def cli_snapshot_through(log_: GameLog, seq: int, elsewhere: Path) -> bytes:
    """The ``GAME.state`` a CLI command writes having folded the log up to line ``seq``: the log
    cut after that line, in a directory of its own, folded and kept as a command keeps it."""
    elsewhere.mkdir()
    copy = GameLog(elsewhere / log_.path.name)
    copy.path.write_bytes(log_.read_bytes()[: end_of_line(log_, seq)])
    folded = fold_log(copy)
    assert folded.folded == seq + 1 >= SNAPSHOT_EVERY  # far enough past no snapshot: one is due
    keep_snapshot(copy, folded)
    return snapshot_path(copy).read_bytes()


def test_a_long_served_game_keeps_its_snapshot_so_the_cli_folds_only_the_last_events(
    served: Served, tmp_path: Path
) -> None:
    served.play_until(2 * SNAPSHOT_EVERY + 10)
    served.service.snapshots.settled()
    log_ = served.log()
    events = log_.read()
    found = read_snapshot(log_)
    assert found is not None, "serve kept no snapshot of its game"
    anchor, state = found
    # it stands on the last mark the game passed, and holds the fold of the log through that line
    assert anchor.seq >= 2 * SNAPSHOT_EVERY - 1
    assert (anchor.seq + 1) // SNAPSHOT_EVERY == len(events) // SNAPSHOT_EVERY
    assert anchor == Anchor(anchor.seq, events[anchor.seq].hash, end_of_line(log_, anchor.seq))
    assert state == fold(events[: anchor.seq + 1])
    # byte for byte what a CLI command that folded through that line would have written
    assert snapshot_path(log_).read_bytes() == cli_snapshot_through(log_, anchor.seq, tmp_path / "cli")
    # a CLI command now folds only the events after it
    folded = fold_log(log_)
    assert folded.folded == len(events) - anchor.seq - 1 < SNAPSHOT_EVERY
    assert folded.state == fold(events)


def test_the_snapshot_is_written_on_the_keepers_thread_off_the_requests_path(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the keeper's write is held up, the service still answers every order: the request
    that made the snapshot due does not wait for it."""
    served.play_until(SNAPSHOT_EVERY - 3)
    writers = served.orders_while_a_write_is_held_up(
        monkeypatch, snapshots, "write_snapshot", snapshot_path(served.log()).exists
    )
    assert writers == ["snapshot-keeper"]
    found = read_snapshot(served.log())
    assert found is not None and SNAPSHOT_EVERY - 1 <= found[0].seq < SNAPSHOT_EVERY + 3


def keep_through(log_: GameLog, events: list[Event], seq: int) -> None:
    """The keeper told that the batch ending at ``seq`` was appended (crossing a mark)."""
    keeper = SnapshotKeeper()
    try:
        assert keeper.appended(log_, events[SNAPSHOT_EVERY - 1 : seq + 1], fold(events[: seq + 1]))
        keeper.settled()
    finally:
        keeper.close()


def test_the_keeper_never_sets_back_a_newer_snapshot_a_cli_command_wrote_meanwhile(served: Served) -> None:
    served.play_until(SNAPSHOT_EVERY + 20)
    served.service.snapshots.settled()
    log_ = served.log()
    events = log_.read()
    # a CLI reading command that found no snapshot keeps one at the head
    snapshot_path(log_).unlink(missing_ok=True)
    assert current_state(log_, keep=True) == fold(events)
    newer = snapshot_path(log_).read_bytes()
    found = read_snapshot(log_)
    assert found is not None and found[0].seq == len(events) - 1
    # the keeper, late with a snapshot at an earlier line, leaves it as it is
    keep_through(log_, events, SNAPSHOT_EVERY + 5)
    assert snapshot_path(log_).read_bytes() == newer
    # but replaces an older one, and writes one where there is none
    snapshot_path(log_).unlink(missing_ok=True)
    keep_through(log_, events, SNAPSHOT_EVERY + 5)
    found = read_snapshot(log_)
    assert found is not None and found[0].seq == SNAPSHOT_EVERY + 5
    keep_through(log_, events, SNAPSHOT_EVERY + 10)
    found = read_snapshot(log_)
    assert found is not None and found[0].seq == SNAPSHOT_EVERY + 10
    assert found[1] == fold(events[: SNAPSHOT_EVERY + 11])


def test_no_snapshot_is_written_for_a_line_the_log_no_longer_holds(served: Served) -> None:
    served.play_until(SNAPSHOT_EVERY + 20)
    served.service.snapshots.settled()
    log_ = served.log()
    events = log_.read()
    snapshot_path(log_).unlink(missing_ok=True)
    # the log cut before the line: nothing to stand on
    data = log_.read_bytes()
    log_.path.write_bytes(data[: end_of_line(log_, SNAPSHOT_EVERY)])
    assert not write_snapshot_through(log_, SNAPSHOT_EVERY + 5, events[SNAPSHOT_EVERY + 5].hash, fold(events))
    # the line there, but another (its hash is not the one the append knew)
    log_.path.write_bytes(data)
    assert not write_snapshot_through(log_, SNAPSHOT_EVERY + 5, events[SNAPSHOT_EVERY + 4].hash, fold(events))
    assert not snapshot_path(log_).exists()
