"""The state hash: stable across field additions, equal for equal states, fast path equal to the general one."""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from mortecouille.core.game import fold
from mortecouille.core.state import GameState, ShipState, state_hash, without_defaults
from mortecouille.events.store import GameLog
from tests.helpers import GOLDEN


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
