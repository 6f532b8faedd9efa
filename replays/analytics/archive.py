"""``archive``: finished game logs into plain Parquet tables, for DuckDB here and bigger engines later.

Layout of an archive directory (documented for its readers in the README written beside it)::

    ARCHIVE/README.md                       what every table and column means
    ARCHIVE/manifest.json                   archived games: ruleset, month, events, last hash, batch
    ARCHIVE/logs/GAME.jsonl (+ GAME.head)   the verified log, byte for byte
    ARCHIVE/TABLE/ruleset=R/month=YYYY-MM/part-BATCH-N.parquet

Choices, each for a reason:

* **No clock here.** The month partition is what the caller passes (the CLI defaults it to the
  current month); idempotence is keyed by game id and the log's last hash only, so archiving the
  same game in another month adds nothing.
* **Idempotent.** A game already in the manifest with the same last hash is skipped without
  re-verifying it. One whose log now ends differently (it grew, or was rewritten with a fresh
  chain) is *refused* as a conflict, never replaced: the archive is append-only, and what was
  archived stays what analyses were run on.
* **Crash-safe without a transaction.** Every Parquet file carries its batch id in its name and the
  manifest lists the committed batches; the manifest is replaced atomically after the files are
  written, and a run starts by deleting part files of batches the manifest does not list (what a
  crashed run left).
* **The events table is written by DuckDB straight from the verified logs.** It is one row per
  log line with the line itself as ``payload`` (most of the archive's bytes), and the verified
  logs are staged as files anyway (they are kept in ``logs/``): one ``COPY`` reads them
  (``read_ndjson_objects``, the line as it is, and ``json_transform`` for ``seq``, ``turn``,
  ``type``, ``ship``), so those rows never go through Python objects or a JSON re-encoding
  (this was half of what archiving cost besides verifying).
  :func:`mortecouille.replays.analytics.rows.event_rows` says the same rows in Python (the
  tests compare them).
* **The other tables' rows are built in Python from the typed events, written by DuckDB.** They
  go to a temporary JSON-lines file per table and one ``COPY (SELECT ... FROM read_json(...)) TO
  ... (PARTITION_BY)`` writes each: measured ~400 times faster than ``executemany`` inserts, and
  no pyarrow or pandas.
* **Workers forked before the lock.** ``jobs`` processes verify side by side; on Linux they are
  forked (a spawned one would import the engine again, about 0.2 s of a core each), all of them
  before the archive's lock is taken so that none inherits it (:func:`_workers`).
* **One DuckDB connection a run, opened while the workers verify.** Importing DuckDB and
  connecting (about 0.1 s of a core) happen on a thread as soon as there are games to archive,
  not at the first commit, which is often the run's only one and its last step; a batch
  committed beside the workers is written on one DuckDB thread (the workers keep the cores
  busy: two threads cost half as much CPU again), the last on all of them (:class:`_Committer`).
* **Streaming, memory flat in the number of games.** Each game is verified and its rows built and
  encoded as JSON lines by a worker (one game at a time), which writes the bytes it verified into
  the run's staging folder (``.staging-RUN/N.jsonl``); the archiving process appends the rows to
  the batch's staging files and moves the log in beside them (``.staging-BATCH/``) as games come
  back, in the order of the logs, with only a few games in flight; every :data:`FLUSH_EVENTS`
  events the batch is written as Parquet and committed. No run holds more than a few games' rows,
  whatever the number of games, and no log's bytes travel between processes.

The table schemas (one row type per table) and the README's text are in
:mod:`mortecouille.replays.analytics.schema`, the rows built from a game's events in
:mod:`mortecouille.replays.analytics.rows`; this module verifies, writes, and keeps the manifest
and the lock.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import msgspec

from mortecouille.core.errors import BadInput
from mortecouille.events.codec import LogError, decode_lines
from mortecouille.events.game import GameCreated, GameEnded
from mortecouille.events.storage.errors import Conflict
from mortecouille.events.storage.file_io import LOCK_TIMEOUT_SECONDS, lock_within
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.analytics.rows import derived_rows
from mortecouille.replays.analytics.schema import PARTITION_COLUMNS, TABLES, Columns, TableRow, readme_text
from mortecouille.replays.reading.verify import verify_folded

if TYPE_CHECKING:  # imported where used: every command imports this module
    from concurrent.futures import Future, ProcessPoolExecutor

    import duckdb

#: A row as written: a table's columns and the partition columns, by name.
WrittenRow = dict[str, Any]

MANIFEST_NAME = "manifest.json"
LOGS_DIR = "logs"
MANIFEST_FORMAT = 1

#: Events staged (on disk) before they are written as one batch of Parquet files and committed.
FLUSH_EVENTS = 400_000

#: Games being verified or waiting to be staged, per worker process: enough to keep the workers
#: busy, few enough that memory does not grow with the number of games.
IN_FLIGHT_PER_JOB = 4


class ArchivedGame(msgspec.Struct, frozen=True):
    """A manifest entry: enough to recognise the same log again and to find its files."""

    ruleset: str
    month: str
    events: int
    last_hash: str
    batch: str


class Manifest(msgspec.Struct):
    format: int = MANIFEST_FORMAT
    batches: list[str] = []
    games: dict[str, ArchivedGame] = {}


class Refusal(msgspec.Struct, frozen=True):
    game: str
    reason: str


class ArchiveResult(msgspec.Struct):
    """What one run did. ``refused``: corrupt or tampered logs (exit 4); ``conflicts``: a log that
    differs from the one archived under its name (exit 3)."""

    archived: list[str] = []
    already: list[str] = []
    unfinished: list[str] = []
    refused: list[Refusal] = []
    conflicts: list[Refusal] = []
    events: int = 0

    @property
    def exit_code(self) -> int:
        return 4 if self.refused else 3 if self.conflicts else 0


class PreparedGame(msgspec.Struct):
    """A verified finished game: its exact bytes (the events table's rows, one per line) and the
    rows of every other table."""

    name: str
    ruleset: str
    data: bytes
    head: bytes | None
    last_hash: str
    events: int
    rows: dict[str, list[TableRow]]


class StagedGame(msgspec.Struct):
    """A verified finished game as a worker hands it back: where it wrote the exact bytes it
    verified (``kept``, the events table's source; its head anchor beside, with suffix ``.head``,
    when ``head``) and the other tables' rows already encoded, one JSON line per row (partition
    columns included), per table."""

    name: str
    ruleset: str
    kept: Path
    head: bool
    last_hash: str
    events: int
    lines: dict[str, bytes]


# ------------------------------------------------------------------ one log


def last_line_hash(data: bytes) -> str | None:
    """The ``hash`` of a log's last line, read without decoding the rest (None if unreadable)."""
    body = data.rstrip(b"\n")
    if not body:
        return None
    try:
        last = msgspec.json.decode(body[body.rfind(b"\n") + 1 :], type=dict[str, Any])
    except msgspec.DecodeError:
        return None
    digest = last.get("hash")
    return digest if isinstance(digest, str) else None


