"""What each viewer may see (docs/service.md): one test per secret, named after
what it protects, and the non-interference property over random games of both rulesets: another
player's secret, changed, changes nothing any other viewer is sent, nor what a fork copies or
answers the referee."""

from __future__ import annotations

import doctest
import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mortecouille.app import receipts as receipts_module
from mortecouille.app import view as view_module
from mortecouille.app.botgame import DEMO_BOARD, play_in_memory, set_up_demo_fleets
from mortecouille.app.commands import SeedCommitment, new_game, run_command
from mortecouille.app.fork import fork_events
from mortecouille.app.seats import REFEREE, SPECTATOR, Viewer
from mortecouille.app.view import (
    EventView,
    GameView,
    disclosure,
    event_view,
    secret_of,
    shadow,
    view,
    visible,
)
from mortecouille.bots.player import choose_orders
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.contributions import CommitDiceContribution, LockTurn, RevealDiceContribution
from mortecouille.core.dice import (
    CONTRIBUTED,
    DiceSource,
    SeededDice,
    TableDice,
    contribution_commitment,
    salted_commitment,
)
from mortecouille.core.errors import BadInput, MortecouilleError, RuleViolation
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.fleet.commands import BuyShip, EquipFleet, EquipShip, SealFleet, WithdrawShip
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import Command, CreateGame, EndGame, ResolveTurn
from mortecouille.core.narration import position_caption
from mortecouille.core.rulings import RecordRuling
from mortecouille.core.state import EMPTY, GameState
from mortecouille.core.turn_commands import GiveOrder, GiveTokens, WithdrawOrder
from mortecouille.core.waiting import players_awaiting_orders
from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.board import Board
from mortecouille.events.codec import stamp_all
from mortecouille.events.movement import ShipPlaced
from mortecouille.events.orders import Advance, Attack, Idle, Maneuver, Order, OrderGiven
from mortecouille.events.rulings import Adjustment
from mortecouille.events.secrecy import SECRET_TYPES
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.describe import describe_event

pytestmark = pytest.mark.slow

SEED = "view-test-seed-0123456789"


@pytest.fixture(autouse=True)
def quick_head_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The head code's memory-hard stretch (0.1 s a hash, tests/test_head_codes.py) made quick:
    every view here shows the code of a turn's end, of logs chained several ways, and any function
    of the hash shows the same whatever a secret was."""
    monkeypatch.setattr(receipts_module, "stretched_code", lambda line_hash: line_hash[:12])
ANNE, BART = Viewer.of_player("Anne"), Viewer.of_player("Bart")
EVERYONE = (SPECTATOR, REFEREE, ANNE, BART)


class Table:
    """A game played in memory through the deciders, its events stamped with their seqs; each
    command's end is a moment the log can be read at (``moments``)."""

    def __init__(self, create: CreateGame, dice: DiceSource) -> None:
        self.events: list[Event] = []
        self.state: GameState = EMPTY
        self.dice = dice
        self.moments: list[int] = []
        self.apply(create)

    def apply(self, command: Command) -> list[Event]:
        produced = decide(self.state, command, self.dice)
        stamped = [msgspec.structs.replace(e, seq=len(self.events) + i) for i, e in enumerate(produced)]
        self.events.extend(stamped)
        self.state = fold(stamped, self.state)
        self.moments.append(len(self.events))
        return stamped

    def record(self, event: Event) -> Event:
        """Append ``event`` as a log written by an older engine holds it, without deciding it."""
        stamped = msgspec.structs.replace(event, seq=len(self.events))
        self.events.append(stamped)
        self.state = fold([stamped], self.state)
        self.moments.append(len(self.events))
        return stamped

    def try_apply(self, command: Command, fallback: Command) -> list[Event]:
        try:
            return self.apply(command)
        except MortecouilleError:
            return self.apply(fallback)


def mortecouille_table(budget: int = 200_000, dice_scheme: str | None = None) -> Table:
    create = CreateGame(
        game="duel", ruleset="mortecouille", players=("Anne", "Bart"), budget=budget, board=DEMO_BOARD,
        seed_salt="salt", seed_hmac=salted_commitment(SEED, "salt"), rules_version=RULES_VERSION,
        dice_scheme=dice_scheme,
    )  # fmt: skip
    return Table(create, SeededDice(SEED))


def blockade_table() -> Table:
    create = CreateGame(
        game="harbour", ruleset="blockade", players=("Anne", "Bart"), budget=0,
        board=Board(width=8, height=8), dice_mode="table", rules_version=RULES_VERSION,
    )  # fmt: skip
    table = Table(create, TableDice())
    table.apply(PlaceShip(ship="Sloopy", at=(2, 1), facing="N", kind="sloop", owner="Anne"))
    table.apply(PlaceShip(ship="Frig", at=(5, 6), facing="S", kind="war-frigate", owner="Bart"))
    return table


