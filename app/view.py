"""What each viewer may see of a game (docs/service.md, "What each viewer sees").

Everything the service sends, a page's view, a command's answer or a pushed message, is built
here, by :func:`view` and :func:`event_view`, so redaction has one place and no channel can
forget it. Leaks are prevented by construction, in two steps:

1. **Which events a viewer may read.** :func:`secret_of` says whose secret an event is and whether
   the log has revealed it yet (orders and tokens once their turn is resolved, purchases once
   every fleet is sealed, everything once the game has ended); :func:`visible` lets the owner of a
   secret read it at once and everyone else (spectators, the referee, the other players) only once
   it is revealed. An event a viewer may not read is sent *sealed*: seq, type, turn, player and
   ship, nothing else (:func:`event_view`).
2. **The public log.** Each event a viewer may not read is replaced by its *shadow*
   (:func:`shadow`): the same event with every secret field set to a neutral value (an order set
   of one idle action, tokens with none), or nothing when even a neutral copy would say more than
   the sealed event does (a purchase, a ship placed before every fleet is sealed). A shadow carries
   exactly what the sealed event shows (this ship has orders, this player has sealed), which is
   public. Every derived field of the view, the board, ships, sheets, who is waiting, the caption,
   the picture and the explanation, comes from folding this public log, never the full one: what
   a viewer may not read cannot reach what they are sent.

What is revealed is judged against the whole log given (what the table knows now), and the
position against ``seq``: scrubbing back to before a turn was resolved shows the orders that turn
has since revealed.

3. **The chain, for the pages that witness it** (docs/service.md, "Phones as witnesses"). Given the
   log's lines, each event carries its ``hash`` when that hash says nothing a guess could be
   checked against (:func:`chain_links`): when the viewer may read the line and every hash before
   it is sendable too, or when the line carries a nonce (128 random bits no guesser has); its
   ``prev`` when the hash it equals is sendable; and the exact ``line`` (for the page to hash
   again) when the viewer may read it and its ``prev`` is sendable. A line of a log written before
   nonces that the viewer may not read hides its hash and every hash after it, until it is
   revealed or a nonced line follows.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import msgspec

from mortecouille.app.receipts import turn_head_code
from mortecouille.app.seats import Viewer
from mortecouille.core.board.geometry import square_name
from mortecouille.core.contributions import awaited_reveals, contributed, current_round
from mortecouille.core.errors import BadInput
from mortecouille.core.fleet.commands import fleet_of
from mortecouille.core.fleet.purchase import FleetSheet, status_sheet
from mortecouille.core.game import evolve, fold
from mortecouille.core.narration import position_caption
from mortecouille.core.questions import asked_of
from mortecouille.core.state import EMPTY, GameState, ShipState
from mortecouille.core.waiting import acting_players, players_awaiting_orders
from mortecouille.events.base import Event
from mortecouille.events.blockade import TokensGiven
from mortecouille.events.board import Board
from mortecouille.events.dice import DiceContributionAbsent
from mortecouille.events.fleet import FleetSealed, ShipBought
from mortecouille.events.game import GameCreated, GameEnded, TurnEnded, TurnStarted
from mortecouille.events.movement import ShipPlaced
from mortecouille.events.orders import Idle, OrderGiven, OrderWithdrawn
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.schema import event_tag
from mortecouille.events.secrecy import PURCHASES, SECRET_TYPES
from mortecouille.replays.pictures.turns import opening_picture, outcome_picture
from mortecouille.replays.reading.describe import describe_event
from mortecouille.replays.reading.explain import ExplainLine, explain_turn, story_span

Status = Literal["buying", "placing", "playing", "ended"]

#: The envelope and schema fields an event's ``data`` never carries: ``seq`` and ``type`` have
#: fields of their own, ``v`` is the log's business, and ``prev``/``hash`` are the chain's (sent
#: beside the data when they may be: :func:`chain_links`).
_NOT_DATA = frozenset({"seq", "prev", "hash", "v", "type"})


# --- what is sent ------------------------------------------------------------------------------


class EventView(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One event as a viewer may see it. A sealed event has ``sealed`` true and only ``seq``,
    ``type``, ``turn``, ``player`` and ``ship``; a readable one adds ``text`` (the log's line for
    it, as ``log`` prints it) and ``data`` (its fields, without ``seq``, ``type``, ``v``, ``prev``
    and ``hash``). ``turn`` is the turn the event belongs to (being ordered, or being resolved).
    ``prev``, ``hash`` and ``line`` (the line as the log holds it) are the chain's, each present
    only when it may be sent to this viewer (:func:`chain_links`)."""

    seq: int
    type: str
    turn: int
    sealed: bool
    player: str | None = None
    ship: str | None = None
    text: str | None = None
    data: dict[str, Any] | None = None
    prev: str | None = None
    hash: str | None = None
    line: str | None = None


