"""Repairing a log a crash left torn (``repair``, and the service as it starts): only through the
store's contract, for a log whose appends can be torn (a file's; a database commits an append
whole or not at all)."""

from __future__ import annotations

import os
from pathlib import Path

from mortecouille.app.games import game_log
from mortecouille.core.errors import MortecouilleError
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.contract import EventStore, GameStore
from mortecouille.events.storage.errors import AnchoredLoss, RepairPlan
from mortecouille.events.storage.file_log import GameLog

_log = get_logger("mortecouille.service")


def repairable(log_: EventStore) -> GameLog | None:
    """``log_`` as a log a crash can leave torn (its files), or None when its appends are whole or
    nothing (a database's)."""
    return log_.as_files()


def repair_plan(log_: GameLog, *, record_loss: bool) -> RepairPlan:
    """What a repair of ``log_`` would do (read only); AnchoredLoss when events its head anchor
    vouches for are gone and ``record_loss`` is not given."""
    plan = log_.repair_plan()
    if plan.lost and not record_loss:
        raise AnchoredLoss(plan)
    return plan


def repair(log_: GameLog, *, record_loss: bool) -> bytes:
    """Cut the torn tail off ``log_`` (and record a loss, if asked); the bytes removed."""
    return log_.repair(record_loss=record_loss)


def ends_torn(path: Path) -> bool:
    """Whether the file at ``path`` ends in a line without its newline (read from its end only)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"
    except OSError:
        return False


def cut_torn_tails(store: GameStore) -> list[str]:
    """Cut the torn tail a crash mid-append left on any game's log of ``store``, as ``repair``
    does, and return the games cut. Only a tail after the head anchor is cut: an append whose fsync
    never returned, so nobody was ever answered for it (a retry with its Idempotency-Key appends it
    again). A log missing lines its anchor vouches for is left alone: ``repair`` reports it."""
    cut: list[str] = []
    for name in store.names():
        try:
            log_ = repairable(game_log(store, name))
        except MortecouilleError:  # a name no game may have: not one of this service's games
            continue
        if log_ is None or not ends_torn(log_.path):
            continue
        try:
            plan = log_.repair_plan()
            if plan.lost or not plan.removed:
                continue
            removed = log_.repair()
        except Exception:  # noqa: BLE001 - a log repair refuses stays as it is, for verify to tell
            _log.warning("torn tail not cut", game=name, exc_info=True)
            continue
        _log.warning("cut a torn tail left by a crash", game=name, bytes=len(removed))
        cut.append(name)
    return cut
