"""M1-M6: a step in which every claimant claims a square of its own that nobody holds settles at once
(``movement_step._all_enter``), and must give exactly what the general settling gives.

The general settling is forced by a pair of ships far away claiming one square (a contest, M1d):
being far, they change nothing for the others, so the others' outcome with and without the pair
must be the same, whichever way each is settled.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mortecouille.core.board import movement_step
from mortecouille.core.board.geometry import VECTOR_FACINGS
from mortecouille.core.board.movement_step import Claim, Piece, StepResult, resolve_step
from mortecouille.events.board import Board

BOARD = Board(30, 30)
#: two ships in the far corner, both claiming (25, 26): a contested square, never near the others
FAR_PIECES = {
    "zz-far-1": Piece("zz-far-1", (25, 25), "N", 1),
    "zz-far-2": Piece("zz-far-2", (25, 27), "S", 1),
}
FAR_CLAIMS = {"zz-far-1": Claim((0, 1), True), "zz-far-2": Claim((0, -1), True)}
VECTORS = sorted(VECTOR_FACINGS)


def without_far(result: StepResult) -> tuple[object, ...]:
    """The outcome for every ship but the far pair."""
    near = {sid: at for sid, at in result.positions.items() if sid not in FAR_PIECES}
    return (
        near,
        tuple(sid for sid in result.moved if sid not in FAR_PIECES),
        tuple(sid for sid in result.stopped if sid not in FAR_PIECES),
        tuple(p for p in result.pushes if p.pusher not in FAR_PIECES),
        tuple(c for c in result.collisions if not set(c.ships) & FAR_PIECES.keys()),
    )


def both_ways(pieces: dict[str, Piece], claims: dict[str, Claim], step: int) -> tuple[StepResult, StepResult]:
    alone = resolve_step(BOARD, pieces, claims, step)
    with_far = resolve_step(BOARD, {**pieces, **FAR_PIECES}, {**claims, **FAR_CLAIMS}, step)
    return alone, with_far


@st.composite
def fleets(draw: st.DrawFn) -> tuple[dict[str, Piece], dict[str, Claim], int]:
    squares = draw(
        st.lists(st.tuples(st.integers(1, 12), st.integers(1, 12)), min_size=1, max_size=10, unique=True)
    )
    pieces = {
        f"s{n}": Piece(f"s{n}", square, draw(st.sampled_from(["N", "E", "S", "W"])), draw(st.integers(0, 2)))
        for n, square in enumerate(squares)
    }
    claims = {
        sid: Claim(draw(st.sampled_from(VECTORS)), draw(st.booleans()))
        for sid in pieces
        if draw(st.booleans())
    }
    return pieces, claims, draw(st.sampled_from((1, 2)))


@settings(max_examples=300, deadline=None)
@given(fleets())
def test_M1_M6_a_step_settles_the_same_with_or_without_the_shortcut(
    fleet: tuple[dict[str, Piece], dict[str, Claim], int],
) -> None:
    pieces, claims, step = fleet
    alone, with_far = both_ways(pieces, claims, step)
    assert without_far(alone) == without_far(with_far)
    assert list(alone.positions) == sorted(alone.positions)  # in id order, as the general settling


def test_M1_the_shortcut_is_taken_when_every_claimant_enters_a_free_square(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    taken: list[int] = []
    real = movement_step._all_enter

    def counted(*args: object) -> StepResult:
        taken.append(1)
        return real(*args)  # type: ignore[arg-type]  # the step, positions and targets, passed on

    monkeypatch.setattr(movement_step, "_all_enter", counted)
    pieces = {
        "A": Piece("A", (2, 2), "N", 0),
        "B": Piece("B", (5, 5), "E", 2),
        "C": Piece("C", (8, 2), "S", 1),
    }
    claims = {"A": Claim((0, 1), True), "B": Claim((1, 0), True)}  # C stays
    alone, with_far = both_ways(pieces, claims, 1)
    assert taken == [1]  # the step alone took it; the one with the far contest did not
    assert without_far(alone) == without_far(with_far)
    assert alone.positions == {"A": (2, 3), "B": (6, 5), "C": (8, 2)}
    assert alone.moved == ("A", "B") and alone.stopped == () and alone.collisions == ()
