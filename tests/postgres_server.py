"""The throw-away PostgreSQL cluster of the tests: a session fixture.

The cluster itself (``initdb`` in a temporary directory as the ``postgres`` user when we are root,
``pg_ctl start`` on a free loopback port of 5500-5599) is ``tests/postgres_cluster.py``, shared
with the benchmarks. Without the server binaries (Debian's package ``postgresql``, which
``tools/system-packages.sh`` installs) the PostgreSQL tests are skipped with that reason, except in
CI (``CI`` set), where they fail: the conformance suite must run on both stores there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.postgres_cluster import (
    DATABASE,
    INSTALL_HINT,
    PostgresServer,
    missing_binaries,
    server_binaries,
    throwaway_cluster,
)

__all__ = ["DATABASE", "PostgresServer", "postgres_server", "server_binaries"]


def missing_server(reason: str) -> None:
    """Fail in CI (the suite must run on both stores there), else skip, naming what to install."""
    if os.environ.get("CI"):
        pytest.fail(f"CI needs {INSTALL_HINT}: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL server ({reason}); install {INSTALL_HINT}")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A running throw-away cluster with the test database, for the whole session."""
    problem = missing_binaries()
    if problem is not None:
        missing_server(problem)
    with throwaway_cluster() as server:
        yield server