class Link(msgspec.Struct, frozen=True):
    """What of an event's place in the chain a viewer may be sent (None: not that)."""

    prev: str | None = None
    hash: str | None = None
    line: str | None = None


#: Nothing of the chain: what is sent when the log's lines are not at hand.
NO_LINK = Link()


class ShipView(msgspec.Struct, frozen=True, kw_only=True):
    """A ship on the public board: where it is (``square`` like ``"C5"``, ``at`` as (column,
    row) from 0; both None until placed), whose, and how it is doing."""

    id: str
    kind: str
    owner: str | None
    square: str | None
    at: tuple[int, int] | None
    facing: str
    damage: float
    afloat: bool
    sunk: bool
    lost: bool
    gone: bool
    options: tuple[str, ...]
    wind: int
    fire: str | None
    countdown: int | None
    catapult_hits: int
    bursts_in_a_row: int
    fireship: bool


class TurnSpan(msgspec.Struct, frozen=True):
    """A resolved turn's place in the log: the seqs of its ``turn-started`` and ``turn-ended``."""

    turn: int
    first: int
    last: int


class TurnHeadCode(msgspec.Struct, frozen=True):
    """The head code read aloud after ``turn``: twelve digits stretched from the hash of that
    turn's ``turn-ended``, at ``seq``, in groups of four (docs/service.md, "Head codes")."""

    turn: int
    seq: int
    code: str


class OwnContribution(msgspec.Struct, frozen=True, kw_only=True):
    """A player's own part in the current turn's dice (D3): the commitment they sent (None: none
    yet) and whether their contribution is revealed. All of it is public; it is spelt out for the
    player's page, which keeps the contribution itself under ``turn``."""

    turn: int
    commitment: str | None
    revealed: bool


class WithheldReveal(msgspec.Struct, frozen=True, kw_only=True):
    """A turn resolved without a player's committed dice contribution (D3,
    ``dice-contribution-absent``, public): whose, which turn, the referee's reason, and where."""

    seq: int
    turn: int
    player: str
    reason: str


