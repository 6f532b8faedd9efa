"""Who is asking and what they may be sent: the service's one road to ``app.seats`` (tokens) and
``app.view`` (redaction). Every body the service sends about a game, a view, a command's answer or a
pushed message, is built here from ``view``/``event_view``, so no endpoint redacts on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any
from urllib.parse import quote

import msgspec

from mortecouille.app.seats import (
    REFEREE,
    SPECTATOR,
    IssuedSeats,
    UnknownToken,
    Viewer,
    identify,
    issue_seats,
    qr_svg,
    read_seats,
    reissue,
    seat_links,
    seat_of,
    token_hash,
)
from mortecouille.app.view import (
    ChainWitness,
    Disclosure,
    EventView,
    Link,
    chain_links,
    disclosure,
    event_view,
    view,
    visible,
)
from mortecouille.core.errors import MortecouilleError
from mortecouille.events.base import Event
from mortecouille.events.storage.contract import EventStore
from mortecouille.web.errors import Unauthorized
from mortecouille.web.live_streams import sse_message

__all__ = ["REFEREE", "SPECTATOR", "Viewer"]

_encoder = msgspec.json.Encoder()


def builtins(value: object) -> Any:
    return msgspec.to_builtins(value)


def viewer_for(log_: EventStore, authorization: str | None) -> Viewer:
    """The viewer an ``Authorization`` header names: none is a spectator; ``Bearer T`` is the seat
    T opens; anything else, or a token that opens no seat of this game, is refused (401). The
    token is never repeated in the refusal."""
    if authorization is None:
        return SPECTATOR
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Authorization: expected 'Bearer TOKEN' (a seat link's token)")
    try:
        return identify(log_, token.strip())
    except UnknownToken:
        raise Unauthorized(f"token: not a seat token of game {log_.name!r}") from None


def game_view(
    events: Sequence[Event], viewer: Viewer, seq: int | None, lines: Sequence[bytes | None] | None = None
) -> dict[str, Any]:
    """The view (``app.view.view``) as JSON-ready values; ``lines``: the log's, for the links."""
    shown: dict[str, Any] = builtins(view(events, viewer, seq, lines=lines))
    return shown


#: The most events one answer of the chain endpoint lists: a page asks again from the last one.
CHAIN_PAGE = 1000


def chain(
    events: Sequence[Event], viewer: Viewer, since: int, lines: Sequence[bytes | None]
) -> dict[str, Any]:
    """The events after ``since`` (at most :data:`CHAIN_PAGE`), as ``viewer`` may see them, each
    with what of its place in the chain it may be sent: what a page witnessing the log checks
    (docs/service.md, "Phones as witnesses"). ``next_seq``: the log's length."""
    known = disclosure(events)
    last = min(len(events), since + 1 + CHAIN_PAGE)
    links = chain_links(events[:last], lines[:last], viewer, known)
    listed = [event_view(events[seq], viewer, known, links[seq]) for seq in range(since + 1, last)]
    return {"game": _game_of(events), "next_seq": len(events), "events": builtins(listed)}


def _game_of(events: Sequence[Event]) -> str | None:
    name = getattr(events[0], "game", None) if events else None
    return name if isinstance(name, str) else None


def answer(events: Sequence[Event], viewer: Viewer, appended: Sequence[Event]) -> dict[str, Any]:
    """A command's answer: ``seq`` (its last event's; the log's last if it appended nothing),
    ``events`` as ``viewer`` may see them in the log as it is now, and their ``lines``."""
    known = disclosure(events)
    views = [event_view(event, viewer, known) for event in appended]
    return {
        "seq": appended[-1].seq if appended else len(events) - 1,
        "next_seq": len(events),
        "events": builtins(views),
        "lines": [shown.text for shown in views if shown.text is not None],
    }


def table_link(base: str, game: str) -> str:
    return f"{base.rstrip('/')}/table/{quote(game, safe='')}"


def issue(log_: EventStore, base: str, created: Sequence[Event]) -> dict[str, Any]:
    """A new game's seats: its tokens (shown this once) and links, with the creation's events as
    the referee sees them."""
    return seats_answer(log_, base, created, issue_seats(log_))


def seats_answer(
    log_: EventStore, base: str, created: Sequence[Event], issued: IssuedSeats
) -> dict[str, Any]:
    """A creation's answer: the seats ``issued`` (tokens and links) and the creation's events as
    the referee sees them; the same for the creation and for its retry, whose seats are new."""
    links = seat_links(base, log_.name, issued)
    return {
        **answer(created, REFEREE, created),
        "game": log_.name,
        "table": links.table,
        "referee": {"token": issued.referee, "link": links.referee},
        "players": {
            player: {"token": token, "link": links.players[player]}
            for player, token in issued.players.items()
        },
    }


def reissue_seat(log_: EventStore, base: str, seat: Viewer) -> dict[str, Any]:
    """A new token for ``seat`` (:data:`REFEREE`, or a player's), its link and its QR code; the
    old token stops working at once. ``seat`` and ``player`` name the seat: ``referee`` and null,
    or the player's name twice (a player may be called ``referee``)."""
    token = reissue(log_, seat)
    if seat.player is None:
        link = seat_links(base, log_.name, IssuedSeats(referee=token)).referee
    else:
        link = seat_links(base, log_.name, IssuedSeats(players={seat.player: token})).players[seat.player]
    assert link is not None
    name = seat.player if seat.player is not None else "referee"
    return {
        "seat": name,
        "role": seat.role,
        "player": seat.player,
        "token": token,
        "link": link,
        "qr_svg": qr_svg(link),
    }


