"""Redaction of the streams' shared rendering (docs/service.md, "Live push").

The streams of one viewer of a game share one rendering (``access.SharedView``), started on the
log when the game's first stream opens, then handed each new batch of events; a stream joins it at
any point with any ``Last-Event-ID``. Promises:

* whatever the moment the rendering started, the moment a stream joined and its ``Last-Event-ID``,
  and however the events came in batches, the stream is sent byte for byte what a rendering of its
  own would send it (``OwnRendering``: its own disclosure, its own sealed events, its own witness
  of the chain from the log's first line), without the log's lines and with them, nonced or not:
  the shared bytes carry nothing another viewer's rendering would not, and the chain a page
  witnesses is the same, backlog included, after a reveal too;
* Anne's secrets (purchases, placements, rulings on her ships, orders, tokens, in games of
  contributed dice too) change nothing a stream of anyone else is sent, at every moment, and no
  such stream carries what a sealed event would say; Anne's own stream shows them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mortecouille.app.seats import Viewer
from mortecouille.app.view import NO_LINK, ChainWitness, Disclosure, disclosure, event_view, visible
from mortecouille.bots.player import choose_orders
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.fleet.commands import BuyShip, SealFleet
from mortecouille.core.life_cycle import EndGame, ResolveTurn
from mortecouille.events.base import Event
from mortecouille.web.access import SharedView
from mortecouille.web.live_streams import sse_message
from tests.test_view import (
    ACTIONS,
    ANNE,
    EVERYONE,
    NON_OWNERS,
    ORDER_CHOICES,
    SEED,
    SHIP_CHOICES,
    SQUARES,
    TOKENS,
    anne_buys,
    anne_orders,
    anne_orders_with_contributions,
    anne_tokens,
    chained,
    mortecouille_table,
    secret_contents,
)

pytestmark = pytest.mark.slow

_encoder = msgspec.json.Encoder()


#: Each event's line as the log holds it (None: the lines are not at hand, no chain is sent).
Lines = Callable[[Event], bytes | None] | None


class OwnRendering:
    """A stream's own rendering, as each stream would make it for itself (the oracle): its own
    disclosure of the log it read, its own sealed events, its own last seq sent, its own witness of
    the chain linked from the log's first line."""

    def __init__(self, viewer: Viewer, lines: Lines = None) -> None:
        self.viewer = viewer
        self.known = Disclosure()
        self.last_sent = -1
        self.sealed: dict[int, Event] = {}
        self.lines = lines
        self.chain = ChainWitness(viewer)

    def start(self, events: Sequence[Event], after: int) -> list[bytes]:
        self.known = disclosure(events)
        self.last_sent = after
        self.sealed = {e.seq: e for e in events if not visible(e, self.viewer, self.known)}
        if self.lines is not None:  # the chain up to what was sent before, linked, not sent again
            for event in events:
                if event.seq <= after:
                    self.chain.link(event, self.lines(event), self.known)
        return self._send([e for e in events if e.seq > after])

    def more(self, events: Sequence[Event]) -> list[bytes]:
        messages: list[bytes] = []
        for event in [e for e in events if e.seq > self.last_sent]:
            before = self.known
            self.known = self.known.after(event)
            messages += self._send([event])
            if self.known is not before and self.sealed:
                messages += self._revealed(event.seq)
        return messages

    def _send(self, events: Sequence[Event]) -> list[bytes]:
        messages = []
        for event in events:
            link = self.chain.link(event, self.lines(event), self.known) if self.lines is not None else NO_LINK
            shown = event_view(event, self.viewer, self.known, link)
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
        lines = self.lines
        views = [
            event_view(event, self.viewer, self.known, self.chain.again(event, lines(event), self.known))
            if lines is not None
            else event_view(event, self.viewer, self.known)
            for event in now_visible
        ]
        return [sse_message(seq=seq, event="revealed", data=_encoder.encode({"seq": seq, "events": views}))]


def batches(events: Sequence[Event], size: int) -> list[Sequence[Event]]:
    return [events[i : i + size] for i in range(0, len(events), size)] if size else [events]


def shared_stream(
    events: Sequence[Event], viewer: Viewer, opened: int, joined: int, after: int, size: int, lines: Lines = None
) -> bytes:
    """What a stream is sent by a shared rendering started on the first ``opened`` events, which
    the stream joins once ``joined`` events are in, with ``Last-Event-ID: after``; the events come
    in batches of ``size``."""
    shared = SharedView(viewer, lines)
    shared.start(events[:opened])
    for batch in batches(events[opened:joined], size):
        shared.more(batch)
    sent = shared.backlog(after)
    for batch in batches(events[joined:], size):
        sent += [part for seq, part in shared.more(batch) if seq > after]
    return b"".join(sent)


def own_stream(
    events: Sequence[Event], viewer: Viewer, joined: int, after: int, size: int, lines: Lines = None
) -> bytes:
    own = OwnRendering(viewer, lines)
    sent = own.start(events[:joined], after)
    for batch in batches(events[joined:], size):
        sent += own.more(batch)
    return b"".join(sent)