class GameView(msgspec.Struct, frozen=True, kw_only=True):
    """A game as ``viewer`` may see it after event ``seq`` (docs/service.md, "The view").

    ``next_seq`` is the seq the log's next event will have (the log's length, whatever ``seq``).
    ``events`` holds the events from ``events_from`` to ``seq`` (by default the last resolved
    turn's story and the current turn's; the stream has them all). ``fleets``: the viewer's own
    sheet always, every sheet once every fleet is sealed. ``waiting``: each player the turn waits
    for, with their ships still without orders (tokens); ``submitted``: the players with a ship
    to order and none missing. ``explanation``: the last turn resolved by ``seq``, told event by
    event as ``explain`` tells it. ``seed`` is set once the game has ended (D2). ``deadline``
    (ISO 8601) is the server's to fill. ``withheld``: every turn resolved by ``seq`` without a
    player's committed dice contribution (D3), in order.
    """

    game: str
    ruleset: str
    seq: int
    next_seq: int
    viewer: Viewer
    players: tuple[str, ...]
    budget: int
    board: Board
    dice_mode: str
    turn: int
    position: str
    status: Status
    winner: str | None
    ended_reason: str | None
    waiting: dict[str, tuple[str, ...]]
    submitted: tuple[str, ...]
    sealed: tuple[str, ...]
    fleets: dict[str, FleetSheet]
    ships: tuple[ShipView, ...]
    board_svg: str
    events_from: int
    events: tuple[EventView, ...]
    turns: tuple[TurnSpan, ...]
    explanation: tuple[ExplainLine, ...]
    seed_salt: str | None
    seed_hmac: str | None
    seed_sha256: str | None
    seed: str | None
    dice_scheme: str | None
    locked: bool
    committed: tuple[str, ...]
    awaiting_reveal: tuple[str, ...]
    own_contribution: OwnContribution | None
    head_code: TurnHeadCode | None
    deadline: str | None = None
    withheld: tuple[WithheldReveal, ...] = ()


# --- what the log has revealed ---------------------------------------------------------------


class Disclosure(msgspec.Struct, frozen=True, kw_only=True):
    """What a log has made public so far, which decides what every viewer may read.

    Built by :func:`disclosure` over a whole log, or one event at a time with :meth:`after` (the
    stream, as events arrive). ``turn_ends`` lists each ``turn-ended`` as (seq, turn), so the turn
    an event belongs to is found for any seq.
    """

    ruleset: str = ""
    players: tuple[str, ...] = ()
    #: the last turn resolved (0: none yet)
    resolved: int = 0
    ended: bool = False
    #: the players whose fleet is sealed, in the order they sealed
    sealed: tuple[str, ...] = ()
    #: each ship's owner, as its purchase, placement or set-up named it
    owners: dict[str, str] = {}
    #: the ships bought (not set up by a scenario nor placed by the referee in blockade)
    bought: frozenset[str] = frozenset()
    turn_ends: tuple[tuple[int, int], ...] = ()

    @property
    def purchases_revealed(self) -> bool:
        """Every fleet is sealed (F3), or the game has ended: purchases are public."""
        return self.ended or (bool(self.players) and all(p in self.sealed for p in self.players))

    def turn_of(self, seq: int) -> int:
        """The turn the event at ``seq`` belongs to: the one after the last turn ended before it."""
        index = bisect.bisect_left(self.turn_ends, (seq, -1))
        return self.turn_ends[index - 1][1] + 1 if index else 1

    def after(self, event: Event) -> Disclosure:
        """What is public once ``event`` is in the log too."""
        replace = msgspec.structs.replace
        if isinstance(event, GameCreated):
            return replace(self, ruleset=event.ruleset, players=event.players)
        if isinstance(event, TurnEnded):
            return replace(self, resolved=event.turn, turn_ends=(*self.turn_ends, (event.seq, event.turn)))
        if isinstance(event, GameEnded):
            return replace(self, ended=True)
        if isinstance(event, FleetSealed) and event.player not in self.sealed:
            return replace(self, sealed=(*self.sealed, event.player))
        if isinstance(event, ShipBought):
            return replace(
                self, owners={**self.owners, event.ship: event.player}, bought=self.bought | {event.ship}
            )
        owner = getattr(event, "owner", None)
        ship = getattr(event, "ship", None)
        if isinstance(owner, str) and isinstance(ship, str) and self.owners.get(ship) != owner:
            return replace(self, owners={**self.owners, ship: owner})
        return self


def disclosure(events: Sequence[Event]) -> Disclosure:
    """What ``events`` (a whole log, or its beginning) have made public."""
    known = Disclosure()
    for event in events:
        known = known.after(event)
    return known


class Secret(msgspec.Struct, frozen=True):
    """Whose secret an event is (``owner``) and whether the log has revealed it to all."""

    owner: str | None
    revealed: bool


