"""A throw-away PostgreSQL cluster, for the tests and the benchmarks.

``initdb`` in a temporary directory, ``pg_ctl start`` on a free loopback port of 5500-5599 with
its unix socket in that directory, one database; stopped (``pg_ctl stop -m fast``) and removed
after the session. ``initdb`` refuses to run as root: as root the cluster belongs to the
``postgres`` user (Debian's package creates it) and every server command runs as that user.

No pytest here (``bench/bench_tournament.py`` starts its cluster with :func:`throwaway_cluster`
too); the tests' session fixture is in ``tests/postgres_server.py``.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PORTS = range(5500, 5600)
DATABASE = "mortecouille_test"
INSTALL_HINT = (
    "the PostgreSQL server binaries (Debian's package postgresql; tools/system-packages.sh installs it)"
)


#: Where Debian's server packages put each major version's binaries (not on the PATH there). A
#: machine without them skips these tests (or fails them in CI): that is the point of the check.
DEBIAN_SERVER_BINARIES = "/usr/lib/postgresql/*/bin/initdb"


def server_binaries() -> Path | None:
    """The folder of the server's binaries (initdb, pg_ctl): ``$PG_BIN`` if set, else the newest
    Debian version, else the PATH's; None if there is none."""
    if os.environ.get("PG_BIN"):
        named = Path(os.environ["PG_BIN"])
        return named if (named / "initdb").is_file() and (named / "pg_ctl").is_file() else None
    candidates = sorted(
        (Path(found) for found in glob.glob(DEBIAN_SERVER_BINARIES)),
        key=lambda path: int(path.parent.parent.name) if path.parent.parent.name.isdigit() else 0,
    )
    if candidates:
        return candidates[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def free_port(avoid: int | None = None) -> int:
    """A loopback port of :data:`PORTS` nobody listens on, tried from a random start (other
    sessions on this machine start clusters in the same range)."""
    start = int.from_bytes(os.urandom(2), "big") % len(PORTS)
    for port in [*PORTS[start:], *PORTS[:start]]:
        if port == avoid:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free loopback port in {PORTS.start}-{PORTS.stop - 1} for a PostgreSQL cluster")


class PostgresServer:
    """One cluster in ``root`` (data, socket, log), run by the ``postgres`` user when we are root."""

    def __init__(self, binaries: Path, root: Path) -> None:
        self.binaries = binaries
        self.root = root
        self.data = root / "data"
        self.socket_dir = root / "socket"
        self.logfile = root / "server.log"
        self.port = free_port()
        self.as_root = os.geteuid() == 0

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{DATABASE}"

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_root else []
        result = subprocess.run([*prefix, *command], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            log = self.logfile.read_text(errors="replace")[-2000:] if self.logfile.exists() else ""
            raise RuntimeError(
                f"{' '.join(command)} failed ({result.returncode}): {result.stderr.strip()}\n{log}"
            )

    def initialise(self) -> None:
        self.socket_dir.mkdir()
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(self.socket_dir, "postgres", "postgres")
        self._run(
            str(self.binaries / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale",
            "C",
        )

    def start(self, attempts: int = 5) -> None:
        """Start the server; on another free port if its port was taken between the check and the
        start (by another session's cluster), at most ``attempts`` times."""
        for attempt in range(1, attempts + 1):
            try:
                self._start()
                return
            except RuntimeError as error:
                if attempt == attempts or "already in use" not in str(error):
                    raise
                self.port = free_port(avoid=self.port)

    def _start(self) -> None:
        options = f"-p {self.port} -k {self.socket_dir} -c listen_addresses=127.0.0.1 -c max_connections=200"
        self._run(
            str(self.binaries / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.logfile),
            "-o",
            options,
            "-w",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def crash_restart(self) -> None:
        """Stop as a crash would (``-m immediate``: no checkpoint, recovery from the WAL), start again."""
        self.stop("immediate")
        self.start()

    def create_database(self) -> None:
        self._run(
            str(self.binaries / "createdb"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            DATABASE,
        )


class MissingServer(Exception):
    """No PostgreSQL server can be started here (the message says what to install)."""


def missing_binaries() -> str | None:
    """Why no cluster can be started here (what is missing), or None if one can."""
    if server_binaries() is None:
        return "initdb and pg_ctl not found"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root needs runuser to start the server as the postgres user"
    return None


@contextmanager
def throwaway_cluster() -> Iterator[PostgresServer]:
    """A running throw-away cluster with its database, stopped and removed afterwards;
    :class:`MissingServer` (naming what is missing) if none can be started here."""
    problem = missing_binaries()
    binaries = server_binaries()
    if problem is not None or binaries is None:
        raise MissingServer(f"no PostgreSQL server ({problem}); install {INSTALL_HINT}")
    root = Path(tempfile.mkdtemp(prefix="mortecouille-pg-"))
    server = PostgresServer(binaries, root)
    started = False
    try:
        server.initialise()
        server.start()
        started = True
        server.create_database()
        yield server
    finally:
        if started:
            try:
                server.stop("fast")
            except RuntimeError:
                server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)
