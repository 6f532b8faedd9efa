"""The log's promises: hash chain, optimistic concurrency, locking, torn tails (architecture.md)."""

from __future__ import annotations

import bisect
import multiprocessing
from pathlib import Path

import pytest

from mortecouille.core.dice import DiceCup, SeededDice
from mortecouille.events.codec import LogError, TornTail
from mortecouille.events.game import DieRolled, TurnStarted
from mortecouille.events.storage.errors import Conflict
from mortecouille.events.storage.file_log import GameLog
from tests.conftest import SEED, created_log


def rolls(count: int, turn: int = 1, ship: str = "A") -> list[DieRolled]:
    cup = DiceCup(SeededDice(SEED), "g", turn)
    for _ in range(count):
        cup.roll("wind", ship, "wind", "test")
    return cup.events


def small_log(games: Path) -> GameLog:
    log = created_log(games)
    log.append([TurnStarted(turn=1), *rolls(3)])
    return log


def test_append_stamps_seq_and_chains_hashes(games: Path) -> None:
    log = small_log(games)
    events = log.read()
    assert [e.seq for e in events] == [0, 1, 2, 3, 4]
    assert all(b.prev == a.hash for a, b in zip(events, events[1:], strict=False))
    assert log.verify_chain() == 5


def test_chain_detects_every_single_changed_byte_at_its_own_line(games: Path) -> None:
    """Each changed byte is refused and the error names the line (and seq) holding it (each
    refusal's message is checked, not only that something was raised)."""
    log = small_log(games)
    original = log.path.read_bytes()
    starts = [0] + [i + 1 for i, b in enumerate(original) if b == 0x0A]
    misplaced = []
    for position in range(len(original)):
        line = bisect.bisect_right(starts, position) - 1  # 0-based: the seq of an untampered log
        tampered = bytearray(original)
        tampered[position] = (tampered[position] + 1) % 256
        log.path.write_bytes(bytes(tampered))
        with pytest.raises(LogError) as error:
            log.verify_chain()
        # the last newline changed leaves a torn last line: it too is named by its line and the seq
        # it would hold
        if (error.value.line, error.value.seq) != (line + 1, line):
            misplaced.append((position, line, error.value.line, error.value.seq, str(error.value)))
    assert misplaced == []


def test_chain_detects_a_removed_line(games: Path) -> None:
    log = small_log(games)
    lines = log.path.read_bytes().splitlines(keepends=True)
    for index in range(len(lines)):
        log.path.write_bytes(b"".join(lines[:index] + lines[index + 1 :]))
        with pytest.raises(LogError) as error:  # the last line too: the head anchor remembers it
            log.verify_chain()
        assert error.value.seq == index


def test_chain_detects_a_swapped_pair(games: Path) -> None:
    log = small_log(games)
    lines = log.path.read_bytes().splitlines(keepends=True)
    for index in range(len(lines) - 1):
        swapped = list(lines)
        swapped[index], swapped[index + 1] = swapped[index + 1], swapped[index]
        log.path.write_bytes(b"".join(swapped))
        with pytest.raises(LogError) as error:
            log.verify_chain()
        assert error.value.seq == index


def test_stale_expected_seq_is_refused_and_log_unchanged(games: Path) -> None:
    log = small_log(games)
    before = log.path.read_bytes()
    with pytest.raises(Conflict, match="expected seq 3"):
        log.append(rolls(1, turn=2), expected_seq=3)
    assert log.path.read_bytes() == before
    assert log.append(rolls(1, turn=2), expected_seq=5)[0].seq == 5


def test_creating_an_existing_game_is_a_conflict(games: Path) -> None:
    log = created_log(games)
    before = log.path.read_bytes()
    with pytest.raises(Conflict):
        created_log(games)
    assert log.path.read_bytes() == before


def _append_many(path: str, ship: str, count: int) -> None:
    log = GameLog(Path(path))
    for index in range(count):
        log.append(rolls(1, turn=index + 1, ship=ship))


def test_two_processes_appending_500_each_lose_nothing(games: Path) -> None:
    log = created_log(games)
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_append_many, args=(str(log.path), ship, 500)) for ship in ("A", "B")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    assert log.verify_chain() == 1001
    events = log.read()
    for ship in ("A", "B"):
        turns = [e.turn for e in events if isinstance(e, DieRolled) and e.ship == ship]
        assert turns == list(range(1, 501))


def test_torn_last_line_is_reported_on_open_not_dropped(games: Path) -> None:
    log = small_log(games)
    whole = log.path.read_bytes()
    log.path.write_bytes(whole[:-25])
    with pytest.raises(TornTail, match="torn last line") as error:
        log.read()
    assert error.value.line == 5
    with pytest.raises(TornTail):
        log.append(rolls(1, turn=9))
    assert log.path.read_bytes() == whole[:-25]


def test_repair_cuts_only_the_torn_tail(games: Path) -> None:
    log = small_log(games)
    whole = log.path.read_bytes()
    cut_at = whole.rstrip(b"\n").rfind(b"\n") + 1
    # an unfinished append after the anchored line (a cut into that line is a loss: test_repair_loss)
    log.path.write_bytes(whole + whole[cut_at : cut_at + 30])
    removed = log.repair()
    assert len(removed) == 30
    assert log.path.read_bytes() == whole
    assert log.verify_chain() == 5


def test_a_complete_line_that_is_not_an_event_names_line_and_field(games: Path) -> None:
    log = small_log(games)
    data = log.path.read_bytes()
    log.path.write_bytes(data + b'{"type":"die-rolled","seq":5,"turn":"x"}\n')
    with pytest.raises(LogError, match=r"line 6: .*turn"):
        log.read()
    log.path.write_bytes(data + b'{"type":"no-such-event","seq":5}\n')
    with pytest.raises(LogError, match=r"line 6: field `type`: unknown event type"):
        log.read()
    log.path.write_bytes(data + b"not json\n")
    with pytest.raises(LogError, match="line 6: not a JSON object"):
        log.read()
