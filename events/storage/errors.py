"""What a store refuses or cannot do, shared by every store (no store's module needs another's)."""

from __future__ import annotations

import re
from typing import NamedTuple

from mortecouille.events.codec import LogError
from mortecouille.events.storage.chain import Head


class Conflict(Exception):
    """The log moved on since the caller read it, or another writer holds it (exit 3)."""

    exit_code = 3

    @classmethod
    def stale(cls, game: str, expected_seq: int, next_seq: int) -> Conflict:
        """An append whose ``expected_seq`` is not the log's next seq (every store says it so)."""
        return cls(
            f"game {game!r}: expected seq {expected_seq} but the log is at "
            f"{next_seq}; someone else appended first. Nothing was written."
        )


class GameNotFound(Exception):
    exit_code = 2


class Unwritable(Exception):
    """A log's files cannot be written where they are (a bad path, a symlink in the way, no
    permission, a full disk); nothing was changed, or what was cut short was taken back (exit 2).
    ``reason``: why, in the system's words and without a path (``No space left on device``), for a
    message to someone who must not see the server's files (the service's clients)."""

    exit_code = 2

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason



class RepairPlan(NamedTuple):
    """What a repair of a log would do (see :meth:`GameLog.repair_plan`)."""

    #: the bytes cut off the end: the torn line and the rest of its unfinished append
    removed: bytes
    #: the complete lines that stay
    kept: int
    #: the head anchor, if the log has one
    anchored: Head | None

    @property
    def lost(self) -> int:
        """How many events the head anchor vouched for are gone (0 after an unfinished append)."""
        return max(0, self.anchored.seq + 1 - self.kept) if self.anchored is not None else 0


class AnchoredLoss(LogError):
    """Complete lines the head anchor vouched for are missing: the log was cut, not torn by a crash
    (exit 4). ``repair`` refuses to hide it; ``repair --record-loss`` records it as an event."""

    def __init__(self, plan: RepairPlan) -> None:
        assert plan.anchored is not None
        super().__init__(
            f"{plan.lost} anchored event(s) are gone: the head anchor vouches for seq "
            f"{plan.anchored.seq} but the complete lines end at seq {plan.kept - 1}. Repair will not "
            "hide it; `mortecouille repair GAME --record-loss` cuts the torn line and records the "
            "loss as an event in the log",
            line=plan.kept + 1,
            seq=plan.kept,
        )
        self.plan = plan



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
