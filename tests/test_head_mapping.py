"""The head anchor a process keeps open is read through a shared mapping: from the
process's second append to a log on (a one-shot command maps nothing), an append of the kept log
reads the slots from memory, not with ``pread``, and must see exactly what a ``pread``
would, and never read through a mapping whose file changed under it (replaced, shrunk, grown, a
slot torn or rewritten in place by another writer). The slot is still written with ``pwrite``,
after the log's ``fsync``; when that ``pwrite`` fails, the append succeeds with its anchor lagging,
as on the general path."""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import structlog

from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage import file_log as store_module
from mortecouille.events.storage.file_handles import close_idle_descriptors
from mortecouille.events.storage.file_head import HeadSlots
from mortecouille.events.storage.file_log import GameLog
from mortecouille.events.storage.file_writing import Transaction
from mortecouille.replays.reading.verify import verify_log
from tests.conftest import created_log

pytestmark = pytest.mark.slow


def fillers(count: int, text: str = "filler") -> list[RulingRecorded]:
    return [RulingRecorded(turn=1, rule="T2", text=f"{text} {i}") for i in range(count)]


@pytest.fixture(autouse=True)
def no_kept_descriptors() -> object:
    close_idle_descriptors()
    yield
    close_idle_descriptors()


def kept(log: GameLog) -> store_module._Handles:
    handles = store_module._idle.get(str(log.path))
    assert handles is not None
    return handles


def anchored(log: GameLog) -> tuple[int, str]:
    head = log.read_head()
    assert head is not None
    return head.seq, head.hash


def mapped_log(tmp_path: Path) -> GameLog:
    """A log appended to twice by this process: its kept head is mapped from the second append on."""
    log = created_log(tmp_path)
    log.append(fillers(1))
    log.append(fillers(1, "again"))
    assert kept(log).head_map is not None
    return log


def counted_preads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The descriptors every ``os.pread`` from now on reads (it still reads)."""
    preads: list[int] = []
    real_pread = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, at: preads.append(fd) or real_pread(fd, n, at))
    return preads


def test_a_kept_head_is_mapped_and_its_slots_read_from_the_mapping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    handles = kept(log)
    assert handles.head_map is None  # one append: what a one-shot command makes, nothing mapped
    log.append(fillers(1, "again"))
    assert handles.head_map is not None and handles.head_map[:] == log.head_path.read_bytes()
    preads = counted_preads(monkeypatch)
    for round_ in range(4):  # both slots written in turn, each seen through the mapping
        appended = log.append(fillers(2, f"round {round_}"))
        assert handles.head_map[:] == log.head_path.read_bytes()
        assert anchored(log) == (appended[-1].seq, appended[-1].hash)
    assert preads == []
    assert verify_log(log).ok


def test_another_writers_update_in_place_is_seen_through_the_mapping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = mapped_log(tmp_path)
    # another process's command: its own descriptors and lock, its slot written in place
    fd = os.open(log.path, os.O_RDWR | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        foreign = Transaction(GameLog(log.path), fd).append(fillers(2, "foreign"))
    finally:
        os.close(fd)
    preads = counted_preads(monkeypatch)
    mine = log.append(fillers(1, "mine"))
    monkeypatch.undo()
    assert preads == []  # the new anchor (its END the log's size) read from the mapping alone
    assert mine[0].prev == foreign[-1].hash and mine[0].seq == foreign[-1].seq + 1
    assert anchored(log) == (mine[-1].seq, mine[-1].hash)
    assert verify_log(log).ok


def test_a_torn_newest_slot_written_in_place_is_read_as_the_older_anchor(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    appended = log.append(fillers(2))
    newest = HeadSlots.newest(log.head_path.read_bytes())
    assert newest is not None
    slot = (newest[0] % 2) * HeadSlots.SIZE
    with log.head_path.open("r+b") as head:  # a torn update of the newest slot, in place
        head.seek(slot + 30)
        head.write(b"#" * 20)
    assert log.read_head() is not None and anchored(log)[0] < appended[-1].seq  # the older slot
    after = log.append(fillers(1, "after the torn slot"))
    assert after[0].prev == appended[-1].hash  # the tail read from the log, the anchor lagging
    assert anchored(log) == (after[-1].seq, after[-1].hash)
    assert verify_log(log).ok


@pytest.mark.parametrize("size", [0, 100, HeadSlots.SIZE * 2 + 10])
def test_a_kept_head_shrunk_or_grown_in_place_is_never_read_through_its_mapping(
    tmp_path: Path, size: int
) -> None:
    """Run in a child process: reading a mapping past the end of a shrunk file kills the reader
    (SIGBUS), which must not happen; the head of another size is replaced, as a fresh command
    replaces one that is not two slots."""
    log = created_log(tmp_path)
    script = textwrap.dedent(
        f"""
        import os, sys
        from pathlib import Path
        from mortecouille.events.rulings import RulingRecorded
        from mortecouille.events.storage.file_handles import _idle
        from mortecouille.events.storage.file_log import GameLog
        log = GameLog(Path({str(log.path)!r}))
        def batch(text):
            return [RulingRecorded(turn=1, rule="T2", text=text)]
        log.append(batch("first"))
        log.append(batch("kept, and mapped"))
        log.append(batch("read through the mapping"))
        assert _idle[str(log.path)].head_map is not None
        os.truncate(log.head_path, {size})
        last = log.append(batch("after the head changed size"))[-1]
        print(last.seq, last.hash)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=Path(__file__).parent.parent
    )
    assert done.returncode == 0, done.stderr
    seq, digest = done.stdout.split()
    assert anchored(log) == (int(seq), digest)
    assert log.head_path.stat().st_size == 2 * HeadSlots.SIZE
    assert verify_log(log).ok


