"""A turn's deadline, as events: the referee set it, and it passed.

Both are logged for the record and change no state (every ruleset ignores them in its fold), so
the state hashes of a game are the same with or without deadlines. The time is the shell's, passed
in as data: the rules never read a clock.
"""

from mortecouille.events.base import Event


class DeadlineSet(Event, tag="deadline-set", frozen=True, kw_only=True):
    """The referee set (or moved) the deadline of ``turn`` to ``at`` (ISO 8601, UTC)."""

    turn: int
    at: str


class DeadlinePassed(Event, tag="deadline-passed", frozen=True, kw_only=True):
    """The deadline ``at`` of ``turn`` passed with ``idle`` ships still without orders (tokens
    in blockade), which do nothing this turn (T1: they lose their wind points). ``resolved``: the
    turn's resolution follows in the same append (seeded dice); else the referee resolves it
    (table dice are rolled at the table)."""

    turn: int
    at: str
    idle: tuple[str, ...] = ()
    resolved: bool = False
