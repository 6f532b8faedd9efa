"""``verify`` searches a file log's bytes once: the search that picks the dice and the
seed (``replays.reading.verify.gather``) also notes which lines hold a turn's start or end, by the
seq each line claims (``_claimed_seq``), and the checked pass (``LinePass``) looks for turns
there. Those marks are a hint of where to look, never taken on the bytes' word: whatever they say,
the report is the one the two passes over the decoded log give; and right, they let every turn
be checked undecoded."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from mortecouille.events.base import Event
from mortecouille.events.codec import decode_lines
from mortecouille.replays.reading import verify_checks
from mortecouille.replays.reading.verify import verify_log
from mortecouille.replays.reading.verify_checks import _claimed_seq, gather
from tests.helpers import read_in_chunks
from tests.test_verify_raw_turns import (
    CHUNKS,
    assert_ended_turns_undecoded,
    both_ways,
    events_decoded_by_verify,
    turn_lines,
)
from tests.test_verify_speed_invariants import GOLDEN_LOGS, copied, edits

Misplaced = Callable[[int], int | None]


def misplacements(seed: str) -> list[tuple[str, Misplaced]]:
    """Ways the seq a line claims could mislead the pass (a forged log's lines claim what they
    like): off by one either way, far off, before the log, none at all, anywhere at random."""
    rng = random.Random(seed)
    return [
        ("one before", lambda seq: seq - 1),
        ("one after", lambda seq: seq + 1),
        ("far after", lambda seq: seq + 1_000),
        ("before the log", lambda seq: -1 - seq),
        ("none", lambda seq: None),
        ("at random", lambda seq: rng.randrange(-3, seq + 40)),
    ]


def claiming(monkeypatch: pytest.MonkeyPatch, misplaced: Misplaced) -> None:
    """Every turn mark noted at the seq ``misplaced`` makes of the one its line claims."""
    real = verify_checks._claimed_seq

    def moved(chunk: bytes, at: int) -> int | None:
        seq = real(chunk, at)
        return None if seq is None else misplaced(seq)

    monkeypatch.setattr(verify_checks, "_claimed_seq", moved)


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("name", GOLDEN_LOGS)
def test_turn_marks_in_the_wrong_places_change_nothing_in_the_report(
    name: str, chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_in_chunks(monkeypatch, chunk)
    log = copied(name, tmp_path)
    for what, misplaced in misplacements(f"{name} {chunk}"):
        with monkeypatch.context() as patched:
            claiming(patched, misplaced)
            streamed, whole = both_ways(log)
        assert streamed.ok, (what, streamed.findings)
        assert streamed == whole, what


@pytest.mark.parametrize("name", GOLDEN_LOGS)
def test_every_edit_is_reported_alike_with_the_turn_marks_misplaced(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_in_chunks(monkeypatch, 1500)
    log = copied(name, tmp_path)
    lines = log.path.read_bytes().splitlines()
    rng = random.Random(f"misplaced marks {name}")
    misplaced = misplacements(name)
    for what, edited in edits(lines, rng):
        log.path.write_bytes(b"\n".join(edited) + b"\n")
        how, moved = rng.choice(misplaced)
        with monkeypatch.context() as patched:
            claiming(patched, moved)
            streamed, whole = both_ways(log)
        assert streamed == whole, (what, how)


@pytest.mark.parametrize("chunk", CHUNKS)
def test_the_marks_noted_by_the_one_search_let_every_turn_be_checked_undecoded(
    chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_in_chunks(monkeypatch, chunk)
    log = copied("blockade.jsonl", tmp_path)
    decoded: list[Event] = events_decoded_by_verify(monkeypatch)
    report = verify_log(log)
    assert report.ok, report.findings
    assert_ended_turns_undecoded(decode_lines(log.path.read_bytes()), turn_lines(log), decoded)


@pytest.mark.parametrize("name", GOLDEN_LOGS)
def test_the_one_search_notes_each_turn_start_and_end_at_its_line_s_seq(name: str) -> None:
    data = (Path(__file__).parent / "golden" / name).read_bytes()
    events = decode_lines(data)
    expected: dict[int, int] = {}
    for event in events:
        bit = verify_checks._MARK_BITS.get(b'"type":"' + type(event).__struct_config__.tag.encode() + b'"')
        if bit is not None:
            expected[event.seq] = bit
    assert gather([data], turn_marks=True).turn_marks == expected
    assert gather([data]).turn_marks == {}  # only asked for when turns are re-derived


def test_a_line_s_claimed_seq_is_read_from_its_own_bytes_before_the_mark() -> None:
    line = b'{"hash":"ab","prev":"cd","seq":41,"turn":3,"type":"turn-ended","v":1}'
    other = b'{"seq":7,"type":"tokens-given"}\n'
    chunk = other + line + b"\n"
    assert _claimed_seq(chunk, chunk.index(b'"type":"turn-ended"')) == 41
    assert _claimed_seq(chunk, chunk.index(b'"type":"tokens-given"')) == 7


@pytest.mark.parametrize(
    "line",
    [
        b'{"turn":3,"type":"turn-ended","v":1}',  # no seq
        b'{"seq":-4,"type":"turn-ended"}',  # not digits
        b'{"seq":"4","type":"turn-ended"}',
        b'{"seq":4 ,"type":"turn-ended"}',
        b'{"seq":4}{"type":"turn-ended"}',
        b'{"type":"turn-ended","seq":4}',  # after the mark: not the line's sorted seq
        b'{"seq":' + b"9" * 5_000 + b',"type":"turn-ended"}',  # more digits than int() converts
    ],
)
def test_a_line_without_a_plain_seq_before_its_mark_claims_none(line: bytes) -> None:
    chunk = b'{"seq":9}\n' + line + b"\n"
    assert _claimed_seq(chunk, chunk.index(b'"type":"turn-ended"')) is None
