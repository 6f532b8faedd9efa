"""The file store's head anchor (``GAME.head``): where a log's tail is vouched for.

The head is two fixed-size slots (:class:`HeadSlots`), each with a counter and a CRC; an update
overwrites the older slot in place (one ``pwrite``, no rename: replacing a file by rename cost as
much as the log's own fsync on ext4), so a torn update spoils only the slot it wrote and
the other still names the anchor before it, a lag a reader accepts (the lines after the anchor must
chain). A head in the format of earlier versions (one JSON object) is read as before and turned into
slots by the next append, by rename, once. A slot also records END, the log's size when it ended
with the anchored line: an append reads the head first (to update it), and while the log still has
that size the anchor's seq and hash are the log's tail, so no line of the log is read; any other
size (a lagging anchor, a torn tail) or no END, and the tail is read from the log's end.
"""

from __future__ import annotations

import zlib

from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.chain import Head

_log = get_logger("mortecouille")


class HeadSlots:
    """The head anchor's file format: two slots of :data:`SIZE` bytes, each one line of text,
    ``mortecouille-head 3 COUNTER SEQ HASH END CRC`` padded with spaces, CRC being the CRC-32 (8 hex
    digits) of what precedes it and END the log's size in bytes when it ended with that line (``-``
    when the writer did not know it). The slot with the highest counter whose CRC holds is the
    anchor; the next update writes counter + 1 into slot ``counter % 2``, never the slot it
    supersedes. Slots of the format before END (``mortecouille-head 2 COUNTER SEQ HASH CRC``) are
    read as anchors whose END is not known; an update writes the current format."""

    MAGIC = b"mortecouille-head 3 "
    #: the magic of the slots written before END was recorded: still read
    MAGIC_2 = b"mortecouille-head 2 "
    SIZE = 128

    @classmethod
    def encode(cls, counter: int, seq: int, digest: str, end: int | None = None) -> bytes:
        """One slot naming ``seq`` and ``digest``, and ``end`` when known (left out, as ``-``, from
        a record it would not let fit its slot: the anchor matters, END only saves a read)."""
        return cls.recorded(counter, seq, digest, end)[0]

    @classmethod
    def recorded(cls, counter: int, seq: int, digest: str, end: int | None) -> tuple[bytes, int | None]:
        """:meth:`encode`'s slot, and the END it records (None when left out): the fields
        :meth:`newest` reads back from it, known without parsing it (an append keeps them for
        the next one). Every append pays it, right after a sleep in its caller's fsync:
        so it takes the interpreter's most used paths (an f-string, one encoding, a slice of the
        padding), which measured cheaper there than bytes formatting."""
        text = f"mortecouille-head 3 {counter} {seq} {digest} {'-' if end is None else end}"  # MAGIC, fields
        if end is not None and len(text) + 9 >= cls.SIZE:
            text, end = f"mortecouille-head 3 {counter} {seq} {digest} -", None
        body = text.encode("ascii")
        record = b"%b %08x" % (body, zlib.crc32(body))
        if len(record) >= cls.SIZE:
            raise ValueError(f"a head anchor record of {len(record)} bytes does not fit its slot")
        return record + _SLOT_PADDING[len(record) :], end

    @classmethod
    def decode(cls, data: bytes) -> tuple[int, Head] | None:
        """The newest valid slot of ``data`` as (counter, head), or None when no slot is valid."""
        best: tuple[int, Head] | None = None
        for start in range(0, min(len(data), 2 * cls.SIZE), cls.SIZE):
            found = cls._slot(data[start : start + cls.SIZE])
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        return best

    @classmethod
    def newest(cls, data: bytes) -> tuple[int, int, str, int | None] | None:
        """The fields of :meth:`decode`'s slot, (counter, seq, hash, end), or None when no slot is
        valid: what an append needs, found without building the anchor (the higher counter's CRC
        checked first, and the other slot's only when that one is torn). Every append reads its
        anchor here, so the counters are read inline."""
        size, start, magics = cls.SIZE, len(cls.MAGIC), (cls.MAGIC, cls.MAGIC_2)
        first, second = data[:size], data[size : 2 * size]
        claimed = second[start : second.find(b" ", start)]
        if second[:start] in magics and claimed.isdigit():  # else the first slot, if any, is newer
            other = first[start : first.find(b" ", start)]
            if not (first[:start] in magics and other.isdigit() and int(other) >= int(claimed)):
                first, second = second, first
        found = cls._fields(first)
        return found if found is not None else cls._fields(second)

    @classmethod
    def _slot(cls, slot: bytes) -> tuple[int, Head] | None:
        found = cls._fields(slot)
        return None if found is None else (found[0], Head(seq=found[1], hash=found[2]))

    @classmethod
    def _fields(cls, slot: bytes) -> tuple[int, int, str, int | None] | None:
        """A slot's (counter, seq, hash, end), end None when not recorded; None unless its CRC
        holds and its fields are those of its format."""
        body, _, crc = slot.rstrip(b" \n").rpartition(b" ")
        if len(crc) != 8 or b"%08x" % zlib.crc32(body) != crc:
            return None
        magic, fields = body[: len(cls.MAGIC)], body[len(cls.MAGIC) :].split(b" ")
        try:
            if magic == cls.MAGIC and len(fields) == 4:
                counter, seq, digest, end = fields
                known = None if end == b"-" else int(end)
                if known is not None and known < 0:
                    return None
            elif magic == cls.MAGIC_2 and len(fields) == 3:
                counter, seq, digest = fields
                known = None
            else:
                return None
            return int(counter), int(seq), digest.decode("ascii"), known
        except ValueError:
            return None


#: What pads a slot's record to the slot's size: spaces, the newline last (:meth:`HeadSlots.recorded`
#: appends its tail from the record's length on).
_SLOT_PADDING = b" " * (HeadSlots.SIZE - 1) + b"\n"


#: The head anchor in slots, opened to be updated: its descriptor, then its newest valid slot's
#: counter, seq, hash and end (see :meth:`GameLog._open_slots`).
_OpenSlots = tuple[int, int, int, str, int | None]