def event_message(event: Event, viewer: Viewer, known: Disclosure) -> bytes:
    """One ``event`` message of a stream: ``event`` as ``viewer`` may see it (``event_view``)."""
    return _message(event_view(event, viewer, known))


def _message(shown: EventView) -> bytes:
    return sse_message(seq=shown.seq, event="event", data=_encoder.encode(shown))


class SharedView:
    """What every stream of one viewer of a game is sent (``live.Renderer``), rendered once for
    all of them: the message of each event of the log, as a stream opening now is sent it, and
    the messages of each new event.

    It keeps the log's :class:`~mortecouille.app.view.Disclosure` up to date event by event and the
    events this viewer may not read yet: when an event reveals some of them (a turn ended, the last
    fleet sealed, the game ended), a ``revealed`` message follows the event's, carrying them as
    this viewer may now read them, and from then on a stream opening is sent them readable. Only
    the viewer's own view is in it: a stream of another viewer has a SharedView of its own.
    ``lines``: each event's line as the log holds it, when the service keeps them: the messages
    then carry what of the chain this viewer may be sent (``app.view.ChainWitness``, linked once, in
    the log's order, for all the streams). What a reveal changes of the chain (the hashes a line
    revealed no longer hides, after it) is rendered again for the streams opening from then on."""

    def __init__(self, viewer: Viewer, lines: Callable[[Event], bytes | None] | None = None) -> None:
        self.viewer = viewer
        self.known = Disclosure()
        #: the log's events (references to the channel's), to render again what a reveal changes
        self.events: list[Event] = []
        #: each event's message, by seq, as a stream opening now is sent it
        self.messages: list[bytes] = []
        #: what this viewer cannot read yet, by seq: revealed later
        self.sealed: dict[int, Event] = {}
        self.lines = lines
        self.chain = ChainWitness(viewer)

    def start(self, events: Sequence[Event]) -> None:
        self.known = disclosure(events)
        self.events = list(events)
        self.messages = [_message(self._shown(event)) for event in events]
        self.sealed = {e.seq: e for e in events if not visible(e, self.viewer, self.known)}

    def backlog(self, after: int) -> list[bytes]:
        return self.messages[max(after, -1) + 1 :]

    def more(self, events: Sequence[Event]) -> list[tuple[int, bytes]]:
        parts: list[tuple[int, bytes]] = []
        for event in events:
            if event.seq != len(self.messages):
                raise ValueError(f"event {event.seq} does not follow event {len(self.messages) - 1}")
            before = self.known
            self.known = self.known.after(event)
            self.events.append(event)
            message = _message(self._shown(event))
            self.messages.append(message)
            if not visible(event, self.viewer, self.known):
                self.sealed[event.seq] = event
            if self.known is not before and self.sealed:  # what the log reveals has changed
                message += self._revealed(event.seq)
            parts.append((event.seq, message))
        return parts

    def _shown(self, event: Event) -> EventView:
        """``event`` as this viewer may see it, linked into the chain (in the log's order)."""
        if self.lines is None:
            return event_view(event, self.viewer, self.known)
        link = self.chain.link(event, self.lines(event), self.known)
        return event_view(event, self.viewer, self.known, link)

    def _again(self, event: Event) -> EventView:
        """``event``, linked already, as this viewer may see it now that the log revealed it."""
        if self.lines is None:
            return event_view(event, self.viewer, self.known)
        link: Link = self.chain.again(event, self.lines(event), self.known)
        return event_view(event, self.viewer, self.known, link)

    def _revealed(self, seq: int) -> bytes:
        now_visible = [e for e in self.sealed.values() if visible(e, self.viewer, self.known)]
        if not now_visible:
            return b""
        views = [self._again(event) for event in now_visible]
        for shown in views:
            del self.sealed[shown.seq]
        # a stream opening from now on is sent them readable; with the chain, every later line's
        # place in it too, as it now stands (a line revealed no longer hides the hashes after it)
        first = min(shown.seq for shown in views)
        for event in self.events[first:] if self.lines is not None else now_visible:
            self.messages[event.seq] = _message(self._again(event))
        body = _encoder.encode({"seq": seq, "events": views})
        return sse_message(seq=seq, event="revealed", data=body)


class SeatGrant:
    """What opened a seat's stream: the seat and the SHA-256 of its token (never the token). The
    stream goes on while the game's seats still give that hash that seat (:func:`revoked_grants`)."""

    __slots__ = ("viewer", "digest")

    def __init__(self, viewer: Viewer, digest: str) -> None:
        self.viewer = viewer
        self.digest = digest

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SeatGrant) and (self.viewer, self.digest) == (other.viewer, other.digest)

    def __hash__(self) -> int:
        return hash((self.viewer, self.digest))

    def __repr__(self) -> str:
        return f"SeatGrant({self.viewer!r})"  # the hash of a bearer secret stays out of logs


def stream_viewer(log_: EventStore, authorization: str | None) -> tuple[Viewer, SeatGrant | None]:
    """The viewer a stream's ``Authorization`` header names (:func:`viewer_for`: 401 for a token
    that opens no seat), and, for a seat, its grant."""
    viewer = viewer_for(log_, authorization)
    if authorization is None:
        return viewer, None
    return viewer, SeatGrant(viewer, token_hash(authorization.strip().partition(" ")[2].strip()))


def revoked_grants(log_: EventStore, grants: frozenset[Hashable]) -> frozenset[Hashable]:
    """The ``grants`` whose token no longer opens their seat (a new link replaced it), read from
    the game's seats now; seats that cannot be read open nothing."""
    try:
        hashes = read_seats(log_)
    except MortecouilleError:
        return grants
    return frozenset(
        grant
        for grant in grants
        if not isinstance(grant, SeatGrant) or seat_of(hashes, grant.digest) != grant.viewer
    )
