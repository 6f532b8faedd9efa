"""The fold's fast path: inside one fold the ships live in a private dict changed
in place; the state handed out is the value a plain, pure ``evolve`` per event gives, with the same
state hash at every turn end, and nothing a caller holds is changed."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mortecouille.app.botgame import play_in_memory
from mortecouille.core.game import evolve, fold
from mortecouille.core.life_cycle import UnappliableEvent, change_ship, give_tokens, with_ship
from mortecouille.core.state import (
    EMPTY,
    GameState,
    ShipState,
    WorkingShips,
    WorkingTokens,
    state_as_dict,
    state_hash,
)
from mortecouille.events.base import Event
from mortecouille.events.blockade import TokensGiven
from mortecouille.events.game import TurnEnded
from mortecouille.events.movement import ShipMoved
from mortecouille.events.storage.file_log import GameLog
from tests.helpers import GOLDEN


def plain_states_at_turn_ends(events: list[Event]) -> tuple[list[str], GameState]:
    """The slow path: ``evolve`` one event at a time (a new dict of ships per change); the state hash
    before each TurnEnded, and the final state."""
    state = EMPTY
    hashes = []
    for event in events:
        if isinstance(event, TurnEnded):
            hashes.append(state_hash(state))
        state = evolve(state, event)
    return hashes, state


def fast_states_at_turn_ends(events: list[Event]) -> tuple[list[str], GameState]:
    """The fast path: one ``fold`` per stretch between turn ends, each on the state the last left."""
    state = EMPTY
    hashes = []
    start = 0
    for index, event in enumerate(events):
        if isinstance(event, TurnEnded):
            state = fold(events[start:index], state)
            hashes.append(state_hash(state))
            start = index
    return hashes, fold(events[start:], state)


def assert_same_game(events: list[Event]) -> None:
    plain_hashes, plain = plain_states_at_turn_ends(events)
    fast_hashes, fast = fast_states_at_turn_ends(events)
    recorded = [event.state_hash for event in events if isinstance(event, TurnEnded)]
    assert fast_hashes == plain_hashes == recorded
    whole = fold(events)
    assert whole == fast == plain
    assert state_hash(whole) == state_hash(plain)
    # the same value down to the order of the ships, which `state --json` shows
    assert list(whole.ships) == list(plain.ships)
    assert state_as_dict(whole) == state_as_dict(plain)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.text(alphabet="abcdefghij0123456789", min_size=1, max_size=8),
    turns=st.integers(min_value=1, max_value=12),
    fleets=st.sampled_from(["demo", "random"]),
)
def test_a_bot_game_folds_to_the_same_state_and_hashes_by_either_path(seed: str, turns: int, fleets: str) -> None:
    events = play_in_memory("fast", seed, max_turns=turns, fleets=fleets)  # type: ignore[arg-type]
    assert_same_game(events)


@pytest.mark.parametrize("name", sorted(path.name for path in GOLDEN.glob("*.jsonl")))
def test_every_golden_log_folds_to_the_same_state_and_hashes_by_either_path(name: str) -> None:
    assert_same_game(GameLog(GOLDEN / name).read())


def test_a_fold_leaves_the_state_it_was_given_unchanged() -> None:
    events = play_in_memory("fast", "untouched", max_turns=4)
    middle = len(events) // 2
    before = fold(events[:middle])
    ships = dict(before.ships)
    snapshot = state_as_dict(before)
    after = fold(events[middle:], before)
    assert after != before
    assert before.ships == ships and state_as_dict(before) == snapshot


def test_the_state_handed_out_is_closed_so_a_later_change_copies_the_ships() -> None:
    state = fold(play_in_memory("fast", "closed", max_turns=2))
    assert isinstance(state.ships, WorkingShips) and not state.ships.open
    ship = next(iter(state.ships.values()))
    moved = change_ship(state, ship.id, facing="S" if ship.facing != "S" else "N")
    assert moved.ships[ship.id].facing != ship.facing
    assert state.ships[ship.id] is ship  # evolve stays pure on what a fold handed out
    added = with_ship(state, ShipState(id="extra", kind="sloop"))
    assert "extra" in added.ships and "extra" not in state.ships


def test_an_unappliable_event_after_a_change_leaves_the_callers_state_unchanged() -> None:
    state = fold(play_in_memory("fast", "refused", max_turns=2))
    snapshot = state_as_dict(state)
    ship = next(s for s in state.ships.values() if s.at is not None)
    moved = ShipMoved(turn=state.turn, round=1, phase="move", ship=ship.id, path=(), at=(0, 0), facing="E")
    forged = msgspec.structs.replace(moved, ship="nobody")
    with pytest.raises(UnappliableEvent):
        fold([moved, forged], state)
    assert state_as_dict(state) == snapshot


def blockade_turn_half_given() -> list[Event]:
    """The golden blockade game up to the middle of a turn's tokens: the state then holds the
    turn's working dict of tokens."""
    events = GameLog(GOLDEN / "blockade.jsonl").read()
    given = [index for index, event in enumerate(events) if isinstance(event, TokensGiven)]
    assert len(given) >= 2
    return events[: given[1] + 1]


def test_the_tokens_handed_out_are_closed_so_a_later_change_copies_them() -> None:
    state = fold(blockade_turn_half_given())
    assert isinstance(state.tokens, WorkingTokens) and not state.tokens.open
    before = dict(state.tokens)
    given = give_tokens(state, "newcomer", ("F",))
    assert given.tokens == {**before, "newcomer": ("F",)}
    assert state.tokens == before  # evolve stays pure on what a fold handed out


def test_a_fold_from_a_state_with_tokens_leaves_them_unchanged() -> None:
    events = GameLog(GOLDEN / "blockade.jsonl").read()
    half = blockade_turn_half_given()
    before = fold(half)
    tokens = dict(before.tokens)
    after = fold(events[len(half) :], before)
    assert after != before and before.tokens == tokens
    assert_same_game(events)