def secret_of(event: Event, known: Disclosure) -> Secret | None:
    """None for a public event; else whose secret it is and whether it is revealed yet.

    Orders and tokens: until the turn they are for is resolved. Purchases, the money a seal
    forfeits, a bought ship placed (its kind shows) and a ruling changing a bought ship: until
    every fleet is sealed. The seed is only in ``game-ended``, public. An ended game reveals
    everything.
    """
    if not isinstance(event, SECRET_TYPES):
        return None  # the one definition of what may be secret (events/secrecy.py)
    if isinstance(event, OrderGiven | OrderWithdrawn):
        return Secret(known.owners.get(event.ship), known.ended or event.turn <= known.resolved)
    if isinstance(event, TokensGiven):
        return Secret(known.owners.get(event.ship), known.ended or known.turn_of(event.seq) <= known.resolved)
    if isinstance(event, PURCHASES):
        return Secret(getattr(event, "player", None), known.purchases_revealed)
    if isinstance(event, ShipPlaced) and event.ship in known.bought:
        return Secret(known.owners.get(event.ship), known.purchases_revealed)
    if isinstance(event, RulingRecorded) and not known.purchases_revealed:
        # a ruling that moves or changes a ship still secretly bought shows that ship: sealed with
        # the purchase (its owner sees it; nobody does if it changes ships of several players)
        owners = {known.owners.get(a.ship) for a in event.adjustments if a.ship in known.bought}
        if owners:
            return Secret(owners.pop() if len(owners) == 1 else None, False)
    return None


def visible(event: Event, viewer: Viewer, known: Disclosure) -> bool:
    """May ``viewer`` read ``event`` now? A public or revealed event, anyone; a secret one, its
    owner only (a secret without a known owner, nobody until revealed)."""
    secret = secret_of(event, known)
    if secret is None or secret.revealed:
        return True
    return viewer.role == "player" and secret.owner is not None and viewer.player == secret.owner


def _player_and_ship(event: Event, known: Disclosure) -> tuple[str | None, str | None]:
    ship = getattr(event, "ship", None)
    ship = ship if isinstance(ship, str) else None
    player = getattr(event, "player", None) or getattr(event, "owner", None)
    if not isinstance(player, str):
        player = known.owners.get(ship) if ship is not None else None
    return player, ship


def event_view(event: Event, viewer: Viewer, known: Disclosure, link: Link = NO_LINK) -> EventView:
    """``event`` as ``viewer`` may see it, given what the log has revealed (``known``, which
    must include ``event``): whole, or sealed, with what of its place in the chain ``link`` says
    may be sent (:func:`chain_links`; none by default). What each pushed message sends."""
    player, ship = _player_and_ship(event, known)
    turn = known.turn_of(event.seq)
    if not visible(event, viewer, known):
        return EventView(
            seq=event.seq,
            type=event_tag(type(event)),
            turn=turn,
            sealed=True,
            player=player,
            ship=ship,
            prev=link.prev,
            hash=link.hash,
        )
    body = msgspec.to_builtins(event)
    return EventView(
        seq=event.seq,
        type=event_tag(type(event)),
        turn=turn,
        sealed=False,
        player=player,
        ship=ship,
        text=describe_event(event),
        data={key: value for key, value in body.items() if key not in _NOT_DATA},
        prev=link.prev,
        hash=link.hash,
        line=link.line,
    )


# --- the chain a page may witness -------------------------------------------------------------

_NONCE_MEMBER = b'"nonce":'


def carries_nonce(line: bytes) -> bool:
    """Whether a log line carries a ``nonce`` of its own (a top-level member)."""
    if _NONCE_MEMBER not in line:
        return False
    try:
        body = msgspec.json.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return False
    return isinstance(body, dict) and isinstance(body.get("nonce"), str)


