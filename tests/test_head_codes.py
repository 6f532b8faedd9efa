"""Head codes (issue 15.3): after each turn the table reads aloud the first 6 hex digits of the
log's head hash; ``verify --head-code SEQ:CODE`` then catches a log later cut short or rewritten."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mortecouille.app.games import game_log, load
from mortecouille.app.receipts import head_code, turn_head_code
from tests.cli_helpers import ok, play_blockade_turn, run, tree_digest
from tests.forgery import log_bodies, write_rechained

SAID = re.compile(r"^head code after turn (\d+): ([0-9a-f]{6}) \(seq (\d+)\)$", re.M)


def resolve_and_note(games: Path) -> tuple[int, str]:
    """Play the README's blockade turn; the (seq, code) ``resolve`` printed."""
    play_blockade_turn(games)
    return note_from_log(games)


def note_from_log(games: Path) -> tuple[int, str]:
    said = turn_head_code(load(game_log(games, "b"))[0])
    assert said is not None
    return said[1].seq, said[1].code


def test_resolve_prints_the_head_code_of_the_turns_end(games: Path) -> None:
    play_blockade_turn(games)
    ok(games, "tokens", "b", "Sloopy", "F")
    ok(games, "tokens", "b", "Frig", "F")
    output = ok(games, "resolve", "b")
    match = SAID.search(output)
    assert match is not None, output
    turn, code, seq = int(match[1]), match[2], int(match[3])
    ended = log_bodies(games / "b.jsonl")[seq]
    assert (turn, ended["type"], ended["turn"]) == (2, "turn-ended", 2)
    assert ended["hash"].startswith(code)


def test_the_app_gives_the_head_code_at_a_seq_and_after_the_last_turn(games: Path) -> None:
    play_blockade_turn(games)
    events, _ = load(game_log(games, "b"))
    assert head_code(events).code == events[-1].hash[:6] and head_code(events).seq == len(events) - 1
    assert head_code(events, 3).code == events[3].hash[:6]
    with pytest.raises(IndexError):
        head_code(events, len(events))
    assert turn_head_code(events, seq=2) is None  # no turn resolved by then
    said = turn_head_code(events)
    assert said is not None and said[0] == 1 and events[said[1].seq].hash.startswith(said[1].code)
    assert str(said[1]) == f"{said[1].code} (seq {said[1].seq})"


def test_a_noted_head_code_passes_upper_case_or_longer(games: Path) -> None:
    seq, code = resolve_and_note(games)
    full = log_bodies(games / "b.jsonl")[seq]["hash"]
    for noted in (code, code.upper(), full[:12]):
        output = ok(games, "verify", "b", "--head-code", f"{seq}:{noted}")
        assert f"ok   headcode head code {noted.lower()} at seq {seq}: the log passes through it" in output


def test_a_log_cut_short_before_the_noted_seq_is_caught_naming_the_seq(games: Path) -> None:
    seq, code = resolve_and_note(games)
    log = games / "b.jsonl"
    bodies = log_bodies(log)
    started = next(i for i, body in enumerate(bodies) if body["type"] == "turn-started")
    write_rechained(log, bodies[:started])  # the whole turn cut, the anchor rewritten
    assert ok(games, "verify", "b")  # what a hash chain cannot see by itself
    result = run(games, "verify", "b", "--head-code", f"{seq}:{code}")
    assert result.exit_code == 4
    cut = f"FAIL headcode head code {code} at seq {seq}: the log ends at seq {started - 1} (it was cut short)"
    assert cut in result.output
    assert f"FAILED at seq {seq}" in result.output


def test_a_log_rewritten_before_the_noted_seq_is_caught(games: Path) -> None:
    seq, code = resolve_and_note(games)
    log = games / "b.jsonl"
    bodies = log_bodies(log)
    tokens = next(i for i, body in enumerate(bodies) if body["type"] == "tokens-given")
    bodies[tokens]["tokens"] = ["L", "F", "L", None]
    write_rechained(log, bodies)
    result = run(games, "verify", "b", "--head-code", f"{seq}:{code}", "--json")
    assert result.exit_code == 4
    assert f'"check":"headcode","ok":false,"detail":"head code {code} at seq {seq}: the log has' in result.output


def test_each_of_several_head_codes_is_checked(games: Path) -> None:
    seq, code = resolve_and_note(games)
    result = run(games, "verify", "b", "--head-code", f"{seq}:{code}", "--head-code", f"{seq + 50}:{code}")
    assert result.exit_code == 4
    assert result.output.count("headcode") == 2 and f"FAILED at seq {seq + 50}" in result.output


@pytest.mark.parametrize("noted", ["20", "x:abcdef", "20:abc", "20:ghijkl", ":abcdef", "-1:abcdef"])
def test_a_malformed_head_code_is_refused_naming_the_option(games: Path, noted: str) -> None:
    play_blockade_turn(games)
    before = tree_digest(games)
    result = run(games, "verify", "b", "--head-code", noted)
    assert result.exit_code == 2 and "--head-code" in result.output, result.output
    assert tree_digest(games) == before
