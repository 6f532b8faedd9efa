"""The log line format: canonical JSON, the hash chain, typed decoding and upcasting.

A line is the canonical encoding (compact JSON, keys sorted, UTF-8) of the
event's fields plus ``type``, ``seq``, ``prev`` and ``hash``, where ``hash`` is
the SHA-256 of the canonical encoding of the same object *without* ``hash``.
Anybody can re-check a log with a JSON library and SHA-256; no project code is
needed.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Union

import msgspec

from mortecouille.events.base import Event
from mortecouille.events.schema import CURRENT_VERSIONS, EVENT_CLASSES, EVENT_TYPES, UPCASTERS, event_tag
from mortecouille.events.secrecy import SECRET_TYPES


class LogError(Exception):
    """A log that cannot be trusted as it is (exit 4)."""

    exit_code = 4

    def __init__(self, message: str, line: int | None = None, seq: int | None = None) -> None:
        where = f"line {line}: " if line is not None else ""
        super().__init__(where + message)
        self.line = line
        self.seq = seq


class CorruptLine(LogError):
    """A complete line that does not decode to a valid event."""


class TornTail(LogError):
    """The last line has no newline: an append was cut short by a crash."""

    def __init__(self, line: int, fragment: bytes) -> None:
        preview = fragment[:80].decode("utf-8", "replace")
        super().__init__(
            f"torn last line ({len(fragment)} bytes without a newline: {preview!r}); "
            "nothing after the last complete line was accepted. "
            "Run `mortecouille repair GAME` to cut it off.",
            line=line,
            seq=line - 1,  # the seq the torn line was to get: one per line, from 0
        )
        self.fragment = fragment


#: keys sorted at every depth, compact: the one encoder of a line's canonical bytes
_CANONICAL_ENCODER = msgspec.json.Encoder(order="sorted")


def canonical(obj: Any) -> bytes:
    """Canonical JSON bytes: compact, keys sorted at every depth."""
    return _CANONICAL_ENCODER.encode(obj)


def line_hash(body_without_hash: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(body_without_hash)).hexdigest()


#: The optional envelope fields a line may carry besides the event's own (the store's, not the
#: rules'), written only by the command path and only where it writes them: ``idem`` on the first
#: line of the batch one command appended under an idempotency key (the request's key, as its
#: SHA-256, and the batch's length: :mod:`mortecouille.app.idempotency`); ``nonce`` on every line
#: of a secret input (:mod:`mortecouille.events.secrecy`), randomness of the line's own, so that no
#: line hash after it (a receipt's head, a hash sent to a page) is a function of content a guesser
#: can enumerate (docs/service.md, "Nonces and idempotency keys"). A line without them keeps the
#: exact bytes and hash it always had; one with them is hashed with them, so they are chained too.
#: Every chain check refuses them elsewhere (:func:`envelope_problem`).
ENVELOPE_EXTRAS = ("idem", "nonce")

#: The envelope field holding a line's nonce, and its length: 16 random bytes as lowercase hex.
NONCE_FIELD = "nonce"
NONCE_HEX_DIGITS = 32
#: The envelope field holding a batch's idempotency key (its digest) and length.
IDEM_FIELD = "idem"

#: The event types whose lines carry a nonce: the secret inputs (events/secrecy.py, the one
#: definition), by tag.
NONCED_TAGS: Final = frozenset(event_tag(cls) for cls in SECRET_TYPES)
#: The event types a batch appended under an idempotency key can start with: a game's creation
#: (or fork), every submission, and the referee's acts the service takes a key for (a lock, a
#: resolution, which may start with the contributions the one-step path draws or the ones it goes
#: without, a ruling, an end, a deadline).
BATCH_START_TAGS: Final = frozenset(
    {
        "game-created",
        *NONCED_TAGS,
        "dice-contribution-committed",
        "dice-contribution-revealed",
        "dice-contribution-absent",
        "turn-locked",
        "turn-started",
        "game-ended",
        "deadline-set",
    }
)

#: How the ``idem`` of a line is written: the key's SHA-256 (hex) and the batch's length.
_HEX64 = frozenset("0123456789abcdef")

#: Extras for a batch (:func:`stamp_all`): one mapping (the first line's), or one per line (None
#: for a line without).
Extras = Union[Mapping[str, Any], Sequence[Union[Mapping[str, Any], None]], None]  # noqa: UP007


def nonce_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a line's ``nonce`` (None when it can): exactly
    :data:`NONCE_HEX_DIGITS` lowercase hex digits, as :func:`secrets.token_hex` draws them."""
    if (
        isinstance(value, str)
        and len(value) == NONCE_HEX_DIGITS
        and value.isascii()
        and all(char in "0123456789abcdef" for char in value)
    ):
        return None
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    wanted = f"{NONCE_HEX_DIGITS} lowercase hex digits (16 random bytes)"
    return f"field `{NONCE_FIELD}`: must be {wanted}, not {shown}"


