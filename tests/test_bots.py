"""The built-in bot (core.bots) and whole bot games: legal orders only, deterministic, and
logs that replay to the decider's running state (T1-T3, D2)."""

from __future__ import annotations

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.blockade_game import ResolveTurn
from core.board import Board, WindTile
from core.bots import choose_orders
from core.dice import SeededDice, TableDice
from core.game import decide, fold
from core.orders import orders_this_turn
from core.state import EMPTY, GameState, state_hash
from events.base import Event
from events.codec import event_decoder
from events.game import TurnEnded
from events.mortecouille import ShipSetUp
from events.orders import Attack
from replays.rederive import rederive
from tests.test_mortecouille_turn import SEED, game, ship

MAX_TURNS = 30
KINDS = (
    "red-small",
    "red-big",
    "blue-small",
    "blue-big",
    "green-small",
    "green-big",
    "yellow-small",
    "yellow-big",
)
OPTIONS = ("catapult", "flaming-shot", "extra-crew", "slave", "elite-gunner", "super-shot", "continuous-burst",
           "fireship", "extra-cannons", "siren", "hull-1", "extra-sail")  # fmt: skip
FACINGS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
BOARD = Board(
    width=10, height=10, rocks=((0, 9),), winds=(WindTile(at=(9, 0), dir="N"),), whirlpools=((4, 4),)
)


def duel() -> GameState:
    return game(
        ship("A", "blue-big", (2, 2), options=("catapult",)),
        ship("B", "green-small", (2, 5), owner="Bart"),
        ship("C", "red-small", (7, 7), owner="Bart"),
    )


def test_bot_orders_every_ship_of_its_player_legally_and_deterministically() -> None:
    state = duel()
    commands = choose_orders(state, "Bart", rng_seed=1)
    assert sorted(c.ship for c in commands) == ["B", "C"]
    assert commands == choose_orders(state, "Bart", rng_seed=1)
    for command in commands:
        state = fold(decide(state, command, TableDice()), state)
    assert all(orders_this_turn(state, s) for s in ("B", "C"))
    assert choose_orders(state, "Bart", rng_seed=1) == []  # already ordered: left alone


def test_bot_fires_when_an_enemy_is_on_a_firing_line() -> None:
    state = game(ship("A", "blue-big", (5, 5)), ship("B", "red-small", (7, 5), owner="Bart"))
    picks = [choose_orders(state, "Anne", rng_seed=seed)[0].actions for seed in range(20)]
    assert sum(isinstance(actions[0], Attack) for actions in picks) >= 15


ship_specs = st.lists(
    st.tuples(
        st.sampled_from(KINDS),
        st.sampled_from(FACINGS),
        st.lists(st.sampled_from(OPTIONS), max_size=3, unique=True),
        st.integers(0, 2),
    ),
    min_size=2,
    max_size=6,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    specs=ship_specs,
    squares=st.permutations([s for s in range(1, 99) if divmod(s, 10) not in BOARD.rocks]),
    bot_seed=st.integers(0, 10**6),
)
def test_bot_games_are_legal_and_replay_to_the_same_state(
    specs: list[tuple[str, str, list[str], int]], squares: list[int], bot_seed: int
) -> None:
    players = ("Anne", "Bart", "Cleo")
    setups = []
    for index, (kind, facing, options, owner) in enumerate(specs):
        if kind.endswith("small") and "catapult" in options:
            options = [o for o in options if o != "catapult"] + ["catapult"]
        at = divmod(squares[index], 10)
        owner_name = players[owner if index > 1 else index]  # at least two players have ships
        setups.append(
            ShipSetUp(
                ship=f"S{index}", kind=kind, owner=owner_name, at=at, facing=facing, options=tuple(options)
            )
        )
    state = game(*setups, board=BOARD, players=players)
    log: list[Event] = []
    start = state
    for _ in range(MAX_TURNS):
        for player in players:
            for command in choose_orders(state, player, bot_seed):
                produced = decide(state, command, TableDice())
                log += produced
                state = fold(produced, state)
        produced = decide(state, ResolveTurn(reveal_seed=SEED), SeededDice(SEED))
        turn_start = state
        log += produced
        state = fold(produced, state)
        ended = next(e for e in produced if isinstance(e, TurnEnded))
        assert ended.state_hash == state_hash(fold(produced[: produced.index(ended)], turn_start))
        if state.ended:
            break
    assert state_hash(fold(log, start)) == state_hash(state)
    decoder = event_decoder()
    decoded = [decoder.decode(msgspec.json.encode(event)) for event in log]
    assert state_hash(fold(decoded, start)) == state_hash(state)
    created = _created_and_setups(start)
    findings = rederive([*created, *log])
    assert all(f.ok for f in findings), findings


def _created_and_setups(start: GameState) -> list[Event]:
    """The events that built ``start`` (a game() state), rebuilt for re-derivation."""
    from core.dice import seed_commitment
    from core.game import CreateGame

    created = decide(
        EMPTY,
        CreateGame(game=start.game, ruleset="mortecouille", players=start.players, budget=0, board=start.board,
                   seed_sha256=seed_commitment(SEED), rules_version=start.rules_version),
        TableDice(),
    )  # fmt: skip
    setups = [
        ShipSetUp(
            ship=s.id, kind=s.kind, owner=s.owner, at=s.at or (0, 0), facing=s.facing, options=s.options
        )
        for s in start.ships.values()
    ]
    return [*created, *setups]
