"""Receipts and head codes: what a player keeps, and how a log is checked
against it.

A **receipt** is what a player is given for one accepted submission (orders, tokens, a purchase, a
seal, a placement, or taking one back): where its events are in the log (``seq`` to ``last``), a
salted SHA-256 **commitment** to them, and the log's **head** hash after the append (the hash of
the event at ``last``). Because every line's hash covers the line before it, a log that still
holds that hash at ``last`` holds every event up to ``last`` exactly as it was when the receipt
was issued; and the commitment says which of those events were the player's.

The **canonical submission** of a receipt is the canonical JSON (compact, keys sorted at every
depth, UTF-8; :func:`mortecouille.events.codec.canonical`) of the JSON array of its log lines
``seq`` to ``last``, each line as the JSON object written in the log *without* its envelope fields
:data:`ENVELOPE_FIELDS` (``seq``, ``prev``, ``hash``, and ``idem``, the idempotency key a line may
carry), every whole number written as an integer (``0`` for ``0.0``). The commitment is the
SHA-256 (hex) of the salt (hex text), a newline, then the canonical submission. It is computed
from the log's own lines, not from decoded events, so a receipt stays checkable when a later
schema version upcasts the event it covers, and with nothing but a JSON library and SHA-256.

A **head code** is twelve decimal digits derived from the hash of the event at one seq by a
memory-hard stretch (:func:`stretched_code`), shown in three groups of four (``4831 9277 0015``):
read aloud at the table after each turn, it lets anyone who noted it catch a log later cut short
or rewritten there, and matching it again with a rewritten log costs a forger about 10^12 tries
of the stretch (docs/service.md, "Head codes"). Codes noted before the stretch, the first
:data:`LEGACY_HEAD_CODE_LENGTH` (or more) hex digits of the hash, are still checked, as weak.

This module reads logs; producing receipts for new appends is :mod:`mortecouille.app.receipts`.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import msgspec

from mortecouille.events.base import Event
from mortecouille.events.codec import canonical

#: The receipt format's version: a verifier refuses a receipt of a version it does not know.
RECEIPT_VERSION: Final = 1

#: The fields of a log line that are the log's, not the submission's: its place in the chain, and
#: the idempotency envelope the game service writes on a batch's first line (``idem``).
ENVELOPE_FIELDS: Final = ("seq", "prev", "hash", "idem")

#: What a submission is, named after its first event's type. Only these are receipted: the acts of
#: a player (or of the referee acting for one); a resolution, a ruling or an ending is the table's.
KIND_OF_EVENT: Final[Mapping[str, str]] = {
    "order-given": "orders",
    "order-withdrawn": "orders-withdrawn",
    "tokens-given": "tokens",
    "ship-bought": "purchase",
    "ship-equipped": "purchase",
    "fleet-equipped": "purchase",
    "ship-withdrawn": "purchase-withdrawn",
    "fleet-sealed": "seal",
    "ship-placed": "placement",
    # the dice contributions (rule D3): a player's too
    "dice-contribution-committed": "contribution",
    "dice-contribution-revealed": "contribution-revealed",
}
KINDS: Final = frozenset(KIND_OF_EVENT.values())

#: How many decimal digits a head code has: a rewritten log matches a noted code by chance once in
#: 10^12, each try costing one stretch (:func:`stretched_code`).
HEAD_CODE_DIGITS: Final = 12
#: The stretch: scrypt (RFC 7914) of the line hash's hex text, under this salt, with these costs:
#: 2^15 blocks of 8 x 128 bytes, 32 MiB of memory and about 0.1 s of one core a try here
#: (``bench/bench_head_code.py``; docs/service.md "Head codes" has the arithmetic).
HEAD_CODE_SALT: Final = b"mortecouille head code v2"
HEAD_CODE_N: Final = 2**15
HEAD_CODE_R: Final = 8
HEAD_CODE_P: Final = 1
#: scrypt's memory bound, over the 128 x N x R bytes the stretch needs
_HEAD_CODE_MAXMEM: Final = 2 * 128 * HEAD_CODE_N * HEAD_CODE_R
#: How many hex digits of the head hash a code noted before the stretch shows (24 bits, one SHA-256
#: a try: a rewritten log is ground to match one in about a minute). Still checked, as weak.
LEGACY_HEAD_CODE_LENGTH: Final = 6

_HEX64 = re.compile(r"[0-9a-f]{64}")
_SALT = re.compile(r"[0-9a-f]{32,128}")


class Receipt(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One accepted submission, as its submitter keeps it (see the module docstring)."""

    version: int = RECEIPT_VERSION
    game: str
    #: the first and last seq of the submission's events (equal for a one-event submission)
    seq: int
    last: int
    #: ``orders``, ``tokens``, ``purchase``, ``seal``, ``placement``, ... (:data:`KIND_OF_EVENT`)
    kind: str
    #: the ship the submission is for, or the player for a fleet's act (a seal, a fleet option)
    subject: str
    #: SHA-256 hex of ``salt + "\n" + canonical submission``
    commitment: str
    #: the submitter's random salt: 32 to 128 lowercase hex digits
    salt: str
    #: the hash of the event at ``last``: the log's head just after the append
    head: str

    @property
    def count(self) -> int:
        return self.last - self.seq + 1

    def to_json(self) -> str:
        """The receipt as one compact JSON line (what the CLI prints and a receipts file holds)."""
        return msgspec.json.encode(self).decode()


