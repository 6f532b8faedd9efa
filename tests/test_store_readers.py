"""A reader that does not hold the writer lock (a page's view, ``state``, a stream's backlog)
never mistakes an append in progress for a crash's torn tail: found by the service's fault test,
where a view read a log while another request's append was half written and answered 500."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import pytest

from mortecouille.events.codec import TornTail, stamp_all
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage.file_log import GameLog
from tests.conftest import created_log


def next_line(log: GameLog) -> bytes:
    """The next event's line, as the store would write it."""
    events = log.read()
    _, payload = stamp_all([RulingRecorded(turn=1, rule="T2", text="in progress")], len(events), events[-1].hash)
    return payload


def test_a_reader_waits_for_an_append_in_progress_instead_of_calling_it_torn(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    before = len(log.read())
    line = next_line(log)
    writer = os.open(log.path, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(writer, fcntl.LOCK_EX)  # a writer at work: half its line is on disk
    os.write(writer, line[: len(line) // 2])
    read: list[int] = []
    reader = threading.Thread(target=lambda: read.append(len(log.read())))
    reader.start()
    time.sleep(0.5)  # let the reader find the half line (it passes either way once the store waits)
    os.write(writer, line[len(line) // 2 :])  # the writer finishes its line, then lets go
    fcntl.flock(writer, fcntl.LOCK_UN)
    os.close(writer)
    reader.join(timeout=60)
    assert read == [before + 1]  # the whole new event, never a TornTail


def test_a_torn_tail_with_no_writer_at_work_is_still_reported(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    line = next_line(log)
    with log.path.open("ab") as handle:  # a crash left half a line, and nobody holds the lock
        handle.write(line[: len(line) // 2])
    with pytest.raises(TornTail):
        log.read()
