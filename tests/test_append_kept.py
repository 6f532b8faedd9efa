"""A process keeps a log's descriptors open between its appends: an append then
opens nothing, but it still takes and releases the log's lock each time, and it never trusts a kept
descriptor the log's path no longer names (the file replaced, moved or removed, a link put in its
place), nor a kept copy of the head anchor another writer has changed since."""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
from pathlib import Path

import msgspec
import pytest

from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import _stamp_through_dict, stamp_all
from mortecouille.events.game import GameCreated
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage import file_handles, file_io, file_writing
from mortecouille.events.storage import file_log as store_module
from mortecouille.events.storage.errors import GameNotFound, Unwritable
from mortecouille.events.storage.file_handles import close_idle_descriptors
from mortecouille.events.storage.file_head import HeadSlots
from mortecouille.events.storage.file_log import GameLog
from mortecouille.events.storage.file_writing import Transaction
from mortecouille.replays.reading.verify import verify_log
from tests.conftest import created_log


def fillers(count: int, text: str = "filler") -> list[RulingRecorded]:
    return [RulingRecorded(turn=1, rule="T2", text=f"{text} {i}") for i in range(count)]


def kept(log: GameLog) -> store_module._Handles | None:
    return store_module._idle.get(str(log.path))


@pytest.fixture(autouse=True)
def no_kept_descriptors() -> object:
    close_idle_descriptors()
    yield
    close_idle_descriptors()


def appended_by_another_writer(log: GameLog, events: list[Event]) -> list[Event]:
    """An append as another process's command makes it: its own descriptors, its own lock."""
    other = GameLog(log.path)
    fd = os.open(log.path, os.O_RDWR | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return Transaction(other, fd).append(events)
    finally:
        os.close(fd)


def test_a_second_append_opens_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    opened: list[object] = []
    real_open = os.open

    def counted(path: object, *args: object, **kwargs: object) -> int:
        opened.append(path)
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counted)
    log.append(fillers(2, "second"))
    assert opened == []
    assert verify_log(log).ok


