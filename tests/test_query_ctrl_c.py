"""Ctrl-C stops ``query`` whenever it comes: exit 130, one line, nothing left running (README, exit
codes). Each case runs the real program in a process of its own and sends it SIGINT at one moment
of its life, recognised from outside: while it loads its modules, while DuckDB opens the archive's
files, at several points of a long query, while it prints a long result, and pressed twice.

A moment is recognised by what the process has loaded (the shared libraries in
``/proc/PID/maps``: msgspec's once the program's modules load, DuckDB's once the query opens its
connection) or printed, never guessed from a delay since its start. Each run is given a generous
time to end (a loaded machine must pass): the test asserts that it ends, with 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import duckdb
import pytest

from mortecouille.replays.analytics.archive import archive_games
from mortecouille.replays.analytics.query import (
    QueryStopped,
    archive_views,
    read_only_connection,
    run_query,
    run_stoppable,
)
from tests.helpers import write_game
from tests.test_query import ENDLESS, rolls

pytestmark = pytest.mark.slow

#: how long a process may take to reach a moment, and then to end after Ctrl-C (seconds): generous,
#: for a loaded machine; a run that has not ended by then fails the test
PATIENCE = 60.0
ENDS_WITHIN = 20.0

#: a long query that reads the archive's files while it runs (its events against a long range)
READING = "SELECT count(*) FROM events e, range(1000000000) r WHERE hash(e.payload, r.range) = 0"
#: a result long enough to take a while to print
LONG_OUTPUT = "SELECT range AS n, 'a row of the long result' AS text FROM range(3000000)"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    games = tmp_path_factory.mktemp("games")
    write_game(games, "one", rolls([1, 2, 3, 6]), winner="Anne")
    write_game(games, "two", rolls([6, 6]))
    target = tmp_path_factory.mktemp("archive") / "a"
    assert archive_games(sorted(games.glob("*.jsonl")), target, "2026-03").exit_code == 0
    return target


def loaded(process: subprocess.Popen[bytes], library: str) -> bool:
    """Whether ``process`` has mapped a file whose path holds ``library``."""
    try:
        maps = Path(f"/proc/{process.pid}/maps").read_text()
    except OSError:
        return False
    return any(library in line for line in maps.splitlines())


def wait_for(process: subprocess.Popen[bytes], reached: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not reached():
        assert process.poll() is None, f"the query ended before {what}"
        assert time.monotonic() < deadline, f"the query did not reach {what}"
        time.sleep(0.002)


def modules_loading(process: subprocess.Popen[bytes]) -> None:
    wait_for(process, lambda: loaded(process, "/msgspec/"), "its modules")


def duckdb_opening(process: subprocess.Popen[bytes]) -> None:
    wait_for(process, lambda: loaded(process, "/_duckdb."), "DuckDB")


def running_for(seconds: float) -> Callable[[subprocess.Popen[bytes]], None]:
    def moment(process: subprocess.Popen[bytes]) -> None:
        duckdb_opening(process)
        time.sleep(seconds)

    return moment


def printing(process: subprocess.Popen[bytes]) -> None:
    """Once the first line of the result is out: the pipe then fills, and the process is printing."""
    assert process.stdout is not None
    assert process.stdout.readline(), "the query printed nothing"


# (what the moment is, the SQL, when SIGINT is sent, how many times)
MOMENTS: list[tuple[str, str, Callable[[subprocess.Popen[bytes]], None], int]] = [
    ("while its modules load", ENDLESS, modules_loading, 1),
    ("while DuckDB opens the archive", READING, duckdb_opening, 1),
    ("reading the archive, 0.05 s in", READING, running_for(0.05), 1),
    ("reading the archive, 0.5 s in", READING, running_for(0.5), 1),
    ("computing, 0.1 s in", ENDLESS, running_for(0.1), 1),
    ("computing, 0.3 s in", ENDLESS, running_for(0.3), 1),
    ("computing, 0.7 s in", ENDLESS, running_for(0.7), 1),
    ("computing, 1.2 s in", ENDLESS, running_for(1.2), 1),
    ("computing, 2 s in", ENDLESS, running_for(2.0), 1),
    ("fetching a long result, 0.2 s in", LONG_OUTPUT, running_for(0.2), 1),
    ("printing a long result", LONG_OUTPUT, printing, 1),
    ("computing, pressed twice", ENDLESS, running_for(0.3), 2),
]


@pytest.mark.parametrize(("moment", "sql", "when", "presses"), MOMENTS, ids=[m[0] for m in MOMENTS])
def test_ctrl_c_stops_a_query_at_any_moment_with_exit_130(
    archive: Path,
    tmp_path: Path,
    moment: str,
    sql: str,
    when: Callable[[subprocess.Popen[bytes]], None],
    presses: int,
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "mortecouille", "query", "--timeout", "0", str(archive), sql],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    try:
        when(process)
        for _ in range(presses):
            process.send_signal(signal.SIGINT)
        try:
            _, err = process.communicate(timeout=ENDS_WITHIN)
        except subprocess.TimeoutExpired:
            pytest.fail(f"Ctrl-C {moment}: the query was still running {ENDS_WITHIN:g} s later")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    errors = err.decode()
    assert process.returncode == 130, f"Ctrl-C {moment}: exit {process.returncode}\n{errors}"
    assert errors.endswith("error: query interrupted (Ctrl-C)\n"), errors
    assert "Traceback" not in errors and "Aborted" not in errors
    assert not list(scratch.iterdir())  # no throw-away database left behind


def native_threads() -> set[str]:
    """The ids of this process's native threads (DuckDB's own are not Python threads)."""
    return set(os.listdir("/proc/self/task"))


def no_thread_beyond(before: set[str], within: float = 10.0) -> bool:
    """Whether every native thread started since ``before`` has ended, waiting up to ``within``
    seconds (a thread that returned may take a moment to leave the kernel's list; not a speed check)."""
    deadline = time.monotonic() + within
    while native_threads() - before:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_ctrl_c_during_a_query_stops_its_thread_before_keyboard_interrupt_goes_on(archive: Path) -> None:
    """The library's side: KeyboardInterrupt in the waiting thread (Ctrl-C) stops the query on its
    own thread, which has ended (and DuckDB's threads with it) when KeyboardInterrupt goes on."""
    before = native_threads()
    started = threading.Event()

    def connect() -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        started.set()
        return read_only_connection(archive_views(archive), archive)

    def press_ctrl_c() -> None:
        started.wait()
        time.sleep(0.3)
        import _thread

        _thread.interrupt_main()

    presser = threading.Thread(target=press_ctrl_c)
    presser.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_stoppable(connect, ENDLESS, timeout=0)
    finally:
        presser.join()
    assert not [t for t in threading.enumerate() if t.name == "mortecouille-query"]
    assert no_thread_beyond(before), sorted(native_threads() - before)


def test_an_interrupted_query_comes_out_as_stopped_not_as_bad_sql(archive: Path) -> None:
    """An interrupt of the connection (what Ctrl-C and the time limit do) is QueryStopped, which the
    waiting side turns into KeyboardInterrupt or the time limit's refusal: never a refused statement
    (exit 2 naming SQL)."""
    with read_only_connection(archive_views(archive), archive) as connection:
        done = threading.Event()

        def press_until_done() -> None:
            while not done.wait(0.05):
                connection.interrupt()

        presser = threading.Thread(target=press_until_done)
        presser.start()
        try:
            with pytest.raises(QueryStopped):
                run_query(connection, ENDLESS)
        finally:
            done.set()
            presser.join()
