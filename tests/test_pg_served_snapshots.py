"""A game ``serve`` plays on PostgreSQL keeps its snapshot, as the CLI's commands keep it.

The service carries each game's state from one command to the next, so its commands never fold
enough events to make a snapshot due (``run_command`` with ``known``); without more, a long served
game left the ``snapshots`` table empty, and every CLI ``state`` or ``order`` on it folded the game
from seq 0. The service hands every append it answers to its snapshot keeper
(``app/snapshot_keeper.py``), which writes the snapshot each time the game passes a multiple of
``SNAPSHOT_EVERY`` events, in a thread of its own: the write is never on the request's path.

On a real PostgreSQL server (the session's throw-away cluster), through the service's HTTP API.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app.snapshot_keeper import crosses_snapshot_mark
from mortecouille.app.snapshots import FORMAT, SNAPSHOT_EVERY, decode_state, fold_stored
from mortecouille.core.game import fold
from mortecouille.events.storage.postgres import PostgresGameLog, PostgresStore
from mortecouille.web.server import build_app
from tests.postgres_server import PostgresServer
from tests.served_game import ServedGame

pytestmark = pytest.mark.postgres


class Served(ServedGame):
    """The service on a schema of its own in the session's cluster, a game ready to be played."""

    def __init__(self, server: PostgresServer, client: TestClient[Litestar], schema: str) -> None:
        super().__init__(client)
        self.server = server
        self.schema = schema
        self.store = PostgresStore(server.url, schema=schema)

    def log(self) -> PostgresGameLog:
        return self.store.log("g")

    def snapshot_row(self) -> tuple[int, str, int, bytes] | None:
        with psycopg.connect(self.server.url, autocommit=True) as conn:
            found = conn.execute(
                f"SELECT seq, hash, format, state FROM {self.schema}.snapshots WHERE game = 'g'"
            ).fetchone()
        return None if found is None else (int(found[0]), str(found[1]), int(found[2]), bytes(found[3]))


@pytest.fixture
def served(postgres_server: PostgresServer) -> Iterator[Served]:
    from mortecouille.app.games import open_games

    schema = f"t_{uuid.uuid4().hex[:16]}"
    app = build_app(
        open_games(f"{postgres_server.url}?schema={schema}"), deadline_seconds=None, close_store=True
    )
    with TestClient(app) as client:
        played = Served(postgres_server, client, schema)
        try:
            yield played
        finally:
            played.store.close()


def test_a_batch_makes_a_snapshot_due_when_it_passes_a_multiple_of_snapshot_every_events() -> None:
    every = SNAPSHOT_EVERY
    assert not crosses_snapshot_mark(0, 5)  # a short game keeps none
    assert not crosses_snapshot_mark(every, 2 * every - 2)
    assert crosses_snapshot_mark(every - 1, every - 1)  # the event that makes the game every long
    assert crosses_snapshot_mark(every - 3, every + 4)
    assert crosses_snapshot_mark(2 * every - 1, 2 * every)
    assert not crosses_snapshot_mark(2 * every, 2 * every)


def test_a_long_served_game_keeps_its_snapshot_so_the_cli_folds_only_the_last_events(served: Served) -> None:
    served.play_until(2 * SNAPSHOT_EVERY + 10)
    served.service.snapshots.settled()
    events = served.log().read()
    row = served.snapshot_row()
    assert row is not None, "serve kept no snapshot of its game"
    seq, digest, format_, state = row
    # it stands on a line of the log, and holds the fold of the log through it
    assert events[seq].hash == digest and format_ == FORMAT
    assert decode_state(state) == fold(events[: seq + 1])
    assert seq >= 2 * SNAPSHOT_EVERY - 1  # the last mark the game passed, not an early one
    # a CLI command now folds only the events after it
    folded = fold_stored(served.log())
    assert folded.start == seq + 1
    assert folded.folded == len(events) - seq - 1 < SNAPSHOT_EVERY
    assert folded.state == fold(events)


def test_the_snapshot_is_written_off_the_requests_path(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the keeper's write is held up, the service still answers every order: the request
    that made the snapshot due does not wait for it."""
    served.play_until(SNAPSHOT_EVERY - 3)
    writers = served.orders_while_a_write_is_held_up(
        monkeypatch, PostgresGameLog, "write_snapshot", lambda: served.snapshot_row() is not None
    )
    assert writers == ["snapshot-keeper"]
    row = served.snapshot_row()
    assert row is not None and SNAPSHOT_EVERY - 1 <= row[0] < SNAPSHOT_EVERY + 3