def prepare_game(path: Path, rederive_turns: bool = False) -> PreparedGame | Refusal | None:
    """Verify one log and build its rows; a Refusal names why it cannot be archived; None means the
    game is not finished (no game-ended), which is skipped, not refused."""
    log = GameLog(path)
    name = log.name
    try:
        data = log.read_bytes()
        if data and not data.endswith(b"\n"):
            return Refusal(name, "torn last line (an append was cut short); run `mortecouille repair`")
        events = decode_lines(data)
    except LogError as error:
        return Refusal(name, str(error))
    if not events or not isinstance(events[0], GameCreated):
        return Refusal(name, "the first event is not game-created")
    if not any(isinstance(event, GameEnded) for event in events):
        return None
    report, final = verify_folded(log, data, events, rederive_turns)
    failure = report.first_failure
    if failure is not None:
        return Refusal(name, f"{failure.check}: {failure.detail}")
    head = log.head_path.read_bytes() if log.head_path.exists() else None
    # The rows must describe the very bytes that were verified and will be copied.
    if log.read_bytes() != data:
        return Refusal(name, "the log changed while it was being archived; try again")
    rows = derived_rows(name, events, final)  # the state the verification folded to
    return PreparedGame(name, events[0].ruleset, data, head, events[-1].hash, len(events), rows)


