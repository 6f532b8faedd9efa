"""A whole game between the built-in bots, through the same commands a referee gives.

Used by ``mortecouille demo`` (``play_demo``: on disk, through the command path of
mortecouille.app.commands) and by ``simulate`` (``play_in_memory``): buy two fleets,
seal them, place them, then let each bot order its ships and resolve turns
until one player is out (T3) or the turn limit ends it by the referee's
decision, the winner being the player with the most structure left.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import msgspec

from mortecouille.app.commands import KnownState, commit_to, new_seed, run_command, start_game
from mortecouille.app.games import game_log
from mortecouille.bots.fleet_buyer import choose_purchase
from mortecouille.bots.player import choose_orders
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import SeededDice, seed_commitment
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.fleet.commands import BuyShip, EquipShip, SealFleet, fleet_of
from mortecouille.core.fleet.purchase import ShipPurchase
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import Command, CreateGame, EndGame, ResolveTurn, check_game_name
from mortecouille.core.mortecouille.common import ship_stats
from mortecouille.core.narration import turns_resolved
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.board import Board, WindTile
from mortecouille.events.combat import FireChecked, ShotFired
from mortecouille.events.game import DieRolled
from mortecouille.events.movement import CollisionOccurred
from mortecouille.events.storage.contract import EventStore, GameStore
from mortecouille.events.storage.errors import Conflict
from mortecouille.replays.reading.findings import Report
from mortecouille.replays.reading.verify import verify_log

#: A small board, so the fleets meet within a few turns: two rocks to steer around, one wind
#: tile and one whirlpool in the middle to shuffle ships about (B4-B6).
DEMO_BOARD = Board(
    width=10,
    height=10,
    rocks=((2, 5), (7, 4)),
    winds=(WindTile(at=(0, 4), dir="E"),),
    whirlpools=((4, 4),),
)

#: (player, purchases as commands, placements as (ship, square, facing)). Four ships each, as
#: in the simulation benchmark, the whole budget spent (F3) on a spread of options that all
#: show in play (F2): catapult, flaming shot, super shot, siren, extra crew, fireship, and an
#: extra sail on each big ship so it keeps up. The fleets start five rows apart, bows toward
#: each other; either side can win (seeds demo, 1-200: Anne 83, Bart 99, 6 draws by mutual sinking).
DEMO_FLEETS: tuple[tuple[str, tuple[Command, ...], tuple[tuple[str, tuple[int, int], str], ...]], ...] = (
    (
        "Anne",
        (
            BuyShip(player="Anne", kind="green-big", name="Black Pearl", options=("super-shot",)),
            EquipShip(ship="Black Pearl", option="extra-sail"),
            BuyShip(player="Anne", kind="red-small", name="Hope", options=("flaming-shot",)),
            BuyShip(player="Anne", kind="blue-small", name="Marguerite"),
            EquipShip(ship="Marguerite", option="extra-crew"),
            BuyShip(player="Anne", kind="red-small", name="Sprite"),
        ),
        (
            ("Sprite", (1, 2), "N"),
            ("Black Pearl", (4, 1), "N"),
            ("Hope", (6, 2), "N"),
            ("Marguerite", (8, 2), "N"),
        ),
    ),
    (
        "Bart",
        (
            BuyShip(player="Bart", kind="red-big", name="Kraken", options=("catapult", "extra-sail")),
            BuyShip(player="Bart", kind="blue-small", name="Barracuda"),
            BuyShip(player="Bart", kind="red-small", name="Moray", options=("fireship",)),
            BuyShip(player="Bart", kind="red-small", name="Sprat", options=("siren",)),
        ),
        (
            ("Moray", (1, 7), "S"),
            ("Barracuda", (3, 7), "S"),
            ("Kraken", (5, 8), "S"),
            ("Sprat", (8, 7), "S"),
        ),
    ),
)

Apply = Callable[[Command], list[Event]]


def set_up_demo_fleets(apply: Apply) -> None:
    """Buy, seal and place both demo fleets; a fleet is sealed with a forfeit only if it must be (F3)."""
    for player, purchases, _ in DEMO_FLEETS:
        for command in purchases:
            apply(command)
        try:
            apply(SealFleet(player=player))
        except RuleViolation:  # F3: money left that could still buy something
            apply(SealFleet(player=player, forfeit=True))
    for _, _, placements in DEMO_FLEETS:
        for ship, square, facing in placements:
            apply(PlaceShip(ship=ship, at=square, facing=facing))


#: Where bot fleets other than the demo's start on :data:`DEMO_BOARD`, side by side (player 0 on
#: rows 1-2 facing N, player 1 on rows 8-7 facing S, as the demo fleets): two squares apart, so
#: no two ships collide before they have moved, clear of the rocks, wind and whirlpool.
HOME_SQUARES: tuple[tuple[tuple[tuple[int, int], ...], str], ...] = (
    (tuple((x, 1) for x in range(1, 10, 2)) + tuple((x, 2) for x in range(0, 10, 2)), "N"),
    (tuple((x, 8) for x in range(0, 10, 2)) + tuple((x, 7) for x in range(1, 10, 2)), "S"),
)

#: Two fixed fleets, by player, in the order they are bought (``simulate --fleets FILE``).
FixedFleets = dict[str, list[ShipPurchase]]

#: The players of bot games whose fleets are bought at random (the demo's two).
BOT_PLAYERS = ("Anne", "Bart")


def place_fleets(apply: Apply, state: GameState) -> None:
    """Place every bought ship of each player on its side's home squares, in purchase order."""
    for player, (squares, facing) in zip(state.players, HOME_SQUARES, strict=True):
        ships = fleet_of(state, player).ships
        if len(ships) > len(squares):
            raise BadInput(
                "fleets",
                "{player} has {count} ships; at most {fitting} fit the board",
                player=player,
                count=len(ships),
                fitting=len(squares),
            )
        for ship, square in zip(ships, squares, strict=False):
            apply(PlaceShip(ship=ship.name, at=square, facing=facing))


