"""``query``: SQL over an archive (or over raw logs) on a connection that cannot change anything.

Read-only, enforced twice, both by DuckDB itself:

1. **The engine.** The views live in a throw-away DuckDB database file that is closed and reopened
   with ``read_only=True`` (no CREATE, INSERT, DELETE, DROP, ALTER in it; no in-memory database can
   be attached). File access is then cut down to the archive directory
   (``allowed_directories`` + ``enable_external_access = false``) and the configuration is locked
   (``lock_configuration``), so no query can read elsewhere, install or load an extension, or turn
   the settings back.
2. **The parser.** DuckDB allows ``COPY ... TO`` a file inside an allowed directory even on a
   read-only database, which would let a query write into the archive. So every statement is first
   split and typed by DuckDB's own parser (the query connection's ``extract_statements``) and
   only reading types run: SELECT (which includes WITH, FROM-first, VALUES, DESCRIBE, SHOW,
   SUMMARIZE), EXPLAIN of a SELECT (``EXPLAIN ANALYZE`` executes its statement) and the PRAGMAs
   of :data:`READ_PRAGMAS` (``PRAGMA import_database`` runs the SQL files of a directory: a
   ``schema.sql`` planted in an archive wrote through it).

Bounded: a time limit and a memory limit, both overridable; nothing spills to disk.

Stoppable: the connection is opened and the SQL runs on a thread of their own while the caller's
thread waits (:func:`run_stoppable`), free to stop them at any moment. DuckDB looks for a Ctrl-C
only at some points of a query run on the main thread (a long scan may pass none: Ctrl-C then
waited for the query's end), and drops an interrupt that comes between two statements: so Ctrl-C or
the time limit pulls a :class:`QueryStop`, which interrupts the connection again until the query
has ended and lets no further statement or batch of rows start.

``query --logs DIR`` may read the directory's ``*.jsonl`` logs only (never a secret ``.seed`` beside
them). The throw-away database is deleted as soon as it is opened, before
any user SQL runs, so a killed query leaves no temporary directory.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from mortecouille.core.errors import BadInput
from mortecouille.core.limits import shown
from mortecouille.replays.analytics.archive import has_parts, sql_string, table_glob
from mortecouille.replays.analytics.schema import PARTITION_COLUMNS, TABLES

if TYPE_CHECKING:  # duckdb is imported lazily, inside the functions that need it
    import duckdb


class QueryRefused(BadInput):
    """A statement that could change something, or SQL DuckDB rejects (exit 2)."""

    def __init__(self, key: str, /, **params: object) -> None:
        super().__init__("sql", key, rule=None, **params)


class QueryLimits(msgspec.Struct, frozen=True):
    """How long (seconds; 0: no limit) and how much memory (DuckDB's size syntax) a query may use."""

    timeout: float = 300.0
    memory: str = "2GB"


DEFAULT_LIMITS = QueryLimits()

MEMORY_SIZE = re.compile(r"^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$", re.IGNORECASE)

#: The PRAGMAs that only read (every other one is refused): a catalogue or a version.
READ_PRAGMAS = frozenset(
    {
        "table_info",
        "show",
        "show_tables",
        "show_tables_expanded",
        "show_databases",
        "database_list",
        "database_size",
        "storage_info",
        "functions",
        "collations",
        "version",
        "platform",
        "user_agent",
    }
)

_PRAGMA = re.compile(r"^\s*pragma\s+(?P<name>[a-z_][a-z0-9_]*)\s*(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)


class QueryResult(msgspec.Struct, frozen=True):
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]


_EXPLAIN = re.compile(r"^\s*explain\s+(?:analy[sz]e\s+)?(?P<inner>.*)$", re.IGNORECASE | re.DOTALL)


def check_read_only(sql: str, parser: duckdb.DuckDBPyConnection) -> list[str]:
    """The statements of ``sql`` if every one only reads; else QueryRefused naming the first that
    does not. Uses DuckDB's parser, so comments, strings and ``;`` inside them are handled: that of
    ``parser``, the connection the statements will run on, never the module's default connection
    (``duckdb.extract_statements``), which would live, with its native threads, as long as the
    process (beside which ``archive`` could no longer fork its workers)."""
    import duckdb

    try:
        statements = parser.extract_statements(sql)
    except duckdb.Error as error:
        raise QueryRefused("{problem}", problem=str(error)) from None
    if not statements:
        raise QueryRefused("no statement to run")
    allowed = []
    for statement in statements:
        kind = statement.type
        text = statement.query.strip()
        if kind == duckdb.StatementType.EXPLAIN:
            _check_explain(text, parser)
        elif kind == duckdb.StatementType.PRAGMA:
            _check_pragma(text)
        elif kind != duckdb.StatementType.SELECT:
            raise QueryRefused(
                "{kind} statements are refused: the archive is read-only "
                "(SELECT, WITH, EXPLAIN, DESCRIBE, SHOW, PRAGMA only): {text!r}",
                kind=kind.name,
                text=text[:60],
            )
        allowed.append(statement.query)
    return allowed


def _check_pragma(text: str) -> None:
    """Only the PRAGMAs that read (IMPORT DATABASE is parsed as a PRAGMA too, and refused here)."""
    match = _PRAGMA.match(text)
    name = match.group("name").lower() if match is not None else None
    if match is None or name not in READ_PRAGMAS or match.group("rest").lstrip().startswith("="):
        raise QueryRefused(
            "this PRAGMA is refused: the archive is read-only (allowed: {allowed}): {text!r}",
            allowed=", ".join(sorted(READ_PRAGMAS)),
            text=text[:60],
        )


def _check_explain(text: str, parser: duckdb.DuckDBPyConnection) -> None:
    """EXPLAIN of one SELECT only: ``EXPLAIN ANALYZE`` runs its statement, whatever it is."""
    import duckdb

    match = _EXPLAIN.match(text)
    if match is None:
        raise QueryRefused("only EXPLAIN of a SELECT is allowed: {text!r}", text=text[:60])
    if "analy" in text[: match.start("inner")].lower():
        raise QueryRefused("EXPLAIN ANALYZE runs its statement: use EXPLAIN without ANALYZE")
    try:
        inner = parser.extract_statements(match.group("inner"))
    except duckdb.Error as error:
        raise QueryRefused("{problem}", problem=str(error)) from None
    if len(inner) != 1 or inner[0].type != duckdb.StatementType.SELECT:
        raise QueryRefused("only EXPLAIN of a SELECT is allowed: {text!r}", text=text[:60])


def empty_view(columns: Sequence[tuple[str, str]]) -> str:
    """A SELECT with the given columns and no rows: a table of a young archive with no file yet."""
    casts = ", ".join(f"CAST(NULL AS {kind}) AS {quote(name)}" for name, kind in columns)
    return f"SELECT {casts} WHERE false"


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def archive_views(archive: Path) -> dict[str, str]:
    """The SELECT behind each table's view: its Parquet files with the hive partition columns."""
    hive_types = "{" + ", ".join(f"{sql_string(c)}: 'VARCHAR'" for c in PARTITION_COLUMNS) + "}"
    views = {}
    for table, columns in TABLES.items():
        if has_parts(archive, table):
            views[table] = (
                f"SELECT * FROM read_parquet({sql_string(table_glob(archive, table))}, "
                f"hive_partitioning = true, hive_types = {hive_types}, union_by_name = true)"
            )
        else:
            views[table] = empty_view([*columns, *((c, "VARCHAR") for c in PARTITION_COLUMNS)])
    return views


def log_views(logs: Sequence[Path]) -> dict[str, str]:
    """Views straight over the un-archived logs ``logs`` with DuckDB's JSON reader (no verification).

    ``events`` has the archive's columns (the game is the file name); ``dice`` and ``shots`` are
    extracted from it, so the dice and gunnery questions can be asked before archiving.
    """
    source = "[" + ", ".join(sql_string(str(path)) for path in logs) + "]"
    events = (
        "SELECT regexp_extract(filename, '([^/]+)\\.jsonl$', 1) AS game, "
        "CAST(json->>'seq' AS BIGINT) AS seq, CAST(json->>'turn' AS INTEGER) AS turn, "
        "json->>'type' AS type, "
        "CASE WHEN json_type(json, 'ship') = 'VARCHAR' THEN json->>'ship' END AS ship, "
        "CAST(json AS VARCHAR) AS payload "
        f"FROM read_ndjson_objects({source}, filename = true)"
    )
    dice = (
        "SELECT game, seq, turn, json->>'phase' AS phase, ship, json->>'purpose' AS purpose, "
        "CAST(json->>'index' AS INTEGER) AS \"index\", CAST(json->>'sides' AS INTEGER) AS sides, "
        "CAST(json->>'value' AS INTEGER) AS value, json->>'source' AS source "
        "FROM (SELECT *, CAST(payload AS JSON) AS json FROM events) WHERE type = 'die-rolled'"
    )
    shots = (
        "SELECT game, seq, turn, ship, json->>'weapon' AS weapon, json->>'target' AS target, "
        "CAST(json->>'distance' AS INTEGER) AS distance, CAST(json->>'cannons' AS INTEGER) AS cannons, "
        "json->>'mode' AS mode, CAST(json->'dice' AS INTEGER[]) AS dice, "
        "CAST(json->>'bonus' AS INTEGER) AS bonus, json->>'needed' AS needed, "
        "TRY_CAST(json->>'needed' AS INTEGER) AS needed_total, CAST(json->>'hit' AS BOOLEAN) AS hit, "
        "CAST(json->>'damage' AS INTEGER) AS damage, coalesce(CAST(json->>'flaming' AS BOOLEAN), false) "
        "AS flaming FROM (SELECT *, CAST(payload AS JSON) AS json FROM events) WHERE type = 'shot-fired'"
    )
    return {"events": events, "dice": dice, "shots": shots}


SCRATCH_PREFIX = "mortecouille-query-"


@contextmanager
def read_only_connection(
    views: dict[str, str],
    readable: Path,
    files: Sequence[Path] = (),
    limits: QueryLimits = DEFAULT_LIMITS,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB connection with ``views``, read-only, able to read files under ``readable`` only, or
    only ``files`` when given, within ``limits.memory`` (``limits.timeout`` is :func:`run_stoppable`'s)."""
    import duckdb

    if not MEMORY_SIZE.match(limits.memory):
        raise BadInput("memory_limit", "{memory!r} is not a size such as 500MB or 2GB", memory=limits.memory)
    _remove_stale_scratch()
    scratch = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
    try:
        database = str(Path(scratch) / "views.duckdb")
        builder = duckdb.connect(database)
        try:
            for name, select in views.items():
                builder.execute(f"CREATE VIEW {quote(name)} AS {select}")
        finally:
            builder.close()
        connection = duckdb.connect(database, read_only=True)
    finally:
        # The open connection keeps reading the unlinked file: nothing is left for a kill to leak.
        shutil.rmtree(scratch, ignore_errors=True)
    try:
        if files:
            paths = ", ".join(sql_string(str(path.resolve())) for path in files)
            connection.execute(f"SET allowed_paths = [{paths}]")
        else:
            directory = str(readable.resolve()) + "/"
            connection.execute(f"SET allowed_directories = [{sql_string(directory)}]")
        connection.execute(f"SET memory_limit = {sql_string(limits.memory)}")
        connection.execute("SET temp_directory = ''")  # never spill: the memory limit is the limit
        connection.execute("SET enable_external_access = false")
        connection.execute("SET lock_configuration = true")
        yield connection
    finally:
        connection.close()


def _remove_stale_scratch() -> None:
    """Delete the scratch directories of query processes that died before removing theirs. Only
    folders named after their process (this version's) are judged: a folder of another version
    may belong to a query running now."""
    for scratch in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*"):
        owner = scratch.name.removeprefix(SCRATCH_PREFIX).split("-", 1)[0]
        with contextlib.suppress(OSError):
            if not owner.isdigit() or scratch.stat().st_uid != os.getuid() or _running(int(owner)):
                continue
            shutil.rmtree(scratch)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class QueryStopped(Exception):
    """The query was stopped (its :class:`QueryStop` pulled, or its connection interrupted)."""


class QueryStop:
    """A query's off switch, shared by the thread running it and the thread waiting for it.

    Once pulled (Ctrl-C, the time limit) the query starts no further statement or batch of rows,
    and :meth:`interrupt` interrupts its connection. DuckDB drops an interrupt that comes before a
    statement starts, so the waiting side interrupts again and again until the query has ended."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connection: duckdb.DuckDBPyConnection | None = None
        self._began: float | None = None
        self.pulled = threading.Event()
        #: pulled by the time limit (a Ctrl-C, by contrast, is KeyboardInterrupt)
        self.expired = False

    def attach(self, connection: duckdb.DuckDBPyConnection) -> None:
        """``connection`` runs the user's SQL from now on (the time limit counts from here)."""
        with self._lock:
            self._connection = connection
            self._began = time.monotonic()
        if self.pulled.is_set():
            raise QueryStopped

    def detach(self) -> None:
        with self._lock:
            self._connection = None

    def running_for(self) -> float:
        """Seconds since the user's SQL began (0 before)."""
        began = self._began
        return 0.0 if began is None else time.monotonic() - began

    def pull(self, *, expired: bool = False) -> None:
        if not self.pulled.is_set():
            self.expired = expired
            self.pulled.set()
        self.interrupt()

    def interrupt(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.interrupt()

    def check(self) -> None:
        if self.pulled.is_set():
            raise QueryStopped


#: rows converted to Python between two looks at the off switch (DuckDB's interrupt does not reach
#: the conversion of rows already computed)
FETCH_BATCH = 50_000
#: how often the waiting thread looks at the clock and interrupts a query being stopped (seconds)
_POLL = 0.05


def run_query(connection: duckdb.DuckDBPyConnection, sql: str, stop: QueryStop | None = None) -> QueryResult:
    """Run ``sql`` (one or more reading statements) on this thread and return the last statement's
    result; QueryStopped once ``stop`` is pulled or the connection is interrupted."""
    import duckdb

    stop = stop if stop is not None else QueryStop()
    statements = check_read_only(sql, connection)
    try:
        for statement in statements[:-1]:
            stop.check()
            connection.execute(statement)
        stop.check()
        cursor = connection.execute(statements[-1])
        columns = tuple(column[0] for column in cursor.description or ())
        rows: list[tuple[Any, ...]] = []
        while batch := cursor.fetchmany(FETCH_BATCH):
            stop.check()
            rows.extend(batch)
    except duckdb.InterruptException:
        raise QueryStopped from None
    except duckdb.OutOfMemoryException as error:
        raise BadInput(
            "memory_limit",
            "the query needs more memory than allowed; raise --memory-limit ({error})",
            error=str(error),
        ) from None
    except duckdb.Error as error:
        raise QueryRefused("{problem}", problem=str(error).strip()) from None
    return QueryResult(columns=columns, rows=rows)


def run_stoppable(
    connect: Callable[[], AbstractContextManager[duckdb.DuckDBPyConnection]],
    sql: str,
    timeout: float = DEFAULT_LIMITS.timeout,
) -> QueryResult:
    """Open a connection with ``connect`` and :func:`run_query` ``sql`` on it, both on a thread of
    their own, while this thread waits.

    This thread stays free to stop them: a KeyboardInterrupt here (Ctrl-C) or ``timeout`` seconds
    of SQL (0: no limit) pulls the query's :class:`QueryStop`, and that thread is waited for
    (interrupting it until it ends) before KeyboardInterrupt, or BadInput ``--timeout``, goes on.
    No thread or DuckDB work is left behind either way."""
    stop = QueryStop()
    outcome: list[QueryResult] = []
    failure: list[BaseException] = []
    # waited for rather than the thread itself: a KeyboardInterrupt inside Thread.join can leave
    # the thread marked as ended while it still runs (Python 3.11), and the interpreter would then
    # leave with DuckDB in the middle of a query
    ended = threading.Event()

    def work() -> None:
        try:
            with connect() as connection:
                try:
                    stop.attach(connection)
                    outcome.append(run_query(connection, sql, stop))
                finally:
                    stop.detach()
        except BaseException as error:
            failure.append(error)
        finally:
            ended.set()

    worker = threading.Thread(target=work, name="mortecouille-query", daemon=True)
    started = False
    try:
        # the worker, and DuckDB's threads it starts, inherit a mask without SIGINT: a Ctrl-C
        # always comes to this thread, waking it at once
        unmasked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            worker.start()
            started = True
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, unmasked)
        while not ended.wait(_POLL):
            if timeout > 0 and stop.running_for() > timeout:
                stop.pull(expired=True)
            elif stop.pulled.is_set():
                stop.interrupt()
    except BaseException:
        # Ctrl-C while waiting (or anything else raised here): the query ends before this goes on
        stop.pull()
        if started:
            while not ended.wait(_POLL):
                stop.interrupt()
            worker.join()
        raise
    worker.join()
    if failure:
        if isinstance(failure[0], QueryStopped):
            if stop.expired:
                raise BadInput(
                    "timeout",
                    "the query ran longer than {timeout:g} s and was stopped; raise --timeout",
                    timeout=timeout,
                )
            raise KeyboardInterrupt  # interrupted from outside, as DuckDB does on Ctrl-C
        raise failure[0]
    return outcome[0]


def query_archive(archive: Path, sql: str, limits: QueryLimits = DEFAULT_LIMITS) -> QueryResult:
    """SQL over an archive's tables (:func:`run_stoppable`: a KeyboardInterrupt stops it)."""
    if not archive.is_dir():
        raise BadInput("archive", "{archive} is not an archive directory", archive=archive)
    return run_stoppable(
        lambda: read_only_connection(archive_views(archive), archive, limits=limits), sql, limits.timeout
    )


def query_logs(logs: Path, sql: str, limits: QueryLimits = DEFAULT_LIMITS) -> QueryResult:
    """SQL over the ``*.jsonl`` logs of ``logs``: those files are all it may read (not the seeds)."""
    if not logs.is_dir():
        raise BadInput("logs", "{logs} is not a directory", logs=logs)
    files = sorted(path for path in logs.glob("*.jsonl") if path.is_file())
    if not files:
        raise BadInput("logs", "{logs} holds no *.jsonl game log", logs=logs)
    return run_stoppable(
        lambda: read_only_connection(log_views(files), logs, files=files, limits=limits), sql, limits.timeout
    )


# ------------------------------------------------------------------ output


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return shown(str(value))  # a name or ruling text from a log: one line, no terminal escapes


def format_table(result: QueryResult) -> str:
    """Aligned plain-text columns; numbers right-aligned."""
    cells = [[_cell(v) for v in row] for row in result.rows]
    widths = [len(c) for c in result.columns]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    numeric = [
        all(isinstance(row[i], int | float) or row[i] is None for row in result.rows) and bool(result.rows)
        for i in range(len(result.columns))
    ]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if right else v.ljust(w) for v, w, right in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [line(result.columns), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in cells]
    out.append(f"({len(result.rows)} row{'s' if len(result.rows) != 1 else ''})")
    return "\n".join(out)


def format_csv(result: QueryResult) -> str:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(result.columns)
    writer.writerows([_csv_cell(v) for v in row] for row in result.rows)
    return buffer.getvalue().rstrip("\n")


def _csv_cell(value: Any) -> Any:
    if isinstance(value, list | tuple | dict):
        return msgspec.json.encode(value).decode()
    return value


def format_json(result: QueryResult) -> str:
    """One JSON object per row, keyed by column (dates, decimals and the like as strings)."""
    records = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
    return "\n".join(msgspec.json.encode(record, enc_hook=str).decode() for record in records)
