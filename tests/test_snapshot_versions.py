"""A snapshot of any format version but this one is never read (app/snapshots.py): the
command folds the log instead, gives the output the log alone gives, and writes a snapshot of the
current format in its place. tests/test_snapshots.py spoils a snapshot into a *later* version;
here an *earlier* one, as a game kept by an older release leaves it, is met by a reading command."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mortecouille.app import snapshots
from mortecouille.app.games import load_state
from mortecouille.app.snapshots import FORMAT, read_snapshot, snapshot_path, write_snapshot
from mortecouille.core.game import fold
from mortecouille.core.state import GameState
from mortecouille.events.storage.file_log import GameLog
from tests.helpers import GOLDEN

#: a state no fold gives: were it read, every test below would see it
POISON = GameState(game="poisoned", turn=999)


def golden_copy(directory: Path, name: str) -> GameLog:
    target = directory / f"{name}.jsonl"
    shutil.copyfile(GOLDEN / f"{name}.jsonl", target)
    shutil.copyfile(GOLDEN / f"{name}.head", target.with_suffix(".head"))
    return GameLog(target)


def snapshot_of_version(log_: GameLog, version: int) -> None:
    """A poisoned snapshot beside ``log_``, standing on its last line (usable as far as its anchor
    and digest go), whose header names format ``version``."""
    folded = snapshots.fold_log(log_)
    assert folded.anchor is not None
    write_snapshot(log_, folded.anchor, POISON)
    found = read_snapshot(log_)
    assert found is not None and found[1] == POISON  # unspoilt, it would be read: the test can fail
    path = snapshot_path(log_)
    current = b"mortecouille-snapshot %d\n" % FORMAT
    data = path.read_bytes()
    assert data.startswith(current)
    path.write_bytes(b"mortecouille-snapshot %d\n" % version + data[len(current) :])


@pytest.mark.parametrize("version", sorted({0, FORMAT - 1, FORMAT + 1}))
def test_a_snapshot_of_another_format_is_ignored_and_rewritten_in_this_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: int
) -> None:
    monkeypatch.setattr(snapshots, "SNAPSHOT_EVERY", 3)  # the golden log is long enough to keep one
    log_ = golden_copy(tmp_path, "mortecouille")
    expected = fold(log_.read())
    snapshot_of_version(log_, version)
    assert read_snapshot(log_) is None
    assert load_state(log_, keep=True) == expected  # the log folded, as if no snapshot were there
    rewritten = snapshot_path(log_).read_bytes()
    assert rewritten.startswith(b"mortecouille-snapshot %d\n" % FORMAT)
    found = read_snapshot(log_)
    assert found is not None and found[1] == expected
    assert load_state(log_) == expected  # and read from it from then on