class ChainWitness:
    """What of each line's place in the chain one viewer may be sent, the lines linked one at a
    time in the log's order from its first (:meth:`link`), given what the log has revealed: a hash
    is sendable when it is a function of what the viewer may read and of random bits nobody can
    guess, never of a secret they may not read that a guess could be checked against.

    The hash of line n is sendable when the line carries a nonce (a guess of it needs 128 random
    bits), or when the viewer may read it and the hash of line n - 1 is sendable (the genesis hash
    before line 0 is). Its ``prev`` is the hash of line n - 1: sent when that is sendable. Its
    bytes, which hold its ``prev``, are sent when the viewer may read it and its ``prev`` is
    sendable. So a line without a nonce (a log written before nonces) that the viewer may not read
    hides its own hash and every later one, until a nonced line follows or it is revealed.

    Kept for that: the lines linked that hide the chain (not readable, no nonce), dropped as the
    log reveals them, and the nonced lines after the first of them; nothing else, so a stream's
    witness does not grow with the log."""

    def __init__(self, viewer: Viewer) -> None:
        self.viewer = viewer
        self._hiding: dict[int, Event] = {}
        self._nonced: list[int] = []
        self._known: Disclosure | None = None

    def _settle(self, known: Disclosure) -> None:
        if known is self._known:
            return
        self._known = known
        if self._hiding:
            self._hiding = {s: e for s, e in self._hiding.items() if not visible(e, self.viewer, known)}
            if not self._hiding:
                self._nonced.clear()

    def sendable(self, seq: int, known: Disclosure) -> bool:
        """Whether the hash of line ``seq`` (linked already; -1: the genesis hash) may be sent."""
        self._settle(known)
        hiding = max((at for at in self._hiding if at <= seq), default=None)
        return hiding is None or any(hiding < at <= seq for at in self._nonced)

    def link(self, event: Event, line: bytes | None, known: Disclosure) -> Link:
        """``event``'s link, every event before it linked already (``line``: its line as the log
        holds it, None when not at hand: then no bytes are sent and no nonce is counted on)."""
        before = self.sendable(event.seq - 1, known)
        readable = visible(event, self.viewer, known)
        nonced = line is not None and carries_nonce(line)
        if not readable and not nonced:
            self._hiding[event.seq] = event
        elif nonced and self._hiding:
            self._nonced.append(event.seq)
        return Link(
            prev=event.prev if before else None,
            hash=event.hash if nonced or (readable and before) else None,
            line=line.decode("utf-8") if readable and before and line is not None else None,
        )

    def again(self, event: Event, line: bytes | None, known: Disclosure) -> Link:
        """The link of ``event``, linked already, as it stands now (the log revealed it since)."""
        before = self.sendable(event.seq - 1, known)
        readable = visible(event, self.viewer, known)
        return Link(
            prev=event.prev if before else None,
            hash=event.hash if self.sendable(event.seq, known) else None,
            line=line.decode("utf-8") if readable and before and line is not None else None,
        )


def chain_links(
    events: Sequence[Event], lines: Sequence[bytes | None], viewer: Viewer, known: Disclosure
) -> list[Link]:
    """The link of each of ``events`` (a log from its first line, ``lines`` its lines as the log
    holds them, one each) that ``viewer`` may be sent, given ``known`` (:class:`ChainWitness`)."""
    witness = ChainWitness(viewer)
    return [witness.link(event, line, known) for event, line in zip(events, lines, strict=True)]


def shadow(event: Event) -> Event | None:
    """What the fold of a viewer who may not read ``event`` takes in its place: the event with its
    secret fields neutral, or None when even that would say more than the sealed event does.

    A shadow order set is one idle action, the neutral order, and shadow tokens are none: the
    ship counts as ordered (public: "waiting for") while nothing of what it was told is known (the
    fold counts a ship as ordered only with some action; no field of the view shows the fold's
    orders, so the placeholder is never sent). A shadow seal forfeits
    nothing: the player has sealed (public) an empty fleet as far as this viewer knows. A purchase,
    and a bought ship placed before every fleet is sealed, leave no shadow."""
    seq = event.seq
    if isinstance(event, OrderGiven):
        return OrderGiven(turn=event.turn, ship=event.ship, actions=(Idle(),), seq=seq)
    if isinstance(event, OrderWithdrawn):
        return OrderWithdrawn(turn=event.turn, ship=event.ship, seq=seq)
    if isinstance(event, TokensGiven):
        return TokensGiven(ship=event.ship, tokens=(), seq=seq)
    if isinstance(event, FleetSealed):
        return FleetSealed(player=event.player, forfeited=0, seq=seq)
    return None


