"""Ships' names in a picture: placed by checking only the names already placed near each one (so a
picture of n ships costs n, not n squared: a long game's export stays linear), at exactly the
places the check against every name gave."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mortecouille.core.state import ShipState
from mortecouille.events.board import Board
from mortecouille.replays.pictures.svg import (
    LABEL_CHAR,
    LABEL_HEIGHT,
    LABEL_MAX_CHARS,
    LABEL_PLACES,
    Box,
    Point,
    centre,
    clipped,
    label_places,
)

pytestmark = pytest.mark.slow


def every_pair_places(board: Board, ships: Sequence[ShipState]) -> dict[str, Point]:
    """The rule as first written: each name at its first place that meets no name placed before."""
    placed: list[Box] = []
    places: dict[str, Point] = {}
    for ship in ships:
        if ship.at is None:
            continue
        c = centre(board, ship.at)
        half = len(clipped(ship.id, LABEL_MAX_CHARS)) * LABEL_CHAR / 2  # as drawn: a long name cut
        boxes = [
            (
                Point(c.x + dx, c.y + dy),
                Box(c.x + dx - half, c.y + dy - LABEL_HEIGHT, c.x + dx + half, c.y + dy + 2),
            )
            for dx, dy in LABEL_PLACES
        ]
        chosen = next((b for b in boxes if not any(b[1].meets(other) for other in placed)), boxes[0])
        places[ship.id] = chosen[0]
        placed.append(chosen[1])
    return places


SIZE = 5
squares = st.tuples(st.integers(-1, SIZE), st.integers(-1, SIZE)) | st.none()
names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(names, squares), min_size=1, max_size=40, unique_by=lambda pair: pair[0]))
def test_names_go_where_checking_every_other_name_puts_them(
    fleet: list[tuple[str, tuple[int, int] | None]],
) -> None:
    board = Board(SIZE, SIZE)
    ships = [ShipState(id=name, kind="sloop", at=at) for name, at in fleet]
    assert label_places(board, ships) == every_pair_places(board, ships)


def test_a_crowded_board_gives_every_name_a_place_and_crowds_fall_back_under_the_hull() -> None:
    board = Board(3, 3)
    ships = [ShipState(id=f"ship number {i}", kind="sloop", at=(i % 3, i // 3 % 3)) for i in range(30)]
    places = label_places(board, ships)
    assert places == every_pair_places(board, ships)
    under = {ship.id: centre(board, ship.at) for ship in ships if ship.at is not None}
    assert places["ship number 29"] == Point(
        under["ship number 29"].x, under["ship number 29"].y + LABEL_PLACES[0][1]
    )
