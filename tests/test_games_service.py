"""The games service of the application layer (``app/service.py``): what the HTTP service runs its
commands through, usable without any web module, and the CLI's ``repair`` on the same code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mortecouille.app.commands import CommandOptions, run_command
from mortecouille.app.games import game_log, load
from mortecouille.app.service import GamesService
from mortecouille.app.service_repair import cut_torn_tails
from mortecouille.core.board.geometry import parse_square
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.events.storage.contract import FileStore
from tests.helpers import ROOT, new_blockade


def placed_game(games: Path) -> FileStore:
    store = FileStore(games)
    log_ = game_log(store, "b")
    new_blockade(log_, "s3cret", weak_seed=True)
    run_command(
        log_,
        lambda state: PlaceShip(ship="Sloopy", at=parse_square("C2"), facing="N", kind="sloop", owner="Anne"),
    )
    return store


def test_the_games_service_imports_no_web_module() -> None:
    program = (
        "import sys, mortecouille.app.service; "
        "print(sorted(m for m in sys.modules if m.startswith(('mortecouille.web', 'litestar'))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"


def test_a_command_through_the_service_is_the_command_paths_and_its_state_is_kept(games: Path) -> None:
    store = placed_game(games)
    service = GamesService(store)
    before = len(load(game_log(store, "b"))[0])
    tokens = GiveTokens(ship="Sloopy", tokens=("F",), replace=True)
    with service.session("b") as log_:
        seen = service.run(log_, lambda state: tokens, CommandOptions(expected_seq=before))
    events, state = load(game_log(store, "b"))
    assert len(events) == before + 1 and [e.hash for e in seen.events] == [e.hash for e in events]
    assert seen.outcome.state == state
    known = service.known_state(game_log(store, "b"))
    assert known is not None and (known.next_seq, known.last_hash) == (len(events), events[-1].hash)
    service.close()


def test_torn_tails_are_cut_through_the_store_contract_and_whole_logs_left_alone(games: Path) -> None:
    store = placed_game(games)
    whole = (games / "b.jsonl").read_bytes()
    new_blockade(game_log(store, "c"), "s3cret", weak_seed=True)
    with open(games / "c.jsonl", "ab") as log_file:
        log_file.write(b'{"seq": 3, "type": "tok')  # an append a crash cut short
    assert cut_torn_tails(store) == ["c"]
    assert (games / "b.jsonl").read_bytes() == whole
    assert (games / "c.jsonl").read_bytes().endswith(b"\n")
    assert cut_torn_tails(store) == []