def demo_fleets_placed() -> Table:
    table = mortecouille_table(budget=100_000)
    set_up_demo_fleets(table.apply)
    return table


def encoded(game_view: GameView) -> bytes:
    return msgspec.json.encode(game_view)


def event_of(game_view: GameView, seq: int) -> EventView:
    return next(e for e in game_view.events if e.seq == seq)


def as_json(value: object) -> object:
    """``value`` as a client reads it (tuples become lists)."""
    return msgspec.json.decode(msgspec.json.encode(value))


def only(events: Sequence[Event], kind: type[Event]) -> Event:
    (found,) = [e for e in events if isinstance(e, kind)]
    return found


# --- one test per secret ---------------------------------------------------------------------


def test_orders_stay_sealed_until_their_turn_is_resolved() -> None:
    table = demo_fleets_placed()
    given = table.apply(GiveOrder(ship="Hope", actions=(Advance(),)))[0]
    for viewer in (SPECTATOR, REFEREE, BART):
        sent = event_of(view(table.events, viewer), given.seq)
        assert sent == EventView(seq=given.seq, type="order-given", turn=1, sealed=True, player="Anne", ship="Hope")
        assert b"advance" not in encoded(view(table.events, viewer))
    for player in ("Anne", "Bart"):
        for order in choose_orders(table.state, player, "seed"):
            table.apply(order)
    table.apply(ResolveTurn())
    for viewer in (SPECTATOR, REFEREE, BART):
        sent = event_of(view(table.events, viewer, since=0), given.seq)
        assert not sent.sealed and as_json(sent.data) == {
            "turn": 1, "ship": "Hope", "actions": [{"order": "advance"}], "replaced": False, "rules": ["T1"]
        }  # fmt: skip


def test_a_withdrawn_order_stays_sealed_until_its_turn_is_resolved() -> None:
    table = demo_fleets_placed()
    table.apply(GiveOrder(ship="Hope", actions=(Advance(),)))
    withdrawn = table.apply(WithdrawOrder(ship="Hope"))[0]
    assert event_of(view(table.events, SPECTATOR), withdrawn.seq).sealed
    assert not event_of(view(table.events, ANNE), withdrawn.seq).sealed
    assert "Anne" in view(table.events, SPECTATOR).waiting  # withdrawn: Hope waits for orders again


def test_blockade_tokens_stay_sealed_until_their_turn_is_resolved() -> None:
    table = blockade_table()
    given = table.apply(GiveTokens(ship="Sloopy", tokens=("F", "L", None, "R")))[0]
    for viewer in (SPECTATOR, REFEREE, BART):
        sent = event_of(view(table.events, viewer), given.seq)
        assert sent.sealed and sent.data is None and sent.text is None and sent.player == "Anne"
        assert b'"L"' not in encoded(view(table.events, viewer))
    assert as_json(event_of(view(table.events, ANNE), given.seq).data) == {
        "ship": "Sloopy", "tokens": ["F", "L", None, "R"], "rules": ["P1"]
    }  # fmt: skip
    table.apply(GiveTokens(ship="Frig", tokens=("F",)))
    table.apply(ResolveTurn())
    assert not event_of(view(table.events, SPECTATOR, since=0), given.seq).sealed


def test_purchases_stay_sealed_until_every_fleet_is_sealed() -> None:
    table = mortecouille_table()
    secret = [
        *table.apply(BuyShip(player="Anne", kind="blue-small", name="Hope", options=("siren",))),
        *table.apply(EquipShip(ship="Hope", option="extra-sail")),
        *table.apply(EquipFleet(player="Anne", option="super-shot-fleet")),
        *table.apply(BuyShip(player="Anne", kind="red-small", name="Decoy")),
        *table.apply(WithdrawShip(ship="Decoy")),
        *table.apply(SealFleet(player="Anne", forfeit=True)),
    ]
    table.apply(BuyShip(player="Bart", kind="red-big", name="Kraken"))
    for viewer in (SPECTATOR, REFEREE, BART):
        seen = view(table.events, viewer)
        assert all(event_of(seen, e.seq).sealed for e in secret)
        assert "Anne" not in seen.fleets and seen.sealed == ("Anne",) and seen.status == "buying"
        for word in (b"blue-small", b"siren", b"extra-sail", b"super-shot", b"red-small"):
            assert word not in encoded(seen), word
    assert view(table.events, BART).fleets["Bart"].ships[0].kind == "red-big"
    table.apply(SealFleet(player="Bart", forfeit=True))
    public = view(table.events, SPECTATOR)
    assert not any(event_of(public, e.seq).sealed for e in secret)
    assert public.fleets["Anne"].ships[0].kind == "blue-small" and set(public.fleets) == {"Anne", "Bart"}