class ReceiptCheck(msgspec.Struct, frozen=True, kw_only=True):
    """What ``verify --receipts`` found for one receipt of a file (``index`` from 1).

    ``problem`` is None when the receipt holds, else one of ``malformed`` (a field named),
    ``other-game``, ``truncated`` (the log ends before the receipt's seq), ``moved`` (the
    submission is in the log, at another seq), ``edited`` (another content for the same subject at
    its seq), ``dropped`` (nowhere in the log), ``rewritten`` (the submission is intact but the log
    no longer passes through the receipt's head), ``altered-receipt`` (the log is as the receipt
    saw it, the receipt's own fields are not)."""

    index: int
    ok: bool
    problem: str | None
    detail: str
    seq: int | None = None


class HeadCode(msgspec.Struct, frozen=True):
    """The head code at ``seq``, as it is read aloud (``4831 9277 0015``: :func:`shown_code`)."""

    seq: int
    code: str

    def __str__(self) -> str:
        return f"{self.code} (seq {self.seq})"


# --- the commitment ---------------------------------------------------------------------------


def submission_body(line: Mapping[str, Any]) -> dict[str, Any]:
    """A log line (as a JSON object) without its envelope fields: the part a receipt commits to,
    its whole numbers written as integers (the line may hold ``0`` where the decoded event holds
    ``0.0``: both commit alike, so a receipt made from decoded events matches the line)."""
    return {key: _whole(value) for key, value in line.items() if key not in ENVELOPE_FIELDS}


def _whole(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _whole(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_whole(item) for item in value]
    return value


def canonical_submission(lines: Sequence[Mapping[str, Any]]) -> bytes:
    """The canonical bytes of a submission's log lines (module docstring)."""
    return canonical([submission_body(line) for line in lines])


def commitment(salt: str, lines: Sequence[Mapping[str, Any]]) -> str:
    """The salted SHA-256 commitment (hex) to a submission's log lines."""
    return hashlib.sha256(salt.encode("ascii") + b"\n" + canonical_submission(lines)).hexdigest()


def event_line(event: Event) -> dict[str, Any]:
    """A stamped event as the JSON object its log line holds (without envelope extras such as
    ``idem``, which the commitment leaves out anyway)."""
    body: dict[str, Any] = msgspec.to_builtins(event)
    return body


def kind_of(line: Mapping[str, Any]) -> str | None:
    """The kind of submission a log line starts, or None if it is not a player's submission."""
    return KIND_OF_EVENT.get(str(line.get("type")))


def subject_of(line: Mapping[str, Any]) -> str:
    """Who or what a submission is about: its ship, else its player."""
    return str(line.get("ship") or line.get("player") or "")


def check_salt(salt: str) -> str | None:
    """Why ``salt`` cannot salt a commitment, or None."""
    if not _SALT.fullmatch(salt):
        return "must be 32 to 128 lowercase hex digits (16 random bytes or more)"
    return None


# --- reading a log and a receipts file --------------------------------------------------------


def log_lines(data: bytes) -> list[dict[str, Any]]:
    """Every complete line of a log as a plain JSON object (a line that is not one: an empty
    object, which no receipt matches; the chain check names it)."""
    lines: list[dict[str, Any]] = []
    for raw in data.splitlines():
        try:
            body = msgspec.json.decode(raw)
        except (msgspec.DecodeError, RecursionError):
            body = {}
        lines.append(body if isinstance(body, dict) else {})
    return lines


class Malformed(msgspec.Struct, frozen=True):
    """An entry of a receipts file that is not a receipt: ``field`` and why."""

    field: str
    message: str


class ReceiptsFileError(ValueError):
    """A receipts file that is not a JSON list of receipts nor ``{"receipts": [...]}``."""


def parse_receipts(data: bytes) -> list[Receipt | Malformed]:
    """The entries of a receipts file: a JSON list of receipts, or ``{"receipts": [...]}`` (what
    the player page downloads and ``--receipts FILE`` appends to). Each entry is a receipt, or
    :class:`Malformed` naming its field; a file that is neither shape raises ReceiptsFileError."""
    try:
        document = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError) as error:
        raise ReceiptsFileError(f"not JSON ({error})") from None
    if isinstance(document, dict):
        if set(document) != {"receipts"}:
            raise ReceiptsFileError('expected {"receipts": [...]} or a JSON list of receipts')
        document = document["receipts"]
    if not isinstance(document, list):
        raise ReceiptsFileError('expected {"receipts": [...]} or a JSON list of receipts')
    return [receipt_or_malformed(entry) for entry in document]


