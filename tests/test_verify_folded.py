"""``verify_folded``: the archive's verification hands over the state it folded the log to, so the
rows of the game and its ships are built without folding the log a second time. That
state must be the log's own, whatever path the checks took (turns re-derived or not), and a log
that does not fold hands over none."""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial
from pathlib import Path

import msgspec
import pytest

from mortecouille.core.game import fold
from mortecouille.core.state import state_as_dict
from mortecouille.events.codec import LogError, decode_lines
from mortecouille.events.movement import ShipPlaced
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.analytics.rows import derived_rows
from mortecouille.replays.reading.verify import verify_folded, verify_log
from tests.helpers import golden_logs_with_bot_games
from tests.test_verify_speed_invariants import GOLDEN_LOGS, copied, edits


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> list[GameLog]:
    """The golden logs (both rulesets, an upcast line, contributed dice, a scenario) and bot games."""
    folder = golden_logs_with_bot_games(tmp_path_factory.mktemp("logs"), 3, "folded", 8)
    return [GameLog(path) for path in sorted(folder.glob("*.jsonl"))]


@pytest.mark.parametrize("rederive_turns", [False, True])
def test_the_state_handed_over_is_the_fold_of_the_log(logs: list[GameLog], rederive_turns: bool) -> None:
    for log in logs:
        data = log.read_bytes()
        events = decode_lines(data)
        report, final = verify_folded(log, data, events, rederive_turns)
        assert report == verify_log(log, rederive_turns=rederive_turns, data=data, events=events), log.name
        assert report.ok, log.name
        assert final is not None
        assert state_as_dict(final) == state_as_dict(fold(events)), log.name


def test_the_archive_rows_from_the_handed_state_are_the_rows_of_a_fresh_fold(logs: list[GameLog]) -> None:
    for log in logs:
        data = log.read_bytes()
        events = decode_lines(data)
        _, final = verify_folded(log, data, events)
        assert derived_rows(log.name, events, final) == derived_rows(log.name, events), log.name


def test_a_log_that_does_not_fold_hands_over_no_state(logs: list[GameLog]) -> None:
    """The first ship placed under another name: the ship moved later is unknown, so the fold
    stops there, the report says so, and no state is handed over (never a half-folded one)."""
    source = next(log for log in logs if log.name == "blockade")
    data = source.read_bytes()
    events = decode_lines(data)
    index = next(i for i, event in enumerate(events) if isinstance(event, ShipPlaced))
    broken = [*events[:index], msgspec.structs.replace(events[index], ship="ghost"), *events[index + 1 :]]
    report, final = verify_folded(source, data, broken)
    assert not report.ok
    assert final is None


@pytest.mark.parametrize("name", GOLDEN_LOGS)
def test_the_chain_proved_from_the_decoded_events_fails_where_and_as_the_line_by_line_check_does(
    name: str, tmp_path: Path
) -> None:
    """``verify_chain(data, events=...)`` (the archive's: each line proved canonical by its own
    event's encoding) accepts what the line-by-line definition accepts and refuses the rest with
    the same error at the same seq: the golden log as it is, and every edit of it that still
    decodes (an edit that does not is refused by the decoding first)."""
    log = copied(name, tmp_path)
    lines = log.path.read_bytes().splitlines()
    cases = [("as logged", lines), *edits(lines, random.Random(f"chain from events {name}"))]
    for what, edited in cases:
        data = b"\n".join(edited) + b"\n"
        log.path.write_bytes(data)
        try:
            events = decode_lines(data)
        except LogError:
            continue
        from_events = chain_outcome(partial(log.verify_chain, data, events=events))
        assert from_events == chain_outcome(partial(log.verify_chain, data)), what
        assert verify_log(log, False, data, events) == verify_log(log, False, data), what


def chain_outcome(check: Callable[[], int]) -> tuple[str, int | None]:
    """What a chain check gave: its line count, or its error's message and seq."""
    try:
        return "ok", check()
    except LogError as error:
        return str(error), error.seq
