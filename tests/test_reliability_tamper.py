"""Tamper evidence: every small edit of a real game log is caught by ``verify``, which
names the first bad seq.

The games are the golden blockade game and the golden (table-dice) mortecouille game, both built
through the CLI (several resolved turns, every event type each ruleset produces), and the seeded
mortecouille golden game for die edits. Kinds of tampering tried, all of them on every line:

* a single changed byte: every byte of a small blockade game (``SMALL_SCRIPT``, 8 lines), and on the
  long golden-built logs a seeded sample of a fixed size (``BYTE_SAMPLE``) that still changes every
  line, every line's newline and every field name with the start of its value (every
  byte of the long logs would be 40% of the suite's time);
* a removed line, and the last 1, 2 and 3 lines cut off (caught by the head anchor only);
* two adjacent lines swapped; a line duplicated;
* an outcome edited and the chain recomputed (``rechain``), with the head anchor left alone
  (caught by the anchor) and rewritten too (caught by re-derivation, at the edited seq): moves,
  collisions, damage, sinkings, and in mortecouille shots, fire checks, wind points, catapult hits,
  countdowns, bursts, fireships, crossings;
* in a seeded game, a die's value edited and the chain and anchor recomputed (caught by the dice
  check, at the die's seq).

The matrix (tried / caught per kind) is printed to the CI log and put in the assertion message.
"""

from __future__ import annotations

import bisect
import json
import random
import re
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.forgery import anchor, log_bodies, rechain_lines, write_rechained
from tests.golden.make_golden import MORTECOUILLE_SEEDED_SCRIPT, build_blockade_game, build_mortecouille_game
from tests.helpers import GOLDEN

pytestmark = pytest.mark.slow

#: The events a resolution produces: editing one of them must be caught by re-derivation.
OUTCOMES = frozenset(
    {"turn-started", "ship-moved", "ship-pushed", "collision", "damage", "ship-sunk", "turn-ended"}
    | {"wind-points", "shot-fired", "shot-not-fired", "fire-checked", "fire-scheduled", "catapult-hits",
       "countdown", "burst-streak", "became-fireship", "move-unaffordable", "wreck-crossed",
       "fireship-explosion", "game-ended"}
)  # fmt: skip

#: game -> how it is built (through the CLI)
GAMES: dict[str, Callable[[Path], Path]] = {
    "blockade": build_blockade_game,
    "mortecouille": build_mortecouille_game,
}

#: A small blockade game (8 lines, every one of its bytes changed in turn): creation, a placement,
#: tokens and a resolved turn, so each byte goes through the chain, the anchor and re-derivation.
SMALL_SCRIPT: tuple[tuple[str, ...], ...] = (
    ("place", "Sloopy", "C2", "--kind", "sloop", "--owner", "Anne", "--facing", "N"),
    ("tokens", "Sloopy", "F", "L"),
    ("resolve", "--partial"),
)

#: How many single-byte changes a long log gets: a fixed count, so the cost does not grow with the log.
BYTE_SAMPLE = 800
#: A field's place in the sample: its quoted name, the colon and this many bytes of its value.
VALUE_BYTES = 8


