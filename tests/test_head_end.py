"""The head anchor records where the log ended (END): an append whose log still ends
there takes the log's last seq and hash from the anchor it reads anyway, and reads no line of the
log; a log of any other size (a writer stopped before moving the anchor, a torn tail) or an anchor
without END is read from its end as before. Slots written before END (format 2) are still read."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from mortecouille.app.commands import run_command, store_seed
from mortecouille.core.rulings import RecordRuling
from mortecouille.events.codec import TornTail, stamp
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage import file_io, file_writing
from mortecouille.events.storage.file_head import HeadSlots
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.conftest import SEED, created_log


def fillers(count: int, text: str = "filler") -> list[RulingRecorded]:
    return [RulingRecorded(turn=1, rule="T2", text=f"{text} {i}") for i in range(count)]


def newest_slot(log: GameLog) -> tuple[int, int, str, int | None]:
    found = HeadSlots.newest(log.head_path.read_bytes())
    assert found is not None
    return found


def forbid_tail_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make reading the log's last line fail, recording each attempt."""
    reads: list[int] = []

    def no_tail_read(fd: int, size: int, log: GameLog) -> tuple[int, str]:
        reads.append(size)
        raise AssertionError("the log's tail was read")

    for module in (file_io, file_writing):  # where a tail is read: an append, the tail position
        monkeypatch.setattr(module, "_tail_at", no_tail_read)
    return reads


def format_2_slots(log: GameLog) -> bytes:
    """The anchor of ``log`` as the slots written before END, counters 6 and 7 (counter c in slot
    c % 2, as updates place them)."""
    head = log.read_head()
    assert head is not None
    slots = b""
    for counter in (6, 7):
        body = b"mortecouille-head 2 %d %d %s" % (counter, head.seq, head.hash.encode())
        slots += (body + b" %08x" % zlib.crc32(body)).ljust(HeadSlots.SIZE - 1) + b"\n"
    return slots