def test_the_money_a_seal_forfeits_stays_sealed_until_every_fleet_is_sealed() -> None:
    table = mortecouille_table(budget=123_456)
    table.apply(BuyShip(player="Anne", kind="red-small", name="Hope"))
    sealed = table.apply(SealFleet(player="Anne", forfeit=True))[0]
    seen = view(table.events, BART)
    assert event_of(seen, sealed.seq).sealed and seen.sealed == ("Anne",)
    assert b"118456" not in encoded(seen)  # what Anne forfeits: 123,456 less Hope's 5,000
    assert b"118456" in encoded(view(table.events, ANNE))


def early_placement(ship: str, at: tuple[int, int], facing: str, kind: str) -> ShipPlaced:
    """Anne's ``ship`` placed as the engine wrote it before placements waited for every fleet's
    seal (F3, project ruling): a log of then may hold one, sealed with the purchases."""
    return ShipPlaced(ship=ship, at=at, facing=facing, kind=kind, owner="Anne", rules=("F3", "B2"))


def test_a_ship_placed_before_every_fleet_is_sealed_keeps_its_kind_secret() -> None:
    table = mortecouille_table()
    table.apply(BuyShip(player="Anne", kind="yellow-small", name="Hope"))
    table.apply(SealFleet(player="Anne", forfeit=True))
    with pytest.raises(RuleViolation, match=r"\[F3\] a ship is placed once every fleet is sealed"):
        table.apply(PlaceShip(ship="Hope", at=(3, 1), facing="N"))
    placed = table.record(early_placement("Hope", (3, 1), "N", "yellow-small"))
    for viewer in (SPECTATOR, REFEREE, BART):
        seen = view(table.events, viewer)
        assert event_of(seen, placed.seq).sealed and seen.ships == ()
        assert b"yellow-small" not in encoded(seen) and "Hope" not in seen.board_svg
    mine = view(table.events, ANNE)
    assert [ship.square for ship in mine.ships] == ["D2"] and "Hope" in mine.board_svg


def test_a_ruling_on_a_ship_still_secretly_bought_is_sealed_with_it() -> None:
    table = mortecouille_table()
    table.apply(BuyShip(player="Anne", kind="yellow-small", name="Hope"))
    turned = (Adjustment(ship="Hope", facing="SW"),)
    ruling = RecordRuling(rule="F3", text="Hope starts facing Tortuga", adjustments=turned)
    ruled = table.apply(ruling)[0]
    public = table.apply(RecordRuling(rule="T1", text="orders by noon"))[0]
    for viewer in (SPECTATOR, REFEREE, BART):
        seen = view(table.events, viewer)
        assert event_of(seen, ruled.seq).sealed and not event_of(seen, public.seq).sealed
        assert seen.ships == () and b"Tortuga" not in encoded(seen) and b"SW" not in encoded(seen)
    assert [(ship.id, ship.facing) for ship in view(table.events, ANNE).ships] == [("Hope", "SW")]


def test_the_seed_is_shown_once_the_game_has_ended() -> None:
    table = demo_fleets_placed()
    before = view(table.events, SPECTATOR)
    assert before.seed is None and before.seed_hmac == salted_commitment(SEED, "salt")
    assert SEED.encode() not in encoded(before)
    table.apply(EndGame(reason="referee", seed=SEED))
    assert view(table.events, SPECTATOR).seed == SEED


def test_an_ended_game_reveals_everything() -> None:
    table = mortecouille_table()
    table.apply(BuyShip(player="Anne", kind="blue-small", name="Hope"))
    table.apply(EndGame(reason="referee", seed=SEED))
    seen = view(table.events, SPECTATOR)
    assert not any(e.sealed for e in seen.events) and seen.status == "ended"
    assert seen.fleets["Anne"].ships[0].kind == "blue-small"


def test_the_owner_sees_their_own_secrets_at_once() -> None:
    table = demo_fleets_placed()
    given = table.apply(GiveOrder(ship="Kraken", actions=(Advance(),)))[0]
    mine = event_of(view(table.events, BART), given.seq)
    assert not mine.sealed and mine.text == describe_event(given)
    assert event_of(view(table.events, ANNE), given.seq).sealed


def test_the_referee_sees_what_the_public_sees() -> None:
    table = demo_fleets_placed()
    table.apply(GiveOrder(ship="Kraken", actions=(Advance(),)))
    as_referee = view(table.events, REFEREE)
    assert as_referee == msgspec.structs.replace(view(table.events, SPECTATOR), viewer=REFEREE)


def test_who_has_submitted_is_public() -> None:
    table = demo_fleets_placed()
    for order in choose_orders(table.state, "Bart", "seed"):
        table.apply(order)
    seen = view(table.events, SPECTATOR)
    assert seen.submitted == ("Bart",) and set(seen.waiting) == {"Anne"}
    assert seen.waiting["Anne"] == ("Black Pearl", "Hope", "Marguerite", "Sprite")