def public_log(events: Sequence[Event], viewer: Viewer, known: Disclosure) -> list[Event]:
    """``events`` as ``viewer``'s fold takes them: each event they may read, else its shadow."""
    readable: list[Event] = []
    for event in events:
        if visible(event, viewer, known):
            readable.append(event)
        else:
            stand_in = shadow(event)
            if stand_in is not None:
                readable.append(stand_in)
    return readable


def public_state(events: Sequence[Event], viewer: Viewer) -> GameState:
    """The fold of ``viewer``'s public log of ``events`` (a whole log): the game now as far as
    they may know it, what every field a viewer is sent is derived from."""
    return fold(public_log(events, viewer, disclosure(events)))


# --- the view ----------------------------------------------------------------------------------


def view(
    events: Sequence[Event],
    viewer: Viewer,
    seq: int | None = None,
    since: int | None = None,
    lines: Sequence[bytes | None] | None = None,
) -> GameView:
    """The game of ``events`` (a whole log) as ``viewer`` may see it after event ``seq`` (default:
    the last). ``since``: list the events after that seq (default: from the start of the last
    resolved turn's story). ``lines``: the log's lines as it holds them (one per event), when at
    hand: the events listed then carry what of the chain the viewer may be sent (:func:`chain_links`).

    >>> from mortecouille.app.seats import SPECTATOR, Viewer
    >>> from mortecouille.core.dice import TableDice
    >>> from mortecouille.core.fleet.catalogue import RULES_VERSION
    >>> from mortecouille.core.fleet.commands import BuyShip
    >>> from mortecouille.core.game import decide, fold
    >>> from mortecouille.core.life_cycle import CreateGame
    >>> log = decide(EMPTY, CreateGame(game="duel", ruleset="mortecouille", players=("Anne", "Bart"),
    ...     budget=50000, board=Board(width=10, height=10), dice_mode="table",
    ...     rules_version=RULES_VERSION), TableDice())
    >>> log += decide(fold(log), BuyShip(player="Anne", kind="red-small", name="Hope"), TableDice())
    >>> log = [msgspec.structs.replace(event, seq=seq) for seq, event in enumerate(log)]
    >>> [(e.type, e.sealed, e.player, e.ship) for e in view(log, SPECTATOR).events][1:]
    [('ship-bought', True, 'Anne', 'Hope')]
    >>> view(log, Viewer.of_player("Anne")).fleets["Anne"].ships[0].kind
    'red-small'
    >>> view(log, SPECTATOR).fleets, view(log, SPECTATOR).status
    ({}, 'buying')
    """
    if not events:
        raise BadInput("seq", "the log is empty: no game to view")
    last = len(events) - 1
    at = last if seq is None else seq
    if not 0 <= at <= last:
        raise BadInput("seq", "{seq} is not in the log (0..{last})", seq=seq, last=last)
    known = disclosure(events)
    readable = public_log(events[: at + 1], viewer, known)

    state = EMPTY
    before_turn: GameState | None = None  # the state as the last turn-started found it
    turn_events: list[Event] = []  # from that turn-started to its turn-ended (or ``seq``)
    for event in readable:
        state = evolve(state, event)
        if isinstance(event, TurnStarted):
            before_turn, turn_events = state, []
        if before_turn is not None and not (turn_events and isinstance(turn_events[-1], TurnEnded)):
            turn_events.append(event)

    first = _events_from(events, at, since)
    return GameView(
        game=state.game,
        ruleset=state.ruleset,
        seq=at,
        next_seq=len(events),
        viewer=viewer,
        players=state.players,
        budget=state.budget,
        board=state.board,
        dice_mode=state.dice_mode,
        turn=state.turn,
        position=position_caption(state).render(),
        status=_status(state),
        winner=state.winner,
        ended_reason=state.end_reason,
        waiting=dict(players_awaiting_orders(state)),
        submitted=_submitted(state),
        sealed=tuple(p for p in state.players if p in state.fleets and state.fleets[p].sealed),
        fleets=_fleets(state, viewer, known),
        ships=tuple(_ship_view(ship) for _, ship in sorted(state.ships.items())),
        board_svg=_picture(state, before_turn, turn_events),
        events_from=first,
        events=_listed(events, first, at, viewer, known, lines),
        turns=_turns(events),
        explanation=_explanation(readable, state, viewer, known, events),
        seed_salt=state.seed_salt,
        seed_hmac=state.seed_hmac,
        seed_sha256=state.seed_sha256,
        seed=state.revealed_seed,
        dice_scheme=state.dice_scheme,
        locked=contributed(state) and current_round(state).locked,
        committed=tuple(sorted(current_round(state).commitments)) if contributed(state) else (),
        awaiting_reveal=_awaiting_reveal(state),
        own_contribution=_own_contribution(state, viewer),
        head_code=_head_code(events, at),
        withheld=tuple(
            WithheldReveal(seq=e.seq, turn=e.turn, player=e.player, reason=e.reason)
            for e in readable
            if isinstance(e, DiceContributionAbsent)
        ),
    )


