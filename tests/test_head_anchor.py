"""The head anchor in two slots: moved in place without a rename, a torn update
falls back to the slot before it, the anchor of earlier versions (one JSON object) is read and
turned into slots by the next append, and nothing is written through a link."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mortecouille.events.codec import LogError
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage.file_head import HeadSlots
from mortecouille.replays.reading.verify import verify_log
from tests.conftest import created_log


def fillers(count: int) -> list[RulingRecorded]:
    return [RulingRecorded(turn=1, rule="T2", text=f"filler {i}") for i in range(count)]


def test_a_new_log_has_its_anchor_in_two_slots_each_naming_the_last_line(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    data = log.head_path.read_bytes()
    assert len(data) == 2 * HeadSlots.SIZE and data.startswith(HeadSlots.MAGIC)
    last = log.read()[-1]
    assert log.read_head() is not None and log.read_head() == HeadSlots.decode(data)[1]  # type: ignore[index]
    assert (log.read_head().seq, log.read_head().hash) == (last.seq, last.hash)  # type: ignore[union-attr]


def test_appends_move_the_anchor_in_place_alternating_slots(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    inode = log.head_path.stat().st_ino
    for count in range(1, 5):
        before = log.head_path.read_bytes()
        appended = log.append(fillers(count))
        after = log.head_path.read_bytes()
        assert log.head_path.stat().st_ino == inode  # the same file: updated, not replaced
        changed = [i for i in range(2) if before[i * HeadSlots.SIZE : (i + 1) * HeadSlots.SIZE]
                   != after[i * HeadSlots.SIZE : (i + 1) * HeadSlots.SIZE]]  # fmt: skip
        assert len(changed) == 1  # one slot written, the other keeps the anchor before it
        head = log.read_head()
        assert head is not None and (head.seq, head.hash) == (appended[-1].seq, appended[-1].hash)
    assert not log.head_temporary.exists() and verify_log(log).ok


def test_a_torn_slot_is_ignored_and_the_slot_before_it_is_the_anchor(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    first = log.append(fillers(2))
    second = log.append(fillers(1))
    data = bytearray(log.head_path.read_bytes())
    found = HeadSlots.decode(bytes(data))
    assert found is not None and found[1].seq == second[-1].seq
    newest = found[0] % 2
    # as a crash mid-update would leave it: the newest slot's record cut short
    start = newest * HeadSlots.SIZE
    data[start + 40 : start + HeadSlots.SIZE] = b"\0" * (HeadSlots.SIZE - 40)
    log.head_path.write_bytes(bytes(data))
    head = log.read_head()
    assert head is not None and (head.seq, head.hash) == (first[-1].seq, first[-1].hash)
    # a lagging anchor: the lines after it chain, so the log verifies and nothing is torn
    assert verify_log(log).ok and log.torn_tail() == b""
    # the next update writes the torn slot again, never the one still standing
    third = log.append(fillers(1))
    data = log.head_path.read_bytes()
    assert HeadSlots._slot(data[start : start + HeadSlots.SIZE]) is not None  # noqa: SLF001
    assert log.read_head() is not None and log.read_head().seq == third[-1].seq  # type: ignore[union-attr]


def test_a_changed_byte_in_a_slot_breaks_its_crc(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    data = log.head_path.read_bytes()
    for slot in range(2):
        record = bytearray(data[slot * HeadSlots.SIZE : (slot + 1) * HeadSlots.SIZE])
        position = record.index(b" ", len(HeadSlots.MAGIC)) + 1  # the first digit of the seq
        record[position] = ord("9") if record[position] != ord("9") else ord("8")
        assert HeadSlots._slot(bytes(record)) is None  # noqa: SLF001


def test_no_valid_slot_is_an_unreadable_anchor_and_verify_fails(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.head_path.write_bytes(HeadSlots.MAGIC + b"x" * (2 * HeadSlots.SIZE - len(HeadSlots.MAGIC)))
    with pytest.raises(LogError, match="head anchor"):
        log.read_head()
    report = verify_log(log)
    assert not report.ok and "head anchor" in report.findings[0].detail


def test_an_anchor_of_earlier_versions_is_read_and_turned_into_slots_by_the_next_append(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    last = log.read()[-1]
    legacy = json.dumps({"seq": last.seq, "hash": last.hash}, separators=(",", ":")).encode() + b"\n"
    log.head_path.write_bytes(legacy)
    head = log.read_head()
    assert head is not None and (head.seq, head.hash) == (last.seq, last.hash)
    assert verify_log(log).ok
    appended = log.append(fillers(2))
    assert log.head_path.read_bytes().startswith(HeadSlots.MAGIC)
    head = log.read_head()
    assert head is not None and head.seq == appended[-1].seq and verify_log(log).ok


def test_an_anchor_written_from_nothing_by_hand_keeps_the_json_of_earlier_versions(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    last = log.read()[-1]
    log.head_path.unlink()
    log.write_head(last.seq, last.hash)  # what the golden logs' maker does: its bytes do not change
    assert json.loads(log.head_path.read_bytes()) == {"seq": last.seq, "hash": last.hash}


def test_a_head_with_another_link_is_replaced_not_written_through(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    other = tmp_path / "other-name"
    os.link(log.head_path, other)
    kept = other.read_bytes()
    appended = log.append(fillers(1))
    assert other.read_bytes() == kept  # the other name's file is untouched
    assert log.head_path.stat().st_nlink == 1
    assert log.read_head() is not None and log.read_head().seq == appended[-1].seq  # type: ignore[union-attr]


def test_a_link_planted_as_the_head_is_replaced_not_followed(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    log.head_path.unlink()
    log.head_path.symlink_to(target)
    appended = log.append(fillers(1))
    assert target.read_text() == "precious\n"
    assert not log.head_path.is_symlink()
    assert log.read_head() is not None and log.read_head().seq == appended[-1].seq  # type: ignore[union-attr]