def stage_game(path: Path, keep: Path, rederive_turns: bool, month: str) -> StagedGame | Refusal | None:
    """:func:`prepare_game`, the verified bytes written to ``keep`` (the head anchor's beside it,
    suffix ``.head``) and the rows encoded as the table files' JSON lines: in a worker, only the
    rows' bytes go back to the archiving process, not the log's (most of the bytes; the archiving
    process moves the file into its batch)."""
    prepared = prepare_game(path, rederive_turns)
    if not isinstance(prepared, PreparedGame):
        return prepared
    keep.write_bytes(prepared.data)
    if prepared.head is not None:
        keep.with_suffix(".head").write_bytes(prepared.head)
    encoder = msgspec.json.Encoder()
    # Each row is encoded as its struct (no dict per row) and the partition columns are spliced
    # into every line's closing brace: JSON text has no raw newline inside a value, so every
    # b"}\n" of encode_lines' output ends a row.
    partition = encoder.encode({"ruleset": prepared.ruleset, "month": month})
    closing = b"," + partition[1:] + b"\n"
    lines = {
        table: encoder.encode_lines(rows).replace(b"}\n", closing)
        for table, rows in prepared.rows.items()
        if rows
    }
    return StagedGame(
        prepared.name,
        prepared.ruleset,
        keep,
        prepared.head is not None,
        prepared.last_hash,
        prepared.events,
        lines,
    )


# ------------------------------------------------------------------ the archive


def read_manifest(archive: Path) -> Manifest:
    """The archive's manifest (empty for a new archive); a damaged one is refused (exit 4), since
    which batches and games the archive holds can then no longer be trusted."""
    path = archive / MANIFEST_NAME
    try:
        return msgspec.json.decode(path.read_bytes(), type=Manifest)
    except FileNotFoundError:
        return Manifest()
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise LogError(
            f"{path} is damaged ({error}); the archive cannot say what it holds: archive again into a new "
            "folder (the logs kept in its logs/ folder are the source)"
        ) from None


def _write_manifest(archive: Path, manifest: Manifest) -> None:
    temporary = archive / f".{MANIFEST_NAME}.tmp"
    with open(temporary, "wb") as handle:
        handle.write(msgspec.json.format(msgspec.json.encode(manifest, order="sorted")) + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, archive / MANIFEST_NAME)


LOCK_NAME = ".lock"