def assert_shared_is_own(events: Sequence[Event], data: st.DataObject) -> None:
    """For each viewer, a join drawn: the same bytes, without the log's lines, and with them as a
    log holds them with a nonce on every secret line or as one written before nonces (a secret line
    then hides the chain after it until it is revealed)."""
    plain, nonced = chained(events, nonced=False), chained(events, nonced=True)
    for viewer in EVERYONE:
        joined = data.draw(st.integers(1, len(events)), label="joined")
        opened = data.draw(st.integers(1, joined), label="opened")
        after = data.draw(st.integers(-1, joined - 1), label="after")
        size = data.draw(st.integers(0, 3), label="batch size")
        shared = shared_stream(events, viewer, opened, joined, after, size)
        assert shared == own_stream(events, viewer, joined, after, size), (viewer, opened, joined, after)
        for log, lines in (plain, nonced):

            def line(event: Event, by_seq: list[bytes | None] = lines) -> bytes | None:
                return by_seq[event.seq]

            shared = shared_stream(log, viewer, opened, joined, after, size, line)
            own = own_stream(log, viewer, joined, after, size, line)
            assert shared == own, (viewer, opened, joined, after, lines is nonced[1])


def assert_streams_same_for_everyone_but_anne(one: list[Event], other: list[Event], moments: list[int]) -> None:
    """At each moment, what a stream of anyone but Anne was sent, opened at the start or now, is
    the same whatever Anne's secret was and says nothing a sealed event would; Anne's differs."""
    for now in moments:
        for viewer in NON_OWNERS:
            hidden = secret_contents(one[:now], viewer)
            for joined in (1, now):
                sent = shared_stream(one[:now], viewer, 1, joined, -1, 1)
                assert sent == shared_stream(other[:now], viewer, 1, joined, -1, 1), (viewer, now, joined)
                assert not [content for content in hidden if content in sent], (viewer, now, joined)
    last = moments[-1]
    if one[:last] != other[:last]:
        assert shared_stream(one[:last], ANNE, 1, 1, -1, 1) != shared_stream(other[:last], ANNE, 1, 1, -1, 1)


SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    st.lists(SHIP_CHOICES, min_size=2, max_size=2),
    st.lists(SHIP_CHOICES, min_size=2, max_size=2),
    st.tuples(SQUARES, SQUARES).filter(lambda s: s[0] != s[1]),
    st.sampled_from(["N", "E", "S"]),
    st.data(),
)
def test_the_shared_streams_of_purchases_are_each_viewers_own(
    fleet: list[tuple[str, tuple[str, ...]]],
    other_fleet: list[tuple[str, tuple[str, ...]]],
    squares: tuple[tuple[int, int], tuple[int, int]],
    facing: str,
    data: st.DataObject,
) -> None:
    one, moments = anne_buys(fleet, squares, facing)
    other, _ = anne_buys(other_fleet, squares, facing)
    assert_shared_is_own(one, data)
    assert_streams_same_for_everyone_but_anne(one, other, moments)


def orders_game(play: Callable[[int, list[int], int], Callable[[], tuple[list[Event], list[int]]]]) -> Callable[..., None]:
    @SETTINGS
    @given(st.integers(1, 2), ORDER_CHOICES, ORDER_CHOICES, st.integers(0, len(ACTIONS) - 1), st.data())
    def check(turn: int, choices: list[int], other_choices: list[int], replacement: int, data: st.DataObject) -> None:
        one, moments = play(turn, choices, replacement)()
        other, _ = play(turn, other_choices, replacement)()
        assert_shared_is_own(one, data)
        assert_streams_same_for_everyone_but_anne(one, other, moments)

    return check


test_the_shared_streams_of_orders_are_each_viewers_own = orders_game(anne_orders)
test_the_shared_streams_of_orders_with_contributed_dice_are_each_viewers_own = orders_game(
    anne_orders_with_contributions
)


@SETTINGS
@given(st.integers(1, 3), TOKENS, TOKENS, TOKENS, TOKENS, st.data())
def test_the_shared_streams_of_blockade_tokens_are_each_viewers_own(
    turn: int,
    first: tuple[str | None, ...],
    second: tuple[str | None, ...],
    other_first: tuple[str | None, ...],
    other_second: tuple[str | None, ...],
    data: st.DataObject,
) -> None:
    one, moments = anne_tokens(turn, first, second)
    other, _ = anne_tokens(turn, other_first, other_second)
    assert_shared_is_own(one, data)
    assert_streams_same_for_everyone_but_anne(one, other, moments)


def turns_revealed(turns: int, strategy: str) -> list[Event]:
    """Fleets bought secretly and revealed by the last seal, ``turns`` turns played (each turn's
    orders revealed by its resolution), then orders given and the game ended (revealing them)."""
    table = mortecouille_table()
    table.apply(BuyShip(player="Anne", kind="red-small", name="Hope", options=("siren",)))
    table.apply(BuyShip(player="Bart", kind="blue-big", name="Kraken", options=("extra-crew",)))
    table.apply(SealFleet(player="Anne", forfeit=True))
    table.apply(SealFleet(player="Bart", forfeit=True))
    table.apply(PlaceShip(ship="Hope", at=(3, 2), facing="N"))
    table.apply(PlaceShip(ship="Kraken", at=(5, 6), facing="S"))
    for _ in range(turns):
        for player in ("Anne", "Bart"):
            for order in choose_orders(table.state, player, strategy):
                table.apply(order)
        table.apply(ResolveTurn(partial=True))
    for order in choose_orders(table.state, "Anne", strategy):
        table.apply(order)
    table.apply(EndGame(reason="referee", seed=SEED))
    return table.events


@SETTINGS
@given(st.integers(0, 2), st.sampled_from(["seed", "fixed"]), st.data())
def test_the_shared_streams_reveal_as_a_streams_own_rendering_does(
    turns: int, strategy: str, data: st.DataObject
) -> None:
    """Streams joined before, at and after each reveal (the last seal, each turn resolved, the
    game ended) are sent what their own rendering would send them, ``revealed`` messages and the
    chain included: a line revealed no longer hides the hashes after it, in a backlog either."""
    events = turns_revealed(turns, strategy)
    for _ in range(3):
        assert_shared_is_own(events, data)
