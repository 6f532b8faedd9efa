"""The store contract, on every store: the file, PostgreSQL and in-memory stores
run the same tests through :class:`mortecouille.events.storage.contract.EventStore`.

Each test takes ``backend`` (parametrised ``file``, ``postgres`` and ``memory``): a fresh games
folder, a fresh schema in the session's throw-away cluster (``tests/postgres_server.py``), or a
fresh memory store (whose writers are threads of this process: it has no other). Promises checked:
an append with a stale expected seq is a Conflict that writes nothing; reading from a seq; the head;
the golden logs appended event by event give the committed files' bytes and hashes; four writers
racing on one game lose and duplicate nothing; five writers holding the same expected seq in
lockstep: each round one wins, the four others get a Conflict, each seq is taken once; a changed
line or hash is named by its seq; a client killed mid-append (batches of three) leaves every
acknowledged batch, no batch in part, and a chain that verifies; for PostgreSQL, a server crash (``pg_ctl -m
immediate``) mid-load loses no acknowledged append; a reader tailing the global order never
skips an event that commits later.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mortecouille.events.base import Event
from mortecouille.events.codec import LogError
from mortecouille.events.game import DieRolled
from mortecouille.events.schema import EVENT_TYPES
from mortecouille.events.storage.contract import EventStore, events_from
from mortecouille.events.storage.errors import Conflict
from mortecouille.events.storage.file_log import GameLog
from mortecouille.events.storage.memory import MemoryStore
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.postgres

GOLDEN = Path(__file__).parent / "golden"
#: The golden logs of the current schema: ``turn_started_v1`` keeps version-1 lines the engine no
#: longer writes (it upcasts them), so no store appends it as it is.
GOLDEN_LOGS = sorted(path.name for path in GOLDEN.glob("*.jsonl") if path.stem != "turn_started_v1")


def roll(turn: int, ship: str = "A", value: int = 3) -> DieRolled:
    return DieRolled(
        turn=turn, phase="wind", ship=ship, purpose="wind", index=0, sides=6, value=value, source="seeded"
    )


# ----------------------------------------------------------------------------- the two stores


class FileBackend:
    """Games as files in a folder: the file store."""

    kind = "file"

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def log(self, game: str) -> EventStore:
        return GameLog(self.directory / f"{game}.jsonl")

    def spec(self) -> tuple[str, ...]:
        return ("file", str(self.directory))

    def rewrite_line(self, game: str, seq: int, change: Callable[[bytes], bytes]) -> None:
        path = self.directory / f"{game}.jsonl"
        lines = path.read_bytes().splitlines()
        lines[seq] = change(lines[seq])
        path.write_bytes(b"\n".join(lines) + b"\n")

    def change_hash_only(self, game: str, seq: int) -> None:
        # a file has no hash column: the hash is changed in the line itself
        self.rewrite_line(game, seq, _reversed_hash)

    def close(self) -> None:
        pass


class PostgresBackend:
    """Games in a fresh schema of the session's cluster: the PostgreSQL store."""

    kind = "postgres"

    def __init__(self, server: PostgresServer, schema: str) -> None:
        from mortecouille.events.storage.postgres import PostgresStore

        self.server = server
        self.schema = schema
        self.store = PostgresStore(server.url, schema=schema)

    def log(self, game: str) -> EventStore:
        return self.store.log(game)

    def spec(self) -> tuple[str, ...]:
        return ("postgres", self.server.url, self.schema)

    def _update(self, statement: str, *params: Any) -> None:
        import psycopg

        with psycopg.connect(self.server.url, autocommit=True) as conn:
            conn.execute(statement.format(events=f"{self.schema}.events"), params)

    def rewrite_line(self, game: str, seq: int, change: Callable[[bytes], bytes]) -> None:
        import psycopg

        with psycopg.connect(self.server.url, autocommit=True) as conn:
            row = conn.execute(
                f"SELECT line FROM {self.schema}.events WHERE game = %s AND seq = %s", [game, seq]
            ).fetchone()
            assert row is not None
            conn.execute(
                f"UPDATE {self.schema}.events SET line = %s WHERE game = %s AND seq = %s",
                [change(bytes(row[0])), game, seq],
            )

    def change_hash_only(self, game: str, seq: int) -> None:
        self._update("UPDATE {events} SET hash = reverse(hash) WHERE game = %s AND seq = %s", game, seq)

    def close(self) -> None:
        self.store.close()