def _listed(
    events: Sequence[Event],
    first: int,
    at: int,
    viewer: Viewer,
    known: Disclosure,
    lines: Sequence[bytes | None] | None,
) -> tuple[EventView, ...]:
    """The events from ``first`` to ``at`` as ``viewer`` may see them, with their links when the
    log's ``lines`` are given (linked from the log's first line: a link hangs on every one before)."""
    if lines is None:
        return tuple(event_view(event, viewer, known) for event in events[first : at + 1])
    links = chain_links(events[: at + 1], lines[: at + 1], viewer, known)
    return tuple(event_view(events[seq], viewer, known, links[seq]) for seq in range(first, at + 1))


def _awaiting_reveal(state: GameState) -> tuple[str, ...]:
    """The players whose committed contribution the locked current turn still waits for (D3);
    none before the lock (nobody may reveal yet) or once the game has ended."""
    if not contributed(state) or state.ended or not current_round(state).locked:
        return ()
    return tuple(awaited_reveals(state))


def _own_contribution(state: GameState, viewer: Viewer) -> OwnContribution | None:
    """The viewing player's part in the current turn's dice; None for anyone else, or in a game
    whose dice take no contributions."""
    if not contributed(state) or viewer.player is None or viewer.player not in state.players:
        return None
    now = current_round(state)
    return OwnContribution(
        turn=now.turn,
        commitment=now.commitments.get(viewer.player),
        revealed=viewer.player in now.revealed,
    )


def _head_code(events: Sequence[Event], at: int) -> TurnHeadCode | None:
    """The code of the last turn resolved by ``at`` (a ``turn-ended`` is public, and everything
    before it is by then: docs/service.md, "Head codes")."""
    found = turn_head_code(events, at)
    if found is None:
        return None
    turn, code = found
    return TurnHeadCode(turn=turn, seq=code.seq, code=code.code)


def _events_from(events: Sequence[Event], at: int, since: int | None) -> int:
    """The first seq ``events`` lists: after ``since``, or the start of the story of the last
    turn resolved by ``at`` (the event after the turn-ended before it; 0 before two turns ended)."""
    if since is not None:
        if since < -1:
            raise BadInput("since", "{since} is not a seq (-1 or more)", since=since)
        return min(since + 1, at + 1)
    ends = [event.seq for event in events[: at + 1] if isinstance(event, TurnEnded)]
    return ends[-2] + 1 if len(ends) >= 2 else 0


