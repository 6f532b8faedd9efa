"""Who is asking and what they may be sent: the service's one road to ``app.seats`` (tokens) and
``app.view`` (redaction). Every body the service sends about a game, a view, a command's answer or a
pushed message, is built here from ``view``/``event_view``, so no endpoint redacts on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    reissue,
    seat_links,
)
from mortecouille.app.view import ChainWitness, Disclosure, chain_links, disclosure, event_view, view, visible
from mortecouille.events.base import Event
from mortecouille.events.stores import EventStore
from mortecouille.web.errors import Unauthorized
from mortecouille.web.live import sse_message

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


class ListenerView:
    """One stream's viewer and what it was sent: the messages of ``live.event_stream``.

    It keeps the log's :class:`~mortecouille.app.view.Disclosure` up to date event by event, the
    last seq sent (to skip what it already sent) and the events it sent sealed: when an event
    reveals some of them (a turn ended, the last fleet sealed, the game ended), a ``revealed``
    message carries them as this viewer may now read them."""

    def __init__(self, viewer: Viewer, lines: Callable[[Event], bytes | None] | None = None) -> None:
        self.viewer = viewer
        self.known = Disclosure()
        self.last_sent = -1
        self.sealed: dict[int, Event] = {}
        #: each event's line as the log holds it, when the service keeps them: the messages then
        #: carry what of the chain this viewer may be sent (``app.view.ChainWitness``)
        self.lines = lines
        self.chain = ChainWitness(viewer)

    def start(self, events: list[Event], after: int) -> list[bytes]:
        self.known = disclosure(events)
        self.last_sent = after
        # what this viewer cannot read yet, sent now or before a reconnection: revealed later
        self.sealed = {e.seq: e for e in events if not visible(e, self.viewer, self.known)}
        if self.lines is not None:  # the chain up to what was sent before, linked, not sent again
            for event in events:
                if event.seq <= after:
                    self.chain.link(event, self.lines(event), self.known)
        return self._send([e for e in events if e.seq > after])

    def more(self, events: list[Event]) -> list[bytes]:
        fresh = [e for e in events if e.seq > self.last_sent]
        messages: list[bytes] = []
        for event in fresh:
            before = self.known
            self.known = self.known.after(event)
            messages += self._send([event])
            if self.known is not before and self.sealed:  # what the log reveals has changed
                messages += self._revealed(event.seq)
        return messages

    def _send(self, events: list[Event]) -> list[bytes]:
        messages = []
        for event in events:
            if self.lines is not None:
                link = self.chain.link(event, self.lines(event), self.known)
                shown = event_view(event, self.viewer, self.known, link)
            else:
                shown = event_view(event, self.viewer, self.known)
            if shown.sealed:
                self.sealed[event.seq] = event
            messages.append(sse_message(seq=event.seq, event="event", data=_encoder.encode(shown)))
            self.last_sent = max(self.last_sent, event.seq)
        return messages

    def _revealed(self, seq: int) -> list[bytes]:
        now_visible = [e for e in self.sealed.values() if visible(e, self.viewer, self.known)]
        if not now_visible:
            return []
        for event in now_visible:
            del self.sealed[event.seq]
        if self.lines is not None:
            lines = self.lines
            views = [
                event_view(event, self.viewer, self.known, self.chain.again(event, lines(event), self.known))
                for event in now_visible
            ]
        else:
            views = [event_view(event, self.viewer, self.known) for event in now_visible]
        body = _encoder.encode({"seq": seq, "events": views})
        return [sse_message(seq=seq, event="revealed", data=body)]