class MemoryBackend:
    """Games in a fresh memory store; its writers are threads (a memory store has one process)."""

    kind = "memory"

    def __init__(self) -> None:
        self.store = MemoryStore()
        self.key = str(id(self.store))
        _MEMORY_STORES[self.key] = self.store

    def log(self, game: str) -> EventStore:
        return self.store.log(game)

    def spec(self) -> tuple[str, ...]:
        return ("memory", self.key)

    def rewrite_line(self, game: str, seq: int, change: Callable[[bytes], bytes]) -> None:
        lines = self.store.log(game).lines
        assert lines is not None
        lines[seq] = change(lines[seq])

    def change_hash_only(self, game: str, seq: int) -> None:
        self.rewrite_line(game, seq, _reversed_hash)

    def close(self) -> None:
        _MEMORY_STORES.pop(self.key, None)


#: The memory stores of the running tests, by key, for their writer threads (:func:`open_backend`).
_MEMORY_STORES: dict[str, MemoryStore] = {}

Backend = FileBackend | PostgresBackend | MemoryBackend


class _Thread(threading.Thread):
    """A writer thread standing in for a process (a memory store's writers): ``exitcode`` 0 when
    its target returned, 1 when it raised."""

    exitcode: int | None = None

    def run(self) -> None:
        try:
            super().run()
        except BaseException:
            self.exitcode = 1
            raise
        self.exitcode = 0


def writer_of(backend: Backend, target: Callable[..., None], args: tuple[Any, ...]) -> Any:
    """A writer running ``target(*args)``: a forked process, or a thread of a memory store."""
    if backend.kind == "memory":
        return _Thread(target=target, args=args)
    return multiprocessing.get_context("fork").Process(target=target, args=args)


def open_backend(spec: tuple[str, ...]) -> EventStoreFactory:
    """The store a child process opens from its parent's spec (its own connections, never the parent's)."""
    if spec[0] == "memory":
        return _MEMORY_STORES[spec[1]].log
    if spec[0] == "file":
        directory = Path(spec[1])
        return lambda game: GameLog(directory / f"{game}.jsonl")
    from mortecouille.events.storage.postgres import PostgresStore

    store = PostgresStore(spec[1], schema=spec[2], max_connections=2)
    return store.log


EventStoreFactory = Callable[[str], EventStore]


