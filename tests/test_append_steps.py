"""What one append of a kept log does, step by step: exactly the system calls its
guarantees need, in the order they need them, and stamping and the head's slot with fewer steps
but the same bytes as their definitions (a nested ``hash`` key before the line's own included).

The system calls are the floor the guarantees set: the lock taken and given back (two ``flock``),
the log's path and the head's checked to name the kept files (two ``lstat``: a path's identity
cannot be had from a descriptor), the lines written and made durable (``write``, ``fsync``), then
the head's slot (``pwrite``), never before the ``fsync``. The head's slots are read again from
their shared mapping (another writer's update shows there at once), with no system call, once the
process has appended to the log twice (the second append reads them with ``pread`` and maps them)."""

from __future__ import annotations

import fcntl
import os
import posix  # the real fstat, which the recording below does not see
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mortecouille.events.base import Event
from mortecouille.events.codec import _stamp_by_splice, _stamp_through_dict, stamp, stamp_all
from mortecouille.events.rulings import Adjustment, RulingRecorded
from mortecouille.events.storage.file_handles import close_idle_descriptors
from mortecouille.events.storage.file_head import HeadSlots
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.conftest import created_log


def fillers(count: int, text: str = "filler") -> list[RulingRecorded]:
    return [RulingRecorded(turn=1, rule="T2", text=f"{text} {i}") for i in range(count)]


@pytest.fixture(autouse=True)
def no_kept_descriptors() -> Iterator[None]:
    close_idle_descriptors()
    yield
    close_idle_descriptors()


#: The calls of ``os`` an append could make besides those it must: each is recorded if made.
OTHER_CALLS = ("open", "close", "fstat", "stat", "lseek", "read", "access", "unlink", "replace",
               "rename", "ftruncate", "fdatasync")  # fmt: skip


def record_system_calls(monkeypatch: pytest.MonkeyPatch, log: GameLog) -> list[tuple[str, str]]:
    """Record each call of ``os`` and ``fcntl.flock`` as (call, what it names: the log, the head or
    another file), in order, while the test runs."""
    calls: list[tuple[str, str]] = []
    paths = {str(log.path): "log", str(log.head_path): "head"}
    inodes = {os.stat(path).st_ino: name for path, name in paths.items()}

    def named(target: object) -> str:
        if isinstance(target, int):  # a descriptor: the file it is open on, by inode
            return inodes.get(posix.fstat(target).st_ino, "other")
        return paths.get(os.fsdecode(str(target)), "other")

    def wrapped(module: Any, name: str) -> None:
        real: Callable[..., Any] = getattr(module, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append((name, named(args[0]) if args else "-"))
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, call)

    for name in ("lstat", "pread", "write", "fsync", "pwrite", *OTHER_CALLS):
        wrapped(os, name)
    wrapped(fcntl, "flock")
    return calls


def test_an_append_to_a_kept_log_makes_only_the_system_calls_its_guarantees_need(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))  # the process keeps the log's descriptors from here on
    log.append(fillers(1, "again"))  # and the head mapped, from its second append to the log
    calls = record_system_calls(monkeypatch, log)
    log.append(fillers(3, "second"))
    monkeypatch.undo()
    assert calls == [
        ("flock", "log"),  # the lock, taken at once when free
        ("lstat", "log"),  # the log's path still names the kept file; its size
        ("lstat", "head"),  # the head's path still names the kept file, one link, both slots
        ("write", "log"),  # the command's lines, in one write
        ("fsync", "log"),  # durable before the anchor names them
        ("pwrite", "head"),  # the older slot, after the fsync
        ("flock", "log"),  # the lock given back
    ]
    assert verify_log(log).ok


def test_the_head_slot_is_written_only_after_the_logs_fsync_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = created_log(tmp_path)
    log.append(fillers(1))
    head_before = log.head_path.read_bytes()
    real_fsync = os.fsync
    seen_at_fsync: list[bytes] = []

    def fsync_then_look(fd: int) -> None:
        real_fsync(fd)
        seen_at_fsync.append(log.head_path.read_bytes())

    monkeypatch.setattr(os, "fsync", fsync_then_look)
    log.append(fillers(2, "second"))
    monkeypatch.undo()
    assert seen_at_fsync == [head_before]  # readied before the write, but not yet written
    assert log.head_path.read_bytes() != head_before


# --- the head's slot ------------------------------------------------------------------------------