@contextmanager
def _locked(archive: Path, timeout: float) -> Iterator[None]:
    """One archiving run at a time: two would both think a game is new.

    The holder writes its process id into the lock file, so that one waiting can say who holds it;
    a wait is bounded (Conflict, exit 3), as for a game's lock."""
    fd = os.open(archive / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        if not lock_within(fd, timeout):
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            raise Conflict(
                f"archive {archive} is locked by another archive run (process {holder}); "
                f"gave up after {timeout:g} s"
            )
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


#: What a directory may hold to be taken for an archive before its first manifest is written (what
#: a first run that crashed leaves); anything else means it is some other directory.
ARCHIVE_ENTRIES = frozenset({LOCK_NAME, LOGS_DIR, f".{MANIFEST_NAME}.tmp", *TABLES})


def check_archive_dir(archive: Path) -> None:
    """Refuse (BadInput ``destination``) a directory that exists and is not an archive: archiving writes
    its README.md, logs/ and tables, which would overwrite the files of whatever directory it is."""
    if archive.is_symlink():
        raise BadInput(
            "destination", "{archive} is a symbolic link: give the archive directory itself", archive=archive
        )
    if not archive.exists():
        return
    if not archive.is_dir():
        raise BadInput("destination", "{archive} is not a directory", archive=archive)
    if (archive / MANIFEST_NAME).is_file():
        return
    strangers = sorted(entry.name for entry in archive.iterdir() if not _archive_entry(entry))
    if strangers:
        shown = ", ".join(strangers[:3]) + (", ..." if len(strangers) > 3 else "")
        raise BadInput(
            "destination",
            "{archive} is not an archive (no {manifest_name}) and holds {shown}: give a new or empty "
            "directory, or an existing archive",
            archive=archive,
            manifest_name=MANIFEST_NAME,
            shown=shown,
        )


def _archive_entry(entry: Path) -> bool:
    if entry.name.startswith(".staging-"):
        return True
    if entry.name == "README.md":
        return (
            entry.is_file() and not entry.is_symlink() and entry.read_text(errors="replace") == readme_text()
        )
    if entry.name == LOGS_DIR:
        return entry.is_dir() and all(p.suffix in (".jsonl", ".head") for p in entry.iterdir())
    return entry.name in ARCHIVE_ENTRIES


def _batch_of(part: Path) -> str:
    """``part-BATCH-N.parquet`` -> BATCH."""
    return part.name.split("-")[1] if part.name.count("-") >= 2 else ""


def remove_orphans(archive: Path, manifest: Manifest) -> int:
    """Delete part files of batches the manifest does not list (left by a crashed run)."""
    committed = set(manifest.batches)
    removed = 0
    for table in TABLES:
        for part in (archive / table).glob("**/part-*.parquet"):
            if _batch_of(part) not in committed:
                part.unlink()
                removed += 1
    return removed


def sql_string(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def columns_struct(columns: Columns) -> str:
    """``{'name': 'TYPE', ...}`` as DuckDB's read_json ``columns`` parameter wants it."""
    return "{" + ", ".join(f"{sql_string(name)}: {sql_string(kind)}" for name, kind in columns) + "}"


#: The events table's columns each log line gives (``json_transform``): all but ``game`` (the
#: log's name) and ``payload`` (the line itself).
EVENT_LINE_COLUMNS: Columns = tuple(
    (name, kind) for name, kind in TABLES["events"] if name not in ("game", "payload")
)


def events_select(logs: Path, index: Path, month: str) -> str:
    """The SELECT giving the events table's rows (partition columns last) of the verified logs
    staged as ``logs/N.jsonl``, named by ``index`` (one JSON line per log: its ``file`` number N,
    ``game`` and ``ruleset``). Logs are staged under numbers, not names, so that no game name is
    ever read as a file pattern or SQL."""
    transform = sql_string(msgspec.json.encode(dict(EVENT_LINE_COLUMNS)).decode())
    named = columns_struct((("file", "BIGINT"), ("game", "VARCHAR"), ("ruleset", "VARCHAR")))
    chosen = {"game": "staged.game", "payload": "line.json::VARCHAR"}
    columns = ", ".join(
        f'{chosen.get(name, f"struct_extract(line.fields, {sql_string(name)})")} AS "{name}"'
        for name, _ in TABLES["events"]
    )
    return (
        f"SELECT {columns}, "
        f"staged.ruleset AS ruleset, {sql_string(month)} AS month "
        f"FROM (SELECT json, json_transform(json, {transform}) AS fields, "
        "CAST(parse_filename(filename, true) AS BIGINT) AS file "  # logs/N.jsonl -> N
        f"FROM read_ndjson_objects({sql_string(str(logs / '*.jsonl'))}, filename = true)) AS line "
        f"JOIN read_json({sql_string(str(index))}, format = 'newline_delimited', columns = {named}) "
        "AS staged USING (file)"
    )


def write_batch(
    archive: Path, batch: str, sources: dict[str, str], connection: duckdb.DuckDBPyConnection
) -> None:
    """Write each table's rows, given as a SELECT (partition columns last), as Parquet files named
    after ``batch``, through ``connection`` (an in-memory database). DuckDB reads the staged files
    as a stream: its memory is bounded by the batch's size (:data:`FLUSH_EVENTS`), never by the
    number of games. ZSTD at level 1: on the archive's tables (the events' payloads most of all)
    it wrote smaller files than its default level 3 for about a third less of DuckDB's time
    (measured on 100,000 events: 5.2 vs 5.8 MB, 0.26-0.30 vs 0.32-0.41 s of CPU)."""
    for table, select in sources.items():
        target = archive / table
        target.mkdir(exist_ok=True)
        connection.execute(
            f"COPY ({select}) "
            f"TO {sql_string(str(target))} (FORMAT PARQUET, COMPRESSION ZSTD, COMPRESSION_LEVEL 1, "
            f"PARTITION_BY ({', '.join(PARTITION_COLUMNS)}), "
            f"FILENAME_PATTERN {sql_string(f'part-{batch}-{{i}}')}, OVERWRITE_OR_IGNORE)"
        )


def staged_rows_select(source: Path, table: str) -> str:
    """The SELECT reading a table's staged rows (JSON lines, partition columns included)."""
    columns = TABLES[table] + tuple((name, "VARCHAR") for name in PARTITION_COLUMNS)
    return (
        f"SELECT * FROM read_json({sql_string(str(source))}, "
        f"format='newline_delimited', columns={columns_struct(columns)})"
    )


class Batch:
    """The games staged for one batch: each verified log's bytes in ``.staging-BATCH/logs/N.jsonl``
    (N counting the batch's games; their names in ``logs.index`` at the commit) and the other
    tables' rows appended to ``.staging-BATCH/TABLE.jsonl``, until :meth:`commit`."""

    def __init__(self, archive: Path) -> None:
        self.archive = archive
        self.id = uuid.uuid4().hex
        self.staging = archive / f".staging-{self.id}"
        (self.staging / LOGS_DIR).mkdir(parents=True)
        self.games: list[StagedGame] = []
        self.events = 0
        self.tables: dict[str, Path] = {}
        #: each table's staging file, open for appending until the commit (not reopened per game)
        self.handles: dict[str, BinaryIO] = {}

    def staged_log(self, number: int, suffix: str = ".jsonl") -> Path:
        return self.staging / LOGS_DIR / f"{number}{suffix}"

    def add(self, game: StagedGame) -> None:
        for table, lines in game.lines.items():
            handle = self.handles.get(table)
            if handle is None:
                self.tables[table] = self.staging / f"{table}.jsonl"
                handle = self.handles[table] = open(self.tables[table], "ab")  # noqa: SIM115 - closed by close_tables
            handle.write(lines)
        number = len(self.games)
        os.replace(game.kept, self.staged_log(number))
        if game.head:
            os.replace(game.kept.with_suffix(".head"), self.staged_log(number, ".head"))
        # only what the manifest needs is kept: the rows are on disk now
        self.games.append(msgspec.structs.replace(game, lines={}))
        self.events += game.events

    def commit(
        self, manifest: Manifest, month: str, result: ArchiveResult, connection: duckdb.DuckDBPyConnection
    ) -> None:
        """Write the Parquet files, move the logs in, then list the batch in the manifest (the
        commit: until then a crash leaves only part files a later run deletes)."""
        self.close_tables()
        index = self.staging / "logs.index"  # JSON lines; not a table's name
        named = [{"file": n, "game": game.name, "ruleset": game.ruleset} for n, game in enumerate(self.games)]
        index.write_bytes(msgspec.json.Encoder().encode_lines(named))
        selects = {
            table: events_select(self.staging / LOGS_DIR, index, month)
            if table == "events"
            else staged_rows_select(self.tables[table], table)
            for table in TABLES
            if table == "events" or table in self.tables
        }
        write_batch(self.archive, self.id, selects, connection)
        for number, game in enumerate(self.games):
            for suffix in (".jsonl", ".head"):
                kept = self.staged_log(number, suffix)
                if suffix == ".jsonl" or kept.exists():
                    os.replace(kept, self.archive / LOGS_DIR / f"{game.name}{suffix}")
        manifest.batches.append(self.id)
        for game in self.games:
            manifest.games[game.name] = ArchivedGame(
                ruleset=game.ruleset, month=month, events=game.events, last_hash=game.last_hash, batch=self.id
            )
            result.archived.append(game.name)
            result.events += game.events
        _write_manifest(self.archive, manifest)
        self.discard()

    def close_tables(self) -> None:
        for handle in self.handles.values():
            handle.close()
        self.handles.clear()

    def discard(self) -> None:
        self.close_tables()
        shutil.rmtree(self.staging, ignore_errors=True)


def remove_stale_staging(archive: Path) -> None:
    """Delete staging folders a killed run left (its batch was never committed)."""
    for entry in archive.glob(".staging-*"):
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def archive_games(
    logs: Sequence[Path],
    archive: Path,
    month: str,
    on_game: Callable[[str], None] | None = None,
    flush_events: int = FLUSH_EVENTS,
    rederive_turns: bool = False,
    jobs: int = 1,
    lock_timeout: float = LOCK_TIMEOUT_SECONDS,
) -> ArchiveResult:
    """Archive every finished, verified game of ``logs`` under ``archive`` in partition ``month``.

    Verified: hash chain and head, dice against the revealed seed, turn-end state hashes;
    ``rederive_turns`` also re-derives every outcome (as ``verify`` does, at about the cost of
    playing the game again). ``jobs`` processes verify and build rows side by side; the
    archive is written by this one, in the order of ``logs``, whatever ``jobs`` is. Another run
    holding the archive is waited for ``lock_timeout`` seconds at most (then Conflict, exit 3)."""
    check_archive_dir(archive)
    archive.mkdir(parents=True, exist_ok=True)
    (archive / LOGS_DIR).mkdir(exist_ok=True)
    result = ArchiveResult()
    # the workers start before the lock is taken: none of them holds it (see _workers)
    with _workers(jobs if len(logs) > 1 else 1) as pool, _locked(archive, lock_timeout):
        manifest = read_manifest(archive)
        remove_orphans(archive, manifest)
        remove_stale_staging(archive)
        fresh: list[Path] = []
        for path in logs:
            known = manifest.games.get(path.stem)
            if known is None:
                fresh.append(path)
                continue
            _check_archived(path, known, result)
            if on_game is not None:
                on_game(path.stem)
        batch: Batch | None = None
        # where workers write the logs they verified, until the batch takes each in
        verified = archive / f".staging-{uuid.uuid4().hex}"
        verified.mkdir()
        committer = _Committer(manifest, month, result)
        try:
            if fresh:
                committer.open_meanwhile()
            stage = partial(stage_game, rederive_turns=rederive_turns, month=month)
            last = len(fresh) - 1
            for number, (path, staged) in enumerate(
                zip(fresh, _staged(fresh, verified, stage, pool, jobs), strict=True)
            ):
                if staged is None:
                    result.unfinished.append(path.stem)
                elif isinstance(staged, Refusal):
                    result.refused.append(staged)
                else:
                    batch = batch or Batch(archive)
                    batch.add(staged)
                    if batch.events >= flush_events and number < last:  # the last: below
                        committer.start(batch)
                        batch = None
                if on_game is not None:
                    on_game(path.stem)
            if batch is not None:  # the last one: nothing left to verify meanwhile
                committer.commit(batch)
                batch = None
            committer.wait()
        finally:
            committer.close()  # never let go of the lock while a commit runs
            if batch is not None:
                batch.discard()
            shutil.rmtree(verified, ignore_errors=True)
        write_readme(archive)
    return result


class _Committer:
    """Commits a run's batches in order through one DuckDB connection (importing DuckDB costs about
    0.1 s of a core, opening a connection about 20 ms, as much as writing 2,000 events: once per
    run, not per batch).

    The connection is opened on a thread of its own as soon as the run has games to archive
    (:meth:`open_meanwhile`), while the workers verify the first batch: the first commit, often
    the run's only one and then the last thing it does, no longer waits for it.

    A full batch is committed on a thread of its own (:meth:`start`), so that the workers go on
    verifying the next batch's games while DuckDB writes this one's Parquet (it lets go of the GIL
    as it works) instead of waiting for it: 500 five-turn games in batches of 4,000 events took
    2.0-2.6 s instead of 2.3-3.2 s (medians of interleaved runs, 2 cores). Such a
    commit runs beside the workers, which keep every core busy: DuckDB writes it on one thread
    (on two, the events of bench/run's batch took half as much CPU again, 0.21 against 0.14 s,
    for less time only when a core is free). The last commit runs alone, on all of DuckDB's
    threads. Each commit is whole before the next starts, and only the commit in flight writes
    the manifest."""

    def __init__(self, manifest: Manifest, month: str, result: ArchiveResult) -> None:
        self.manifest = manifest
        self.month = month
        self.result = result
        self.connection: duckdb.DuckDBPyConnection | None = None
        self.opening: threading.Thread | None = None
        self.running: threading.Thread | None = None
        self.failure: BaseException | None = None

    def open_meanwhile(self) -> None:
        """Import DuckDB and open the connection on a thread (joined by the first commit)."""

        def connect() -> None:
            try:
                self.connection = _connect()
            except BaseException as error:  # raised in the archiving thread at the first commit
                self.failure = error

        self.opening = threading.Thread(target=connect, name="archive-connect")
        self.opening.start()

    def commit(self, batch: Batch) -> None:
        """Commit ``batch`` here and now, once the commit in flight is done: the run's last, with
        nothing left to verify beside it."""
        self.wait()
        self._commit(batch, alone=True)

    def start(self, batch: Batch) -> None:
        """Commit ``batch`` on a thread, beside the workers, once the commit in flight is done
        (raising what that one raised)."""
        self.wait()

        def commit() -> None:
            try:
                self._commit(batch, alone=False)
            except BaseException as error:  # raised in the archiving thread at its next wait
                self.failure = error
                batch.discard()

        self.running = threading.Thread(target=commit, name=f"archive-commit-{batch.id}")
        self.running.start()

    def _commit(self, batch: Batch, alone: bool) -> None:
        if self.connection is None:
            self.connection = _connect()
        if alone:
            self.connection.execute("RESET threads")  # DuckDB's default: every core
        else:
            self.connection.execute("SET threads = 1")
        batch.commit(self.manifest, self.month, self.result, self.connection)

    def wait(self) -> None:
        """Wait for the connection being opened and the commit in flight, raising what they
        raised."""
        self.settle()
        failure, self.failure = self.failure, None
        if failure is not None:
            raise failure

    def settle(self) -> None:
        """Wait for the connection being opened and the commit in flight, whatever they raised
        (the run is failing already)."""
        for thread in (self.opening, self.running):
            if thread is not None:
                thread.join()
        self.opening = self.running = None

    def close(self) -> None:
        """Wait for the commit in flight (whatever it raised), then close the connection."""
        self.settle()
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def _connect() -> duckdb.DuckDBPyConnection:
    import duckdb  # lazily: only archiving and querying pay for it

    return duckdb.connect()


@contextmanager
def _workers(jobs: int) -> Iterator[ProcessPoolExecutor | None]:
    """``jobs`` worker processes for :func:`_staged` (None for one job: this process does it all).

    Forked when :func:`_forking_is_safe`, and all at once here, before the caller takes the
    archive's lock: a forked worker inherits the open files of its parent, and one forked while
    the lock is held would keep it as long as it lives. Forked rather than spawned because a
    spawned worker imports the engine again (about 0.2 s of a core each, as long as
    verifying 20,000 events); a forked one starts with its parent's modules. Otherwise they are
    spawned (fork is unsafe on macOS, and beside other threads). Each worker dies with this
    process (a killed ``archive`` leaves none)."""
    if jobs <= 1:
        yield None
        return
    # Imported here: only a run with several jobs pays for process pools (every command imports
    # this module).
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    forking = _forking_is_safe()
    context = multiprocessing.get_context("fork" if forking else "spawn")
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=die_with_parent, initargs=(os.getpid(),)
    ) as pool:
        if forking:
            # a forking pool starts every worker at its first task: that is now, before the lock
            # (a spawning one starts them as tasks come, only if any does, each with no open file)
            pool.submit(os.getpid).result()
        yield pool


def _forking_is_safe() -> bool:
    """Fork on Linux, and only from a process with no other thread: a lock another thread holds
    at the fork would stay held in the worker forever (a server, a test harness). Threads are
    counted by the kernel (``/proc/self/task``), not by :mod:`threading`, which sees Python's
    threads only: an open DuckDB connection runs native worker threads of its own (nine on this
    machine), and a process that still holds one (a notebook, a benchmark) must not fork."""
    if sys.platform != "linux":
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:  # no /proc mounted: what Python itself knows
        return threading.active_count() == 1


def _staged(
    paths: list[Path],
    verified: Path,
    stage: Callable[[Path, Path], StagedGame | Refusal | None],
    pool: ProcessPoolExecutor | None,
    jobs: int,
) -> Iterator[StagedGame | Refusal | None]:
    """``stage`` over ``paths``, in order, each keeping its verified log in ``verified`` under its
    number in ``paths`` (two logs may share a name), in the ``pool``'s ``jobs`` processes when
    there is one, with at most :data:`IN_FLIGHT_PER_JOB` games per process submitted and not yet
    taken: results never pile up faster than they are staged, so memory and the logs waiting in
    ``verified`` stay flat whatever the number of games."""
    numbered = ((path, verified / f"{number}.jsonl") for number, path in enumerate(paths))
    if pool is None or len(paths) < 2:
        yield from (stage(path, keep) for path, keep in numbered)
        return
    waiting: deque[Future[StagedGame | Refusal | None]] = deque()
    for path, keep in numbered:
        waiting.append(pool.submit(stage, path, keep))
        if len(waiting) >= jobs * IN_FLIGHT_PER_JOB:
            break
    while waiting:
        done = waiting.popleft().result()
        following = next(numbered, None)
        if following is not None:
            waiting.append(pool.submit(stage, *following))
        yield done


#: prctl option: the signal a process gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """In a worker: be killed when ``parent`` dies (Linux; elsewhere the pool's own checks remain)."""
    if sys.platform == "linux":
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)