def seal(apply: Apply, player: str) -> None:
    """Seal ``player``'s fleet, with a forfeit only if it must be (F3)."""
    try:
        apply(SealFleet(player=player))
    except RuleViolation:  # F3: money left that could still buy something
        apply(SealFleet(player=player, forfeit=True))


def set_up_fixed_fleets(apply: Apply, current: Callable[[], GameState], fleets: FixedFleets) -> None:
    """Buy ``fleets`` ship by ship through the referee's commands (F1-F3), seal and place them."""
    for player, ships in fleets.items():
        for index, ship in enumerate(ships):
            try:
                apply(BuyShip(player=player, kind=ship.kind, name=ship.name, options=ship.options))
            except BadInput as error:  # which ship of the file, not only its field
                raise BadInput(
                    "fleets",
                    "{player}[{index}].{part}: {message}",
                    player=player,
                    index=index,
                    part=error.field,
                    message=error.phrase,
                ) from None
        seal(apply, player)
    place_fleets(apply, current())


def set_up_random_fleets(apply: Apply, current: Callable[[], GameState], seed: str) -> None:
    """Each player buys a random legal fleet (mortecouille.bots.fleet_buyer), seeded by the game's
    seed, through the referee's commands; then the fleets are placed."""
    for player in current().players:
        while not fleet_of(current(), player).sealed:
            apply(choose_purchase(current(), player, seed))
        if not fleet_of(current(), player).ships:
            raise BadInput("budget", "{budget} buys {player} no ship", budget=current().budget, player=player)
    place_fleets(apply, current())


def structure_left(state: GameState, player: str) -> int:
    return sum(
        ship_stats(state, ship.id).max_structure - int(ship.damage)
        for ship in state.ships.values()
        if ship.owner == player and ship.afloat
    )


def play_turns(apply: Apply, current: Callable[[], GameState], seed: str, max_turns: int) -> GameState:
    """Bots order, the engine resolves, until the game ends or ``max_turns`` were played."""
    state = current()
    while not state.ended and state.turn <= max_turns:
        for player in state.players:
            for order in choose_orders(state, player, f"{seed}:{state.turn}:{player}"):
                apply(order)
        apply(ResolveTurn(reveal_seed=seed))
        state = current()
    if not state.ended:
        scores = {player: structure_left(state, player) for player in state.players}
        best = max(scores.values())
        leaders = [player for player, score in scores.items() if score == best]
        winner = leaders[0] if len(leaders) == 1 else None
        apply(EndGame(reason=f"turn limit {max_turns}: most structure left", winner=winner, seed=seed))
        state = current()
    return state


class GameSummary(msgspec.Struct):
    turns: int
    winner: str | None
    reason: str | None
    events: int
    dice: int
    shots: int
    hits: int
    collisions: int
    fire_checks: int
    ships: list[dict[str, Any]]


def summarise(events: list[Event], state: GameState | None = None) -> GameSummary:
    """The game's figures; ``state``: the fold of ``events`` if the caller has it already."""
    if state is None:
        state = fold(events)
    kinds = Counter(type(event) for event in events)
    shots = [e for e in events if isinstance(e, ShotFired)]
    ships = []
    for ship in sorted(state.ships.values(), key=lambda s: (s.owner or "", s.id)):
        status = "sunk" if ship.sunk else "abandoned" if ship.lost else "gone" if ship.gone else "afloat"
        ships.append(
            {
                "ship": ship.id,
                "owner": ship.owner,
                "kind": ship.kind,
                "structure": f"{ship_stats(state, ship.id).max_structure - int(ship.damage)}"
                f"/{ship_stats(state, ship.id).max_structure}",
                "status": status,
            }
        )
    return GameSummary(
        turns=turns_resolved(state),
        winner=state.winner,
        reason=state.end_reason,
        events=len(events),
        dice=kinds[DieRolled],
        shots=len(shots),
        hits=sum(1 for s in shots if s.hit),
        collisions=kinds[CollisionOccurred],
        fire_checks=kinds[FireChecked],
        ships=ships,
    )


DEMO_BUDGET = 100000