def _status(state: GameState) -> Status:
    """Where the game stands: buying fleets (mortecouille, until every fleet is sealed), placing
    ships (until every ship bought, or of a blockade game, is on the board and a turn resolved),
    playing, or ended."""
    if state.ended:
        return "ended"
    if state.turn > 1 or state.scenario:
        return "playing"
    if asked_of(state).buys_fleets:
        if not all(p in state.fleets and state.fleets[p].sealed for p in state.players):
            return "buying"
        if any(ship.at is None and not ship.sunk for ship in state.ships.values()):
            return "placing"
        return "playing"
    return "playing" if any(ship.afloat for ship in state.ships.values()) else "placing"


def _submitted(state: GameState) -> tuple[str, ...]:
    """The players with a ship that takes orders (tokens) this turn and none still missing."""
    if state.ended:
        return ()
    waiting = players_awaiting_orders(state)
    ordering = acting_players(state)
    return tuple(p for p in state.players if p in ordering and p not in waiting)


def _fleets(state: GameState, viewer: Viewer, known: Disclosure) -> dict[str, FleetSheet]:
    """The F4 sheets this viewer may read: their own always, every one once purchases are public."""
    if not asked_of(state).buys_fleets or state.scenario:
        return {}
    damage: Mapping[str, int] = {sid: int(ship.damage) for sid, ship in state.ships.items()}
    if known.purchases_revealed:
        shown: tuple[str, ...] = state.players
    elif viewer.player is not None and viewer.player in state.players:
        shown = (viewer.player,)
    else:
        shown = ()
    return {player: status_sheet(fleet_of(state, player), damage) for player in shown}


def _ship_view(ship: ShipState) -> ShipView:
    return ShipView(
        id=ship.id,
        kind=ship.kind,
        owner=ship.owner,
        square=square_name(ship.at) if ship.at is not None else None,
        at=ship.at,
        facing=ship.facing,
        damage=float(ship.damage),
        afloat=ship.afloat,
        sunk=ship.sunk,
        lost=ship.lost,
        gone=ship.gone,
        options=ship.options,
        wind=ship.wind,
        fire=ship.fire,
        countdown=ship.countdown,
        catapult_hits=ship.catapult_hits,
        bursts_in_a_row=ship.bursts_in_a_row,
        fireship=ship.fireship,
    )


def _picture(state: GameState, before_turn: GameState | None, turn_events: Sequence[Event]) -> str:
    """The position drawn as ``render`` draws it: the last turn's outcome (from its start, with
    its paths, collisions and shots, as far as the log goes), or the board before turn 1."""
    if before_turn is None:
        return opening_picture(state)
    turn = next(e.turn for e in turn_events if isinstance(e, TurnStarted))
    return outcome_picture(before_turn, state, turn_events, turn)


def _turns(events: Sequence[Event]) -> tuple[TurnSpan, ...]:
    """Every resolved turn of the log with its first and last seq, for scrubbing."""
    spans = []
    started: dict[int, int] = {}
    for event in events:
        if isinstance(event, TurnStarted):
            started[event.turn] = event.seq
        elif isinstance(event, TurnEnded) and event.turn in started:
            spans.append(TurnSpan(event.turn, started[event.turn], event.seq))
    return tuple(spans)


def _explanation(
    readable: Sequence[Event], state: GameState, viewer: Viewer, known: Disclosure, events: Sequence[Event]
) -> tuple[ExplainLine, ...]:
    """The last turn resolved in ``readable`` told as ``explain`` tells it, from the public log;
    lines of events this viewer may not read (their shadows) are left out."""
    done = [event.turn for event in readable if isinstance(event, TurnEnded)]
    if not done:
        return ()
    span = story_span(readable, done[-1])
    lines = explain_turn(readable, done[-1], span=span)
    return tuple(line for line in lines if visible(events[line.seq], viewer, known))
