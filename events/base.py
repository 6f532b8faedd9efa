"""The event base class.

Every line of a game log is one event: a msgspec Struct tagged by ``type``.
The envelope (``seq``, ``prev``, ``hash``) and the schema version ``v`` are
fields of the base class so that one decode gives the whole line, which keeps
the fold cheap. Events built by the decider carry placeholder envelope values
until the store stamps them on append.

Adding an event type is declaring a subclass with a ``tag`` and listing it in
:data:`mortecouille.events.schema.EVENT_CLASSES`; nothing joins the log's union by being
imported.
"""

from typing import ClassVar

import msgspec

GENESIS_HASH = "0" * 64


class Event(msgspec.Struct, tag_field="type", kw_only=True, frozen=True, gc=False):
    """One append-only fact. Subclasses set ``tag``; a new schema version redeclares ``v``."""

    seq: int = -1
    prev: str = ""
    hash: str = ""
    v: int = 1

    #: fields added to an event type after logs were written, left out of a line while ``None``
    #: (their default, meaning the behaviour before them): a line written without one decodes to
    #: the same event, and a new line that does not use one has the bytes it always had
    omitted_when_none: ClassVar[tuple[str, ...]] = ()