def receipt_or_malformed(entry: object) -> Receipt | Malformed:
    """One entry of a receipts file, checked field by field."""
    try:
        receipt = msgspec.convert(entry, Receipt)
    except msgspec.ValidationError as error:
        text = str(error)
        named = re.search(r"at `\$\.([^`]+)`|field `([^`]+)`", text)
        return Malformed(next(n for n in named.groups() if n) if named else "receipt", text)
    return field_problem(receipt) or receipt


def field_problem(receipt: Receipt) -> Malformed | None:
    """The first field of a decoded receipt that no receipt could hold."""
    if receipt.version != RECEIPT_VERSION:
        return Malformed("version", f"{receipt.version} is not a receipt version this engine reads")
    if receipt.seq < 0:
        return Malformed("seq", f"{receipt.seq} is not a seq (0 or more)")
    if receipt.last < receipt.seq:
        return Malformed("last", f"{receipt.last} is before seq {receipt.seq}")
    if receipt.kind not in KINDS:
        return Malformed("kind", f"{receipt.kind!r} is not one of {', '.join(sorted(KINDS))}")
    if not _HEX64.fullmatch(receipt.commitment):
        return Malformed("commitment", "must be 64 lowercase hex digits (a SHA-256)")
    if (problem := check_salt(receipt.salt)) is not None:
        return Malformed("salt", problem)
    if not _HEX64.fullmatch(receipt.head):
        return Malformed("head", "must be 64 lowercase hex digits (a line's hash)")
    return None


# --- checking receipts against a log ----------------------------------------------------------


def verify_receipts(
    lines: Sequence[Mapping[str, Any]], receipts: Sequence[Receipt | Malformed]
) -> list[ReceiptCheck]:
    """Check each receipt against a log's lines (:func:`log_lines`): its submission is in the log
    at its seq, unchanged, and the log still passes through its head there. Every failure is named
    (:class:`ReceiptCheck`)."""
    game = str(lines[0].get("game")) if lines and lines[0].get("type") == "game-created" else None
    return [check_receipt(lines, game, index, receipt) for index, receipt in enumerate(receipts, 1)]


