"""What can go wrong opening a store of games, shared by every store (and nothing else, so the
PostgreSQL store need not import the module that opens it: :mod:`mortecouille.events.stores`)."""

from __future__ import annotations

import re


class StoreError(Exception):
    """A store that cannot be opened as named: an unknown URL, a missing driver (exit 2)."""

    exit_code = 2


class StoreUnavailable(StoreError):
    """The store's server could not be reached or dropped the connection (exit 2). During an
    append the outcome is unknown: read the game before retrying."""


def redacted_url(url: str) -> str:
    """``url`` without its password, for messages and listings.

    >>> redacted_url("postgresql://anne:s3cret@db.example:5432/club")
    'postgresql://anne:***@db.example:5432/club'
    """
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", url)
