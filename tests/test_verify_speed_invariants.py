"""The quick ways ``verify`` checks a log give exactly what the definitions give.

* A line's hash recomputed from the line itself (the hash member cut out,
  ``codec.spliced_line_hash``) is :func:`~mortecouille.events.codec.line_hash` of its body, or
  None when the member cannot be found unambiguously (then the definition is taken).
* The chain checked from typed events (``codec.check_lines``) accepts the lines
  :func:`~mortecouille.events.codec.check_line` accepts, with the same hashes, and refuses the
  others with the same error.
* ``verify`` in one streaming pass (a file log) reports what the two passes over the log's bytes
  report, for every golden log and for logs edited in many ways.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mortecouille.core.state import ShipState, _canonical_ship, _ship_builtin_defaults
from mortecouille.events.base import GENESIS_HASH
from mortecouille.events.codec import (
    LogError,
    canonical,
    check_line,
    check_lines,
    decode_lines,
    line_hash,
    spliced_line_hash,
)
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from mortecouille.replays.reading.verify_checks import _GATHERED_MARKS, _MARK_BITS, _found
from tests.helpers import GOLDEN

pytestmark = pytest.mark.slow

GOLDEN_LOGS = sorted(path.name for path in GOLDEN.glob("*.jsonl"))

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
#: keys that sort before, between and after "hash", and "hash" itself for nested objects
keys = st.one_of(
    st.sampled_from(["a", "hash", "hasi", "has", "prev", "z", "type", "v", ""]), st.text(max_size=6)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
)
bodies = st.dictionaries(keys.filter(lambda key: key != "hash"), json_values, max_size=6)


def chained_line(body: dict[str, Any]) -> tuple[bytes, str]:
    """``body`` as a log line: its hash added, canonical."""
    digest = line_hash(body)
    return canonical({**body, "hash": digest}), digest


@settings(max_examples=400, deadline=None)
@given(body=bodies)
def test_the_hash_recomputed_from_the_line_is_the_hash_of_its_body(body: dict[str, Any]) -> None:
    line, digest = chained_line(body)
    assert spliced_line_hash(line, digest) in (digest, None)
    if b'"hash":' not in canonical(body):  # no nested "hash" key: the member is found
        assert spliced_line_hash(line, digest) == digest


@settings(max_examples=400, deadline=None)
@given(body=bodies, claimed=st.one_of(st.text(max_size=70), json_values))
def test_whatever_a_line_claims_the_recomputed_hash_is_its_body_s_or_none(
    body: dict[str, Any], claimed: Any
) -> None:
    """The top-level ``hash`` may hold anything (a forged line): never a wrong hash."""
    line = canonical({**body, "hash": claimed})
    if not isinstance(claimed, str):
        return  # a typed event's hash is a string: nothing else reaches the quick way
    assert spliced_line_hash(line, claimed) in (line_hash(body), None)


@settings(max_examples=200, deadline=None)
@given(body=bodies, nested=bodies)
def test_a_nested_hash_key_with_the_line_s_own_hash_is_never_cut_instead(
    body: dict[str, Any], nested: dict[str, Any]
) -> None:
    digest = line_hash(body)
    forged = {**body, "a": {**nested, "hash": digest}, "hash": digest}
    line = canonical(forged)
    assert spliced_line_hash(line, digest) is None  # twice in the line: the definition decides


def golden_lines(name: str) -> list[bytes]:
    return (GOLDEN / name).read_bytes().splitlines()


def lines_by_definition(lines: list[bytes]) -> list[str]:
    hashes = []
    prev = GENESIS_HASH
    for seq, line in enumerate(lines):
        prev = check_line(line, seq + 1, seq, prev)
        hashes.append(prev)
    return hashes


@pytest.mark.parametrize("name", GOLDEN_LOGS)
def test_every_golden_line_checks_the_quick_way_as_by_the_definition(name: str) -> None:
    lines = golden_lines(name)
    events = decode_lines(b"\n".join(lines) + b"\n")
    hashes = lines_by_definition(lines)
    for wanted in (0, len(lines) // 2, len(lines) - 1):
        assert check_lines(lines, events, 0, GENESIS_HASH, wanted) == (hashes[-1], hashes[wanted])
    # a block of the middle, from its own seq and prev
    middle = len(lines) // 3
    part = lines[middle:]
    assert check_lines(part, events[middle:], middle, hashes[middle - 1]) == (hashes[-1], None)


def edits(lines: list[bytes], rng: random.Random) -> list[tuple[str, list[bytes]]]:
    """Ways a log's lines can be edited, each applied once somewhere."""
    out: list[tuple[str, list[bytes]]] = []
    n = len(lines)
    for _ in range(12):
        index = rng.randrange(n)
        line = lines[index]
        at = rng.randrange(len(line))
        changed = bytearray(line)
        changed[at] = rng.choice([byte for byte in b'0123456789abcdef",:{}[] x\\' if byte != line[at]])
        out.append((f"byte {at} of line {index}", [*lines[:index], bytes(changed), *lines[index + 1 :]]))
    index = rng.randrange(1, n)
    out.append(("line removed", lines[:index] + lines[index + 1 :]))
    out.append(("line doubled", lines[: index + 1] + lines[index:]))
    out.append(("lines swapped", [*lines[: index - 1], lines[index], lines[index - 1], *lines[index + 1 :]]))
    body = msgspec.json.decode(lines[index])
    spaced = msgspec.json.encode(body).replace(b",", b", ", 1)
    out.append(("not canonical", [*lines[:index], spaced, *lines[index + 1 :]]))
    body["hash"] = "0" * 64
    out.append(("hash replaced", [*lines[:index], canonical(body), *lines[index + 1 :]]))
    return out