def check_receipt(
    lines: Sequence[Mapping[str, Any]], game: str | None, index: int, receipt: Receipt | Malformed
) -> ReceiptCheck:
    if isinstance(receipt, Malformed):
        return ReceiptCheck(
            index=index, ok=False, problem="malformed", detail=f"field `{receipt.field}`: {receipt.message}"
        )

    def failed(problem: str, detail: str, seq: int | None = receipt.seq) -> ReceiptCheck:
        return ReceiptCheck(index=index, ok=False, problem=problem, detail=detail, seq=seq)

    what = f"{receipt.kind} for {receipt.subject} at seq {receipt.seq}"
    if receipt.game != game:
        return failed("other-game", f"{what}: the receipt is for game {receipt.game!r}, this log is {game!r}")
    if receipt.last >= len(lines):
        elsewhere = find_submission(lines, receipt)
        if elsewhere is not None:  # the log is shorter because events before it were dropped
            detail = f"{what}: the submission is at seq {elsewhere} instead (events dropped before it)"
            return failed("moved", detail, elsewhere)
        return failed(
            "truncated",
            f"{what}: the log ends at seq {len(lines) - 1}, before the receipt's seq {receipt.last} "
            "(the log was cut short)",
            len(lines),
        )
    window = lines[receipt.seq : receipt.last + 1]
    intact = commitment(receipt.salt, window) == receipt.commitment
    through_head = lines[receipt.last].get("hash") == receipt.head
    if intact and through_head:
        return receipt_fields_check(index, receipt, window, what)
    if intact:
        return failed(
            "rewritten",
            f"{what}: the submission is intact but the log no longer passes through the receipt's "
            f"head {receipt.head[:12]} at seq {receipt.last}: history before it was rewritten (or the "
            "receipt's head altered)",
            receipt.last,
        )
    if through_head:
        # The chain vouches that seq..last are exactly what they were when the receipt was made.
        return failed(
            "altered-receipt",
            f"{what}: the log passes through the receipt's head, so the submission is as it was; the "
            "receipt's commitment, salt or seq does not match it (the receipt was altered)",
        )
    head_at = next((seq for seq, line in enumerate(lines) if line.get("hash") == receipt.head), None)
    if head_at is not None:
        # The log passes through the receipt's head elsewhere: everything up to there is intact.
        return failed(
            "altered-receipt",
            f"{what}: the log passes through the receipt's head at seq {head_at}; fields `seq` and "
            f"`last` say {receipt.seq} to {receipt.last} (the receipt was altered)",
        )
    elsewhere = find_submission(lines, receipt)
    if elsewhere is not None:
        return failed(
            "moved",
            f"{what}: the submission is at seq {elsewhere} instead (events dropped, inserted or "
            "reordered before it)",
            elsewhere,
        )
    first = window[0]
    if kind_of(first) == receipt.kind and subject_of(first) == receipt.subject:
        return failed(
            "edited", f"{what}: the log holds another {receipt.kind} for {receipt.subject} there (edited)"
        )
    return failed("dropped", f"{what}: the submission is nowhere in the log (dropped)")


def receipt_fields_check(
    index: int, receipt: Receipt, window: Sequence[Mapping[str, Any]], what: str
) -> ReceiptCheck:
    """The submission and head hold; the receipt's descriptive fields must describe them too."""
    first = window[0]
    for field, claimed, actual in (
        ("kind", receipt.kind, kind_of(first)),
        ("subject", receipt.subject, subject_of(first)),
    ):
        if claimed != actual:
            return ReceiptCheck(
                index=index,
                ok=False,
                problem="altered-receipt",
                detail=f"{what}: field `{field}` says {claimed!r}, the submission is {actual!r} "
                "(the receipt was altered)",
                seq=receipt.seq,
            )
    detail = f"{what}: in the log, unchanged"
    return ReceiptCheck(index=index, ok=True, problem=None, detail=detail, seq=receipt.seq)


def find_submission(lines: Sequence[Mapping[str, Any]], receipt: Receipt) -> int | None:
    """The seq where the receipt's submission is in the log, if it is anywhere."""
    for start in _candidates(lines, receipt):
        if commitment(receipt.salt, lines[start : start + receipt.count]) == receipt.commitment:
            return start
    return None


def _candidates(lines: Sequence[Mapping[str, Any]], receipt: Receipt) -> Iterator[int]:
    for start in range(len(lines) - receipt.count + 1):
        if kind_of(lines[start]) is not None:
            yield start


# --- head codes -------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def stretched_code(line_hash: str) -> str:
    """The head code of a line whose hash is ``line_hash`` (64 hex digits), as
    :data:`HEAD_CODE_DIGITS` digits: scrypt of the hash's hex text (ASCII) under
    :data:`HEAD_CODE_SALT` (N = :data:`HEAD_CODE_N`, r = 8, p = 1, 32 bytes), its first 8 bytes
    as an unsigned big-endian integer, modulo 10^12, zero-padded. Kept for the last 4,096
    hashes asked (a service shows the same code to every page).

    >>> stretched_code("0" * 64)
    '080530072276'
    """
    derived = hashlib.scrypt(
        line_hash.encode("ascii"),
        salt=HEAD_CODE_SALT,
        n=HEAD_CODE_N,
        r=HEAD_CODE_R,
        p=HEAD_CODE_P,
        maxmem=_HEAD_CODE_MAXMEM,
        dklen=32,
    )
    return str(int.from_bytes(derived[:8], "big") % 10**HEAD_CODE_DIGITS).zfill(HEAD_CODE_DIGITS)


