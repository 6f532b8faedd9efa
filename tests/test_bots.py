"""The built-in bot (mortecouille.bots.player) and whole bot games: legal orders only, deterministic, and
logs that replay to the decider's running state (T1-T3, D2)."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mortecouille.app.botgame import DEMO_BOARD, play_in_memory, set_up_demo_fleets, summarise
from mortecouille.bots.player import choose_orders
from mortecouille.core.dice import SeededDice, TableDice, seed_commitment
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import Command, CreateGame, ResolveTurn
from mortecouille.core.mortecouille.orders import fighting_fire, orders_this_turn
from mortecouille.core.state import EMPTY, GameState, state_hash
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.base import Event
from mortecouille.events.board import Board, WindTile
from mortecouille.events.codec import event_decoder
from mortecouille.events.game import GameEnded, TurnEnded
from mortecouille.events.mortecouille import ShipSetUp
from mortecouille.events.orders import Advance, Attack, Maneuver, OrderGiven
from mortecouille.replays.reading.rederive import rederive
from tests.test_mortecouille_turn import SEED, game, ship

pytestmark = pytest.mark.slow

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
    from mortecouille.core.dice import seed_commitment
    from mortecouille.core.life_cycle import CreateGame

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


# --- demo games ------------------------------------------------------------------------------


def _demo_start(game_name: str, seed: str) -> tuple[GameState, SeededDice]:
    """The demo game (mortecouille.app.botgame) bought, sealed and placed, ready for turn 1."""
    dice = SeededDice(seed)
    state = EMPTY

    def apply(command: Command) -> list[Event]:
        nonlocal state
        produced = decide(state, command, dice)
        state = fold(produced, state)
        return produced

    apply(
        CreateGame(
            game=game_name, ruleset="mortecouille", players=("Anne", "Bart"), budget=100000,
            board=DEMO_BOARD, seed_sha256=seed_commitment(seed), rules_version=RULES_VERSION,
        )
    )  # fmt: skip
    set_up_demo_fleets(apply)
    return state, dice


def test_bot_orders_are_always_legal_and_cover_every_ship_over_many_demo_games() -> None:
    """Every order set a bot gives is one the decider accepts as given (T1, S, K, C6), every
    ship able to act gets one, and the turn resolves without ``partial`` (T2)."""
    for seed in ("demo", *map(str, range(1, 7))):
        state, dice = _demo_start(f"legal-{seed}", seed)
        while not state.ended and state.turn <= 40:
            for player in state.players:
                commands = choose_orders(state, player, f"{seed}:{state.turn}:{player}")
                for command in commands:
                    assert isinstance(command, GiveOrder) and not command.replace
                    state = fold(decide(state, command, TableDice()), state)
                able = [
                    ship.id
                    for ship in state.ships.values()
                    if ship.owner == player and ship.afloat and not ship.fireship and not fighting_fire(ship)
                ]
                assert sorted(c.ship for c in commands) == sorted(able)
            state = fold(decide(state, ResolveTurn(reveal_seed=seed), dice), state)


def test_seeded_demo_games_are_deterministic() -> None:
    """Same game name and seed, same log, event for event (D2): nothing in the bot depends on
    hash seeds or dict order."""
    for seed in ("demo", "2", "3"):
        first = play_in_memory(f"same-{seed}", seed, 25)
        again = play_in_memory(f"same-{seed}", seed, 25)
        assert msgspec.json.encode(first) == msgspec.json.encode(again)


def test_bot_orders_do_not_depend_on_the_order_ships_are_stored_in() -> None:
    state, _ = _demo_start("order", "demo")
    shuffled = msgspec.structs.replace(state, ships=dict(reversed(list(state.ships.items()))))
    for player in state.players:
        assert choose_orders(state, player, 7) == choose_orders(shuffled, player, 7)


def test_most_demo_games_end_in_victory_with_shots_and_moves() -> None:
    """The demo is a real battle: most seeds end by T3 victory within 40 turns, with shots
    fired, ships sailing and turning, and no turn-limit stalemate between passive fleets."""
    seeds = [str(n) for n in range(1, 9)]
    logs = [play_in_memory(f"demo-{seed}", seed, 40) for seed in seeds]
    summaries = [summarise(log) for log in logs]
    victories = [s for s in summaries if s.reason == "victory"]
    assert len(victories) >= 6, [(s.reason, s.turns) for s in summaries]
    assert all(isinstance(log[-1], GameEnded) for log in logs)
    assert sum(s.shots for s in summaries) >= 20 * len(seeds)
    orders = [order for log in logs for e in log if isinstance(e, OrderGiven) for order in e.actions]
    assert any(isinstance(o, Advance) for o in orders) and any(isinstance(o, Maneuver) for o in orders)
    assert any(isinstance(o, Attack) and o.mode == "burst" for o in orders)