@pytest.mark.parametrize("name", GOLDEN_LOGS)
def test_the_quick_chain_check_refuses_every_edit_as_the_definition_does(name: str) -> None:
    lines = golden_lines(name)
    for what, edited in edits(lines, random.Random(name)):
        try:
            expected: Any = lines_by_definition(edited)[-1]
        except LogError as error:
            expected = (type(error), str(error), error.seq)
        try:
            events: list[Any] | None = decode_lines(b"\n".join(edited) + b"\n")
        except LogError:
            events = None
        try:
            got: Any = check_lines(edited, events, 0, GENESIS_HASH)[0]
        except LogError as error:
            got = (type(error), str(error), error.seq)
        assert got == expected, what


def copied(name: str, into: Path) -> GameLog:
    for path in GOLDEN.glob(f"{Path(name).stem}.*"):
        shutil.copy(path, into / path.name)
    return GameLog(into / name)


@pytest.mark.parametrize("name", GOLDEN_LOGS)
def test_verify_in_one_pass_reports_what_two_passes_report_for_every_edit(name: str, tmp_path: Path) -> None:
    log = copied(name, tmp_path)
    original = log.path.read_bytes()
    lines = original.splitlines()
    for rederive in (True, False):
        assert verify_log(log, rederive) == verify_log(log, rederive, data=original)
    for what, edited in edits(lines, random.Random(f"verify {name}")):
        data = b"\n".join(edited) + b"\n"
        log.path.write_bytes(data)
        streamed = verify_log(log)
        assert streamed == verify_log(log, data=data), what
        assert not streamed.ok, what
    torn = original + b'{"type":'
    log.path.write_bytes(torn)
    assert verify_log(log) == verify_log(log, data=torn)
    assert not verify_log(log).ok