def idem_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a line's ``idem`` (None when it can): ``{"key": SHA256 hex,
    "events": N}``, N a whole number from 1, nothing else."""
    if isinstance(value, dict) and set(value) == {"key", "events"}:
        key, count = value["key"], value["events"]
        hexed = isinstance(key, str) and len(key) == 64 and set(key) <= _HEX64
        if hexed and type(count) is int and count >= 1:
            return None
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return (
        f"field `{IDEM_FIELD}`: must be {{\"key\": 64 lowercase hex digits, \"events\": a count from 1}}, "
        f"not {shown}"
    )


def envelope_problem(body: Mapping[str, Any], *, written_before: bool = True) -> str | None:
    """Why a line's envelope extras (``body``: the line's members) cannot be on it, None when they
    can: a well-formed ``nonce`` on a secret input's line only, a well-formed ``idem`` on a line a
    keyed batch can start with only (:data:`BATCH_START_TAGS`). ``written_before``: also accept
    what logs written before nonces were per line hold, a nonce on the ``game-created`` line of a
    fork, whose creation batch copied secrets then (a reader's rule; the writer passes False).
    Where a batch declared by an ``idem`` ends is ``verify``'s to check (it needs the lines after
    it)."""
    tag = body.get("type")
    if NONCE_FIELD in body:
        problem = nonce_problem(body[NONCE_FIELD])
        if problem is not None:
            return problem
        legacy_fork = written_before and tag == "game-created" and body.get("forked_from") is not None
        if tag not in NONCED_TAGS and not legacy_fork:
            return (
                f"field `{NONCE_FIELD}`: only a secret input's line carries one (orders, tokens, "
                f"purchases, seals, placements, rulings), not a {tag!r} line"
            )
    if IDEM_FIELD in body:
        problem = idem_problem(body[IDEM_FIELD])
        if problem is not None:
            return problem
        if tag not in BATCH_START_TAGS:
            return (
                f"field `{IDEM_FIELD}`: only the first line of a command's batch carries one, and no "
                f"command's batch starts with a {tag!r} line"
            )
    return None


def stamp(event: Event, seq: int, prev: str, extras: Mapping[str, Any] | None = None) -> tuple[Event, bytes]:
    """Give an event its place in the chain; return the stamped event and its line (no newline).

    ``extras``: envelope fields (of :data:`ENVELOPE_EXTRAS`) written on this line and covered by its
    hash; the event decoded back from the line does not carry them (decoding ignores them)."""
    if not extras:
        stamped = _stamp_by_splice(event, seq, prev)
        if stamped is not None:
            return stamped
    return _stamp_through_dict(event, seq, prev, extras)


#: The top-level ``hash`` field of an event encoded with an empty hash, keys sorted: ``hash`` is
#: never the last key (``prev``, ``seq``, ``type`` and ``v`` sort after it), so a comma follows.
_EMPTY_HASH_FIELD = b'"hash":"",'
_encode_canonical = _CANONICAL_ENCODER.encode
_sha256 = hashlib.sha256
_replace = msgspec.structs.replace
_force_setattr = msgspec.structs.force_setattr


def _stamp_by_splice(event: Event, seq: int, prev: str) -> tuple[Event, bytes] | None:
    """:func:`stamp` with one encoding of the event and no dictionary in between (every command
    stamps its events before its fsync, so this is part of an append's cost): the event
    is encoded with an empty hash, keys sorted, which is its canonical line with ``"hash":"",``
    where the hash goes; without that field it is exactly what the hash covers (hashed in one
    call). None (the caller takes :func:`_stamp_through_dict`) when a field is left out while None,
    or when that field's bytes occur more than once (a nested object with a ``hash`` key), so no
    line differs by a byte from the general path's (tests/test_stamp_paths.py and
    tests/test_append_steps.py compare them)."""
    stamped: list[Event] = []
    pieces: list[bytes] = []
    if not _splice_lines((event,), seq, prev, stamped, pieces):
        return None
    pieces.pop()  # the newline after the line
    return stamped[0], b"".join(pieces)


def _splice_lines(
    events: Iterable[Event], seq: int, prev: str, stamped: list[Event], pieces: list[bytes]
) -> int:
    """:func:`_stamp_by_splice` for each of ``events`` in turn, chained from ``seq`` and ``prev``:
    each stamped event is added to ``stamped`` and its line's pieces, then a newline, to
    ``pieces``; stops before the first event that takes :func:`_stamp_through_dict` (nothing of
    it added) and returns how many were stamped. One call for a batch, so that an append pays no
    call per event."""
    count = 0
    for event in events:
        if event.omitted_when_none:
            for name in event.omitted_when_none:
                if getattr(event, name) is None:
                    return count
        placed = _replace(event, seq=seq + count, prev=prev, hash="")
        before, found, rest = _encode_canonical(placed).partition(_EMPTY_HASH_FIELD)
        # find, not ``in``: on bytes, ``in`` first tries its operand as an int, raising (and
        # catching) a TypeError each time
        if not found or rest.find(_EMPTY_HASH_FIELD) >= 0:
            return count
        # the line without its hash field: what the hash covers, hashed in one call
        prev = _sha256(before + rest).hexdigest()
        # ``placed`` is this function's own new event, seen by nobody yet: its hash is set in
        # place rather than by a second copy
        _force_setattr(placed, "hash", prev)
        stamped.append(placed)
        pieces += (before, b'"hash":"', prev.encode(), b'",', rest, b"\n")
        count += 1
    return count


def _stamp_through_dict(
    event: Event, seq: int, prev: str, extras: Mapping[str, Any] | None = None
) -> tuple[Event, bytes]:
    """:func:`stamp` by way of the line's dictionary: the definition of a line, taken for events
    that leave a field out and for lines with envelope extras."""
    body = msgspec.to_builtins(event)
    for name in event.omitted_when_none:
        if body.get(name) is None:
            body.pop(name, None)
    for key, value in (extras or {}).items():
        if key not in ENVELOPE_EXTRAS or key in body:
            raise ValueError(f"{key!r} is not an envelope field a line may carry")
        body[key] = value
    if extras:
        problem = envelope_problem(body, written_before=False)
        if problem is not None:
            raise ValueError(problem)
    body["seq"] = seq
    body["prev"] = prev
    body.pop("hash", None)
    digest = line_hash(body)
    body["hash"] = digest
    stamped = msgspec.structs.replace(event, seq=seq, prev=prev, hash=digest)
    return stamped, canonical(body)


def stamp_all(
    events: Sequence[Event], first_seq: int, prev: str, extras: Extras = None
) -> tuple[list[Event], bytes]:
    """Chain ``events`` after the line ``prev`` at ``first_seq``: the stamped events, and their
    lines as one payload, each ending with a newline. ``extras``: envelope fields written on the
    lines, a mapping for the first line only (what the whole batch shares, ``idem``), or one
    mapping (or None) per line (a secret input's ``nonce``)."""
    count = len(events)
    if extras is None or isinstance(extras, Mapping):
        per_line: Sequence[Mapping[str, Any] | None] = [extras] if extras else []
    else:
        per_line = extras
    stamped: list[Event] = []
    pieces: list[bytes] = []
    done = 0
    while done < count:
        line_extras = per_line[done] if done < len(per_line) else None
        if not line_extras:  # as many as take the splice, up to the next line with extras, in one call
            stop = next((index for index in range(done, len(per_line)) if per_line[index]), count)
            rest = itertools.islice(events, done, stop) if done or stop < count else events
            done += _splice_lines(rest, first_seq + done, prev, stamped, pieces)
            if done == count:
                break
            prev = stamped[-1].hash if stamped else prev
            line_extras = per_line[done] if done < len(per_line) else None
        placed, line = _stamp_through_dict(events[done], first_seq + done, prev, line_extras)
        stamped.append(placed)
        pieces += (line, b"\n")
        prev = placed.hash
        done += 1
    return stamped, b"".join(pieces)


_RAW = msgspec.json.Decoder(dict[str, Any])
#: The schema's current versions by class, for the one check every decoded line goes through.
_CURRENT_VERSION_OF: dict[type[Event], int] = {cls: CURRENT_VERSIONS[event_tag(cls)] for cls in EVENT_CLASSES}


@functools.cache
def event_decoder() -> msgspec.json.Decoder[Any]:
    """The typed decoder over every event type of the schema (built once, on first use; it holds
    no state). Built when first asked for, not on import: building it is most of this module's
    import time, and a command that reads its state from a current snapshot (``state``) decodes
    no event (the CLI's start-up)."""
    event_union: Any = Union[EVENT_CLASSES]  # noqa: UP007 - built from the schema's table
    return msgspec.json.Decoder(event_union)


def decode_line(line: bytes, number: int) -> Event:
    """One line to a typed event at its current schema version, or CorruptLine naming the field."""
    try:
        event: Event = event_decoder().decode(line)
    except msgspec.DecodeError as error:
        return _decode_slow(line, number, error)
    except RecursionError:
        raise CorruptLine("the JSON is nested too deeply to be an event", line=number) from None
    if event.v != _CURRENT_VERSION_OF[type(event)]:
        return _decode_slow(line, number, None)
    return event


def _decode_slow(line: bytes, number: int, first_error: msgspec.DecodeError | None) -> Event:
    try:
        raw = _RAW.decode(line)
    except RecursionError:
        raise CorruptLine("the JSON is nested too deeply to be an event", line=number) from None
    except msgspec.DecodeError as error:
        raise CorruptLine(f"not a JSON object ({error})", line=number) from None
    tag = raw.get("type")
    seq = raw.get("seq") if isinstance(raw.get("seq"), int) else None
    if not isinstance(tag, str) or tag not in EVENT_TYPES:
        raise CorruptLine(f"field `type`: unknown event type {tag!r}", line=number, seq=seq)
    version = raw.get("v", 1)
    current = CURRENT_VERSIONS[tag]
    if not isinstance(version, int) or version < 1 or version > current:
        raise CorruptLine(
            f"field `v`: {tag} version {version!r} is not one this engine reads (1..{current})",
            line=number,
            seq=seq,
        )
    while version < current:
        raw = UPCASTERS[(tag, version)](dict(raw))
        version += 1
        raw["v"] = version
    try:
        event: Event = msgspec.convert(raw, EVENT_TYPES[tag])
    except msgspec.ValidationError as error:
        detail = str(error if first_error is None else first_error)
        raise CorruptLine(f"{tag}: {detail}", line=number, seq=seq) from None
    return event


def decode_lines(data: bytes) -> list[Event]:
    """Decode a whole log body (complete lines only), numbering lines from 1 in errors."""
    return decode_block(data, 1)


def decode_block(data: bytes, first_number: int) -> list[Event]:
    """:func:`decode_lines` of a block of complete lines whose first is line ``first_number`` of
    its log (errors name lines as the whole log's decoding would)."""
    try:
        events: list[Event] = event_decoder().decode_lines(data)
    except (msgspec.DecodeError, RecursionError):
        return [decode_line(line, number) for number, line in enumerate(data.splitlines(), first_number)]
    current = _CURRENT_VERSION_OF
    stale = [index for index, event in enumerate(events) if event.v != current[type(event)]]
    if stale:
        # the lines are split only when an old version needs upcasting: splitting a long log
        # costs as much as a fifth of its decoding
        lines = data.splitlines()
        for index in stale:
            events[index] = decode_line(lines[index], first_number + index)
    return events


def check_line(line: bytes, number: int, expected_seq: int, expected_prev: str) -> str:
    """Check one line's place in the chain and its hash; return its hash or raise LogError."""
    return str(checked_body(line, number, expected_seq, expected_prev)["hash"])


def checked_body(line: bytes, number: int, expected_seq: int, expected_prev: str) -> dict[str, Any]:
    """:func:`check_line`, returning the line's decoded body (its ``hash`` included): a caller
    reading the log once for the chain can pick what it needs from the lines as they pass."""
    try:
        body = _RAW.decode(line)
    except RecursionError:
        raise CorruptLine(
            "the JSON is nested too deeply to be an event", line=number, seq=expected_seq
        ) from None
    except msgspec.DecodeError as error:
        raise CorruptLine(f"not a JSON object ({error})", line=number, seq=expected_seq) from None
    if canonical(body) != line:
        raise LogError(
            "line is not in canonical form (a byte was changed or reformatted)",
            line=number,
            seq=expected_seq,
        )
    if body.get("seq") != expected_seq:
        raise LogError(
            f"field `seq` is {body.get('seq')!r}, expected {expected_seq} "
            "(a line was removed, duplicated or moved)",
            line=number,
            seq=expected_seq,
        )
    if body.get("prev") != expected_prev:
        raise LogError(
            "field `prev` does not match the previous line's hash (the chain is broken)",
            line=number,
            seq=expected_seq,
        )
    claimed = body.pop("hash", None)
    if claimed != line_hash(body):
        raise LogError(
            "field `hash` does not match the line's content (the line was edited)",
            line=number,
            seq=expected_seq,
        )
    body["hash"] = claimed
    unknown = _unknown_field(body)
    if unknown is not None:
        raise CorruptLine(
            f"field `{unknown}` is no field of a {body.get('type')!r} line at version {body.get('v')} "
            "(a line was forged with it)",
            line=number,
            seq=expected_seq,
        )
    if NONCE_FIELD in body or IDEM_FIELD in body:
        # only ever on lines of the dictionary's way: a line with an envelope extra is never its
        # event's own encoding, so every chain check (check_lines included) comes here for it
        problem = envelope_problem(body)
        if problem is not None:
            raise CorruptLine(problem, line=number, seq=expected_seq)
    return body


@functools.cache
def _fields_of_current(tag: str) -> frozenset[str]:
    """The members a line of the event type ``tag`` may hold at its current version: the event's
    fields as encoded, its ``type``, and the envelope's extras."""
    fields = msgspec.structs.fields(EVENT_TYPES[tag])
    return frozenset((*(field.encode_name for field in fields), "type", *ENVELOPE_EXTRAS))


def _unknown_field(body: Mapping[str, Any]) -> str | None:
    """The first member of a line's ``body`` that its event type does not have (None: none), for a
    line at its type's current version (an older version's fields are its upcaster's to know: such
    a line is not looked at here). An unknown type or version is the decoder's to name."""
    tag = body.get("type")
    if not isinstance(tag, str) or tag not in EVENT_TYPES or body.get("v") != CURRENT_VERSIONS[tag]:
        return None
    allowed = _fields_of_current(tag)
    return next((key for key in sorted(body) if key not in allowed), None)


_HASH_MEMBER = b'"hash":'
#: an event's envelope fields, read for a whole block at once (in C)
_HASH_OF = operator.attrgetter("hash")
_SEQ_OF = operator.attrgetter("seq")
_PREV_OF = operator.attrgetter("prev")


def spliced_line_hash(line: bytes, claimed: str) -> str | None:
    """:func:`line_hash` of a canonical ``line`` whose top-level ``hash`` is ``claimed``, computed
    from the line itself: the line with its ``"hash":<claimed>`` member (and one comma beside it)
    cut out is byte for byte the canonical encoding of the body without ``hash``, so no second
    encoding is needed (``verify`` checks every line of a log).

    ``"hash":`` can only occur in a canonical line as an object key (inside a string a quote is
    escaped), so when the member occurs exactly once it is the top-level one; None when it does
    not (a nested object with a ``hash`` key holding the same value): the caller then takes
    :func:`checked_body`. The line must be canonical (the caller has checked it is)."""
    member = _HASH_MEMBER + _CANONICAL_ENCODER.encode(claimed)
    at = line.find(member)
    if at < 0 or line.find(member, at + 1) >= 0:
        return None
    end = at + len(member)
    if line[end : end + 1] == b",":
        end += 1
    elif line[at - 1 : at] == b",":
        at -= 1
    return hashlib.sha256(line[:at] + line[end:]).hexdigest()


def check_lines(
    lines: Sequence[bytes],
    events: Sequence[Event] | None,
    first_seq: int,
    expected_prev: str,
    wanted_seq: int = -1,
    *,
    block: bytes | None = None,
) -> tuple[str, str | None]:
    """:func:`check_line` for consecutive ``lines`` from seq ``first_seq`` on, each after the
    line whose hash is ``expected_prev``; return the last line's hash, and the hash of the line
    at ``wanted_seq`` when it is among them (else None). Raises LogError at the first bad line,
    exactly as :func:`check_line` does.

    ``events``: the lines already decoded to typed events (one each), so the check needs no
    second decoding: a line is canonical when it is the sorted encoding of its own event (all
    at once, in C), and its hash is recomputed from the line with the hash cut out
    (:func:`spliced_line_hash`, whose property tests pin it to :func:`line_hash`). A line
    that is not exactly its event's encoding (a float field written as an integer, a field left
    out while None, an envelope extra, an old version) or whose hash does not check this way is
    checked by :func:`checked_body`, the definition, which accepts or refuses it with its own
    message: the quick way only ever accepts lines the definition accepts, with the same hash
    (tests/test_verify_speed_invariants.py). ``block``: the lines joined, each ending with a newline, when
    the caller has them so (it decoded them from those bytes), so they are not joined again."""
    prev = expected_prev
    found: str | None = None
    if events is None or len(events) != len(lines):
        for seq, line in enumerate(lines, first_seq):
            prev = str(checked_body(line, seq + 1, seq, prev)["hash"])
            if seq == wanted_seq:
                found = prev
        return prev, found
    claimed = list(map(_HASH_OF, events))
    quick = _quick_lines(lines, events, claimed, block)
    if _chained_as_claimed(lines, events, quick, claimed, first_seq, prev):
        if first_seq <= wanted_seq < first_seq + len(lines):
            found = claimed[wanted_seq - first_seq]
        return claimed[-1], found
    seq = first_seq
    for index, line in enumerate(lines):
        event = events[index]
        if quick[index] and event.seq == seq and event.prev == prev:
            digest = claimed[index]
        else:
            digest = str(checked_body(line, seq + 1, seq, prev)["hash"])
        if seq == wanted_seq:
            found = digest
        prev = digest
        seq += 1
    return prev, found


def _quick_lines(
    lines: Sequence[bytes], events: Sequence[Event], claimed: list[str], block: bytes | None = None
) -> list[bool]:
    """For each line, whether it is quick for :func:`check_lines`: it is its event's canonical
    encoding and its hash, recomputed from the line with the hash member cut out
    (:func:`spliced_line_hash`), is the one its event claims.

    With as few steps per line as can be (``verify`` checks every line of a log): the
    lines are compared with their events' encoding as a block, in C (line by line only when the
    block differs: a line leaving out a field while None, an old version); each canonical line
    holds its top-level ``"hash":`` exactly once when the canonical lines hold those bytes once a
    line together (every event has a ``hash``, and a quote inside a string is escaped, so those
    bytes are always a key); each line's hash is then recomputed inline
    (:func:`_hash_cut_as_claimed`), cutting exactly what :func:`spliced_line_hash` cuts. Lines
    in doubt are taken one by one as :func:`spliced_line_hash` does. ``block``: the lines
    joined, each ending with a newline (joined here when not given)."""
    encoded = _CANONICAL_ENCODER.encode_lines(events)
    if block is None:
        block = b"\n".join([*lines, b""])  # as encode_lines ends every line
    count = len(lines)
    if encoded == block:
        # every line canonical (the common case): the first hash member of each is its top-level
        # one when its event's type says so (the block is not searched), or when the block holds
        # as many as it has lines (one a line); then one step per line, no list of runs
        first = hash_members_first(events) or block.count(_HASH_MEMBER) == count
        if first and _hashes_cut_as_claimed(lines, claimed):
            return [True] * count
        canonical = None  # every line
        members = block.count(_HASH_MEMBER)
    else:
        canonical = list(map(operator.eq, lines, encoded.split(b"\n")))
        members = block.count(_HASH_MEMBER)
        for line, same in zip(lines, canonical, strict=True):
            if not same:
                count -= 1
                members -= line.count(_HASH_MEMBER)
    if members != count:  # a canonical line holds the bytes twice: each line as spliced_line_hash cuts
        return [
            same and spliced_line_hash(line, hash_) == hash_
            for line, hash_, same in zip(lines, claimed, canonical or itertools.repeat(True), strict=False)
        ]
    if canonical is None:
        canonical = [True] * len(lines)
    quick: list[bool] = []
    start = 0
    # the runs of canonical lines between the others (a block has few others, most have none)
    for end in [*(index for index, same in enumerate(canonical) if not same), len(lines)]:
        run = lines[start:end]
        if _hashes_cut_as_claimed(run, claimed[start:end]):
            quick += [True] * len(run)
        else:
            quick += [
                _hash_cut_as_claimed(line, hash_) or spliced_line_hash(line, hash_) == hash_
                for line, hash_ in zip(run, claimed[start:end], strict=True)
            ]
        if end < len(lines):
            quick.append(False)
        start = end + 1
    return quick


def _hashes_cut_as_claimed(lines: Sequence[bytes], claimed: Sequence[str]) -> bool:
    """:func:`_hash_cut_as_claimed` of every line (as many as ``claimed``), in one loop: the
    steps of each line inline, no call per line (``verify`` checks every line of a log).
    The comma after the digest is not looked at here: when the digest computed is the one
    claimed, the claim is 64 lowercase hex digits, which a canonical line writes as they are
    between quotes, and a comma follows them (``hash`` is never an event's last key), so the bytes
    cut are the ones :func:`_hash_cut_as_claimed` checks and cuts."""
    sha256 = _sha256
    member = _HASH_VALUE_START
    for line, hash_ in zip(lines, claimed, strict=True):
        before, _, rest = line.partition(member)
        if sha256(before + rest[66:]).hexdigest() != hash_:
            return False
    return True


#: how a line's top-level hash member starts when it holds a string (a hash always does)
_HASH_VALUE_START = b'"hash":"'


#: the types whose JSON holds no object (so no key): scalars, and arrays and unions of them
_KEYLESS_SCALARS: tuple[type[msgspec.inspect.Type], ...] = (
    msgspec.inspect.IntType,
    msgspec.inspect.FloatType,
    msgspec.inspect.StrType,
    msgspec.inspect.BoolType,
    msgspec.inspect.NoneType,
    msgspec.inspect.LiteralType,
)


def _no_hash_key(info: msgspec.inspect.Type, seen: frozenset[type] = frozenset()) -> bool:
    """Whether no value of this type encodes to JSON holding a ``hash`` key, at any depth: scalars,
    arrays and unions of such, and Structs none of whose keys (its tag's included) is ``hash`` and
    whose fields are such (a Struct met again inside itself adds no key). Anything else (a dict, whose
    keys are data, ``Any``...) is taken as holding one."""
    if isinstance(info, _KEYLESS_SCALARS):
        return True
    if isinstance(info, (msgspec.inspect.ListType, msgspec.inspect.VarTupleType)):
        return _no_hash_key(info.item_type, seen)
    if isinstance(info, msgspec.inspect.TupleType):
        return all(_no_hash_key(item, seen) for item in info.item_types)
    if isinstance(info, msgspec.inspect.UnionType):
        return all(_no_hash_key(item, seen) for item in info.types)
    if isinstance(info, msgspec.inspect.StructType):
        if info.cls in seen:
            return True
        if info.tag_field == "hash" or any(field.encode_name == "hash" for field in info.fields):
            return False
        inside = seen | {info.cls}
        return all(_no_hash_key(field.type, inside) for field in info.fields)
    return False


@functools.cache
def hash_member_first(event_type: type[Event]) -> bool:
    """Whether the first ``"hash":"`` of a canonical line of an event of this type is its top-level
    hash member, whatever the event holds: no field whose key sorts before ``hash`` (the keys are
    sorted) can hold a ``hash`` key, at any depth (a quote inside a string is escaped, so those
    bytes are always a key). A line's hash can then be recomputed by cutting the first such member
    out, with no search of the whole line for a second one (``verify`` checks every line of a log).
    Decided once per type, from its schema."""
    fields = msgspec.inspect.type_info(event_type).fields  # type: ignore[attr-defined]
    return all(_no_hash_key(field.type) for field in fields if field.encode_name < "hash")


def hash_members_first(events: Iterable[Event]) -> bool:
    """:func:`hash_member_first` of the type of each of ``events``."""
    return all(map(hash_member_first, set(map(type, events))))


def _hash_cut_as_claimed(line: bytes, claimed: str) -> bool:
    """Whether the hash of canonical ``line`` (holding ``"hash":`` once), recomputed with its hash
    member cut out, is ``claimed``: :func:`spliced_line_hash` with fewer steps, for a claimed hash
    that is a SHA-256 hex digest (any other never equals the digest computed: False, and the
    caller asks :func:`spliced_line_hash`). Such a hash is 64 lowercase hex digits encoded as they
    are between quotes, so its member is ``"hash":"``, those 64 bytes and a quote; a comma follows
    (``hash`` is never an event's last key: ``prev``, ``seq``, ``type`` and ``v`` sort after it),
    which is checked too, so the bytes cut are the ones :func:`spliced_line_hash` cuts."""
    before, _, rest = line.partition(_HASH_VALUE_START)
    return rest[64:66] == b'",' and _sha256(before + rest[66:]).hexdigest() == claimed


#: the canonical encoding of each of a sequence of events, each line ending with a newline
encode_canonical_lines = _CANONICAL_ENCODER.encode_lines


def _chained_as_claimed(
    lines: Sequence[bytes],
    events: Sequence[Event],
    quick: list[bool],
    claimed: list[str],
    first_seq: int,
    prev: str,
) -> bool:
    """Whether every line checks (:func:`check_lines`) with the hash its event claims, found a
    block at a time: each seq and prev as the chain wants them, every quick line's hash its
    own, each other line accepted by :func:`checked_body` with the claimed hash. False (the
    caller then checks line by line, naming the first bad one) at the first doubt."""
    if not lines:
        return False
    if list(map(_SEQ_OF, events)) != list(range(first_seq, first_seq + len(lines))):
        return False
    if list(map(_PREV_OF, events)) != [prev, *claimed[:-1]]:
        return False
    if all(quick):
        return True
    for index, ok in enumerate(quick):
        if ok:
            continue
        expected_prev = claimed[index - 1] if index else prev
        seq = first_seq + index
        try:
            if checked_body(lines[index], seq + 1, seq, expected_prev)["hash"] != claimed[index]:
                return False
        except LogError:
            return False
    return True
