"""``repair`` must not launder a cut log.

A log cut mid-line far before its head anchor used to be "repaired" by moving the anchor back,
after which ``verify`` passed. Repair may only cut a torn tail after the anchored seq (an
unfinished append); when complete anchored lines are missing it refuses with exit 4 naming how
many, unless ``--record-loss`` writes the loss into the log as an event.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mortecouille.core.blockade.narrators import NARRATORS as BLOCKADE_NARRATORS
from mortecouille.core.mortecouille.narrators import NARRATORS as MORTECOUILLE_NARRATORS
from mortecouille.events.game import LossRecorded
from mortecouille.events.storage.errors import AnchoredLoss
from mortecouille.events.storage.file_log import GameLog
from tests.cli_helpers import ok, play_blockade_turn, run


@pytest.fixture
def played(games: Path) -> GameLog:
    play_blockade_turn(games, "g")
    return GameLog(games / "g.jsonl")


def cut_mid_line(log: GameLog, line: int) -> bytes:
    """Cut the log in the middle of line ``line`` (1-based); return what stays."""
    data = log.path.read_bytes()
    lines = data.splitlines(keepends=True)
    kept = b"".join(lines[: line - 1]) + lines[line - 1][:25]
    log.path.write_bytes(kept)
    return kept


def test_repair_refuses_a_log_cut_before_its_anchor_naming_how_many_anchored_events_are_gone(
    played: GameLog,
) -> None:
    anchored = played.read_head()
    assert anchored is not None and anchored.seq > 10
    cut = cut_mid_line(played, 5)  # seq 0..3 stay whole; seq 4.. the anchor vouched for are gone
    head_before = played.head_path.read_bytes()
    result = run(played.path.parent, "repair", "g", "--yes")
    assert result.exit_code == 4, result.output
    assert f"{anchored.seq + 1 - 4} anchored event(s) are gone" in result.output
    assert "--record-loss" in result.output
    assert played.path.read_bytes() == cut and played.head_path.read_bytes() == head_before
    assert run(played.path.parent, "verify", "g").exit_code == 4  # still caught, not laundered


def test_repair_refuses_a_log_cut_at_a_line_boundary_before_its_anchor(played: GameLog) -> None:
    lines = played.path.read_bytes().splitlines(keepends=True)
    played.path.write_bytes(b"".join(lines[:6]))
    with pytest.raises(AnchoredLoss) as error:
        played.repair()
    assert error.value.plan.lost == len(lines) - 6
    assert played.path.read_bytes() == b"".join(lines[:6])


def test_repair_refuses_to_cut_into_a_log_whose_anchored_line_was_rewritten(played: GameLog) -> None:
    lines = played.path.read_bytes().splitlines(keepends=True)
    anchored = played.read_head()
    assert anchored is not None
    forged = lines[-1].replace(anchored.hash.encode(), b"f" * 64)  # re-chained: another hash
    assert forged != lines[-1]
    tampered = b"".join(lines[:-1]) + forged + b'{"seq":'
    played.path.write_bytes(tampered)
    result = run(played.path.parent, "repair", "g", "--yes", "--record-loss")
    assert result.exit_code == 4, result.output
    assert "rewritten" in result.output
    assert played.path.read_bytes() == tampered


def test_record_loss_cuts_the_torn_line_and_writes_the_loss_into_the_log(played: GameLog) -> None:
    anchored = played.read_head()
    assert anchored is not None
    cut = cut_mid_line(played, 5)
    whole_part = cut[: cut.rfind(b"\n") + 1]
    output = ok(played.path.parent, "repair", "g", "--yes", "--record-loss")
    lost = anchored.seq + 1 - 4
    assert f"recorded the loss of {lost} event(s)" in output
    data = played.path.read_bytes()
    assert data.startswith(whole_part)
    last = json.loads(data.splitlines()[-1])
    assert last["type"] == "loss-recorded" and last["seq"] == 4
    assert (last["anchored_seq"], last["anchored_hash"], last["lost"]) == (anchored.seq, anchored.hash, lost)
    assert last["cut_bytes"] == len(cut) - len(whole_part)
    assert played.verify_chain() == 5  # the anchor moved to the loss, which says what is gone
    assert played.read_head() is not None and played.read_head().seq == 4  # type: ignore[union-attr]
    assert "loss-recorded" in ok(played.path.parent, "log", "g")
    ok(played.path.parent, "state", "g")  # the fold goes on from the events that remain


def test_a_recorded_loss_is_told_by_both_rulesets_narrators() -> None:
    loss = LossRecorded(anchored_seq=810, anchored_hash="0" * 64, lost=778, seq=32)
    for table in (BLOCKADE_NARRATORS, MORTECOUILLE_NARRATORS):
        told = table[LossRecorded](loss, None).render()  # type: ignore[arg-type]
        assert "778 event(s)" in told and "seq 33..810" in told


def test_an_unfinished_append_after_the_anchor_is_still_cut_without_any_flag(played: GameLog) -> None:
    whole = played.path.read_bytes()
    played.path.write_bytes(whole + b'{"seq":99,"type":"die-')
    assert run(played.path.parent, "repair", "g", "--yes").exit_code == 0
    assert played.path.read_bytes() == whole
    assert "verified" in ok(played.path.parent, "verify", "g")


def test_repair_refuses_to_cut_when_the_head_anchor_is_unreadable(played: GameLog) -> None:
    # a forger who cut the log and spoiled the anchor used to get both "repaired" and re-anchored
    cut = cut_mid_line(played, 5)
    played.head_path.write_bytes(b"not an anchor\n")
    result = run(played.path.parent, "repair", "g", "--yes", "--record-loss")
    assert result.exit_code == 4, result.output
    assert "head anchor" in result.output and "unreadable" in result.output
    assert played.path.read_bytes() == cut and played.head_path.read_bytes() == b"not an anchor\n"