def _check_archived(path: Path, known: ArchivedGame, result: ArchiveResult) -> None:
    """A game already in the manifest: nothing to add if its log is unchanged, a conflict if not."""
    name = path.stem
    try:
        current = last_line_hash(path.read_bytes())
    except OSError as error:
        result.refused.append(Refusal(name, f"unreadable ({error})"))
        return
    if current == known.last_hash:
        result.already.append(name)
    else:
        result.conflicts.append(
            Refusal(
                name,
                f"already archived with last hash {known.last_hash[:12]} ({known.events} events); "
                f"the log now ends with {(current or 'nothing readable')[:12]}. The archive is "
                "append-only: archive the changed game under another name (fork) if it matters",
            )
        )


def table_glob(archive: Path, table: str) -> str:
    return str(archive / table / "**" / "*.parquet")


def has_parts(archive: Path, table: str) -> bool:
    return any((archive / table).glob("**/*.parquet"))


# ------------------------------------------------------------------ README


def write_readme(archive: Path) -> None:
    path = archive / "README.md"
    text = readme_text()
    if path.is_symlink() or not path.exists() or path.read_text() != text:
        # a temporary file renamed over it: a link planted there is replaced, never written through
        temporary = archive / ".README.md.tmp"
        temporary.unlink(missing_ok=True)
        temporary.write_text(text)
        os.replace(temporary, path)
