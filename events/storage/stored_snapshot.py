"""A game's snapshot as a store keeps it for the app
(:class:`~mortecouille.events.storage.contract.KeepsSnapshots`):
raw bytes, in a module of its own so that the store contract and the PostgreSQL store both name it
without importing each other."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["StoredSnapshot"]


class StoredSnapshot(NamedTuple):
    """A game's snapshot as a store keeps it: the seq and hash of the log line it stands on
    (checked against the log when read), the app's format number and its encoded state."""

    seq: int
    hash: str
    format: int
    state: bytes