def demo_game(
    game: str, seed: str, budget: int = DEMO_BUDGET, players: tuple[str, ...] | None = None
) -> CreateGame:
    """The command creating a bot game: the demo board, two players (the demo's unless
    ``players``), a seeded commitment."""
    return CreateGame(
        game=game,
        ruleset="mortecouille",
        players=players or tuple(player for player, _, _ in DEMO_FLEETS),
        budget=budget,
        board=DEMO_BOARD,
        seed_sha256=seed_commitment(seed),
        rules_version=RULES_VERSION,
    )


def play_in_memory(
    game: str,
    seed: str,
    max_turns: int = 60,
    budget: int = DEMO_BUDGET,
    fleets: FixedFleets | Literal["demo", "random"] = "demo",
) -> list[Event]:
    """A whole bot game without touching the disk (tests, simulation).

    ``fleets``: the demo's, a random legal fleet per player (seeded by ``seed``), or fixed ones.
    A budget too small for the fleets is refused naming the rule the purchase broke.
    """
    dice = SeededDice(seed)
    log: list[Event] = []
    state = EMPTY

    def apply(command: Command) -> list[Event]:
        nonlocal state
        produced = decide(state, command, dice)
        log.extend(produced)
        state = fold(produced, state)
        return produced

    players = BOT_PLAYERS if fleets == "random" else None if fleets == "demo" else tuple(fleets)
    apply(demo_game(game, seed, budget, players))
    try:
        if fleets == "demo":
            set_up_demo_fleets(apply)
        elif fleets == "random":
            set_up_random_fleets(apply, lambda: state, seed)
        else:
            set_up_fixed_fleets(apply, lambda: state, fleets)
    except RuleViolation as error:
        if isinstance(fleets, dict):
            raise BadInput(
                "fleets",
                "the fleets cannot be bought with {budget}: [{rule_id}] {error}",
                budget=budget,
                rule_id=error.rule,
                error=error.phrase,
            ) from None
        raise BadInput(
            "budget",
            "{budget} cannot buy the bots' fleets: [{rule_id}] {error}",
            budget=budget,
            rule_id=error.rule,
            error=error.phrase,
        ) from None
    play_turns(apply, lambda: state, seed, max_turns)
    return log


class DemoRun(msgspec.Struct, frozen=True):
    """A demo game played on disk: its name, log, final state, figures and verification."""

    game: str
    log: EventStore
    state: GameState
    summary: GameSummary
    report: Report


def free_demo_name(directory: GameStore | Path, seed: str | None, name: str | None) -> str:
    """``name`` if it is free (else a conflict), or ``demo-SEED`` (``demo`` for a random seed, which
    a name would give away before the game ends) numbered past the games taken."""
    base = name or (f"demo-{seed}" if seed is not None else "demo")
    game, number = base, 1
    while game_log(directory, game).exists():
        if name is not None:
            raise Conflict(f"game {name!r} already exists")
        number += 1
        game = f"{base}-{number}"
    return game


#: The name every demo game is created under (its game-created event), whatever its file is
#: called. A seeded die's identity holds the game's name (D2), so a name numbered past the games
#: already in the folder (``demo-S-2``) or given with ``--game`` would change every die: under one
#: fixed name, ``demo --seed S`` plays the same game wherever it runs. The log stays an ordinary
#: one (``verify`` rebuilds each die from the name its first event holds); only the demo does this.
DEMO_GAME = "demo"


def play_demo(
    directory: GameStore | Path, seed: str | None, name: str | None = None, max_turns: int = 60
) -> DemoRun:
    """A whole seeded bot game written command by command, as a referee's would be, then verified.
    ``seed``: the dice seed (same seed, same game), a random one if ``None``; either way the game
    on disk commits to it with a salted HMAC, as a referee's game does (D2). The file's name
    (``name``, or a free ``demo-SEED``) does not enter the dice: see :data:`DEMO_GAME`."""
    game = free_demo_name(directory, seed, name)
    check_game_name(game)  # the game-created event holds DEMO_GAME: the file's name is checked here
    log_ = game_log(directory, game)
    secret = seed if seed is not None else new_seed()
    commitment = commit_to(secret)
    create = msgspec.structs.replace(
        demo_game(DEMO_GAME, secret),
        seed_sha256=None,
        seed_salt=commitment.seed_salt,
        seed_hmac=commitment.seed_hmac,
    )
    stamped = start_game(log_, create, secret)
    known = KnownState(next_seq=len(stamped), last_hash=stamped[-1].hash, state=fold(stamped))

    def apply(command: Command) -> list[Event]:
        nonlocal known
        # no nonce: the bots' secrets are nobody's, and ``demo --seed S`` writes the same lines
        appended, state = run_command(log_, lambda _: command, known=known, nonce=False)
        if appended:
            known = KnownState(next_seq=appended[-1].seq + 1, last_hash=appended[-1].hash, state=state)
        return appended

    def current() -> GameState:
        return known.state

    set_up_demo_fleets(apply)
    state = play_turns(apply, current, secret, max_turns)
    events = log_.read()
    return DemoRun(
        game=game,
        log=log_,
        state=state,
        summary=summarise(events, state),
        report=verify_log(log_, events=events),
    )
