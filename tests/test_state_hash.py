"""The state hash: stable across field additions, equal for equal states, fast path equal to the general one,
and no cache inside it that a caller could reach."""

from __future__ import annotations

import hashlib
import itertools
import json
from typing import Any

import msgspec
import pytest

from mortecouille.app.games import load
from mortecouille.core.dice import DicePolicy, LoggedDice
from mortecouille.core.game import evolve, fold, play_turn
from mortecouille.core.life_cycle import ResolveTurn
from mortecouille.core.state import (
    EMPTY,
    GameState,
    ShipState,
    state_hash,
    with_earlier_ships,
    without_defaults,
)
from mortecouille.events.game import DieRolled, GameCreated, TurnStarted
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.rederive import turn_segments
from tests.helpers import GOLDEN

EXPECTED: dict[str, dict[str, Any]] = json.loads((GOLDEN / "expected.json").read_text())


@pytest.mark.parametrize("name", ["blockade", "mortecouille", "mortecouille_seeded"])
def test_the_fast_ship_path_hashes_like_the_general_one(name: str) -> None:
    state = fold(GameLog(GOLDEN / f"{name}.jsonl").read())
    general = hashlib.sha256(msgspec.json.encode(without_defaults(state), order="sorted")).hexdigest()
    assert state_hash(state) == general


def test_a_field_at_its_default_does_not_enter_the_hash() -> None:
    ship = ShipState(id="A", kind="sloop", at=(1, 1))
    state = GameState(game="g", ships={"A": ship})
    assert "fire" not in msgspec.json.encode(without_defaults(state)).decode()
    assert state_hash(state) == state_hash(
        GameState(game="g", ships={"A": ShipState(id="A", kind="sloop", at=(1, 1), damage=0)})
    )
    assert state_hash(state) != state_hash(
        GameState(game="g", ships={"A": ShipState(id="A", kind="sloop", at=(1, 1), damage=0.5)})
    )


def test_an_int_and_a_float_of_the_same_damage_hash_alike_only_at_the_default() -> None:
    decoded = msgspec.json.decode(
        msgspec.json.encode(ShipState(id="A", kind="sloop", facing="N")), type=ShipState
    )
    assert state_hash(GameState(ships={"A": decoded})) == state_hash(
        GameState(ships={"A": ShipState(id="A", kind="sloop")})
    )


def scramble(value: Any) -> None:
    """Mutate every container reachable from ``value`` in place: clear dicts, lists and their items."""
    if isinstance(value, dict):
        for item in value.values():
            scramble(item)
        value.clear()
        value["scrambled"] = True
    elif isinstance(value, list):
        for item in value:
            scramble(item)
        value.clear()
        value.append("scrambled")


@pytest.mark.parametrize("name", ["blockade", "mortecouille", "mortecouille_seeded", "mortecouille_scenario"])
def test_mutating_what_the_hash_functions_return_cannot_change_a_later_hash(name: str) -> None:
    """Hashing may cache what it converts, but never hands a cached object out: callers own what they get."""
    log = GameLog(GOLDEN / f"{name}.jsonl")
    states = list(itertools.accumulate(log.read(), evolve, initial=EMPTY))
    assert states[-1] == load(log)[1]
    expected = [state_hash(state) for state in states]
    for state in states:
        scramble(without_defaults(state))
        for value in msgspec.structs.astuple(state):
            scramble(without_defaults(value))
        for fleet in state.fleets.values():
            scramble(without_defaults(fleet))
        for orders in state.orders.values():
            scramble(without_defaults(orders))
    assert [state_hash(state) for state in states] == expected
    assert expected[-1] == EXPECTED[f"{name}.jsonl"]["state_hash"]
    assert hashlib.sha256(msgspec.json.encode(without_defaults(states[-1]), order="sorted")).hexdigest() == expected[-1]


def test_equal_states_built_apart_hash_alike_whatever_was_hashed_before() -> None:
    """The cache keys on the object, never on its content: a fresh equal object hashes the same."""
    events = GameLog(GOLDEN / "mortecouille.jsonl").read()
    first = fold(events)
    again = fold(GameLog(GOLDEN / "mortecouille.jsonl").read())
    assert first is not again and first == again
    assert state_hash(first) == state_hash(again) == state_hash(msgspec.json.decode(msgspec.json.encode(first), type=GameState))


def test_the_hash_cache_stays_bounded_and_hashes_do_not_depend_on_it() -> None:
    """Thousands of distinct ships go through the private cache: it is cleared, never grows past its bound."""
    from mortecouille.core import state as state_module

    states = [
        GameState(game="g", ships={f"S{i}": ShipState(id=f"S{i}", kind="sloop", at=(i, n)) for i in range(1_000)})
        for n in range(20)
    ]
    first = [state_hash(state) for state in states]
    assert len(state_module._CANONICAL_CACHE) <= state_module._CANONICAL_CACHE_SIZE < 20_000
    state_module._CANONICAL_CACHE.clear()
    assert [state_hash(state) for state in states] == first
    rebuilt = [msgspec.json.decode(msgspec.json.encode(state), type=GameState) for state in states]
    assert [state_hash(state) for state in rebuilt] == first


def test_a_state_given_back_its_earlier_ships_is_the_same_state_with_the_same_hash() -> None:
    # with_earlier_ships: a ship equal to the one the earlier state held is that object again (the
    # hash's cache knows it); a changed or new ship stays the later state's; nothing else changes
    before = GameState(
        game="g",
        ships={
            "A": ShipState(id="A", kind="sloop", at=(1, 1)),
            "B": ShipState(id="B", kind="sloop", at=(2, 2)),
            "C": ShipState(id="C", kind="sloop", at=(3, 3)),
        },
    )
    after = msgspec.structs.replace(
        before,
        turn=2,
        ships={
            "A": ShipState(id="A", kind="sloop", at=(1, 1)),  # sailed back where it was
            "B": ShipState(id="B", kind="sloop", at=(2, 3)),  # moved
            "D": ShipState(id="D", kind="cutter", at=(4, 4)),  # placed since
        },
    )
    kept = with_earlier_ships(after, before)
    assert kept == after and state_hash(kept) == state_hash(after)
    assert kept.ships["A"] is before.ships["A"]
    assert kept.ships["B"] is after.ships["B"] and kept.ships["D"] is after.ships["D"]
    assert list(kept.ships) == ["A", "B", "D"] and after.ships["A"] is not before.ships["A"]
    # nothing to give back: the later state itself
    moved_only = msgspec.structs.replace(before, ships={**before.ships, "B": after.ships["B"]})
    assert with_earlier_ships(moved_only, before) is moved_only


def test_a_blockade_turn_settles_on_the_fold_of_its_events() -> None:
    # the state play_turn hands back (its ships given back their earlier objects) is the fold of
    # the events it logged, turn after turn of the golden blockade game
    events = GameLog(GOLDEN / "blockade.jsonl").read()
    created = events[0]
    assert isinstance(created, GameCreated)
    dice = LoggedDice([e for e in events if isinstance(e, DieRolled)], DicePolicy.of(created, None, {}))
    state = EMPTY
    played = 0
    for resolved, segment in turn_segments(events):
        if resolved:
            started = segment[0]
            assert isinstance(started, TurnStarted)
            produced, settled = play_turn(state, ResolveTurn(partial=True, rounds=started.rounds), dice)
            assert settled == fold(produced[:-1], state)
            assert state_hash(settled) == state_hash(fold(produced[:-1], state))
            played += 1
        state = fold(segment, state)
    assert played > 0