@pytest.fixture(scope="module", params=sorted(GAMES))
def original(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    games = tmp_path_factory.mktemp(f"tamper-{request.param}")
    path = GAMES[request.param](games)
    assert verify_log(GameLog(path)).ok
    return path


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = build_blockade_game(tmp_path_factory.mktemp("tamper-small"), "small", SMALL_SCRIPT)
    assert verify_log(GameLog(path)).ok
    return path


class Tamper:
    """One tampered copy of the log and the seq its first bad line must be reported at."""

    def __init__(self, kind: str, description: str, data: bytes, first_bad: int, head: bool = False):
        self.kind = kind
        self.description = description
        self.data = data
        self.first_bad = first_bad
        self.rewrite_head = head


def byte_changes(data: bytes, positions: Iterable[int] | None = None) -> Iterator[Tamper]:
    """Each byte at ``positions`` (every byte by default) changed by +1, one at a time."""
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
    for position in range(len(data)) if positions is None else sorted(positions):
        line = bisect.bisect_right(starts, position) - 1
        tampered = bytearray(data)
        tampered[position] = (tampered[position] + 1) % 256
        yield Tamper("byte", f"byte {position} +1", bytes(tampered), line)


def sampled_positions(data: bytes, count: int, seed: str) -> set[int]:
    """``count`` byte positions drawn with a seeded generator, covering every kind of place first:
    one byte of each line and its newline, and for every field name of the log one line's
    ``"name":`` with the first bytes of its value; the rest drawn uniformly."""
    rng = random.Random(seed)
    chosen: set[int] = set()
    start = 0
    by_field: dict[str, list[tuple[int, int]]] = {}
    for line in data.splitlines(keepends=True):
        end = start + len(line) - 1  # the newline
        chosen |= {rng.randrange(start, end), end}
        for match in re.finditer(rb'"([a-z_0-9]+)":', line[:-1]):
            span = (start + match.start(), min(start + match.end() + VALUE_BYTES, end))
            by_field.setdefault(match.group(1).decode(), []).append(span)
        start = end + 1
    for field in sorted(by_field):
        first, last = rng.choice(by_field[field])
        chosen.add(rng.randrange(first, last))
    assert len(chosen) <= count, f"{len(chosen)} places to cover, more than the sample of {count}"
    while len(chosen) < count:
        chosen.add(rng.randrange(len(data)))
    return chosen


def line_edits(data: bytes) -> Iterator[Tamper]:
    lines = data.splitlines(keepends=True)
    count = len(lines)
    for index in range(count):
        yield Tamper(
            "remove", f"line seq {index} removed", b"".join(lines[:index] + lines[index + 1 :]), index
        )
        duplicated = lines[: index + 1] + [lines[index]] + lines[index + 1 :]
        yield Tamper("duplicate", f"line seq {index} duplicated", b"".join(duplicated), index + 1)
    for index in range(count - 1):
        swapped = list(lines)
        swapped[index], swapped[index + 1] = swapped[index + 1], swapped[index]
        yield Tamper("swap", f"seq {index} and {index + 1} swapped", b"".join(swapped), index)
    for cut in (1, 2, 3):
        yield Tamper("remove-tail", f"last {cut} line(s) removed", b"".join(lines[:-cut]), count - cut)


def mutate(value: Any) -> Any:
    """A different value of the same JSON type, or None when there is no obvious one."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        return value + "x" if len(value) != 64 else value[::-1]
    if isinstance(value, list) and value:
        return value[:-1]
    return None


def rechained_edits(data: bytes) -> Iterator[Tamper]:
    bodies = [json.loads(line) for line in data.splitlines()]
    last = len(bodies) - 1
    for index, body in enumerate(bodies):
        if body["type"] not in OUTCOMES:
            continue
        if body["type"] == "game-ended" and body["reason"] != "victory":
            continue  # the referee's end (``end``) is an input, not an outcome the rules derive
        for field in sorted(body):
            if field in {"seq", "prev", "hash", "type", "v"}:
                continue
            changed = mutate(body[field])
            if changed is None:
                continue
            edited = [dict(b) for b in bodies]
            edited[index][field] = changed
            new = rechain_lines(edited)
            what = f"{body['type']} seq {index} field {field}: {body[field]!r} -> {changed!r}"
            yield Tamper("rechain", what, new, last)
            yield Tamper("rechain+head", what, new, index, head=True)


def run_matrix(
    original: Path, tampers: Iterator[Tamper], work: Path
) -> tuple[Counter[str], Counter[str], list[str], list[str]]:
    """Verify every tampered copy; return tried and caught per kind, the misses and the crashes."""
    tried: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    problems: list[str] = []
    crashes: list[str] = []
    work.mkdir(exist_ok=True)
    path = work / original.name
    shutil.copyfile(original.with_suffix(".head"), path.with_suffix(".head"))
    head = original.with_suffix(".head").read_bytes()
    log = GameLog(path)
    for tamper in tampers:
        tried[tamper.kind] += 1
        path.write_bytes(tamper.data)
        if tamper.rewrite_head:
            anchor(path)
        else:
            path.with_suffix(".head").write_bytes(head)
        try:
            report = verify_log(log)
        except Exception as error:  # noqa: BLE001 - a crash is a finding, not a test error
            crashes.append(f"{tamper.kind}: {tamper.description}: verify crashed: {error!r}")
            continue
        failed = [f for f in report.findings if not f.ok]
        if not failed:
            problems.append(f"{tamper.kind}: {tamper.description}: NOT caught")
            continue
        named = {f.seq for f in failed if f.seq is not None}
        torn_line = f"line {tamper.first_bad + 1}: torn last line"
        if min(named, default=None) == tamper.first_bad or any(torn_line in f.detail for f in failed):
            caught[tamper.kind] += 1
        else:
            details = "; ".join(f"{f.check} seq {f.seq}: {f.detail[:120]}" for f in failed)
            problems.append(
                f"{tamper.kind}: {tamper.description}: expected seq {tamper.first_bad}, got {details}"
            )
    return tried, caught, problems, crashes


def matrix_text(tried: Counter[str], caught: Counter[str], crashed: Counter[str]) -> str:
    rows = [f"{'kind':<14}{'tried':>8}{'caught':>8}{'crashed':>9}"]
    rows += [f"{kind:<14}{tried[kind]:>8}{caught[kind]:>8}{crashed[kind]:>9}" for kind in tried]
    rows.append(f"{'total':<14}{sum(tried.values()):>8}{sum(caught.values()):>8}{sum(crashed.values()):>9}")
    return "\n".join(rows)


def report(
    original: Path,
    matrix: tuple[Counter[str], Counter[str], list[str], list[str]],
    capsys: pytest.CaptureFixture[str],
    title: str,
) -> list[str]:
    """Print one matrix to the CI log; fail on any miss or wrong seq; return the crashes."""
    tried, caught, problems, crashes = matrix
    crashed = Counter(crash.split(":")[0] for crash in crashes)
    lines = len(original.read_bytes().splitlines())
    text = f"tamper matrix ({title}) on the {lines}-line {original.stem} log:\n"
    text += matrix_text(tried, caught, crashed)
    with capsys.disabled():
        print("\n" + text)
    assert sum(tried.values()) > 0
    assert not problems, text + "\n" + "\n".join(problems[:20])
    assert sum(caught.values()) + len(crashes) == sum(tried.values()), text
    return crashes


def check(
    original: Path,
    make: Callable[[bytes], Iterator[Tamper]],
    work: Path,
    capsys: pytest.CaptureFixture[str],
    title: str,
) -> list[str]:
    """Run one matrix and report it (see ``report``)."""
    return report(original, run_matrix(original, make(original.read_bytes()), work), capsys, title)


@pytest.fixture(scope="module")
def rechained(
    original: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Counter[str], Counter[str], list[str], list[str]]:
    """The re-chained matrix of a game, run once for the two tests that read it."""
    work = tmp_path_factory.mktemp(f"rechained-{original.stem}")
    return run_matrix(original, rechained_edits(original.read_bytes()), work)


def test_every_single_byte_change_of_a_small_log_is_caught_at_its_line(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check(small, byte_changes, tmp_path, capsys, "every single byte") == []


def test_a_fixed_sample_of_single_byte_changes_of_a_long_log_is_caught_at_its_line(
    original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def sample(data: bytes) -> Iterator[Tamper]:
        return byte_changes(data, sampled_positions(data, BYTE_SAMPLE, original.stem))

    title = f"{BYTE_SAMPLE} single bytes, seeded sample"
    assert check(original, sample, tmp_path, capsys, title) == []


def test_the_byte_sample_has_a_fixed_size_and_covers_every_line_newline_and_field(original: Path) -> None:
    """The cost of a long log's byte matrix does not grow with the log, and the
    sample still reaches every line, every newline and every field name."""
    data = original.read_bytes()
    positions = sampled_positions(data, BYTE_SAMPLE, original.stem)
    assert len(positions) == BYTE_SAMPLE < len(data)
    assert positions == sampled_positions(data, BYTE_SAMPLE, original.stem)  # seeded: the same every run
    lines = [t.first_bad for t in byte_changes(data, positions)]
    assert set(lines) == set(range(len(data.splitlines())))
    newlines = {i for i, b in enumerate(data) if b == 0x0A}
    assert newlines <= positions
    spans: dict[bytes, list[range]] = {}
    for match in re.finditer(rb'"([a-z_0-9]+)":', data):
        spans.setdefault(match.group(1), []).append(range(match.start(), match.end() + VALUE_BYTES))
    missed = {field for field, places in spans.items() if not any(p in r for r in places for p in positions)}
    assert missed == set()


def test_every_removed_swapped_or_duplicated_line_and_a_cut_tail_are_caught(
    original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check(original, line_edits, tmp_path, capsys, "lines") == []


def test_a_rechained_outcome_edit_is_caught_with_or_without_a_rewritten_head(
    original: Path,
    rechained: tuple[Counter[str], Counter[str], list[str], list[str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every edit that verify survives is caught at the right seq; crashes are the next test's."""
    report(original, rechained, capsys, "re-chained outcome edits")


def test_verify_never_crashes_on_a_rechained_edit(
    rechained: tuple[Counter[str], Counter[str], list[str], list[str]],
) -> None:
    crashes = rechained[3]
    assert not crashes, "\n".join(crashes[:10])


def die_edits(data: bytes) -> Iterator[Tamper]:
    """Each seeded die's value changed (to another face), the chain and the anchor recomputed."""
    bodies = [json.loads(line) for line in data.splitlines()]
    for index, body in enumerate(bodies):
        if body["type"] != "die-rolled":
            continue
        edited = [dict(b) for b in bodies]
        edited[index]["value"] = body["value"] % body["sides"] + 1
        what = (
            f"die seq {index} ({body['ship']} {body['purpose']}): {body['value']} -> {edited[index]['value']}"
        )
        yield Tamper("die+head", what, rechain_lines(edited), index, head=True)


def test_a_rechained_seeded_die_edit_is_caught_at_the_die(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    games = tmp_path_factory.mktemp("tamper-seeded")
    path = build_mortecouille_game(games, "seeded", MORTECOUILLE_SEEDED_SCRIPT, dice="seeded")
    assert verify_log(GameLog(path)).ok
    assert check(path, die_edits, tmp_path, capsys, "re-chained seeded dice") == []


def test_a_log_longer_than_its_head_verifies_and_a_missing_head_only_loses_the_tail_check(
    original: Path, tmp_path: Path
) -> None:
    path = tmp_path / original.name
    lines = original.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines))
    log = GameLog(path)
    anchor(path)
    assert verify_log(log).ok
    # the writer crashed after the log's fsync, before the head's rename: the anchor lags behind
    behind = json.loads(lines[-3])
    log.write_head(int(behind["seq"]), str(behind["hash"]))
    assert verify_log(log).ok
    assert "2 line(s) after it chain" in log.head_status()
    # no anchor at all (a log from before anchors): the chain still holds, the tail is unchecked
    log.head_path.unlink()
    assert verify_log(log).ok and "no head anchor" in log.head_status()
    path.write_bytes(b"".join(lines[:-1]))
    cut = verify_log(log)
    if original.stem == "blockade":  # the referee's end was its own command: what is left is whole
        assert cut.ok
    else:  # the victory was written with its turn: re-derivation misses it even without an anchor
        assert not cut.ok and cut.first_failure is not None and cut.first_failure.check == "rederive"
        assert "game-ended" in cut.first_failure.detail
        path.write_bytes(b"".join(lines[:-1]))
        path.write_bytes(b"".join(lines))
    # an unreadable anchor is a failure, not a silent pass
    log.head_path.write_bytes(b"{not json")
    report = verify_log(log)
    assert not report.ok and "head anchor" in report.findings[0].detail


def test_an_edited_victory_reason_is_named_at_its_own_seq(tmp_path: Path) -> None:
    bodies = log_bodies(GOLDEN / "mortecouille.jsonl")
    assert bodies[-1]["type"] == "game-ended" and bodies[-1]["reason"] == "victory"
    bodies[-1]["reason"] = "surrender"
    path = tmp_path / "edited.jsonl"
    write_rechained(path, bodies)
    result = verify_log(GameLog(path))
    assert not result.ok and result.first_failure is not None
    assert result.first_failure.seq == len(bodies) - 1, result.first_failure