def test_a_view_built_without_the_logs_lines_sends_no_hash_or_prev(tmp_path: Path) -> None:
    """The chain is sent only with the log's lines at hand, which say where a nonce is
    (tests/test_witness.py); without them, nothing of it."""
    log_ = GameLog(tmp_path / "h.jsonl")
    new_game(log_, players=("Anne", "Bart"), ruleset="blockade", budget=0, board=Board(width=8, height=8),
             dice_mode="table", seed=None)  # fmt: skip
    run_command(log_, lambda s: PlaceShip(ship="Sloopy", at=(2, 1), facing="N", kind="sloop", owner="Anne"))
    run_command(log_, lambda s: GiveTokens(ship="Sloopy", tokens=("F",)))
    run_command(log_, lambda s: ResolveTurn(partial=True))
    events = log_.read()
    for viewer in EVERYONE:
        sent = encoded(view(events, viewer, since=-1))
        assert all(e.hash.encode() not in sent and e.prev.encode() not in sent for e in events)
        assert not re.search(rb'"(hash|prev)":', sent)


# --- the position, the events and the turns ----------------------------------------------------


def test_a_view_shows_the_position_at_seq_and_lists_every_resolved_turn() -> None:
    table = demo_fleets_placed()
    for _ in range(2):
        for player in ("Anne", "Bart"):
            for order in choose_orders(table.state, player, "seed"):
                table.apply(order)
        table.apply(ResolveTurn())
    now = view(table.events, SPECTATOR)
    assert now.turn == 3 and now.position == "after turn 2; turn 3 to order" and now.status == "playing"
    assert [span.turn for span in now.turns] == [1, 2] and now.next_seq == len(table.events)
    first = now.turns[0]
    back = view(table.events, SPECTATOR, seq=first.first - 1)
    assert back.turn == 1 and back.seq == first.first - 1 and back.turns == now.turns
    assert back.explanation == () and now.explanation[-1].seq <= now.turns[1].last
    assert {line.seq for line in now.explanation} >= {now.turns[1].first, now.turns[1].last}
    assert "turn 2" in now.board_svg and "before turn 1" in back.board_svg


def test_a_view_lists_the_last_turns_events_unless_asked_since_a_seq() -> None:
    table = demo_fleets_placed()
    for _ in range(3):
        for player in ("Anne", "Bart"):
            for order in choose_orders(table.state, player, "seed"):
                table.apply(order)
        table.apply(ResolveTurn())
    seen = view(table.events, SPECTATOR)
    assert seen.events_from == seen.turns[1].last + 1 == seen.events[0].seq
    assert seen.events[-1].seq == seen.seq == len(table.events) - 1
    assert [e.seq for e in view(table.events, SPECTATOR, since=10).events] == list(range(11, seen.seq + 1))
    assert view(table.events, SPECTATOR, since=seen.seq).events == ()


@pytest.mark.parametrize(("seq", "since"), [(-1, None), (10_000, None), (None, -2)])
def test_a_seq_outside_the_log_is_refused_naming_it(seq: int | None, since: int | None) -> None:
    table = blockade_table()
    with pytest.raises(BadInput, match=r"^(seq|since):"):
        view(table.events, SPECTATOR, seq=seq, since=since)


def test_an_empty_log_has_no_view() -> None:
    with pytest.raises(BadInput, match="^seq:"):
        view([], SPECTATOR)


def test_what_is_revealed_is_kept_up_to_date_one_event_at_a_time() -> None:
    table = demo_fleets_placed()
    for player in ("Anne", "Bart"):
        for order in choose_orders(table.state, player, "seed"):
            table.apply(order)
    table.apply(ResolveTurn())
    known = disclosure([])
    for event in table.events:
        known = known.after(event)
    assert known == disclosure(table.events)
    assert [event_view(e, BART, known) for e in table.events] == list(view(table.events, BART, since=-1).events)


def test_a_shadow_keeps_only_what_the_sealed_event_shows() -> None:
    table = demo_fleets_placed()
    given = table.apply(GiveOrder(ship="Hope", actions=(Advance(),)))[0]
    stand_in = shadow(given)
    assert isinstance(stand_in, OrderGiven) and stand_in.actions == (Idle(),)  # ordered, but to what?
    assert shadow(only(table.events[:3], type(table.events[1]))) is None  # a purchase leaves none