def shown_code(digits: str) -> str:
    """A code's digits in groups of four, as they are read aloud: ``4831 9277 0015``."""
    return " ".join(digits[start : start + 4] for start in range(0, len(digits), 4))


def head_code(hashes: Sequence[str], seq: int | None = None) -> HeadCode:
    """The head code at ``seq`` (default: the last seq) of a log whose line hashes are ``hashes``."""
    at = len(hashes) - 1 if seq is None else seq
    if not 0 <= at < len(hashes):
        raise IndexError(f"seq {at} is not in the log (0 to {len(hashes) - 1})")
    return HeadCode(at, shown_code(stretched_code(hashes[at])))


class HeadCodeCheck(msgspec.Struct, frozen=True):
    seq: int
    code: str
    ok: bool
    detail: str


class NotedCode(msgspec.Struct, frozen=True):
    """A head code someone noted at ``seq``: twelve digits (``stretched``), or the hex digits of
    a code noted before the stretch (a prefix of the hash)."""

    seq: int
    code: str
    stretched: bool

    @property
    def shown(self) -> str:
        return shown_code(self.code) if self.stretched else self.code


_STRETCHED = re.compile(r"[0-9]{4}[ -]?[0-9]{4}[ -]?[0-9]{4}")


def parse_head_code(text: str) -> NotedCode | str:
    """``SEQ:CODE`` as a :class:`NotedCode`, or why it is not one. CODE: twelve decimal digits,
    spaces or dashes allowed between their groups of four (``41:4831-9277-0015``), or, as codes
    were noted before the stretch, 6 to 64 hex digits of the hash (any case: a code is read aloud)."""
    seq_text, colon, code = text.strip().partition(":")
    code = code.strip().lower()
    example = "e.g. 41:4831-9277-0015"
    if not colon or not seq_text.strip().isdigit():
        return f"{text!r} is not SEQ:CODE, {example}"
    if _STRETCHED.fullmatch(code):
        return NotedCode(int(seq_text), re.sub(r"[ -]", "", code), stretched=True)
    if re.fullmatch(rf"[0-9a-f]{{{LEGACY_HEAD_CODE_LENGTH},64}}", code):
        return NotedCode(int(seq_text), code, stretched=False)
    return (
        f"{code!r}: a head code is {HEAD_CODE_DIGITS} digits in groups of four ({example}), or the "
        f"{LEGACY_HEAD_CODE_LENGTH} (or more) hex digits of a code noted before"
    )


def check_head_code(hashes: Sequence[str], noted: NotedCode) -> HeadCodeCheck:
    """Does the log pass through the ``noted`` code at its seq? Named when it is cut short or
    rewritten; a code noted before the stretch is said to be weak even when it holds."""
    seq, shown = noted.seq, noted.shown
    said = f"head code {shown} at seq {seq}"
    weak = (
        "" if noted.stretched else f" (a {len(noted.code)}-hex-digit code, as noted before head codes were "
        "stretched: weak, a rewritten log can be ground to match it in minutes)"
    )
    if seq >= len(hashes):
        detail = f"{said}: the log ends at seq {len(hashes) - 1} (it was cut short){weak}"
        return HeadCodeCheck(seq, shown, False, detail)
    if noted.stretched:
        actual = shown_code(stretched_code(hashes[seq]))
        matches = actual.replace(" ", "") == noted.code
    else:
        actual = hashes[seq][: max(LEGACY_HEAD_CODE_LENGTH, len(noted.code))]
        matches = hashes[seq].startswith(noted.code)
    if not matches:
        wrong = f"rewritten up to seq {seq}, or the code noted wrong"
        detail = f"{said}: the log has {actual} there ({wrong}){weak}"
        return HeadCodeCheck(seq, shown, False, detail)
    return HeadCodeCheck(seq, shown, True, f"{said}: the log passes through it{weak}")
