"""A PostgreSQL store nobody answers at (a typo in ``--store``, a server not started).

The referee gets one line saying why (the host that does not resolve, the connection refused),
exit 2, and not the connection pool's own warnings, one per retry, on stderr beforehand.
"""

from __future__ import annotations

import socket

import pytest

from mortecouille.events.storage.errors import StoreUnavailable

pytest.importorskip("psycopg_pool")

from mortecouille.events.storage.postgres import PostgresStore  # noqa: E402


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_store_is_refused_saying_why_without_the_pools_retry_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"postgresql://postgres@127.0.0.1:{_closed_port()}/none"
    with pytest.raises(StoreUnavailable) as refused:
        PostgresStore(url, timeout=1.0)
    message = str(refused.value)
    assert "cannot reach the PostgreSQL store" in message and "refused" in message.lower()
    assert "\n" not in message
    assert not [record for record in caplog.records if record.name.startswith("psycopg")]


def test_a_host_that_does_not_resolve_is_named_in_the_one_refusal(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(StoreUnavailable) as refused:
        PostgresStore("postgresql://postgres@no-such-host.invalid/none", timeout=1.0)
    message = str(refused.value)
    assert "no-such-host.invalid" in message.split(": ", 1)[1] and "error connecting in" not in message
    assert not [record for record in caplog.records if record.name.startswith("psycopg")]
