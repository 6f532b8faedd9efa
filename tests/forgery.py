"""Reading a log's lines and forging them as a careful forger would.

A forger edits a log and then makes it look honest again: every ``prev`` and ``hash`` recomputed
(the chain is valid) and the head anchor rewritten, so that only re-derivation, the audit or the
dice check can tell. The line-level work is ``rechain_lines`` and ``anchor`` of
``tests/golden/make_golden.py`` (which writes the golden logs with them); the helpers here apply
them to a log on disk.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from mortecouille.core.game import evolve
from mortecouille.core.state import EMPTY, state_hash
from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.codec import ENVELOPE_EXTRAS, canonical, decode_line, stamp
from tests.golden.make_golden import anchor, rechain_lines

__all__ = [
    "anchor",
    "chained_lines",
    "forge",
    "forge_with_turn_hashes",
    "log_bodies",
    "rechain_lines",
    "write_forged_events",
    "write_rechained",
]


def log_bodies(path: Path) -> list[dict[str, Any]]:
    """Every line of the log at ``path`` as a plain JSON object, in order."""
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def write_rechained(path: Path, bodies: list[dict[str, Any]]) -> None:
    """Write ``bodies`` as the log at ``path``, its chain recomputed and its head anchor rewritten."""
    path.write_bytes(rechain_lines(bodies))
    anchor(path)


def forge(path: Path, edit: Mapping[int, Mapping[str, object]]) -> None:
    """Edit fields of the lines named by seq (``{seq: {field: value}}``), then re-chain the log
    and rewrite its head anchor: only re-derivation (or the state hashes) can tell."""
    bodies = log_bodies(path)
    for body in bodies:
        body.update(edit.get(body["seq"], {}))
    write_rechained(path, bodies)


def forge_with_turn_hashes(path: Path, edit: Callable[[list[dict[str, Any]]], None]) -> None:
    """Let ``edit`` change the log's lines in place, recompute every turn-end state hash from the
    edited events, then re-chain the log and rewrite its head anchor: only re-deriving the
    outcomes from the inputs can tell."""
    bodies = log_bodies(path)
    edit(bodies)
    state = EMPTY
    for body in bodies:
        if body["type"] == "turn-ended":
            body["state_hash"] = state_hash(state)
        state = evolve(state, decode_line(canonical({k: v for k, v in body.items() if k != "hash"}), 0))
    write_rechained(path, bodies)


def chained_lines(events: Iterable[Event], extras: Sequence[Mapping[str, Any]] = ()) -> bytes:
    """``events`` stamped as the store stamps them (seq from 0, a valid chain), one line each;
    ``extras``: the envelope fields (``idem``, ``nonce``) of the line at each seq, if any."""
    prev, lines = GENESIS_HASH, []
    for seq, event in enumerate(events):
        stamped, line = stamp(event, seq, prev, extras[seq] if seq < len(extras) else None)
        prev = stamped.hash
        lines.append(line + b"\n")
    return b"".join(lines)


def _unplaced(event: Event) -> Event:
    """``event`` without its place in the chain, to compare events wherever they stand."""
    return msgspec.structs.replace(event, seq=-1, prev="", hash="")


def write_forged_events(path: Path, events: Iterable[Event]) -> None:
    """Write typed ``events`` as the log at ``path`` with a valid chain and head anchor, as a
    careful forger who edits events rather than lines would: an event left as it was at its seq
    keeps its line's envelope fields (a secret batch's ``nonce``, an ``idem``), so a faithful copy
    is byte for byte the log it copies; an edited or moved one is written without them."""
    events = list(events)
    kept: list[Mapping[str, Any]] = []
    if path.exists():
        for seq, line in enumerate(path.read_bytes().splitlines()):
            body = json.loads(line)
            same = seq < len(events) and _unplaced(decode_line(line, seq + 1)) == _unplaced(events[seq])
            kept.append({key: body[key] for key in ENVELOPE_EXTRAS if key in body} if same else {})
    path.write_bytes(chained_lines(events, kept))
    anchor(path)
