"""Head codes: after each turn the table reads aloud twelve digits derived from the hash of that
turn's ``turn-ended`` line by a memory-hard stretch (scrypt), in three groups of four;
``verify --head-code SEQ:CODE`` then catches a log later cut short or rewritten. Codes noted before
the stretch (six hex digits of the hash) are still checked, and said to be weak."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from mortecouille.app.games import game_log, load
from mortecouille.app.receipts import head_code, turn_head_code
from mortecouille.replays.reading.receipts import (
    HEAD_CODE_N,
    HEAD_CODE_SALT,
    NotedCode,
    check_head_code,
    parse_head_code,
    stretched_code,
)
from tests.cli_helpers import ok, play_blockade_turn, run, tree_digest
from tests.forgery import log_bodies, write_rechained

pytestmark = pytest.mark.slow

SAID = re.compile(r"^head code after turn (\d+): (\d{4} \d{4} \d{4}) \(seq (\d+)\)$", re.M)


def by_definition(line_hash: str) -> str:
    """The code of docs/service.md, "Head codes", computed with hashlib alone."""
    derived = hashlib.scrypt(
        line_hash.encode(), salt=b"mortecouille head code v2", n=2**15, r=8, p=1, maxmem=2**26, dklen=32
    )
    digits = str(int.from_bytes(derived[:8], "big") % 10**12).zfill(12)
    return f"{digits[:4]} {digits[4:8]} {digits[8:]}"


def resolve_and_note(games: Path) -> tuple[int, str]:
    """Play the README's blockade turn; the (seq, code) read after it."""
    play_blockade_turn(games)
    return note_from_log(games)


def note_from_log(games: Path) -> tuple[int, str]:
    said = turn_head_code(load(game_log(games, "b"))[0])
    assert said is not None
    return said[1].seq, said[1].code


def test_the_stretch_of_a_known_hash_is_a_fixed_vector() -> None:
    assert (HEAD_CODE_SALT, HEAD_CODE_N) == (b"mortecouille head code v2", 2**15)
    assert stretched_code("0" * 64) == "080530072276"  # pinned: a change here orphans every noted code
    assert by_definition("0" * 64) == "0805 3007 2276"
    known = hashlib.sha256(b"mortecouille").hexdigest()
    assert by_definition(known).replace(" ", "") == stretched_code(known)


def test_resolve_prints_the_stretched_code_of_the_turns_end(games: Path) -> None:
    play_blockade_turn(games)
    ok(games, "tokens", "b", "Sloopy", "F")
    ok(games, "tokens", "b", "Frig", "F")
    output = ok(games, "resolve", "b")
    match = SAID.search(output)
    assert match is not None, output
    turn, code, seq = int(match[1]), match[2], int(match[3])
    ended = log_bodies(games / "b.jsonl")[seq]
    assert (turn, ended["type"], ended["turn"]) == (2, "turn-ended", 2)
    assert code == by_definition(ended["hash"])


def test_the_app_gives_the_head_code_at_a_seq_and_after_the_last_turn(games: Path) -> None:
    play_blockade_turn(games)
    events, _ = load(game_log(games, "b"))
    assert head_code(events).code == by_definition(events[-1].hash) and head_code(events).seq == len(events) - 1
    assert head_code(events, 3).code == by_definition(events[3].hash)
    with pytest.raises(IndexError):
        head_code(events, len(events))
    assert turn_head_code(events, seq=2) is None  # no turn resolved by then
    said = turn_head_code(events)
    assert said is not None and said[0] == 1 and said[1].code == by_definition(events[said[1].seq].hash)
    assert str(said[1]) == f"{said[1].code} (seq {said[1].seq})"


def test_a_noted_code_passes_however_its_groups_are_written(games: Path) -> None:
    seq, code = resolve_and_note(games)
    digits = code.replace(" ", "")
    for noted in (code, code.replace(" ", "-"), digits, f" {code} "):
        output = ok(games, "verify", "b", "--head-code", f"{seq}:{noted}")
        assert f"ok   headcode head code {code} at seq {seq}: the log passes through it\n" in output, output


def test_a_code_noted_before_the_stretch_still_verifies_and_is_said_to_be_weak(games: Path) -> None:
    seq, _ = resolve_and_note(games)
    full = log_bodies(games / "b.jsonl")[seq]["hash"]
    for noted in (full[:6], full[:6].upper(), full[:12]):
        output = ok(games, "verify", "b", "--head-code", f"{seq}:{noted}")
        passes = f"ok   headcode head code {noted.lower()} at seq {seq}: the log passes through it"
        assert passes in output and "weak" in output, output


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


@pytest.mark.parametrize("stretched", [True, False], ids=["stretched", "hex-noted-before"])
def test_a_log_rewritten_before_the_noted_seq_is_caught(games: Path, stretched: bool) -> None:
    seq, code = resolve_and_note(games)
    log = games / "b.jsonl"
    bodies = log_bodies(log)
    noted = code if stretched else bodies[seq]["hash"][:6]
    tokens = next(i for i, body in enumerate(bodies) if body["type"] == "tokens-given")
    bodies[tokens]["tokens"] = ["L", "F", "L", None]
    write_rechained(log, bodies)
    result = run(games, "verify", "b", "--head-code", f"{seq}:{noted}", "--json")
    assert result.exit_code == 4
    assert f'"check":"headcode","ok":false,"detail":"head code {noted} at seq {seq}: the log has' in result.output


def test_the_stretched_code_of_another_line_fails() -> None:
    hashes = [hashlib.sha256(bytes([n])).hexdigest() for n in range(3)]
    other = stretched_code(hashes[1])
    checked = check_head_code(hashes, NotedCode(2, other, stretched=True))
    assert not checked.ok and "the log has" in checked.detail
    assert check_head_code(hashes, NotedCode(1, other, stretched=True)).ok


def test_each_of_several_head_codes_is_checked(games: Path) -> None:
    seq, code = resolve_and_note(games)
    result = run(games, "verify", "b", "--head-code", f"{seq}:{code}", "--head-code", f"{seq + 50}:{code}")
    assert result.exit_code == 4
    assert result.output.count("headcode") == 2 and f"FAILED at seq {seq + 50}" in result.output


def test_twelve_decimal_digits_are_read_as_a_stretched_code_and_fewer_hex_as_a_code_noted_before() -> None:
    assert parse_head_code("41:4831-9277-0015") == NotedCode(41, "483192770015", stretched=True)
    assert parse_head_code("41: 4831 9277 0015") == NotedCode(41, "483192770015", stretched=True)
    assert parse_head_code("41:3FA9C2") == NotedCode(41, "3fa9c2", stretched=False)
    assert parse_head_code("41:483192") == NotedCode(41, "483192", stretched=False)


@pytest.mark.parametrize(
    "noted",
    ["20", "x:abcdef", "20:abc", "20:ghijkl", ":abcdef", "-1:abcdef", "20:4831-9277-001",
     "20:4831_9277_0015", "20:4831--9277-0015", "20:4831-9277-00155-1"],
)  # fmt: skip
def test_a_malformed_head_code_is_refused_naming_the_option(games: Path, noted: str) -> None:
    play_blockade_turn(games)
    before = tree_digest(games)
    result = run(games, "verify", "b", "--head-code", noted)
    assert result.exit_code == 2 and "--head-code" in result.output, result.output
    assert tree_digest(games) == before