def test_a_kept_head_replaced_under_its_mapping_is_mapped_anew(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    log.append(fillers(1, "again"))
    old_map = kept(log).head_map
    copy = tmp_path / "copy.head"
    shutil.copyfile(log.head_path, copy)
    os.replace(copy, log.head_path)
    log.append(fillers(1, "next"))  # the new file opened (and read with pread)...
    assert old_map is not None and old_map.closed
    appended = log.append(fillers(1, "then"))  # ...and mapped
    handles = kept(log)
    assert handles.head_map is not None and handles.head_map[:] == log.head_path.read_bytes()
    assert os.fstat(handles.head_fd).st_ino == log.head_path.stat().st_ino
    assert anchored(log) == (appended[-1].seq, appended[-1].hash)


def test_a_head_that_cannot_be_mapped_is_read_with_pread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "_map_slots", lambda fd: None)
    log = created_log(tmp_path)
    for round_ in range(3):
        appended = log.append(fillers(2, f"round {round_}"))
        assert kept(log).head_map is None and (round_ == 0 or kept(log).map_refused)
        assert anchored(log) == (appended[-1].seq, appended[-1].hash)
    assert verify_log(log).ok


def test_a_failed_slot_write_of_a_kept_head_leaves_the_anchor_lagging_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = mapped_log(tmp_path)
    head_before = log.head_path.read_bytes()

    def full_disk(fd: int, data: bytes, offset: int) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "pwrite", full_disk)
    with structlog.testing.capture_logs() as logged:
        appended = log.append(fillers(2, "durable, not anchored"))
    monkeypatch.undo()
    assert [entry["event"] for entry in logged] == ["head anchor not replaced"]
    assert log.head_path.read_bytes() == head_before  # the anchor lags: accepted, the lines chain
    assert log.read()[-1] == appended[-1] and verify_log(log).ok
    after = log.append(fillers(1, "next"))  # the next append catches the anchor up
    assert after[0].prev == appended[-1].hash
    assert anchored(log) == (after[-1].seq, after[-1].hash)