def test_the_examples_of_view_run() -> None:
    result = doctest.testmod(view_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# --- non-interference: another player's secret changes nothing anyone else is sent -------------

NON_OWNERS = (SPECTATOR, REFEREE, BART)


def secret_contents(events: Sequence[Event], viewer: Viewer) -> list[bytes]:
    """What each event ``viewer`` may not read would say if sent: its log line (which names its
    seq), and its data unless a readable event has the very same (tokens F given again next turn)."""
    known = disclosure(events)
    readable = {msgspec.json.encode(event_view(e, viewer, known).data) for e in events if visible(e, viewer, known)}
    contents = []
    for event in events:
        if not visible(event, viewer, known):
            secret = secret_of(event, known)
            assert secret is not None and secret.owner is not None
            contents.append(msgspec.json.encode(describe_event(event))[1:-1])
            data = msgspec.json.encode(event_view(event, Viewer.of_player(secret.owner), known).data)
            if data not in readable:
                contents.append(data)
    return contents


def chained(events: Sequence[Event], nonced: bool) -> tuple[list[Event], list[bytes | None]]:
    """``events`` stamped into a chain as the log holds them, and their lines: with a nonce on
    every secret input's line (the same one at a seq whatever the line says, so two games differ
    only by what their lines say), or without (a log written before nonces)."""
    extras = [
        {"nonce": hashlib.sha256(f"nonce {seq}".encode()).hexdigest()[:32]}
        if nonced and isinstance(event, SECRET_TYPES)
        else None
        for seq, event in enumerate(events)
    ]
    unplaced = [msgspec.structs.replace(e, seq=-1, prev="", hash="") for e in events]
    stamped, payload = stamp_all(unplaced, 0, GENESIS_HASH, extras)
    return stamped, list(payload.splitlines())


def without_chain(sent: bytes) -> object:
    """A view as sent, its events without their ``prev`` and ``hash``, in their ``line`` too."""
    shown = msgspec.json.decode(sent)
    events = []
    for event in shown["events"]:
        kept = {k: v for k, v in event.items() if k not in ("prev", "hash", "line")}
        if "line" in event:
            kept["line"] = {k: v for k, v in msgspec.json.decode(event["line"]).items() if k not in ("prev", "hash")}
        events.append(kept)
    shown["events"] = events
    return shown


def fork_outcome(events: Sequence[Event], at: int) -> object:
    """What the referee gets asking for a fork of ``events`` at ``at``: the copied events, or the
    refusal's text (a fork copies only what a public viewer may read: app/fork.py)."""
    try:
        copied = fork_events(events, at, "what-if", "seeded", SeedCommitment("salt", "hmac"))
    except BadInput as refused:
        return refused.message
    return [msgspec.to_builtins(event) for event in copied]


def assert_same_for_everyone_but_anne(one: list[Event], other: list[Event], moments: list[int]) -> None:
    """At each moment (a command's end) the live view of every viewer but Anne is the same
    whatever Anne's secret was, and at the last one so is every seq scrubbed back to, and what a
    fork at each seq copies or answers; no view carries what a sealed event would say; Anne's own
    view shows her secret.

    With the log's lines (the chain a page witnesses): written before nonces, the views are the
    same too, so no hash or prev of a line of hers they may not read, nor any hash after it, is
    sent (each depends on her secret), and none is found in what they are sent; with a nonce on
    each secret line, they differ only by the hashes and prevs the nonces make unguessable, and no
    line of hers they may not read is sent."""
    assert [type(e) for e in one] == [type(e) for e in other]
    last = moments[-1]
    for at in range(last):
        assert fork_outcome(one[:last], at) == fork_outcome(other[:last], at), at
    plain_one, plain_other = chained(one, nonced=False), chained(other, nonced=False)
    nonced_one, nonced_other = chained(one, nonced=True), chained(other, nonced=True)
    for now in moments:
        seqs = range(last) if now == last else (now - 1,)
        for viewer in NON_OWNERS:
            hidden = secret_contents(one[:now], viewer)
            known = disclosure(one[:now])
            unread = [e for e in plain_one[0][:now] if not visible(e, viewer, known)]
            for seq in seqs:
                sent = encoded(view(one[:now], viewer, seq, since=-1))
                assert sent == encoded(view(other[:now], viewer, seq, since=-1)), (viewer, now, seq)
                assert not [content for content in hidden if content in sent], (viewer, now, seq)
                chain = encoded(view(plain_one[0][:now], viewer, seq, since=-1, lines=plain_one[1][:now]))
                assert chain == encoded(
                    view(plain_other[0][:now], viewer, seq, since=-1, lines=plain_other[1][:now])
                ), (viewer, now, seq)
                assert not [e.seq for e in unread if e.hash.encode() in chain], (viewer, now, seq)
                nonced = encoded(view(nonced_one[0][:now], viewer, seq, since=-1, lines=nonced_one[1][:now]))
                assert without_chain(nonced) == without_chain(
                    encoded(view(nonced_other[0][:now], viewer, seq, since=-1, lines=nonced_other[1][:now]))
                ), (viewer, now, seq)
                assert not [content for content in hidden if content in nonced], (viewer, now, seq)
    if one[:last] != other[:last]:
        assert encoded(view(one[:last], ANNE, since=-1)) != encoded(view(other[:last], ANNE, since=-1))


SHIP_CHOICES = st.sampled_from(
    [
        ("red-small", ()),
        ("blue-small", ("siren",)),
        ("green-small", ("extra-sail", "super-shot")),
        ("yellow-small", ("hull-1",)),
        ("red-big", ("catapult",)),
        ("blue-big", ("flaming-shot", "extra-crew")),
    ]
)
SQUARES = st.sampled_from([(1, 1), (3, 1), (5, 2), (7, 1), (9, 2)])
FACINGS = st.sampled_from(["N", "NE", "E", "S", "W"])


def anne_buys(
    fleet: list[tuple[str, tuple[str, ...]]], squares: tuple[tuple[int, int], tuple[int, int]], facing: str
) -> tuple[list[Event], list[int]]:
    """Anne buys two ships (``fleet``), seals, and places them at ``squares`` as a log of an older
    engine may hold it (today's refuses a placement before every fleet is sealed: F3), the referee
    turns one to ``facing``, Bart buying around her; the log up to before Bart seals (which would
    reveal everything), and its moments."""
    table = mortecouille_table()
    table.apply(BuyShip(player="Bart", kind="red-small", name="Moray"))
    for name, (kind, options) in zip(("Hope", "Sprite"), fleet, strict=True):
        table.apply(BuyShip(player="Anne", kind=kind, name=name, options=options))
    table.apply(SealFleet(player="Anne", forfeit=True))
    for name, square, (kind, _) in zip(("Hope", "Sprite"), squares, fleet, strict=True):
        table.record(early_placement(name, square, "N", kind))
    table.apply(RecordRuling(rule="B2", text="turned", adjustments=(Adjustment(ship="Sprite", facing=facing),)))
    table.apply(BuyShip(player="Bart", kind="blue-small", name="Barracuda"))
    return table.events, table.moments


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(SHIP_CHOICES, min_size=2, max_size=2),
    st.lists(SHIP_CHOICES, min_size=2, max_size=2),
    st.tuples(SQUARES, SQUARES).filter(lambda s: s[0] != s[1]),
    st.tuples(SQUARES, SQUARES).filter(lambda s: s[0] != s[1]),
    FACINGS,
    FACINGS,
)
def test_annes_purchases_change_nothing_the_others_are_sent(
    fleet: list[tuple[str, tuple[str, ...]]],
    other_fleet: list[tuple[str, tuple[str, ...]]],
    squares: tuple[tuple[int, int], tuple[int, int]],
    other_squares: tuple[tuple[int, int], tuple[int, int]],
    facing: str,
    other_facing: str,
) -> None:
    one, moments = anne_buys(fleet, squares, facing)
    other, _ = anne_buys(other_fleet, other_squares, other_facing)
    assert_same_for_everyone_but_anne(one, other, moments)


