"""Witness files: the heads a page saw of a game's log, kept on its device and exported, checked
against the log (docs/service.md, "Phones as witnesses").

A page keeps each head it has seen (a seq and the full hash of the line there) and checks that
each new batch it is served extends them; it can export them as ``GAME-witness.json``::

    {"version": 1, "game": "friday",
     "heads": [{"seq": 41, "hash": "3fa9c2..."}, ...],
     "mismatches": [{"seq": 41, "kind": "rewritten", "seen": "3fa9c2...", "served": "77ab01...",
                     "at": "2026-12-03T20:14:05Z"}, ...]}

``verify GAME --witness FILE`` checks that the log holds each head at its seq: the hash of a line
covers every line before it, so a log that passes through the last head witnessed holds all the
history the page saw, unchanged; one that does not was rewritten at or before that seq, or cut
short before it. ``mismatches`` are what the page noticed as it was served (for people to read);
only the heads are checked against the log.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

#: The witness file's format: a verifier refuses another.
WITNESS_VERSION: Final = 1

_HEX64 = re.compile(r"[0-9a-f]{64}")


class WitnessedHead(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A head a page saw: the hash of the line at ``seq``."""

    seq: int
    hash: str


class Witness(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A witness file as a page exports it (see the module docstring)."""

    version: int
    game: str
    heads: list[WitnessedHead]
    mismatches: list[dict[str, Any]] = []


class WitnessFileError(ValueError):
    """A file that is not a witness file, or one holding no head."""


class WitnessCheck(msgspec.Struct, frozen=True):
    """What the log says of one witness file: ``ok``, the first seq at fault, and the detail."""

    ok: bool
    seq: int | None
    detail: str


def parse_witness(data: bytes) -> Witness:
    """The witness file ``data``; WitnessFileError naming what is wrong when it is not one, or
    holds no head (which would prove nothing: most likely the wrong file)."""
    try:
        witness = msgspec.json.decode(data, type=Witness)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as error:
        raise WitnessFileError(f"not a witness file ({error})") from None
    if witness.version != WITNESS_VERSION:
        raise WitnessFileError(f"version {witness.version} is not a witness file version this engine reads")
    if not witness.heads:
        raise WitnessFileError("it holds no head: nothing to check against the log")
    for index, head in enumerate(witness.heads):
        if head.seq < 0 or not _HEX64.fullmatch(head.hash):
            raise WitnessFileError(
                f"heads[{index}]: a head is a seq (0 or more) and a line's hash (64 lowercase hex digits)"
            )
    return witness


def check_witness(lines: Sequence[Mapping[str, Any]], witness: Witness, name: str) -> WitnessCheck:
    """Whether the log (its ``lines`` as JSON objects) holds every head of ``witness`` (the file
    ``name``): named at the first head it does not hold, the log cut short or rewritten there."""
    heads = sorted(witness.heads, key=lambda head: head.seq)
    failed: list[tuple[WitnessedHead, str]] = []
    for head in heads:
        if head.seq >= len(lines):
            failed.append((head, f"the log ends at seq {len(lines) - 1}, before it (it was cut short)"))
        elif lines[head.seq].get("hash") != head.hash:
            actual = str(lines[head.seq].get("hash", ""))
            failed.append((head, f"the log has {actual[:16]}… there (rewritten at or before seq {head.seq})"))
    noted = _mismatches(witness)
    span = f"{len(heads)} head(s) witnessed, seq {heads[0].seq} to {heads[-1].seq}"
    if not failed:
        return WitnessCheck(True, None, f"{name}: {span}: the log passes through each{noted}")
    first, why = failed[0]
    detail = (
        f"{name}: at seq {first.seq} the page saw {first.hash[:16]}…, {why}; {len(failed)} of "
        f"{span} fail{noted}"
    )
    return WitnessCheck(False, first.seq, detail)


def _mismatches(witness: Witness) -> str:
    """What the page noted as it was served, said in a few words (nothing when it noted none)."""
    if not witness.mismatches:
        return ""
    seqs = sorted({entry["seq"] for entry in witness.mismatches if isinstance(entry.get("seq"), int)})
    where = f" (at seq {', '.join(map(str, seqs[:5]))}{'…' if len(seqs) > 5 else ''})" if seqs else ""
    return f"; the page noted {len(witness.mismatches)} mismatch(es) as it was served{where}"
