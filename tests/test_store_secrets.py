"""What lives beside a log, on either store: the secret seed (D2), the seat
token hashes and the idempotency keys (read from the log's own lines).

Each test runs on a games folder and on a fresh PostgreSQL schema. The creation order of the file
store holds on both: the game is created exclusively first, its seed kept, then its events
written; a creation that fails at any step leaves nothing, neither game nor seed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from mortecouille.app.commands import Idempotency, end_game, run_command
from mortecouille.app.games import game_log, open_games
from mortecouille.app.idempotency import IdempotencyIndex, key_digest
from mortecouille.app.seats import UnknownToken, identify, issue_seats, read_seats, reissue
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.errors import BadInput
from mortecouille.core.life_cycle import Command
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.storage.contract import SEED, FileStore, GameStore, secrets_of
from mortecouille.events.storage.errors import Conflict
from mortecouille.events.storage.file_writing import Creation
from tests.helpers import new_blockade
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.postgres


@pytest.fixture(params=["file", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GameStore]:
    if request.param == "file":
        opened = open_games(f"file:{tmp_path / 'games'}")
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        opened = open_games(f"{server.url}?schema=secrets_{uuid.uuid4().hex[:12]}")
    try:
        yield opened
    finally:
        opened.close()


SEED_TEXT = "a-secret-seed-long-enough"


def start(store: GameStore, name: str = "g", seed: str | None = SEED_TEXT) -> None:
    new_blockade(game_log(store, name), seed)


def test_the_seed_is_kept_until_the_game_reveals_it(store: GameStore) -> None:
    start(store)
    log = game_log(store, "g")
    assert secrets_of(log).read(SEED) == (SEED_TEXT + "\n").encode()
    assert SEED_TEXT not in log.read_bytes().decode()  # never in the log before the end
    ended = end_game(log)
    assert ended.seed == SEED_TEXT


def test_a_creation_that_fails_after_its_seed_leaves_nothing(
    store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    if isinstance(store, FileStore):
        creation = Creation
    else:
        from mortecouille.events.storage.postgres import PostgresCreation as creation  # noqa: N813

    def failing(self: object, events: object) -> list[Event]:
        raise RuntimeError("the disk or the server failed while writing the events")

    log = game_log(store, "g")
    with monkeypatch.context() as patched:
        patched.setattr(creation, "write", failing)
        with pytest.raises(RuntimeError):
            start(store)
    assert not log.exists()
    assert not secrets_of(log).exists(SEED)
    # the name is free again: the same game can be created, with its own seed
    start(store)
    assert secrets_of(log).read(SEED) == (SEED_TEXT + "\n").encode()


def test_a_game_created_twice_keeps_the_first_seed(store: GameStore) -> None:
    start(store)
    with pytest.raises(Conflict):
        start(store, seed="another-seed-long-enough")
    assert secrets_of(game_log(store, "g")).read(SEED) == (SEED_TEXT + "\n").encode()


def test_a_missing_seed_is_named_and_nothing_is_written(store: GameStore) -> None:
    start(store)
    log = game_log(store, "g")
    before = log.read_bytes()
    secrets_of(log).remove(SEED)
    with pytest.raises(BadInput, match="secret seed of 'g' is missing"):
        end_game(log)
    assert log.read_bytes() == before


def test_seats_are_issued_once_recognised_and_reissued(store: GameStore) -> None:
    start(store)
    log = game_log(store, "g")
    assert read_seats(log) is None
    issued = issue_seats(log)
    assert identify(log, issued.players["Bart"]).player == "Bart"
    with pytest.raises(Conflict):
        issue_seats(log)  # issued once; later, reissue
    fresh = reissue(log, "Bart")
    assert identify(log, fresh).player == "Bart"
    with pytest.raises(UnknownToken):
        identify(log, issued.players["Bart"])  # the old link stops working at once
    assert identify(log, issued.players["Anne"]).player == "Anne"
    stored = read_seats(log)
    assert stored is not None and issued.players["Anne"] not in str(stored)  # hashes, never tokens


def test_a_retried_command_answers_the_first_append_and_writes_nothing(store: GameStore) -> None:
    start(store)
    log = game_log(store, "g")
    keys = IdempotencyIndex()
    key = Idempotency(key_digest("retry-me"), keys)

    def place(state: GameState) -> Command:
        return PlaceShip(ship="Sloopy", kind="sloop", owner="Anne", at=(2, 1), facing="N")

    first = run_command(log, place, idempotency=key)
    length = len(log.read_bytes())
    again = run_command(log, place, idempotency=key)
    assert again.events == first.events
    assert len(log.read_bytes()) == length
    # another index (a restarted service) reads the key back from the log's lines
    restarted = run_command(log, place, idempotency=Idempotency(key.digest, IdempotencyIndex()))
    assert restarted.events == first.events
    assert len(log.read_bytes()) == length