ACTIONS: list[tuple[Order, ...]] = [
    (Advance(),),
    (Idle(),),
    (Maneuver(turn="1/8", side="left"),),
    (Maneuver(turn="1/4", side="right"),),
    (Attack(position="bow", target="Kraken"),),
    (Attack(position="port", target="Moray", mode="burst"),),
]


def anne_orders(
    turn: int, choices: list[int], replacement: int
) -> Callable[[], tuple[list[Event], list[int]]]:
    """The demo fleets play ``turn - 1`` turns the same way; then, in turn ``turn``, Bart orders,
    Anne orders each ship from ``choices`` (a refused order becomes idle), withdraws one and
    orders it again; the log up to that turn's resolution, and the moments of that turn."""

    def play() -> tuple[list[Event], list[int]]:
        table = demo_fleets_placed()
        for _ in range(turn - 1):
            for player in ("Anne", "Bart"):
                for order in choose_orders(table.state, player, "fixed"):
                    table.apply(order)
            table.apply(ResolveTurn())
        start = len(table.moments)
        for order in choose_orders(table.state, "Bart", "fixed"):
            table.apply(order)
        ships = sorted(s.id for s in table.state.ships.values() if s.owner == "Anne" and s.afloat)
        for ship, choice in zip(ships, choices, strict=False):
            table.try_apply(GiveOrder(ship=ship, actions=ACTIONS[choice]), GiveOrder(ship=ship, actions=(Idle(),)))
        table.apply(WithdrawOrder(ship=ships[0]))
        again = GiveOrder(ship=ships[0], actions=ACTIONS[replacement])
        table.try_apply(again, GiveOrder(ship=ships[0], actions=(Idle(),)))
        return table.events, table.moments[start:]

    return play


ORDER_CHOICES = st.lists(st.integers(0, len(ACTIONS) - 1), min_size=4, max_size=4)

#: Two ways Anne's orders may go (the turn, her choices, another set, a replacement each): a few
#: examples, as each plays whole games.
def annes_two_order_sets(test: Callable[..., None]) -> Callable[..., None]:
    choices = given(
        st.integers(1, 2), ORDER_CHOICES, ORDER_CHOICES, st.integers(0, len(ACTIONS) - 1), st.integers(0, 5)
    )
    return settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])(choices(test))


@annes_two_order_sets
def test_annes_orders_change_nothing_the_others_are_sent(
    turn: int, choices: list[int], other_choices: list[int], replacement: int, other_replacement: int
) -> None:
    one, moments = anne_orders(turn, choices, replacement)()
    other, _ = anne_orders(turn, other_choices, other_replacement)()
    assert_same_for_everyone_but_anne(one, other, moments)