def slot_by_its_definition(counter: int, seq: int, digest: str, end: int | None) -> bytes:
    """A slot as README and :class:`HeadSlots` define it, written the plainest way."""
    fields = f"mortecouille-head 3 {counter} {seq} {digest} {'-' if end is None else end}"
    if end is not None and len(fields) + 9 >= HeadSlots.SIZE:
        fields = f"mortecouille-head 3 {counter} {seq} {digest} -"  # END left out: it would not fit
    body = fields.encode("ascii")
    record = body + b" " + f"{zlib.crc32(body):08x}".encode("ascii")
    return record + b" " * (HeadSlots.SIZE - 1 - len(record)) + b"\n"


@pytest.mark.parametrize("counter", [0, 1, 2, 99, 10**12])
@pytest.mark.parametrize("end", [None, 0, 1215, 10**12, 10**30])
def test_a_slot_record_is_its_definition_byte_for_byte(counter: int, end: int | None) -> None:
    digest = "0123456789abcdef" * 4
    record, recorded_end = HeadSlots.recorded(counter, 41, digest, end)
    assert record == slot_by_its_definition(counter, 41, digest, end)
    assert len(record) == HeadSlots.SIZE
    found = HeadSlots.newest(record + record)
    assert found == (counter, 41, digest, recorded_end)
    assert recorded_end == (end if b" - " not in record else None)


# --- stamping ---------------------------------------------------------------------------------------


class Nested(msgspec.Struct, frozen=True):
    hash: str = ""
    note: str = ""


class WithNestedHash(Event, tag="test_nested_hash", frozen=True):
    """An event (for these tests only) whose first field, sorted before ``hash``, holds objects
    with a ``hash`` key of their own: their ``"hash":"",`` comes before the line's."""

    entries: tuple[Nested, ...] = ()


class WithMapping(Event, tag="test_mapping", frozen=True):
    """An event (for these tests only) with a field whose keys are not known in advance."""

    extra: dict[str, Any] = msgspec.field(default_factory=dict)


class SelfNesting(Event, tag="test_self_nesting", frozen=True):
    """An event (for these tests only) that holds events of its own class, each with a hash field."""

    children: tuple[SelfNesting, ...] = ()


def test_an_event_holding_events_of_its_own_class_is_stamped_by_its_definition() -> None:
    event = SelfNesting(children=(SelfNesting(),))
    assert _stamp_by_splice(event, 3, "e" * 64) is None
    assert stamp(event, 3, "e" * 64) == _stamp_through_dict(event, 3, "e" * 64)


def test_an_event_whose_nested_structs_have_no_hash_field_is_spliced() -> None:
    event = RulingRecorded(turn=1, rule="T2", text="x", adjustments=(Adjustment(ship="A", wind=1),))
    assert _stamp_by_splice(event, 3, "e" * 64) == _stamp_through_dict(event, 3, "e" * 64)


def test_an_event_nesting_a_hash_key_before_its_own_is_stamped_by_its_definition() -> None:
    nested = WithNestedHash(entries=(Nested(),))
    assert _stamp_by_splice(nested, 3, "e" * 64) is None  # the first "hash":"", is not the line's
    assert stamp(nested, 3, "e" * 64) == _stamp_through_dict(nested, 3, "e" * 64)
    mapped = WithMapping(extra={"a": {"hash": ""}})
    assert stamp(mapped, 4, "e" * 64) == _stamp_through_dict(mapped, 4, "e" * 64)
    harmless = WithMapping(extra={"z": 1})  # no second one: spliced
    assert _stamp_by_splice(harmless, 5, "e" * 64) == _stamp_through_dict(harmless, 5, "e" * 64)


def test_a_batch_after_an_event_that_took_the_dictionary_path_chains_on_it() -> None:
    batch: list[Event] = [*fillers(1), WithNestedHash(entries=(Nested(),)), *fillers(2, "after")]
    stamped, payload = stamp_all(batch, 9, "f" * 64)
    prev = "f" * 64
    for seq, (event, line) in enumerate(zip(batch, payload.splitlines(), strict=True), start=9):
        expected, expected_line = _stamp_through_dict(event, seq, prev)
        assert line == expected_line
        assert stamped[seq - 9] == expected
        prev = expected.hash


def test_text_and_adjustments_that_spell_the_hash_field_stamp_by_their_definition() -> None:
    event = RulingRecorded(
        turn=1, rule='"hash":"",', text='{"hash":"",}', adjustments=(Adjustment(ship='"hash":"",'),)
    )
    assert stamp(event, 2, "a" * 64) == _stamp_through_dict(event, 2, "a" * 64)
