"""P1, P3: the state a blockade turn settles on (``play_turn``'s, taken from where its rounds left the
ships: ``core.blockade.commands.settled_state``) is the state its events fold to, encoded and hashed
alike, whatever the ships do in it: sail, collide, take damage, sink in any round, or sink on the
damage a ruling gave them."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from mortecouille.core.blockade.rounds import BLOCKADE_KINDS
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import TableDice
from mortecouille.core.game import decide, fold, play_turn
from mortecouille.core.life_cycle import Command, CreateGame, ResolveTurn
from mortecouille.core.rulings import RecordRuling
from mortecouille.core.state import EMPTY, GameState, state_hash
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.events.board import Board
from mortecouille.events.rulings import Adjustment

TOKEN = st.sampled_from(["F", "F", "L", "R", None])


def apply(state: GameState, command: Command) -> GameState:
    return fold(decide(state, command, TableDice()), state)


@st.composite
def blockade_turns(draw: st.DrawFn) -> tuple[GameState, list[list[tuple[str, tuple[str | None, ...]]]]]:
    """A crowded small board of damaged ships of every kind (some pushed to their maximum by a
    ruling, so they sink at the end of the next round without a hit), and a few turns of tokens."""
    width, height = draw(st.integers(3, 6)), draw(st.integers(3, 6))
    squares = [(x, y) for x in range(width) for y in range(height)]
    rocks = draw(st.lists(st.sampled_from(squares), max_size=2, unique=True))
    board = Board(width, height, tuple(rocks))
    state = apply(
        EMPTY,
        CreateGame(
            game="g", ruleset="blockade", players=("A", "B"), budget=0, board=board, dice_mode="table"
        ),
    )
    open_squares = [s for s in squares if s not in rocks]
    count = draw(st.integers(1, min(8, len(open_squares))))
    spots = draw(st.lists(st.sampled_from(open_squares), min_size=count, max_size=count, unique=True))
    for i, at in enumerate(spots):
        kind = draw(st.sampled_from(sorted(BLOCKADE_KINDS)))
        most = BLOCKADE_KINDS[kind].max_damage
        damage = float(draw(st.integers(0, int(most) - 1)))
        state = apply(state, PlaceShip(ship=f"s{i}", at=at, facing=draw(st.sampled_from("NESW")), kind=kind,
                                       owner="A", damage=damage))  # fmt: skip
        if draw(st.booleans()) and draw(st.booleans()):
            to_max = most - damage
            adjust = Adjustment(
                ship=f"s{i}", damage=float(to_max if to_max == int(to_max) else int(to_max) + 1)
            )
            state = apply(state, RecordRuling(rule="T2", text="to its maximum", adjustments=(adjust,)))
    turns = [
        [(f"s{i}", tuple(draw(TOKEN) for _ in range(4))) for i in range(count) if draw(st.booleans())]
        for _ in range(draw(st.integers(1, 3)))
    ]
    return state, turns


@settings(max_examples=150, deadline=None)
@given(blockade_turns())
def test_P1_P3_a_blockade_turn_settles_on_the_state_its_events_fold_to(
    scenario: tuple[GameState, list[list[tuple[str, tuple[str | None, ...]]]]],
) -> None:
    state, turns = scenario
    for tokens in turns:
        for ship, ship_tokens in tokens:
            if state.ships[ship].afloat:
                state = apply(state, GiveTokens(ship=ship, tokens=ship_tokens))
        if not any(ship.afloat for ship in state.ships.values()):
            return
        produced, settled = play_turn(state, ResolveTurn(partial=True), TableDice())
        folded = fold(produced[:-1], state)
        assert settled == folded
        # the same bytes (a damage a ruling wrote is not turned into another number) and hash
        assert msgspec.json.encode(settled) == msgspec.json.encode(folded)
        assert state_hash(settled) == state_hash(folded)
        # a ship that ended the turn as it began it is the object it was
        for sid, ship in settled.ships.items():
            if ship == state.ships[sid]:
                assert ship is state.ships[sid]
        state = fold(produced, state)