def contribution(player: str, turn: int, draw: int = 0) -> str:
    """The contribution a player's page draws for a turn (the same in both games compared)."""
    return hashlib.sha256(f"{player} {turn} {draw}".encode()).hexdigest()[:32]


def commit(table: Table, player: str, draw: int = 0) -> None:
    secret = contribution(player, table.state.turn, draw)
    table.apply(CommitDiceContribution(player=player, commitment=contribution_commitment(secret)))


def reveal(table: Table, player: str, draw: int = 0) -> None:
    table.apply(RevealDiceContribution(player=player, contribution=contribution(player, table.state.turn, draw)))


def anne_orders_with_contributions(
    turn: int, choices: list[int], replacement: int
) -> Callable[[], tuple[list[Event], list[int]]]:
    """As :func:`anne_orders`, in a game of contributed dice (D3) played as the service plays it:
    each turn both players commit, the turn is locked and both reveal before it is resolved (Bart
    withholding his reveal in turn 1, resolved without it). In turn ``turn`` Anne commits, replaces
    her commitment after ordering, and the log goes up to both reveals of that turn, before its
    resolution, so the moments include the lock and the reveals with Anne's orders still secret."""

    def play() -> tuple[list[Event], list[int]]:
        table = mortecouille_table(budget=100_000, dice_scheme=CONTRIBUTED)
        set_up_demo_fleets(table.apply)
        for _ in range(turn - 1):
            for player in ("Anne", "Bart"):
                commit(table, player)
                for order in choose_orders(table.state, player, "fixed"):
                    table.apply(order)
            table.apply(LockTurn())
            reveal(table, "Anne")
            table.apply(ResolveTurn(absent_reason="Bart withheld"))
        start = len(table.moments)
        commit(table, "Anne")
        for order in choose_orders(table.state, "Bart", "fixed"):
            table.apply(order)
        commit(table, "Bart")
        ships = sorted(s.id for s in table.state.ships.values() if s.owner == "Anne" and s.afloat)
        for ship, choice in zip(ships, choices, strict=False):
            table.try_apply(GiveOrder(ship=ship, actions=ACTIONS[choice]), GiveOrder(ship=ship, actions=(Idle(),)))
        table.apply(WithdrawOrder(ship=ships[0]))
        again = GiveOrder(ship=ships[0], actions=ACTIONS[replacement])
        table.try_apply(again, GiveOrder(ship=ships[0], actions=(Idle(),)))
        commit(table, "Anne", draw=1)
        table.apply(LockTurn())
        reveal(table, "Bart")
        reveal(table, "Anne", draw=1)
        return table.events, table.moments[start:]

    return play


@annes_two_order_sets
def test_annes_orders_change_nothing_the_others_are_sent_in_a_game_of_contributed_dice(
    turn: int, choices: list[int], other_choices: list[int], replacement: int, other_replacement: int
) -> None:
    one, moments = anne_orders_with_contributions(turn, choices, replacement)()
    other, _ = anne_orders_with_contributions(turn, other_choices, other_replacement)()
    assert_same_for_everyone_but_anne(one, other, moments)
    locked = view(one, SPECTATOR)
    assert locked.locked and locked.awaiting_reveal == () and locked.committed == ("Anne", "Bart")
    assert view(one, ANNE).own_contribution is not None and view(one, SPECTATOR).own_contribution is None


def test_the_contribution_events_are_public() -> None:
    """A commitment is the SHA-256 of 128 random bits, the lock a fact of the table, a revealed
    contribution needed to check the dice: everyone reads all four whole (D3)."""
    table = mortecouille_table(budget=100_000, dice_scheme=CONTRIBUTED)
    set_up_demo_fleets(table.apply)
    start = len(table.events)
    for player in ("Anne", "Bart"):
        commit(table, player)
    table.apply(LockTurn())
    reveal(table, "Anne")
    table.apply(ResolveTurn(partial=True, absent_reason="Bart left"))
    shown = [e for e in view(table.events, SPECTATOR, since=start - 1).events if e.type.startswith(("dice-", "turn-l"))]
    assert [(e.type, e.player, e.sealed) for e in shown] == [
        ("dice-contribution-committed", "Anne", False),
        ("dice-contribution-committed", "Bart", False),
        ("turn-locked", None, False),
        ("dice-contribution-revealed", "Anne", False),
        ("dice-contribution-absent", "Bart", False),
    ]
    assert all(secret_of(e, disclosure(table.events)) is None for e in table.events[start : start + 5])


