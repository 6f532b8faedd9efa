"""A line holds its event's fields, the envelope's and nothing else: a member no version of the
schema writes (``"foo": 1``), added to a line whose chain was then recomputed, is named by every
read of the log (verify, with and without re-deriving, and every command that checks the chain),
as an unknown event type is: explicit over implicit, an unknown field is an error, not a no-op."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mortecouille.events.codec import CorruptLine, check_line, decode_lines
from mortecouille.events.schema import CURRENT_VERSIONS
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.forgery import log_bodies, rechain_lines, write_rechained

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def game(tmp_path: Path) -> Path:
    path = tmp_path / "mortecouille.jsonl"
    shutil.copy(GOLDEN / "mortecouille.jsonl", path)
    shutil.copy(GOLDEN / "mortecouille.head", path.with_suffix(".head"))
    return path


@pytest.mark.parametrize("rederive", [True, False])
def test_a_member_no_event_has_is_named_by_verify(game: Path, rederive: bool) -> None:
    bodies = log_bodies(game)
    at = next(i for i, b in enumerate(bodies) if b["type"] == "order-given")
    bodies[at]["foo"] = 1
    write_rechained(game, bodies)
    report = verify_log(GameLog(game), rederive_turns=rederive)
    failure = report.first_failure
    assert not report.ok and failure is not None and failure.seq == at
    assert "field `foo`" in failure.detail and "order-given" in failure.detail


def test_every_current_line_of_the_golden_logs_holds_only_known_members() -> None:
    for path in sorted(GOLDEN.glob("*.jsonl")):
        assert verify_log(GameLog(path)).ok, path.name


def test_the_chain_check_names_the_unknown_member_and_accepts_the_envelope() -> None:
    bodies = log_bodies(GOLDEN / "blockade.jsonl")[:3]
    assert bodies[1]["v"] == CURRENT_VERSIONS[bodies[1]["type"]]
    bodies[1]["nonce"] = "ab" * 16  # an envelope extra: known
    lines = rechain_lines(bodies).splitlines()
    assert check_line(lines[1], 2, 1, bodies[0]["hash"])
    assert len(decode_lines(b"\n".join(lines) + b"\n")) == 3
    bodies[1]["zzz"] = [1]
    lines = rechain_lines(bodies).splitlines()
    with pytest.raises(CorruptLine, match="field `zzz`"):
        check_line(lines[1], 2, 1, bodies[0]["hash"])
