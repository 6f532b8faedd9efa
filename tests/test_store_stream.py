"""Streaming reads: ``GameLog.stream`` and ``stream_lines`` read a log a chunk
at a time and give what ``read`` gives, with the same errors, from any line start on."""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from mortecouille.events.codec import CorruptLine, LogError, TornTail
from mortecouille.events.storage import file_stream as store
from mortecouille.events.storage.errors import GameNotFound
from mortecouille.events.storage.file_log import GameLog
from tests.helpers import GOLDEN, read_in_chunks

GOLDEN_LOGS = sorted(GOLDEN.glob("*.jsonl"))


def copied(tmp_path: Path, source: Path) -> GameLog:
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    return GameLog(target)


def line_starts(data: bytes) -> list[int]:
    """The byte offset of every line of ``data``."""
    starts = [0]
    for index, byte in enumerate(data):
        if byte == ord("\n") and index + 1 < len(data):
            starts.append(index + 1)
    return starts


@pytest.mark.parametrize("chunk", [64, 1000, store.STREAM_CHUNK_BYTES])
@pytest.mark.parametrize("source", GOLDEN_LOGS, ids=lambda path: path.stem)
def test_the_stream_gives_the_events_read_gives(
    tmp_path: Path, source: Path, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_in_chunks(monkeypatch, chunk)  # lines longer than a chunk, too
    log = copied(tmp_path, source)
    assert list(log.stream()) == log.read()
    assert list(log.stream_lines()) == log.read_bytes().split(b"\n")[:-1]


@pytest.mark.parametrize("source", GOLDEN_LOGS[:2], ids=lambda path: path.stem)
def test_a_stream_from_a_line_start_gives_the_rest(tmp_path: Path, source: Path) -> None:
    log = copied(tmp_path, source)
    events, data = log.read(), log.read_bytes()
    for seq, offset in enumerate(line_starts(data)):
        assert list(log.stream(offset, seq)) == events[seq:]
        assert log.line_at(offset) == data[offset:].split(b"\n", 1)[0]
    assert list(log.stream(len(data), len(events))) == []
    assert log.line_at(len(data)) is None


def test_a_torn_tail_is_reported_before_any_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read_in_chunks(monkeypatch, 100)
    log = copied(tmp_path, GOLDEN_LOGS[0])
    with log.path.open("ab") as handle:
        handle.write(b'{"type":"half')
    with pytest.raises(TornTail) as from_read:
        log.read()
    stream = log.stream()
    with pytest.raises(TornTail) as from_stream:
        next(stream)
    assert str(from_stream.value) == str(from_read.value)
    assert from_stream.value.line == from_read.value.line and from_stream.value.fragment == b'{"type":"half'
    with pytest.raises(TornTail) as from_lines:
        next(log.stream_lines())
    assert from_lines.value.line == from_read.value.line
    data = log.read_bytes()
    last = line_starts(data)[-1]
    assert log.line_at(last) is None  # the torn line is no complete line


def test_a_corrupt_line_is_named_by_its_line_number_as_read_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_in_chunks(monkeypatch, 300)
    log = copied(tmp_path, GOLDEN_LOGS[0])
    lines = log.read_bytes().split(b"\n")
    lines[20] = lines[20].replace(b'"type":"', b'"type":"no-such-')
    log.path.write_bytes(b"\n".join(lines))
    with pytest.raises(CorruptLine) as from_read:
        log.read()
    with pytest.raises(CorruptLine) as from_stream:
        list(log.stream())
    assert from_read.value.line == 21
    assert str(from_stream.value) == str(from_read.value)
    starts = line_starts(log.read_bytes())
    with pytest.raises(CorruptLine) as from_offset:
        list(log.stream(starts[10], 10))
    assert str(from_offset.value) == str(from_read.value)


def test_a_stream_ends_where_the_log_ended_when_it_began(tmp_path: Path) -> None:
    log = copied(tmp_path, GOLDEN_LOGS[0])
    events = log.read()
    stream = log.stream()
    first = next(stream)
    with log.path.open("ab") as handle:  # appended while the stream is read: not part of it
        handle.write(log.read_bytes().split(b"\n")[0] + b"\n")
    assert [first, *stream] == events


def test_a_missing_log_and_a_bad_offset_are_refused(tmp_path: Path) -> None:
    log = GameLog(tmp_path / "none.jsonl")
    with pytest.raises(GameNotFound):
        list(log.stream())
    with pytest.raises(GameNotFound):
        log.line_at(0)
    with pytest.raises(ValueError):
        list(copied(tmp_path, GOLDEN_LOGS[0]).stream(-1))
    assert issubclass(TornTail, LogError)


def test_a_stream_waits_for_an_append_in_progress_instead_of_calling_it_torn(tmp_path: Path) -> None:
    log = copied(tmp_path, GOLDEN_LOGS[0])
    before = len(log.read())
    line = log.read_bytes().split(b"\n")[0] + b"\n"  # any bytes ending a line do for the stream
    writer = os.open(log.path, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(writer, fcntl.LOCK_EX)  # a writer at work: half its line is on disk
    os.write(writer, line[: len(line) // 2])
    read: list[int] = []
    reader = threading.Thread(target=lambda: read.append(sum(1 for _ in log.stream_lines())))
    reader.start()
    time.sleep(0.5)  # let the reader find the half line (it passes either way once the store waits)
    os.write(writer, line[len(line) // 2 :])
    fcntl.flock(writer, fcntl.LOCK_UN)
    os.close(writer)
    reader.join(timeout=60)
    assert read == [before + 1]


@pytest.mark.parametrize("source", GOLDEN_LOGS[:2], ids=lambda path: path.stem)
def test_the_line_ending_at_a_byte_and_a_stream_up_to_it(tmp_path: Path, source: Path) -> None:
    log = copied(tmp_path, source)
    events, data = log.read(), log.read_bytes()
    ends = [start - 1 for start in line_starts(data)[1:]] + [len(data) - 1]  # each line's newline
    assert log.settled_size() == len(data)
    for seq, newline in enumerate(ends):
        assert log.line_ending_at(newline + 1) == data[:newline].rsplit(b"\n", 1)[-1]
        assert list(log.stream(end=newline + 1)) == events[: seq + 1]
        assert list(log.stream_lines(end=newline + 1)) == data[: newline + 1].split(b"\n")[:-1]
    assert log.line_ending_at(0) is None
    assert log.line_ending_at(ends[3]) is None  # not after a newline: no line ends there
    assert log.line_ending_at(len(data) + 10) is None  # beyond the log
