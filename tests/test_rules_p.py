"""Rules P1-P3: the blockade ruleset's ship table and round resolution."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mortecouille.core.blockade.rounds import BLOCKADE_KINDS, BlockadeShip, next_round, resolve_round
from mortecouille.core.errors import BadInput
from mortecouille.events.board import Board, WindTile

OPEN = Board(12, 12)


def ship(sid: str, kind: str, at: tuple[int, int], facing: str, damage: float = 0.0) -> BlockadeShip:
    return BlockadeShip(sid, kind, at, facing, damage)


def fleet(*ships: BlockadeShip) -> dict[str, BlockadeShip]:
    return {s.id: s for s in ships}


def test_P2_P3_ship_table_has_the_thirteen_kinds_with_their_values() -> None:
    table = {k: (v.size, v.ram, v.rock, v.max_damage) for k, v in BLOCKADE_KINDS.items()}
    assert table == {
        "sloop": (0, 0.5, 0.5, 10),
        "cutter": (0, 0.5, 0.61, 12),
        "dhow": (0, 0.5, 0.5, 12),
        "fanchuan": (0, 0.5, 0.656, 13.125),
        "longship": (1, 0.5, 0.75, 15),
        "baghlah": (1, 1, 1, 20),
        "merchant-brig": (1, 1, 1, 20),
        "junk": (1, 1.5, 1.25, 25),
        "war-brig": (1, 2, 1.25, 25),
        "merchant-galleon": (2, 2.5, 1.5, 30),
        "xebec": (2, 2.5, 1.75, 35),
        "war-frigate": (2, 3, 2.5, 50),
        "grand-frigate": (2, 4, 3, 60),
    }


def test_P1_tokens_move_then_wind_then_damage() -> None:
    # A turns right onto a wind tile, then the wind pushes it on in the same round.
    board = Board(12, 12, winds=(WindTile((4, 5), "N"),))
    ships = fleet(ship("A", "sloop", (3, 4), "N"), ship("B", "junk", (8, 8), "W"))
    out = resolve_round(board, ships, {"A": "R", "B": "F"})
    assert (out.ships["A"].at, out.ships["A"].facing) == ((4, 6), "E")
    assert (out.ships["B"].at, out.ships["B"].facing) == ((7, 8), "W")
    assert [(p.phase, p.ship, p.squares) for p in out.paths] == [
        ("move", "A", ((3, 4), (3, 5), (4, 5))),
        ("move", "B", ((8, 8), (7, 8))),
        ("wind", "A", ((4, 5), (4, 6))),
    ]
    assert out.paths[2].rules == ("P1", "M7", "B5")
    assert out.damage == () and out.collisions == () and out.sinkings == ()


def test_P1_left_token_turns_left() -> None:
    out = resolve_round(OPEN, fleet(ship("A", "sloop", (3, 4), "N")), {"A": "L"})
    assert (out.ships["A"].at, out.ships["A"].facing) == ((2, 5), "W")


def test_P2_each_ship_takes_the_others_ram_value() -> None:
    # architecture example: a sloop bumps a war frigate; neither moves
    ships = fleet(ship("A", "sloop", (3, 3), "N"), ship("B", "war-frigate", (3, 4), "E"))
    out = resolve_round(OPEN, ships, {"A": "F"})
    assert [(c.phase, c.step, c.rule, c.ships) for c in out.collisions] == [("move", 1, "M3", ("A", "B"))]
    assert [(d.ship, d.amount, d.cause, d.other, d.rules) for d in out.damage] == [
        ("A", 3.0, "collision", "B", ("P2", "M3")),
        ("B", 0.5, "collision", "A", ("P2", "M3")),
    ]
    assert out.ships["A"].damage == 3.0 and out.ships["B"].damage == 0.5
    assert out.ships["A"].at == (3, 3) and out.ships["B"].at == (3, 4)


def test_P2_ram_damage_once_per_pair_and_step() -> None:
    # M2b in the move phase, then a wind bump between the same pair: two separate charges.
    board = Board(12, 12, winds=(WindTile((3, 4), "W"),))
    ships = fleet(ship("F", "junk", (3, 3), "N"), ship("T", "xebec", (2, 3), "N"))
    out = resolve_round(board, ships, {"F": "F", "T": "R"})
    assert [(c.phase, c.step, c.rule, c.ships) for c in out.collisions] == [
        ("move", 2, "M2b", ("F", "T")),
        ("wind", 1, "M3", ("F", "T")),
    ]
    assert out.ships["F"].damage == 5.0 and out.ships["T"].damage == 3.0
    assert [(d.phase, d.step, d.ship, d.amount) for d in out.damage] == [
        ("move", 2, "F", 2.5),
        ("move", 2, "T", 1.5),
        ("wind", 1, "F", 2.5),
        ("wind", 1, "T", 1.5),
    ]


def test_P3_rock_costs_the_ships_own_rock_value() -> None:
    board = Board(12, 12, rocks=((3, 4),))
    out = resolve_round(board, fleet(ship("A", "cutter", (3, 3), "N")), {"A": "F"})
    assert [(d.ship, d.amount, d.cause, d.rock, d.rules) for d in out.damage] == [
        ("A", 0.61, "rock", (3, 4), ("P3", "M6"))
    ]
    assert out.collisions[0].rock == (3, 4)


def test_P3_ship_sinks_at_end_of_round_when_damage_reaches_max() -> None:
    board = Board(12, 12, rocks=((3, 4),), winds=(WindTile((5, 5), "E"),))
    ships = fleet(ship("A", "sloop", (3, 3), "N", damage=9.5), ship("B", "sloop", (5, 4), "N", 9.9))
    out = resolve_round(board, ships, {"A": "F", "B": "F"})
    assert [(s.ship, s.at, s.damage, s.max_damage, s.rules) for s in out.sinkings] == [
        ("A", (3, 3), 10.0, 10.0, ("P3",))
    ]
    assert out.ships["A"].sunk and not out.ships["B"].sunk
    # B moved onto the wind tile and was blown on: it is still afloat
    assert out.ships["B"].at == (6, 5)


def test_P3_sinking_is_checked_only_at_end_of_round_so_a_doomed_ship_still_blocks() -> None:
    # A reaches its max in the move phase yet still takes part in the wind phase.
    board = Board(12, 12, rocks=((3, 5),), winds=(WindTile((2, 4), "E"),))
    ships = fleet(
        ship("A", "sloop", (3, 4), "N", damage=9.5),
        ship("W", "sloop", (2, 4), "N"),
    )
    out = resolve_round(board, ships, {"A": "F"})
    assert [(c.phase, c.rule, c.ships) for c in out.collisions] == [
        ("move", "M6", ("A",)),
        ("wind", "M3", ("A", "W")),
    ]
    assert out.ships["A"].sunk
    assert out.ships["A"].at == (4, 4)  # pushed by W before sinking


def test_P3_sunk_ship_neither_moves_nor_blocks() -> None:
    ships = fleet(
        BlockadeShip("X", "sloop", (3, 4), "S", 10.0, sunk=True),
        ship("A", "sloop", (3, 3), "N"),
    )
    out = resolve_round(OPEN, ships, {"A": "F", "X": "F"})
    assert out.ships["A"].at == (3, 4)
    assert out.ships["X"] == ships["X"]
    assert out.collisions == () and out.damage == ()


@pytest.mark.parametrize(
    ("ships", "tokens", "field"),
    [
        (fleet(ship("A", "pinnace", (1, 1), "N")), {}, "ships.A.kind"),
        (fleet(ship("A", "sloop", (1, 1), "N")), {"A": "B"}, "tokens.A"),
        (fleet(ship("A", "sloop", (1, 1), "N")), {"Z": "F"}, "tokens.Z"),
        ({"A": ship("B", "sloop", (1, 1), "N")}, {}, "ships.A.id"),
        (fleet(ship("A", "sloop", (1, 1), "N"), ship("B", "dhow", (1, 1), "E")), {}, "ships.B.at"),
        (fleet(ship("A", "sloop", (12, 1), "N")), {}, "ships.A.at"),
    ],
)
def test_P_bad_input_names_the_field(
    ships: dict[str, BlockadeShip], tokens: dict[str, str | None], field: str
) -> None:
    with pytest.raises(BadInput) as err:
        resolve_round(OPEN, ships, tokens)
    assert err.value.field == field


def test_P_round_outcome_does_not_depend_on_listing_order() -> None:
    board = Board(8, 8, rocks=((4, 4),), winds=(WindTile((2, 2), "E"),), whirlpools=((5, 5),))
    ships = [
        ship("A", "sloop", (1, 2), "E"),
        ship("B", "war-frigate", (3, 3), "S"),
        ship("C", "junk", (3, 1), "N"),
        ship("D", "xebec", (5, 5), "N"),
        ship("E", "dhow", (4, 3), "W"),
    ]
    tokens: dict[str, str | None] = {"A": "F", "B": "F", "C": "F", "D": None, "E": "R"}
    first = msgspec.json.encode(resolve_round(board, {s.id: s for s in ships}, tokens))
    backward = {s.id: s for s in reversed(ships)}
    second = msgspec.json.encode(resolve_round(board, backward, dict(reversed(tokens.items()))))
    assert first == second


@st.composite
def blockade_rounds(
    draw: st.DrawFn,
) -> tuple[Board, dict[str, BlockadeShip], list[dict[str, str | None]]]:
    """A small crowded board (rocks, a wind tile, a whirlpool at times), damaged ships of every
    kind, and four rounds of tokens."""
    width, height = draw(st.integers(4, 7)), draw(st.integers(4, 7))
    squares = [(x, y) for x in range(width) for y in range(height)]
    rocks = draw(st.lists(st.sampled_from(squares), max_size=3, unique=True))
    open_squares = [s for s in squares if s not in rocks]
    winds = draw(st.lists(st.sampled_from(open_squares), max_size=2, unique=True))
    board = Board(width, height, tuple(rocks), tuple(WindTile(at, draw(st.sampled_from("NESW"))) for at in winds))
    count = draw(st.integers(2, min(10, len(open_squares))))
    spots = draw(st.lists(st.sampled_from(open_squares), min_size=count, max_size=count, unique=True))
    ships = {}
    for i, at in enumerate(spots):
        kind = draw(st.sampled_from(sorted(BLOCKADE_KINDS)))
        damage = draw(st.floats(0, BLOCKADE_KINDS[kind].max_damage * 0.95))
        ships[f"s{i}"] = ship(f"s{i}", kind, at, draw(st.sampled_from("NESW")), damage)
    token = st.sampled_from(["F", "F", "L", "R", None])
    rounds = [{sid: draw(token) for sid in ships} for _ in range(4)]
    return board, ships, rounds


@settings(max_examples=200, deadline=None)
@given(blockade_rounds())
def test_P1_a_turn_s_next_round_is_a_round_of_the_ships_the_last_one_left(
    scenario: tuple[Board, dict[str, BlockadeShip], list[dict[str, str | None]]],
) -> None:
    # next_round takes the pieces the last round left instead of building them from the ships again:
    # the same outcome as resolve_round of those ships (the wrecks left out), round after round
    board, ships, rounds = scenario
    outcome = resolve_round(board, ships, rounds[0])
    for tokens in rounds[1:]:
        afloat = {sid: s for sid, s in outcome.ships.items() if not s.sunk}
        if not afloat:
            break
        tokens = {sid: token for sid, token in tokens.items() if sid in afloat}
        again = next_round(board, outcome, tokens)
        assert msgspec.json.encode(again) == msgspec.json.encode(resolve_round(board, afloat, tokens))
        assert again == resolve_round(board, afloat, tokens)
        outcome = again
