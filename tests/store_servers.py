"""``mortecouille --store URL serve`` as a subprocess: the tests' ``ServerProcess`` on a store
named by URL (``file:DIR`` or ``postgresql://...``) instead of a games directory, for the
tournament test (several processes on one PostgreSQL) and ``bench/bench_tournament.py``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from tests.web_server import HOST, ServerProcess


class StoreServer(ServerProcess):
    """``mortecouille --store STORE serve --host 127.0.0.1 --port P``; ``work`` holds its output
    (``NAME.out``) and the folder ``ServerProcess`` makes (``NAME``, unused by a database store)."""

    def __init__(
        self, store: str, work: Path, name: str, ports: Sequence[int] | None, *, workers: int = 1
    ) -> None:
        super().__init__(work / name, ports=ports, output=work / f"{name}.out")
        self.store = store
        self.workers = workers

    def command(self) -> list[str]:
        workers = ["--workers", str(self.workers)] if self.workers != 1 else []
        return [
            sys.executable,
            "-m",
            "mortecouille",
            "--store",
            self.store,
            "serve",
            "--host",
            HOST,
            "--port",
            str(self.port),
            *workers,
        ]