@pytest.fixture(params=["file", "postgres", "memory"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    chosen: Backend
    if request.param == "file":
        chosen = FileBackend(tmp_path / "games")
    elif request.param == "memory":
        chosen = MemoryBackend()
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        chosen = PostgresBackend(server, f"t_{uuid.uuid4().hex[:16]}")
    try:
        yield chosen
    finally:
        chosen.close()


_CONFORMS = """
from pathlib import Path
from mortecouille.events.storage.postgres import PostgresStore
from mortecouille.events.storage.memory import MemoryStore
from mortecouille.events.storage.file_log import GameLog
from mortecouille.events.storage.contract import EventStore, GameStore

file_store: EventStore = GameLog(Path("g.jsonl"))
postgres_store: EventStore = PostgresStore("postgresql://").log("g")
memory_store: EventStore = MemoryStore().log("g")
memory_games: GameStore = MemoryStore()
"""

_DOES_NOT_CONFORM = """
from mortecouille.events.storage.contract import EventStore

class ReadOnly:
    name = "g"

not_a_store: EventStore = ReadOnly()
"""


def test_both_stores_satisfy_the_contract_for_mypy(tmp_path: Path) -> None:
    from mypy import api

    conforms, refused = tmp_path / "conforms.py", tmp_path / "refused.py"
    conforms.write_text(_CONFORMS)
    refused.write_text(_DOES_NOT_CONFORM)
    out, err, status = api.run(["--strict", "--no-error-summary", str(conforms)])
    assert status == 0, out + err
    out, _, status = api.run(["--strict", "--no-error-summary", str(refused)])
    assert status == 1 and '"ReadOnly"' in out and "EventStore" in out, out


# ----------------------------------------------------------------------------- the contract


def test_append_with_expected_seq_and_a_stale_one_is_a_conflict_writing_nothing(backend: Backend) -> None:
    log = backend.log("g")
    log.create([roll(1)])
    with log.transaction() as tx:
        assert tx.position()[0] == 1
        appended = tx.append([roll(2), roll(3)], expected_seq=1)
    assert [event.seq for event in appended] == [1, 2]
    before = log.read_bytes()
    with pytest.raises(Conflict, match="expected seq 1"), log.transaction() as tx:
        tx.append([roll(4)], expected_seq=1)
    assert log.read_bytes() == before
    assert log.verify_chain() == 3


def test_creating_an_existing_game_is_a_conflict_and_a_failed_creation_leaves_nothing(
    backend: Backend,
) -> None:
    log = backend.log("g")
    log.create([roll(1)])
    before = log.read_bytes()
    with pytest.raises(Conflict, match="already exists"):
        log.create([roll(2)])
    assert log.read_bytes() == before
    other = backend.log("h")
    with pytest.raises(RuntimeError, match="refused"), other.creating() as creation:
        creation.write([roll(1)])
        raise RuntimeError("refused after writing")
    assert not other.exists()


def test_a_second_writer_waits_at_most_its_timeout_then_is_a_conflict(backend: Backend) -> None:
    log = backend.log("g")
    log.create([roll(1)])
    with log.transaction() as holder:
        with pytest.raises(Conflict, match="locked by another writer"), log.transaction(timeout=0.2):
            pass
        holder.append([roll(2)], expected_seq=1)
    with log.transaction(timeout=0.2) as tx:  # released with the holder's block
        assert tx.position()[0] == 2


def test_read_from_a_seq_and_the_head(backend: Backend) -> None:
    log = backend.log("g")
    log.create([roll(1)])
    for turn in range(2, 11):
        log.append([roll(turn)])
    events = log.read()
    assert [event.seq for event in events_from(log, 7)] == [7, 8, 9]
    assert list(events_from(log, 10)) == []
    assert list(events_from(log, 11)) == []
    assert list(events_from(log, 0)) == events
    head = log.read_head()
    assert head is not None and (head.seq, head.hash) == (9, events[-1].hash)
    with log.transaction() as tx:
        assert tx.position() == (10, events[-1].hash)


@pytest.mark.parametrize("golden", GOLDEN_LOGS)
def test_a_golden_log_appended_event_by_event_gives_the_files_bytes(backend: Backend, golden: str) -> None:
    data = (GOLDEN / golden).read_bytes()
    events = _as_written(data)
    log = backend.log("golden")
    log.create(events[:1])
    for event in events[1:]:
        log.append([event])
    assert log.read_bytes() == data
    assert log.verify_chain() == len(events)
    head = log.read_head()
    assert head is not None and head.hash == json.loads(data.splitlines()[-1])["hash"]


def _as_written(data: bytes) -> list[Event]:
    """The events of a log as the engine built them before stamping: the line's own values (an
    int stays an int in a float field), without the envelope the store stamps again."""
    events: list[Event] = []
    for line in data.splitlines():
        fields = json.loads(line)
        event_class = EVENT_TYPES[fields.pop("type")]
        for envelope in ("seq", "prev", "hash"):
            fields.pop(envelope)
        events.append(event_class(**fields))
    return events


# ----------------------------------------------------------------------------- concurrency


def _race(spec: tuple[str, ...], writer: str, appends: int) -> None:
    """Append ``appends`` rolls of ``writer``, each with the expected seq it read: a Conflict is
    retried from a fresh read, as a client racing others would."""
    log = open_backend(spec)("g")
    done = 0
    while done < appends:
        try:
            with log.transaction() as tx:
                next_seq, _ = tx.position()
                tx.append([roll(done + 1, ship=writer)], expected_seq=next_seq)
            done += 1
        except Conflict:
            continue


def _stale_race(spec: tuple[str, ...], writer: str, appends: int) -> None:
    """Append with an expected seq read *outside* the lock: every racer but one loses each round."""
    log = open_backend(spec)("g")
    done = 0
    while done < appends:
        next_seq = len(log.read())
        try:
            log.append([roll(done + 1, ship=writer)], expected_seq=next_seq)
            done += 1
        except Conflict:
            continue


@pytest.mark.parametrize("racer", [_race, _stale_race])
def test_four_writers_racing_on_one_game_lose_and_duplicate_nothing(
    backend: Backend, racer: Callable[[tuple[str, ...], str, int], None]
) -> None:
    log = backend.log("g")
    log.create([roll(0, ship="start")])
    writers, appends = ["A", "B", "C", "D"], 25
    processes = [writer_of(backend, racer, (backend.spec(), w, appends)) for w in writers]
    for process in processes:
        process.start()
    for process in processes:
        process.join(300)
        assert process.exitcode == 0
    assert log.verify_chain() == 1 + len(writers) * appends
    events = log.read()
    for writer in writers:
        turns = [e.turn for e in events if isinstance(e, DieRolled) and e.ship == writer]
        assert turns == list(range(1, appends + 1))


def _lockstep(spec: tuple[str, ...], writer: str, rounds: int, barrier: Any, results: str) -> None:
    """Each round: read the next seq, wait until every writer has read it (so all hold the same
    expected seq), append with it, wait until every writer has tried. Writes ``won SEQ`` or
    ``conflict`` for each round to ``results``."""
    log = open_backend(spec)("g")
    with open(results, "w", buffering=1) as out:
        for turn in range(1, rounds + 1):
            barrier.wait()
            expected = len(log.read())
            barrier.wait()
            try:
                appended = log.append([roll(turn, ship=writer)], expected_seq=expected)
                out.write(f"won {appended[0].seq}\n")
            except Conflict:
                out.write("conflict\n")
            barrier.wait()


def test_writers_holding_the_same_expected_seq_one_wins_each_round_the_others_get_a_conflict(
    backend: Backend, tmp_path: Path
) -> None:
    log = backend.log("g")
    log.create([roll(0, ship="start")])
    writers, rounds = ["A", "B", "C", "D", "E"], 12
    if backend.kind == "memory":
        barrier: Any = threading.Barrier(len(writers), timeout=120)
    else:
        barrier = multiprocessing.get_context("fork").Barrier(len(writers), timeout=120)
    results = {w: tmp_path / f"{w}.results" for w in writers}
    processes = [
        writer_of(backend, _lockstep, (backend.spec(), w, rounds, barrier, str(results[w]))) for w in writers
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(300)
        assert process.exitcode == 0
    outcomes = {w: results[w].read_text().splitlines() for w in writers}
    won = sorted(int(line.split()[1]) for lines in outcomes.values() for line in lines if line != "conflict")
    conflicts = sum(lines.count("conflict") for lines in outcomes.values())
    assert won == list(range(1, rounds + 1))  # each seq taken once, by one writer
    assert conflicts == rounds * (len(writers) - 1)  # every other writer of the round refused
    assert log.verify_chain() == 1 + rounds
    events = log.read()
    for writer in writers:  # what each writer was told it won is in the log as its own
        mine = [int(line.split()[1]) for line in outcomes[writer] if line != "conflict"]
        assert all(isinstance(events[seq], DieRolled) and events[seq].ship == writer for seq in mine)


# ----------------------------------------------------------------------------- tamper


def _reversed_hash(line: bytes) -> bytes:
    from mortecouille.events.codec import canonical

    body = json.loads(line)
    body["hash"] = body["hash"][::-1]
    return canonical(body)


def _changed_value(line: bytes) -> bytes:
    return line.replace(b'"value":3', b'"value":4')


def test_a_changed_line_is_named_by_its_seq(backend: Backend) -> None:
    log = backend.log("g")
    log.create([roll(turn) for turn in range(1, 8)])
    backend.rewrite_line("g", 4, _changed_value)
    with pytest.raises(LogError, match="line 5") as raised:
        log.verify_chain()
    assert raised.value.seq == 4
    if backend.kind == "postgres":  # its reader re-checks the chain on every read
        with pytest.raises(LogError) as on_read:
            log.read()
        assert on_read.value.seq == 4


def test_a_changed_hash_is_named_by_its_seq(backend: Backend) -> None:
    log = backend.log("g")
    log.create([roll(turn) for turn in range(1, 8)])
    backend.change_hash_only("g", 2)
    with pytest.raises(LogError) as raised:
        log.verify_chain()
    assert raised.value.seq == 2


def test_a_rehashed_rewrite_of_the_last_line_is_caught_by_the_head(backend: Backend) -> None:
    # the line is edited and its hash recomputed, so the chain alone holds: the head does not
    from mortecouille.events.codec import canonical, line_hash

    def forge(line: bytes) -> bytes:
        body = json.loads(_changed_value(line))
        body.pop("hash")
        body["hash"] = line_hash(body)
        return canonical(body)

    log = backend.log("g")
    log.create([roll(turn) for turn in range(1, 5)])
    backend.rewrite_line("g", 3, forge)
    with pytest.raises(LogError, match="rewritten|edited") as raised:
        log.verify_chain()
    assert raised.value.seq == 3


# ----------------------------------------------------------------------------- crashes


def _append_and_acknowledge(spec: tuple[str, ...], acks: str, kill_before_commit: bool) -> None:
    """Append one roll at a time forever, writing each acknowledged seq and hash to ``acks``
    after the append returned; with ``kill_before_commit`` (PostgreSQL), the process kills itself
    at its first append after the rows are inserted and before the commit."""
    log = open_backend(spec)("g")
    if kill_before_commit:
        import psycopg

        execute = psycopg.Connection.execute

        def dying_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(query, str) and query.startswith("SELECT pg_notify"):
                os.kill(os.getpid(), signal.SIGKILL)
            return execute(self, query, *args, **kwargs)

        psycopg.Connection.execute = dying_execute  # type: ignore[method-assign]
    with open(acks, "a", buffering=1) as out:
        turn = 1
        while True:
            try:
                appended = log.append(batch_of(turn))
            except Exception as error:  # the server restarting: nothing acknowledged, retried
                if type(error).__name__ != "StoreUnavailable":
                    raise
                continue
            out.write(f"{appended[-1].seq} {appended[-1].hash}\n")
            turn += 1


#: How many events each append of the crash tests carries: a batch is all there or not at all.
BATCH = 3


def batch_of(turn: int) -> list[Event]:
    """One append of the crash tests: :data:`BATCH` rolls of the same turn."""
    return [roll(turn, ship=ship) for ship in "ABC"[:BATCH]]


def _acknowledged(acks: Path) -> list[tuple[int, str]]:
    """The acknowledged (seq, hash) pairs: whole lines only (a kill may cut the last one short)."""
    whole = acks.read_text().split("\n")[:-1] if acks.exists() else []
    return [(int(seq), digest) for seq, digest in (line.split() for line in whole)]


def _wait_for_acks(acks: Path, count: int, process: Any) -> None:
    """Wait (on the writer's progress, not on a clock) until ``count`` appends were acknowledged."""
    import time

    while len(_acknowledged(acks)) < count:
        assert process.is_alive(), "the writer died before it was killed"
        time.sleep(0.01)


def _check_acknowledged_survive(log: EventStore, acks: Path) -> None:
    """Every acknowledged append is there with its hash, the chain verifies, and every batch
    after the first line is whole (no append half written)."""
    events = log.read()
    assert log.verify_chain() == len(events)
    for seq, digest in _acknowledged(acks):
        assert events[seq].hash == digest
    appended = events[1:]
    assert len(appended) % BATCH == 0, f"{len(appended)} events appended in batches of {BATCH}"
    turns = [0]
    for start in range(0, len(appended), BATCH):
        batch = appended[start : start + BATCH]
        assert all(isinstance(e, DieRolled) for e in batch)
        turn = batch[0].turn
        assert [(e.turn, e.ship) for e in batch] == [(e.turn, e.ship) for e in batch_of(turn)]
        # the next turn, or the same one again: an append cut off by a server crash may have
        # committed unacknowledged, and the writer retried it
        assert turn in (turns[-1], turns[-1] + 1)
        turns.append(turn)


@pytest.mark.parametrize("after", [1, 7, 20])
def test_a_client_killed_mid_load_leaves_every_acknowledged_append_and_nothing_half_written(
    backend: Backend, tmp_path: Path, after: int
) -> None:
    if backend.kind == "memory":
        pytest.skip("a memory store lives and dies with its one process: no client of it survives a kill")
    log = backend.log("g")
    log.create([roll(0)])
    acks = tmp_path / "acks"
    process = multiprocessing.get_context("fork").Process(
        target=_append_and_acknowledge, args=(backend.spec(), str(acks), False)
    )
    process.start()
    _wait_for_acks(acks, after, process)
    os.kill(process.pid or 0, signal.SIGKILL)
    process.join(60)
    if backend.kind == "file":
        GameLog(backend.directory / "g.jsonl").repair()  # a torn tail, if the kill cut a write
    _check_acknowledged_survive(log, acks)


def test_a_postgres_client_killed_between_insert_and_commit_writes_nothing(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server: PostgresServer = request.getfixturevalue("postgres_server")
    backend = PostgresBackend(server, f"t_{uuid.uuid4().hex[:16]}")
    try:
        log = backend.log("g")
        log.create([roll(0)])
        before = log.read_bytes()
        process = multiprocessing.get_context("fork").Process(
            target=_append_and_acknowledge, args=(backend.spec(), str(tmp_path / "acks"), True)
        )
        process.start()
        process.join(120)
        assert process.exitcode == -signal.SIGKILL
        assert log.read_bytes() == before
        assert log.verify_chain() == 1
        with log.transaction(timeout=30) as tx:  # the dead client's lock went with its session
            assert tx.append([roll(1)], expected_seq=1)[0].seq == 1
    finally:
        backend.close()


def test_a_postgres_server_crash_mid_load_loses_no_acknowledged_append(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server: PostgresServer = request.getfixturevalue("postgres_server")
    schema = f"t_{uuid.uuid4().hex[:16]}"
    backend = PostgresBackend(server, schema)
    backend.log("g").create([roll(0)])
    backend.close()
    acks = tmp_path / "acks"
    context = multiprocessing.get_context("fork")
    process = context.Process(
        target=_append_and_acknowledge, args=(("postgres", server.url, schema), str(acks), False)
    )
    process.start()
    try:
        _wait_for_acks(acks, 10, process)
        server.crash_restart()
        _wait_for_acks(acks, len(_acknowledged(acks)) + 10, process)  # it goes on after the restart
    finally:
        os.kill(process.pid or 0, signal.SIGKILL)
        process.join(60)
    backend = PostgresBackend(server, schema)
    try:
        _check_acknowledged_survive(backend.log("g"), acks)
    finally:
        backend.close()


# ----------------------------------------------------------------------------- the global order


def _append_to_games(spec: tuple[str, ...], games: list[str], rounds: int) -> None:
    make_log = open_backend(spec)
    for turn in range(1, rounds + 1):
        for game in games:
            make_log(game).append([roll(turn)])


def test_a_reader_tailing_the_global_order_never_skips_an_event_that_commits_later(
    request: pytest.FixtureRequest,
) -> None:
    server: PostgresServer = request.getfixturevalue("postgres_server")
    backend = PostgresBackend(server, f"t_{uuid.uuid4().hex[:16]}")
    try:
        games = [f"g{number}" for number in range(12)]
        for game in games:
            backend.log(game).create([roll(0)])
        context = multiprocessing.get_context("fork")
        writers = [
            context.Process(target=_append_to_games, args=(backend.spec(), games[w::4], 15)) for w in range(4)
        ]
        for writer in writers:
            writer.start()
        seen: list[int] = []
        last = 0
        while any(writer.is_alive() for writer in writers) or (batch := backend.store.tail(last)):
            batch = backend.store.tail(last)
            seen.extend(row.position for row in batch)
            last = seen[-1] if seen else last
        for writer in writers:
            writer.join(60)
            assert writer.exitcode == 0
        every = [row.position for row in backend.store.tail(0, limit=100000)]
        assert len(every) == len(games) * 16
        # the reader saw each position once, in order, and skipped none of those that exist
        assert seen == every
    finally:
        backend.close()


def test_an_append_notifies_the_stores_channel_with_game_and_seq(request: pytest.FixtureRequest) -> None:
    import psycopg

    server: PostgresServer = request.getfixturevalue("postgres_server")
    backend = PostgresBackend(server, f"t_{uuid.uuid4().hex[:16]}")
    try:
        with psycopg.connect(server.url, autocommit=True) as listener:
            listener.execute(f"LISTEN {backend.store.channel}")
            backend.log("g").create([roll(0), roll(1)])
            backend.log("g").append([roll(2)])
            payloads = [json.loads(n.payload) for n in listener.notifies(timeout=30, stop_after=2)]
        assert payloads == [{"game": "g", "seq": 1}, {"game": "g", "seq": 2}]
    finally:
        backend.close()


# ----------------------------------------------------------------------------- copying a written log


@pytest.mark.parametrize(
    "golden", sorted(str(path.relative_to(GOLDEN)) for path in GOLDEN.glob("**/*.jsonl"))
)
def test_a_written_log_imported_into_each_store_keeps_every_byte(backend: Backend, golden: str) -> None:
    """Every golden log, of every generation, imported as lines (``stores.import_lines``: how
    ``store copy`` moves a game) reads back byte for byte and verifies, on both stores."""
    from mortecouille.events.storage.contract import import_lines

    data = (GOLDEN / golden).read_bytes()
    log = backend.log("copy")
    assert import_lines(log, data) == data.count(b"\n")
    assert log.read_bytes() == data
    assert log.verify_chain() == data.count(b"\n")
    head = log.read_head()
    assert head is not None and head.hash == json.loads(data.splitlines()[-1])["hash"]
    with pytest.raises(Conflict, match="already exists"):
        import_lines(log, data)
    assert log.read_bytes() == data


def test_a_tampered_log_is_refused_on_import_naming_its_seq_and_nothing_is_created(
    request: pytest.FixtureRequest,
) -> None:
    server: PostgresServer = request.getfixturevalue("postgres_server")
    backend = PostgresBackend(server, f"t_{uuid.uuid4().hex[:16]}")
    try:
        lines = (GOLDEN / "blockade.jsonl").read_bytes().splitlines()
        lines[5] = _reversed_hash(lines[5])
        log = backend.store.log("copy")
        with pytest.raises(LogError) as raised:
            log.import_lines(b"\n".join(lines) + b"\n")
        assert raised.value.seq == 5
        assert not log.exists() and backend.store.tail(0) == []
    finally:
        backend.close()