def test_creation_and_every_append_record_the_logs_size_with_the_anchor(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    assert newest_slot(log)[3] == log.path.stat().st_size
    for count in (1, 3):
        appended = log.append(fillers(count))
        _, seq, digest, end = newest_slot(log)
        assert (seq, digest, end) == (appended[-1].seq, appended[-1].hash, log.path.stat().st_size)
    assert log.head_path.read_bytes().startswith(HeadSlots.MAGIC) and verify_log(log).ok


def test_an_append_to_a_log_ending_at_its_anchor_reads_no_line_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = created_log(tmp_path)
    log.append(fillers(2))
    reads = forbid_tail_reads(monkeypatch)
    appended = log.append(fillers(3))
    assert reads == []
    assert [e.seq for e in appended] == [3, 4, 5]
    monkeypatch.undo()
    assert log.verify_chain() == 6 and verify_log(log).ok


def test_a_command_through_the_command_path_appends_without_reading_the_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What every CLI command and the service run (``run_command``: lock, fold, decide, append)
    gets the same: its append takes the tail from the anchor."""
    log = created_log(tmp_path)
    store_seed(log, SEED)
    run_command(log, lambda state: RecordRuling(rule="T2", text="a fair wind"))
    reads = forbid_tail_reads(monkeypatch)
    appended, _ = run_command(log, lambda state: RecordRuling(rule="T2", text="the wind turns"))
    assert reads == [] and appended[0].seq == 2
    assert newest_slot(log)[1:] == (2, appended[0].hash, log.path.stat().st_size)
    monkeypatch.undo()
    assert verify_log(log).ok


def test_a_log_longer_than_its_anchor_is_read_from_its_end_and_the_append_chains_on_its_last_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = created_log(tmp_path)
    head = log.head_path.read_bytes()
    unanchored = log.append(fillers(2))
    log.head_path.write_bytes(head)  # a writer stopped between its fsync and its anchor
    reads = forbid_tail_reads(monkeypatch)
    with pytest.raises(AssertionError, match="tail was read"):
        log.append(fillers(1))
    assert reads == [log.path.stat().st_size]
    monkeypatch.undo()
    appended = log.append(fillers(1))
    assert appended[0].seq == unanchored[-1].seq + 1 and appended[0].prev == unanchored[-1].hash
    assert newest_slot(log)[1:] == (appended[-1].seq, appended[-1].hash, log.path.stat().st_size)
    assert verify_log(log).ok


def test_a_torn_tail_after_the_anchor_is_still_refused(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    whole = log.path.read_bytes()
    with log.path.open("ab") as handle:
        handle.write(b'{"seq":2,"ty')
    with pytest.raises(TornTail):
        log.append(fillers(1))
    assert log.repair() == b'{"seq":2,"ty'
    assert log.path.read_bytes() == whole
    assert newest_slot(log)[3] == len(whole)  # the repair anchors where it cut
    assert log.append(fillers(1))[0].seq == 2 and verify_log(log).ok


def test_an_anchor_written_without_end_makes_the_next_append_read_the_tail_then_record_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = created_log(tmp_path)
    last = log.append(fillers(2))[-1]
    log.write_head(last.seq, last.hash)  # a tool anchoring a line it names: END not known
    assert newest_slot(log)[1:] == (last.seq, last.hash, None)
    reads = forbid_tail_reads(monkeypatch)
    with pytest.raises(AssertionError, match="tail was read"):
        log.append(fillers(1))
    assert len(reads) == 1
    monkeypatch.undo()
    appended = log.append(fillers(1))
    assert appended[0].prev == last.hash
    assert newest_slot(log)[3] == log.path.stat().st_size and verify_log(log).ok


def test_slots_written_before_end_are_read_and_the_next_append_writes_the_current_format(
    tmp_path: Path,
) -> None:
    log = created_log(tmp_path)
    last = log.append(fillers(2))[-1]
    log.head_path.write_bytes(format_2_slots(log))
    head = log.read_head()
    assert head is not None and (head.seq, head.hash) == (last.seq, last.hash)
    assert verify_log(log).ok
    appended = log.append(fillers(1))
    data = log.head_path.read_bytes()
    written, kept = (data[: HeadSlots.SIZE], data[HeadSlots.SIZE :])  # counter 8 replaces 6 in slot 0
    assert written.startswith(HeadSlots.MAGIC) and kept.startswith(b"mortecouille-head 2 7 ")
    assert newest_slot(log) == (8, appended[-1].seq, appended[-1].hash, log.path.stat().st_size)
    assert verify_log(log).ok


def test_a_last_line_rewritten_and_rechained_before_an_append_is_still_caught(tmp_path: Path) -> None:
    """The append chains on the line its anchor vouches for, not on a line put in its place with
    the same length: the forgery breaks the chain at the appended line instead of being covered."""
    log = created_log(tmp_path)
    log.append(fillers(1, "aaaa"))
    lines = log.path.read_bytes().splitlines(keepends=True)
    forged_event = RulingRecorded(turn=1, rule="T2", text="bbbb 0")
    previous = log.read()[-2]
    forged, forged_line = stamp(forged_event, previous.seq + 1, previous.hash)
    assert len(forged_line) + 1 == len(lines[-1])  # the same length: the log keeps its size
    log.path.write_bytes(b"".join(lines[:-1]) + forged_line + b"\n")
    assert not verify_log(log).ok  # the anchor names the line that was there
    appended = log.append(fillers(1))
    assert appended[0].prev != forged.hash
    report = verify_log(log)  # and stays caught: the appended line does not chain on the forgery
    assert not report.ok and report.first_failure is not None
    assert report.first_failure.seq == appended[0].seq and "prev" in report.first_failure.detail


def test_an_end_that_would_not_fit_its_slot_is_left_out() -> None:
    record = HeadSlots.encode(10**12, 10**12, "f" * 64, 10**30)
    assert len(record) == HeadSlots.SIZE
    found = HeadSlots._fields(record)  # noqa: SLF001
    assert found == (10**12, 10**12, "f" * 64, None)


def test_a_slot_with_a_negative_or_garbled_end_is_not_an_anchor() -> None:
    for end in (b"-5", b"12x", b""):
        body = b"mortecouille-head 3 4 9 " + b"a" * 64 + b" " + end
        slot = (body + b" %08x" % zlib.crc32(body)).ljust(HeadSlots.SIZE - 1) + b"\n"
        assert HeadSlots._fields(slot) is None  # noqa: SLF001