def test_every_turn_resolved_without_a_withheld_contribution_is_in_every_viewers_view() -> None:
    """Whoever withholds a reveal may choose between two outcomes of the turn with the seed's
    holder (README, "Dice nobody can foresee"): every page shows each such turn, so the view
    lists them all, for everyone, up to the seq viewed."""
    table = mortecouille_table(budget=100_000, dice_scheme=CONTRIBUTED)
    set_up_demo_fleets(table.apply)
    for _ in range(2):
        for player in ("Anne", "Bart"):
            commit(table, player)
            for order in choose_orders(table.state, player, "fixed"):
                table.apply(order)
        table.apply(LockTurn())
        reveal(table, "Anne")
        table.apply(ResolveTurn(absent_reason="Bart's phone died"))
    absent = [e for e in table.events if type(e).__name__ == "DiceContributionAbsent"]
    for viewer in EVERYONE:
        seen = view(table.events, viewer)
        assert [(w.seq, w.turn, w.player, w.reason) for w in seen.withheld] == [
            (e.seq, turn, "Bart", "Bart's phone died") for e, turn in zip(absent, (1, 2), strict=True)
        ]
        assert len(view(table.events, viewer, seq=absent[1].seq - 1).withheld) == 1


TOKENS = st.lists(st.sampled_from(["F", "L", "R", None]), min_size=1, max_size=4).map(tuple)


def anne_tokens(turn: int, first: tuple[str | None, ...], second: tuple[str | None, ...]) -> tuple[list[Event], list[int]]:
    """A blockade game whose turns before ``turn`` are played the same way; in ``turn`` Anne gives
    ``first`` tokens, Bart his, and Anne replaces hers with ``second``."""
    table = blockade_table()
    for _ in range(turn - 1):
        table.apply(GiveTokens(ship="Sloopy", tokens=("F",)))
        table.apply(GiveTokens(ship="Frig", tokens=("L", "F")))
        table.apply(ResolveTurn())
    start = len(table.moments)
    table.apply(GiveTokens(ship="Sloopy", tokens=first))
    table.apply(GiveTokens(ship="Frig", tokens=("F", None, "R")))
    table.apply(GiveTokens(ship="Sloopy", tokens=second, replace=True))
    return table.events, table.moments[start:]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 3), TOKENS, TOKENS, TOKENS, TOKENS)
def test_annes_blockade_tokens_change_nothing_the_others_are_sent(
    turn: int,
    first: tuple[str | None, ...],
    second: tuple[str | None, ...],
    other_first: tuple[str | None, ...],
    other_second: tuple[str | None, ...],
) -> None:
    one, moments = anne_tokens(turn, first, second)
    other, _ = anne_tokens(turn, other_first, other_second)
    assert_same_for_everyone_but_anne(one, other, moments)


# --- the public fold agrees with the full one on everything public -------------------------------


def assert_public_fields_agree(events: list[Event]) -> None:
    """Every viewer's view says what the full fold says of the turn, the position, who is
    waiting, who has sealed and how the game ended; once purchases are public, of every ship."""
    full = fold(events)
    known = disclosure(events)
    for viewer in EVERYONE:
        seen = view(events, viewer)
        assert (seen.turn, seen.position, seen.winner, seen.ended_reason) == (
            full.turn, position_caption(full).render(), full.winner, full.end_reason
        )  # fmt: skip
        assert seen.waiting == dict(players_awaiting_orders(full)) or not known.purchases_revealed
        assert seen.sealed == tuple(p for p in full.players if p in full.fleets and full.fleets[p].sealed)
        if known.purchases_revealed or full.ruleset == "blockade":
            assert [(s.id, s.at, s.facing, s.damage, s.afloat) for s in seen.ships] == [
                (s.id, s.at, s.facing, float(s.damage), s.afloat) for _, s in sorted(full.ships.items())
            ]
    assert view(events, REFEREE) == msgspec.structs.replace(view(events, SPECTATOR), viewer=REFEREE)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text("0123456789abcdef", min_size=16, max_size=16), st.integers(1, 4), st.floats(0, 1))
def test_the_public_fold_of_a_bot_game_agrees_with_the_full_one(seed: str, turns: int, cut: float) -> None:
    played = play_in_memory("bots", seed, max_turns=turns, fleets="random")
    events = [msgspec.structs.replace(e, seq=i) for i, e in enumerate(played)]
    assert_public_fields_agree(events[: max(1, round(cut * len(events)))])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_public_fold_of_a_blockade_game_agrees_with_the_full_one(data: st.DataObject) -> None:
    table = blockade_table()
    for _ in range(data.draw(st.integers(0, 4))):
        for ship in ("Sloopy", "Frig"):
            if table.state.ships[ship].afloat and data.draw(st.booleans()):  # a sunk ship takes none (P3)
                table.apply(GiveTokens(ship=ship, tokens=data.draw(TOKENS)))
        if table.state.ended:
            break
        table.apply(ResolveTurn(partial=True))
    for ship in ("Sloopy", "Frig"):
        if not table.state.ended and table.state.ships[ship].afloat and data.draw(st.booleans()):
            table.apply(GiveTokens(ship=ship, tokens=data.draw(TOKENS)))
    cut = data.draw(st.integers(1, len(table.events)))
    assert_public_fields_agree(table.events[:cut])
