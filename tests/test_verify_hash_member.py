"""``verify`` recomputes a line's hash by cutting its first ``"hash":"`` member out, with
no search of the line (or of a turn's lines) for a second one when the event's type says the
first is always the top-level one (``codec.hash_member_first``): no field whose key sorts before
``hash`` can hold a ``hash`` key. These tests pin that decision to what the lines really hold."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import msgspec
import pytest

from mortecouille.events.base import Event
from mortecouille.events.codec import (
    LogError,
    check_lines,
    decode_lines,
    hash_member_first,
    hash_members_first,
    stamp,
)
from mortecouille.events.schema import EVENT_TYPES

GOLDEN = Path(__file__).parent / "golden"
LOGS = sorted(GOLDEN.glob("*.jsonl"))


class Inner(msgspec.Struct, frozen=True):
    hash: str


class Plain(msgspec.Struct, frozen=True):
    at: tuple[int, int]
    name: str


class KeyedBefore(Event, tag="test-keyed-before"):
    """A dict sorts before ``hash``: its keys are data, one may be ``hash``."""

    attributes: dict[str, str]


class NestedHashBefore(Event, tag="test-nested-hash-before"):
    """A Struct with a ``hash`` field sorts before ``hash``."""

    detail: Inner


class NestedHashAfter(Event, tag="test-nested-hash-after"):
    """The same Struct, its key sorting after ``hash``: the top-level member comes first."""

    zone: Inner


class PlainBefore(Event, tag="test-plain-before"):
    """Structs and arrays without a ``hash`` key anywhere before ``hash``."""

    areas: tuple[Plain, ...]
    count: int


def cut_at_first_member(line: bytes) -> str:
    """The SHA-256 of ``line`` with its first ``"hash":"`` member (64 digits, quote, comma) cut out."""
    before, _, rest = line.partition(b'"hash":"')
    return hashlib.sha256(before + rest[66:]).hexdigest()


def test_a_type_with_a_hash_key_possible_before_its_own_is_not_cut_at_its_first_member() -> None:
    assert not hash_member_first(KeyedBefore)
    assert not hash_member_first(NestedHashBefore)
    assert hash_member_first(NestedHashAfter)
    assert hash_member_first(PlainBefore)
    assert not hash_members_first([PlainBefore(areas=(), count=1), KeyedBefore(attributes={})])


@pytest.mark.parametrize("path", LOGS, ids=[path.name for path in LOGS])
def test_every_golden_line_of_a_type_cut_at_its_first_member_hashes_to_its_own_hash(path: Path) -> None:
    lines = path.read_bytes().splitlines()
    checked = 0
    for line in lines:
        body = json.loads(line)
        if hash_member_first(EVENT_TYPES[body["type"]]):
            assert cut_at_first_member(line) == body["hash"]
            checked += 1
    assert checked == len(lines)  # every type of the schema is cut at its first member today


def test_a_line_whose_nested_hash_comes_first_is_checked_by_the_definition() -> None:
    # a line whose first "hash" member is a nested one: cutting it gives another digest; the
    # chain check takes the definition's way, accepts the line, and refuses it once edited
    event = NestedHashBefore(detail=Inner(hash="0" * 64))
    stamped, line = stamp(event, 0, "0" * 64)
    assert line.count(b'"hash":"') == 2
    assert cut_at_first_member(line) != stamped.hash
    decoded = msgspec.json.decode(line, type=NestedHashBefore)
    assert check_lines([line], [decoded], 0, "0" * 64) == (stamped.hash, None)
    with pytest.raises(LogError, match="field `hash` does not match"):
        forged = line.replace(stamped.hash.encode(), b"f" * 64)
        check_lines([forged], [msgspec.json.decode(forged, type=NestedHashBefore)], 0, "0" * 64)


def test_decoding_the_golden_logs_gives_only_types_cut_at_their_first_member() -> None:
    for path in LOGS:
        assert hash_members_first(decode_lines(path.read_bytes()))
