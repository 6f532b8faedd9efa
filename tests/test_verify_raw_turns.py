"""``verify`` checks a resolved turn the rules re-derive exactly without decoding its lines (issue
16: ``replays.reading.verify.LinePass``, ``rederive.RawTurn``): the rules' events, given the
envelopes the lines chain to, must encode to the lines byte for byte. Whatever a log holds, the
report is the one the two passes over its decoded lines give (``verify_log(log, data=...)``),
however the file is cut into blocks; and a turn's lines after its TurnStarted are really not
decoded when they are the rules'."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mortecouille.events.base import Event
from mortecouille.events.codec import decode_lines
from mortecouille.events.game import GameEnded, TurnEnded, TurnStarted
from mortecouille.events.storage import file_stream as store
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading import verify
from mortecouille.replays.reading.findings import Report
from mortecouille.replays.reading.rederive import turn_spans
from mortecouille.replays.reading.verify import verify_log
from tests.helpers import read_in_chunks
from tests.test_verify_speed_invariants import GOLDEN_LOGS, copied, edits, rechained

#: block sizes that cut turns (and lines) between blocks, and the real one
CHUNKS = [97, 1500, store.STREAM_CHUNK_BYTES]


def both_ways(log: GameLog, rederive: bool = True) -> tuple[Report, Report]:
    """``verify`` streaming the file, and over the same bytes decoded whole (the reference)."""
    return verify_log(log, rederive), verify_log(log, rederive, data=log.path.read_bytes())


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("name", GOLDEN_LOGS)
def test_every_golden_log_verifies_alike_however_its_file_is_cut_into_blocks(
    name: str, chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_in_chunks(monkeypatch, chunk)
    log = copied(name, tmp_path)
    for rederive in (True, False):
        streamed, whole = both_ways(log, rederive)
        assert streamed.ok, streamed.findings
        assert streamed == whole


@pytest.mark.parametrize("chunk", CHUNKS[:2])
@pytest.mark.parametrize("name", GOLDEN_LOGS)
def test_every_edit_is_reported_alike_however_the_file_is_cut_into_blocks(
    name: str, chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_in_chunks(monkeypatch, chunk)
    log = copied(name, tmp_path)
    lines = log.path.read_bytes().splitlines()
    for what, edited in edits(lines, random.Random(f"raw turns {name} {chunk}")):
        log.path.write_bytes(b"\n".join(edited) + b"\n")
        streamed, whole = both_ways(log)
        assert streamed == whole, what
        assert not streamed.ok, what


def bodies_of(log: GameLog) -> list[dict[str, Any]]:
    return [msgspec.json.decode(line) for line in log.path.read_bytes().splitlines()]


def turn_lines(log: GameLog) -> list[tuple[int, int]]:
    """(first, last) line of every resolved turn of ``log``."""
    return turn_spans(decode_lines(log.path.read_bytes()))


Forgery = Callable[[list[dict[str, Any]], int, int], None]


def outcome_edited(bodies: list[dict[str, Any]], first: int, last: int) -> None:
    """A line of the turn says another outcome: a die's value, else the rule a line cites, else the
    rules its end cites."""
    for body in bodies[first + 1 : last]:
        if body["type"] == "die-rolled":
            body["value"] = body["value"] % 6 + 1
            return
    for body in bodies[first + 1 : last]:
        if "rule" in body:
            body["rule"] = "M5" if body["rule"] != "M5" else "M4"
            return
    bodies[last]["rules"] = [*bodies[last]["rules"], "M5"]


def extra_on_turn_start(bodies: list[dict[str, Any]], first: int, last: int) -> None:
    """The turn's first line carries an envelope extra, as a command sent with an idempotency
    key writes it (the service): the rest of the turn still checks the quick way."""
    bodies[first]["idem"] = {"key": "a" * 64, "events": last - first + 1}


def extra_inside(bodies: list[dict[str, Any]], first: int, last: int) -> None:
    """An idempotency key inside a turn, on a line no command's batch starts with: refused."""
    bodies[max(first + 1, (first + last) // 2)]["idem"] = {"key": "a" * 64, "events": 1}


def nested_marks(bodies: list[dict[str, Any]], first: int, last: int) -> None:
    """Lines holding a turn's or a game end's type in a nested object (a key decoding ignores):
    found by the bytes, they must not be taken for the lines of those types."""
    bodies[first - 1]["x"] = {"type": "turn-started"}
    bodies[(first + last) // 2]["x"] = {"type": "turn-ended"}
    bodies[last]["x"] = {"type": "game-ended"}


def nested_start_inside(bodies: list[dict[str, Any]], first: int, last: int) -> None:
    bodies[first + 1]["x"] = [{"type": "turn-started"}, {"type": "turn-ended"}]


def nested_hash(bodies: list[dict[str, Any]], first: int, last: int) -> None:
    """A nested ``hash`` key with a hash-like value: the hash member cut must be the top-level one."""
    bodies[first + 1]["a"] = {"hash": "0" * 64}


def turn_unended(bodies: list[dict[str, Any]], first: int, last: int) -> None:
    """The turn's end removed: the next TurnStarted starts another turn over this one."""
    del bodies[last]


FORGERIES: list[Forgery] = [
    outcome_edited,
    extra_on_turn_start,
    extra_inside,
    nested_marks,
    nested_start_inside,
    nested_hash,
    turn_unended,
]


@pytest.mark.parametrize("chunk", CHUNKS[1:])
@pytest.mark.parametrize("forge", FORGERIES, ids=lambda forge: forge.__name__)
@pytest.mark.parametrize("name", ["blockade.jsonl", "mortecouille.jsonl", "turn_started_v1.jsonl"])
def test_a_rechained_log_with_odd_turn_lines_is_reported_as_its_decoded_lines_are(
    name: str, forge: Forgery, chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_in_chunks(monkeypatch, chunk)
    log = copied(name, tmp_path)
    log.head_path.unlink()  # a forger rewrites the log; the anchor's check is tested elsewhere
    spans = turn_lines(log)
    original = bodies_of(log)
    for first, last in (spans[0], spans[-1]):
        bodies = [dict(body) for body in original]
        forge(bodies, first, last)
        log.path.write_bytes(rechained(bodies))
        streamed, whole = both_ways(log)
        assert streamed == whole, (first, streamed.findings)
        if forge is extra_on_turn_start:
            assert streamed.ok, streamed.findings  # still the rules' outcome
        if forge is extra_inside:
            failure = streamed.first_failure
            assert failure is not None and failure.check == "chain" and "field `idem`" in failure.detail
        if forge in (nested_marks, nested_start_inside, nested_hash):
            # a member no event has (where a nested key could hide): named by the chain check, the
            # same way both ways, before anything reads the turn's lines (tests/test_unknown_line_fields.py)
            failure = streamed.first_failure
            assert failure is not None and failure.check == "chain" and "is no field of" in failure.detail


@pytest.mark.parametrize("forge", [None, turn_unended], ids=["as logged", "turn unended"])
def test_a_turn_longer_than_the_lines_held_back_takes_the_common_way(
    forge: Forgery | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_in_chunks(monkeypatch, 97)
    monkeypatch.setattr(verify, "MAX_TURN_LINES", 3)  # every turn of the log is longer
    log = copied("mortecouille.jsonl", tmp_path)
    log.head_path.unlink()
    bodies = bodies_of(log)
    if forge is not None:
        first, last = turn_lines(log)[0]
        forge(bodies, first, last)
    log.path.write_bytes(rechained(bodies))
    streamed, whole = both_ways(log)
    assert streamed == whole
    assert streamed.ok == (forge is None), streamed.findings


def events_decoded_by_verify(monkeypatch: pytest.MonkeyPatch) -> list[Event]:
    """The list every event ``verify`` decodes from now on is added to (its one typed decode of
    lines, ``LinePass._decoded``, counted)."""
    decoded: list[Event] = []
    real = verify.LinePass._decoded

    def counted(self: verify.LinePass, lines: list[bytes]) -> list[Event] | None:
        got = real(self, lines)
        decoded.extend(got or ())
        return got

    monkeypatch.setattr(verify.LinePass, "_decoded", counted)
    return decoded


def assert_ended_turns_undecoded(
    events: list[Event], spans: list[tuple[int, int]], decoded: list[Event]
) -> None:
    """No line of a turn ``spans`` gives (first and last seq), after its TurnStarted, among the
    ``decoded`` events; a turn a GameEnded follows is decoded (a victory is part of the turn), so
    only the others are looked at, and there must be some."""
    decoded_seqs = {event.seq for event in decoded}
    quick = [
        (first, last)
        for first, last in spans
        if type(events[last]) is TurnEnded and (last + 1 == len(events) or type(events[last + 1]) is not GameEnded)
    ]
    assert quick
    for first, last in quick:
        assert type(events[first]) is TurnStarted
        assert not decoded_seqs & set(range(first + 1, last + 1)), (first, last)


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("name", ["blockade.jsonl", "mortecouille.jsonl", "mortecouille_contributed.jsonl"])
def test_the_lines_of_a_turn_re_derived_exactly_after_its_first_are_never_decoded(
    name: str, chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_in_chunks(monkeypatch, chunk)
    log = copied(name, tmp_path)
    events = decode_lines(log.path.read_bytes())
    decoded = events_decoded_by_verify(monkeypatch)
    report = verify_log(log)
    assert report.ok, report.findings
    assert_ended_turns_undecoded(events, turn_spans(events), decoded)


def test_a_turn_whose_first_line_carries_an_idempotency_key_is_still_checked_undecoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service writes a command's idempotency key on the first line of its batch (a turn's
    TurnStarted): the rest of the turn is still the rules' exact encoding, never decoded."""
    log = copied("mortecouille.jsonl", tmp_path)
    log.head_path.unlink()
    bodies = bodies_of(log)
    spans = turn_lines(log)
    for first, last in spans:
        extra_on_turn_start(bodies, first, last)
    log.path.write_bytes(rechained(bodies))
    decoded = events_decoded_by_verify(monkeypatch)
    streamed, whole = both_ways(log)
    assert streamed.ok, streamed.findings
    assert streamed == whole
    assert_ended_turns_undecoded(decode_lines(log.path.read_bytes()), spans, decoded)
