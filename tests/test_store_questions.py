"""What the code above ``events/`` asks a store, it asks through the contract: no code outside
``events/`` tests a store's concrete class, and a game in the in-memory store is played, read and
verified through the same write path (``run_command``) as one in a file."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from mortecouille.app.commands import run_command
from mortecouille.app.games import describe_location, load
from mortecouille.core.board.geometry import parse_square
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.life_cycle import Command
from mortecouille.core.state import GameState
from mortecouille.events.storage.contract import FileStore, GameStore
from mortecouille.events.storage.memory import MemoryStore
from mortecouille.replays.reading.verify import verify_log
from tests.helpers import ROOT, new_blockade

#: ``isinstance`` on a concrete store class (the contract's capabilities are Protocols).
CONCRETE_CHECK = re.compile(r"isinstance\([^)]*\b(FileStore|FileLog|GameLog|Postgres\w*|Memory\w*)\b")
ABOVE_EVENTS = ("core", "bots", "replays", "app", "web", "cli")


def test_no_code_above_events_tests_a_stores_concrete_class() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for part in ABOVE_EVENTS
        for path in sorted((ROOT / part).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if CONCRETE_CHECK.search(line)
    ]
    assert found == []


def given(command: Command) -> Callable[[GameState], Command]:
    return lambda state: command


def play(store: GameStore) -> tuple[bytes, GameState]:
    log = store.log("b")
    new_blockade(log, "s3cret", weak_seed=True)
    for ship, square, owner in (("Sloopy", "C2", "Anne"), ("Swift", "F7", "Bart")):
        run_command(
            log,
            given(PlaceShip(ship=ship, at=parse_square(square), facing="N", kind="sloop", owner=owner)),
            nonce=False,
        )
    return log.read_bytes(), load(log)[1]


def test_a_game_in_memory_is_played_through_the_write_path_as_in_a_file(tmp_path: Path) -> None:
    memory = MemoryStore()
    in_memory, memory_state = play(memory)
    in_files, file_state = play(FileStore(tmp_path))
    # the same events (the seed's salt is drawn afresh for each game), folded to the same fleet
    assert [line.split(b'"type":')[1] for line in in_memory.splitlines()] == [
        line.split(b'"type":')[1] for line in in_files.splitlines()
    ]
    assert memory_state.ships == file_state.ships and set(memory_state.ships) == {"Sloopy", "Swift"}
    report = verify_log(memory.log("b"))
    assert report.ok, report.findings
    assert memory.names() == ["b"]


def test_each_store_answers_where_its_game_is_and_whether_it_is_files(tmp_path: Path) -> None:
    files, memory = FileStore(tmp_path), MemoryStore()
    assert files.folder() == tmp_path and memory.folder() is None
    file_log, memory_log = files.log("g"), memory.log("g")
    assert file_log.as_files() is file_log and memory_log.as_files() is None
    assert describe_location(file_log) == str(tmp_path / "g.jsonl")
    assert describe_location(memory_log) == "game 'g' in memory"


def test_verify_reads_a_memory_store_through_the_contract_and_names_an_edited_line() -> None:
    memory = MemoryStore()
    play(memory)
    log = memory.log("b")
    assert log.lines is not None
    log.lines[2] = log.lines[2].replace(b'"at":[5,6]', b'"at":[5,5]')
    report = verify_log(log)
    chain = [finding for finding in report.findings if finding.check == "chain"]
    assert not report.ok and chain and not chain[0].ok and chain[0].seq == 2
