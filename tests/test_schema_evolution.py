"""Schema evolution (issue 8): committed golden logs keep replaying, and old versions upcast.

``tests/golden/`` holds logs written by this engine (made by ``make_golden.py``) and the state
hash each one must fold to (``expected.json``). ``turn_started_v1.jsonl`` holds ``turn-started``
lines of version 1, before ``rounds`` existed; they must decode into today's class.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from cli.session import load
from core.state import state_hash
from events.base import CURRENT_VERSIONS, EVENT_TYPES, UPCASTERS
from events.codec import CorruptLine, decode_line, decode_lines, stamp
from events.game import TurnStarted
from events.store import GameLog
from replays.verify import verify_log

GOLDEN = Path(__file__).resolve().parent / "golden"
EXPECTED: dict[str, dict[str, object]] = json.loads((GOLDEN / "expected.json").read_text())


@pytest.fixture(params=sorted(EXPECTED))
def golden(request: pytest.FixtureRequest, tmp_path: Path) -> GameLog:
    """A copy of one golden log (and its head anchor), so no test can change the committed one."""
    name: str = request.param
    for suffix in (".jsonl", ".head"):
        shutil.copyfile(GOLDEN / name.replace(".jsonl", suffix), tmp_path / name.replace(".jsonl", suffix))
    return GameLog(tmp_path / name)


def test_golden_logs_verify_rederive_and_fold_to_the_recorded_state(golden: GameLog) -> None:
    report = verify_log(golden)
    assert report.ok, [f for f in report.findings if not f.ok]
    assert {f.check for f in report.findings} >= {"chain", "state", "rederive"}
    events, state = load(golden)
    expected = EXPECTED[golden.path.name]
    assert len(events) == expected["events"]
    assert sorted({type(e).__struct_config__.tag for e in events}) == expected["types"]  # type: ignore[misc]
    assert state_hash(state) == expected["state_hash"]


def test_the_blockade_golden_log_holds_every_event_type_blockade_produces() -> None:
    produced = set(EXPECTED["blockade.jsonl"]["types"])  # type: ignore[call-overload]
    blockade_types = {
        "game-created", "ship-placed", "tokens-given", "turn-started", "ship-moved", "ship-pushed",
        "collision", "damage", "ship-sunk", "turn-ended", "game-ended",
    }  # fmt: skip
    assert produced == blockade_types


def v1_lines() -> list[bytes]:
    return [
        line
        for line in (GOLDEN / "turn_started_v1.jsonl").read_bytes().splitlines()
        if b"turn-started" in line
    ]


def test_a_v1_turn_started_line_upcasts_to_v2_on_both_decode_paths() -> None:
    lines = v1_lines()
    assert lines and all(b'"v":1' in line and b"rounds" not in line for line in lines)
    assert CURRENT_VERSIONS["turn-started"] == 2
    for number, line in enumerate(lines, 1):
        event = decode_line(line, number)  # the typed decode sees v 1: the slow path upcasts
        assert isinstance(event, TurnStarted)
        assert (event.v, event.rounds) == (2, 1)
        assert event.hash == json.loads(line)["hash"]  # the envelope survives the upcast
    batch = decode_lines(b"\n".join(lines) + b"\n")  # the batch path falls back per line
    assert [(type(e), e.v, e.rounds) for e in batch] == [(TurnStarted, 2, 1)] * len(lines)
    mixed = decode_lines((GOLDEN / "turn_started_v1.jsonl").read_bytes())
    assert all(e.v == CURRENT_VERSIONS[type(e).__struct_config__.tag] for e in mixed)  # type: ignore[index]


def test_a_v1_line_that_carries_rounds_keeps_them_and_new_lines_are_written_as_v2() -> None:
    line = b'{"hash":"h","prev":"p","rounds":4,"seq":3,"turn":2,"type":"turn-started","v":1}'
    event = decode_line(line, 4)
    assert isinstance(event, TurnStarted) and (event.v, event.rounds) == (2, 4)
    _, written = stamp(TurnStarted(turn=1, rounds=4), 0, "0" * 64)
    assert msgspec.json.decode(written)["v"] == 2


def test_a_version_newer_than_the_engine_or_a_wrong_type_is_a_corrupt_line_naming_the_field() -> None:
    with pytest.raises(CorruptLine, match=r"line 7: field `v`: turn-started version 3"):
        decode_line(b'{"hash":"h","prev":"p","seq":6,"turn":2,"type":"turn-started","v":3}', 7)
    with pytest.raises(CorruptLine, match=r"line 2: turn-started: .*rounds"):
        decode_line(
            b'{"hash":"h","prev":"p","rounds":"four","seq":1,"turn":2,"type":"turn-started","v":1}', 2
        )


def test_every_old_version_of_every_event_type_has_an_upcaster() -> None:
    """Bumping ``v`` without an upcaster would make old logs unreadable."""
    missing = [
        (tag, version)
        for tag, current in CURRENT_VERSIONS.items()
        for version in range(1, current)
        if (tag, version) not in UPCASTERS
    ]
    assert not missing
    assert set(CURRENT_VERSIONS) == set(EVENT_TYPES)