def test_the_lock_is_released_after_every_append(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    assert kept(log) is not None
    fd = os.open(log.path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # would raise if the kept descriptor held it
    finally:
        os.close(fd)


def test_a_writer_holding_the_lock_keeps_a_kept_descriptor_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    monkeypatch.setattr(store_module, "LOCK_TIMEOUT_SECONDS", 0.05)
    fd = os.open(log.path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        before = log.path.read_bytes()
        with pytest.raises(store_module.Conflict, match="locked by another writer"):
            log.append(fillers(1, "refused"))
        assert log.path.read_bytes() == before
    finally:
        os.close(fd)
    log.append(fillers(1, "after"))
    assert verify_log(log).ok


def test_an_append_follows_what_another_writer_appended(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    foreign = appended_by_another_writer(log, fillers(2, "foreign"))
    mine = log.append(fillers(1, "mine"))
    assert mine[0].seq == foreign[-1].seq + 1 and mine[0].prev == foreign[-1].hash
    assert verify_log(log).ok
    head = log.read_head()
    assert head is not None and (head.seq, head.hash) == (mine[-1].seq, mine[-1].hash)


def test_a_head_another_writer_rewrote_without_end_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = created_log(tmp_path)
    last = log.append(fillers(1))[-1]
    GameLog(log.path).write_head(last.seq, last.hash)  # a tool anchoring the last line: END unknown
    tail_reads: list[int] = []
    real_tail_at = file_io._tail_at

    def counted(fd: int, size: int, log_: GameLog) -> tuple[int, str]:
        tail_reads.append(size)
        return real_tail_at(fd, size, log_)

    for module in (file_io, file_writing):  # where a tail is read: an append, the tail position
        monkeypatch.setattr(module, "_tail_at", counted)
    log.append(fillers(1, "next"))
    assert len(tail_reads) == 1  # the kept copy of the head said END; the head on disk does not
    assert verify_log(log).ok


def test_a_log_replaced_under_its_path_is_opened_again(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    copy = tmp_path / "copy.jsonl"
    shutil.copyfile(log.path, copy)
    os.replace(copy, log.path)  # the same lines, another file
    appended = log.append(fillers(1, "into the new file"))
    assert log.read()[-1] == appended[-1]  # read from the file the path names
    assert verify_log(log).ok
    handles = kept(log)
    assert handles is not None and os.fstat(handles.log_fd).st_ino == log.path.stat().st_ino


def test_a_log_moved_away_is_not_written_through_its_kept_descriptor(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    moved = tmp_path / "archived.jsonl"
    os.replace(log.path, moved)
    before = moved.read_bytes()
    with pytest.raises(GameNotFound):
        log.append(fillers(1, "lost"))
    assert moved.read_bytes() == before


def test_a_link_put_in_place_of_a_kept_log_is_refused(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    target = tmp_path / "elsewhere.jsonl"
    os.replace(log.path, target)
    log.path.symlink_to(target)
    before = target.read_bytes()
    with pytest.raises(Unwritable, match="symbolic link"):
        log.append(fillers(1, "through the link"))
    assert target.read_bytes() == before


def test_a_head_replaced_under_its_path_is_the_one_updated(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    old_head = tmp_path / "old.head"
    os.link(log.head_path, old_head)  # the kept head, under another name too
    copy = tmp_path / "copy.head"
    shutil.copyfile(log.head_path, copy)
    os.replace(copy, log.head_path)
    frozen = old_head.read_bytes()
    appended = log.append(fillers(1, "next"))
    assert old_head.read_bytes() == frozen  # the file the path no longer names is left alone
    head = log.read_head()
    assert head is not None and (head.seq, head.hash) == (appended[-1].seq, appended[-1].hash)
    assert verify_log(log).ok


def test_a_removed_head_is_written_again_at_its_path(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    log.head_path.unlink()
    appended = log.append(fillers(1, "next"))
    head = log.read_head()
    assert head is not None and (head.seq, head.hash) == (appended[-1].seq, appended[-1].hash)


def test_a_process_keeps_at_most_its_share_of_logs_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in (store_module, file_handles):  # where the share is taken and given back
        monkeypatch.setattr(module, "IDLE_LOGS", 2)
    logs = [created_log(tmp_path, name) for name in ("a", "b", "c")]
    for log in logs:
        log.append(fillers(1))
    assert [Path(path).name for path in store_module._idle] == ["b.jsonl", "c.jsonl"]  # a's closed
    logs[0].append(fillers(1, "again"))  # opens its files afresh, as a command does
    assert [Path(path).name for path in store_module._idle] == ["c.jsonl", "a.jsonl"]
    assert all(verify_log(log).ok for log in logs)


def test_a_forked_child_starts_with_no_kept_descriptor(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    assert kept(log) is not None
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through its exit status
        os._exit(0 if not store_module._idle else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert kept(log) is not None  # the parent's are its own still
    log.append(fillers(1, "parent"))
    assert verify_log(log).ok


def test_threads_appending_to_one_game_take_turns(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        try:
            for index in range(20):
                log.append(fillers(2, f"{name} {index}"))
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("port", "starboard")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert verify_log(log).ok
    assert len(log.read()) == 1 + 2 * 20 * 2
    head = log.read_head()
    assert head is not None and head.seq == len(log.read()) - 1


def test_a_batch_mixing_spliced_and_dictionary_lines_is_the_dictionary_chain(tmp_path: Path) -> None:
    created = created_log(tmp_path).read()[0]
    assert isinstance(created, GameCreated)
    left_out = msgspec.structs.replace(created, dice_scheme=None)  # written without the field
    batch: list[Event] = [*fillers(2), left_out, *fillers(2, "after")]
    idem = {"idem": {"key": "a" * 64, "events": len(batch)}}
    per_line = [{**idem, "nonce": "0" * 32}, None, None, {"nonce": "1" * 32}, None]
    for extras in (None, idem, per_line):
        stamped, payload = stamp_all(batch, 4, GENESIS_HASH, extras)
        expected, prev = [], GENESIS_HASH
        for offset, event in enumerate(batch):
            first_only = extras if offset == 0 else None
            mine = extras[offset] if isinstance(extras, list) else first_only
            done, line = _stamp_through_dict(event, 4 + offset, prev, mine)
            expected.append(line)
            prev = done.hash
            assert stamped[offset] == done
        assert payload == b"".join(line + b"\n" for line in expected)


def test_the_kept_head_slots_alternate_as_fresh_ones_do(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    counters = []
    for count in range(4):
        log.append(fillers(count + 1))
        found = HeadSlots.newest(log.head_path.read_bytes())
        assert found is not None
        counters.append(found[0])
    assert counters == [counters[0] + step for step in range(4)]