def rechained(bodies_: list[dict[str, Any]]) -> bytes:
    """Lines for ``bodies_`` with seq, prev and hash made anew (a forger's log)."""
    prev = GENESIS_HASH
    lines = []
    for seq, body in enumerate(bodies_):
        body = {key: value for key, value in body.items() if key != "hash"}
        body["seq"], body["prev"] = seq, prev
        prev = body["hash"] = line_hash(body)
        lines.append(canonical(body))
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize("broken_after", [False, True])
def test_a_chained_line_that_is_no_event_ends_the_checks_after_the_chain_unless_the_chain_breaks_later(
    broken_after: bool, tmp_path: Path
) -> None:
    log = copied("blockade.jsonl", tmp_path)
    log.head_path.unlink()
    bodies_ = [msgspec.json.decode(line) for line in log.path.read_bytes().splitlines()]
    bodies_.insert(20, {"type": "no-such-event", "v": 1})
    data = rechained(bodies_)
    if broken_after:
        data = data.replace(b'"seq":40,', b'"seq":41,', 1)
    log.path.write_bytes(data)
    streamed = verify_log(log)
    assert streamed == verify_log(log, data=data)
    checks = [finding.check for finding in streamed.findings]
    assert checks == (["chain"] if broken_after else ["chain", "decode"])
    assert not streamed.ok


ships = st.builds(
    ShipState,
    id=st.text(min_size=1, max_size=4),
    kind=st.sampled_from(["sloop", "cutter", "war-brig", "galleon"]),
    owner=st.one_of(st.none(), st.sampled_from(["A", "B"])),
    at=st.one_of(st.none(), st.tuples(st.integers(0, 30), st.integers(0, 30))),
    facing=st.sampled_from(["N", "E", "S", "W", "NE"]),
    damage=st.one_of(st.just(0), st.just(0.0), st.floats(0, 20, allow_nan=False)),
    sunk=st.booleans(),
    lost=st.booleans(),
    price=st.integers(0, 50),
    options=st.one_of(st.just(()), st.just([]), st.lists(st.sampled_from(["ram", "oars"]), max_size=2)),
    wind=st.one_of(st.just(0), st.just(False), st.integers(0, 3)),
    fire=st.one_of(st.none(), st.just("burning")),
    countdown=st.one_of(st.none(), st.integers(0, 3)),
)


@settings(max_examples=300, deadline=None)
@given(ship=ships)
def test_a_ship_s_hashed_bytes_are_those_state_hash_always_took(ship: ShipState) -> None:
    """As state_hash converted a ship before (its builtins, fields equal to their defaults' left
    out, a list equal to an empty tuple default included): the golden logs' hashes stand."""
    raw = msgspec.to_builtins(ship)
    defaults = _ship_builtin_defaults()
    before = {key: value for key, value in raw.items() if key not in defaults or value != defaults[key]}
    assert bytes(_canonical_ship(ship)) == canonical(before)



def found_mark_by_mark(data: bytes, marks: tuple[bytes, ...]) -> list[tuple[int, bytes]]:
    """Where each mark occurs, one search of the bytes per mark (what verify's one search replaces)."""
    found = []
    for mark in marks:
        at = data.find(mark)
        while at >= 0:
            found.append((at, mark))
            at = data.find(mark, at + len(mark))
    return sorted(found)


MARK_SETS = (_GATHERED_MARKS, tuple(_MARK_BITS))


@settings(max_examples=300, deadline=None)
@given(
    marks=st.sampled_from(MARK_SETS),
    pieces=st.lists(
        st.one_of(
            st.sampled_from([mark for marks in MARK_SETS for mark in marks]),
            st.sampled_from([b'"type":"turn-locked"', b'"type":', b'"type":"turn-', b"\n", b'"']),
            st.binary(max_size=12),
        ),
        max_size=30,
    ),
)
def test_the_one_search_for_a_line_s_marks_finds_what_a_search_per_mark_finds(
    marks: tuple[bytes, ...], pieces: list[bytes]
) -> None:
    # the pieces joined as a canonical line would hold them: after a string's closing quote comes a
    # comma (or a brace), never the next mark
    data = b",".join(pieces)
    assert _found(data, marks) == found_mark_by_mark(data, marks)


@pytest.mark.parametrize("name", GOLDEN_LOGS)
def test_the_one_search_finds_every_mark_of_a_golden_log(name: str) -> None:
    data = (GOLDEN / name).read_bytes()
    for marks in MARK_SETS:
        assert _found(data, marks) == found_mark_by_mark(data, marks)
