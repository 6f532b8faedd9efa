"""What every ruleset shares: the command base class, the life cycle of a game (create it,
resolve its turns, end it), the helpers deciders and evolvers build states with, and the
fold loop itself.

Every ruleset module imports this one, and :mod:`mortecouille.core.game` imports the
rulesets: keeping these names here, below both, is what spares an import cycle.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, NamedTuple, TypeAlias

import msgspec

from mortecouille.core.board.terrain import validate_board
from mortecouille.core.dice import DICE_SCHEMES, DiceSource, commits_to_a_seed, matches_commitment
from mortecouille.core.errors import BadInput
from mortecouille.core.limits import (
    BUDGET_MAX,
    DICE_MODES,
    GAME_FILE_SUFFIXES,
    NAME_MAX,
    PLAYERS_MAX,
    check_name,
    check_text,
    how_alike,
    name_clash,
    name_key,
    names_matching,
)
from mortecouille.core.questions import asked_named
from mortecouille.core.state import GameState, ShipState, WorkingShips, WorkingTokens
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.codec import CorruptLine
from mortecouille.events.game import GameCreated, GameEnded


class Command(msgspec.Struct, frozen=True, kw_only=True):
    """Something a referee asks for. A ruleset lists the commands it takes with their deciders."""


#: ``decide`` for one command type: refuses (RuleViolation, BadInput) or returns the events
Decide: TypeAlias = Callable[[GameState, Any, DiceSource], list[Event]]
#: ``evolve`` for one event type: never fails on a valid log
Evolve: TypeAlias = Callable[[GameState, Any], GameState]


class PlayedTurn(NamedTuple):
    """A turn a ruleset resolved: its events (what the ResolveTurn decider returns), and
    ``settled``, the state its events lead to up to its TurnEnded (left out, with what follows
    it): the state whose hash that TurnEnded records, which the rules fold to compute it. Handed
    out so that re-deriving a log (``verify``), having found the turn's logged events equal to
    these, need not fold them all a second time: by purity, folding them gives it."""

    events: list[Event]
    settled: GameState


#: a ruleset's turn, played: ``decide`` for ResolveTurn with the state it settled on
PlayTurn: TypeAlias = Callable[[GameState, Any, DiceSource], PlayedTurn]


class UnknownEvent(CorruptLine):
    """A well-formed event that the game's ruleset neither evolves nor ignores (exit 4):
    a forged or mixed-up log, since no decider of that ruleset writes it."""

    def __init__(self, event: Event, ruleset: str) -> None:
        tag = event.__struct_config__.tag
        game = f"a {ruleset} game" if ruleset else "a game not created yet"
        super().__init__(f"seq {event.seq}: a {tag!r} event has no place in {game}", seq=event.seq)
        self.tag = tag


class UnappliableEvent(CorruptLine):
    """A well-formed event that does not apply to the game before it (exit 4), such as a move
    of a ship the game never had: the deciders never write one, so the log was forged."""

    def __init__(self, event: Event, error: Exception) -> None:
        tag = event.__struct_config__.tag
        detail = f"a {tag!r} event does not apply to the game ({type(error).__name__}: {error})"
        super().__init__(f"seq {event.seq}: {detail}", seq=event.seq)


#: what an evolver raises on an event that does not fit its state (a forged log, never a real one)
UNFIT: tuple[type[Exception], ...] = (KeyError, ValueError, TypeError, AttributeError, ArithmeticError)


def fold_with(
    evolvers: Mapping[type[Event], Evolve],
    ignored: Collection[type[Event]],
    events: Iterable[Event],
    state: GameState,
) -> GameState:
    """Apply ``events`` in order with one ruleset's tables: the loop every fold runs.

    The tables are looked up once by the caller, not per event: this loop is the hot
    path of every command (bench/bench_fold.py).

    The states between two events never leave this loop, so their ships live in one private
    :class:`~mortecouille.core.state.WorkingShips` that :func:`with_ship` changes in place
    instead of copying every ship per move. The caller's state is not
    touched (its ships are copied once, here) and the dict is closed before the state is handed
    out, so the result is the value a plain repeated ``evolve`` gives, with the same hash
    (tests/test_fold_fast_path.py). A fold run by an evolver inside this one works on the same
    open dict, which the outer fold closes.
    """
    ships = state.ships
    opened: WorkingShips | None = None
    if not (type(ships) is WorkingShips and ships.open):
        opened = WorkingShips(ships)
        opened.open = True
        state = replace(state, ships=opened)
    try:
        for event in events:
            handler = evolvers.get(type(event))
            if handler is not None:
                try:
                    state = handler(state, event)
                except UNFIT as error:
                    raise UnappliableEvent(event, error) from None
            elif type(event) not in ignored:
                raise UnknownEvent(event, state.ruleset)
    finally:
        if opened is not None:
            opened.open = False
            # the one working dict of tokens the states handed out can hold (the others were
            # left with the states between events, which nobody sees)
            tokens = state.tokens
            if type(tokens) is WorkingTokens:
                tokens.open = False
    return state


_replace = msgspec.structs.replace


def replace(state: GameState, **changes: Any) -> GameState:
    return _replace(state, **changes)


def ship_named(state: GameState, ship_id: str, field: str) -> ShipState:
    """The ship ``ship_id``, or a refusal naming ``field`` when the game has none."""
    ship = state.ships.get(ship_id)
    if ship is None:
        raise BadInput(field, "no ship {ship_id!r} in {game!r}", ship_id=ship_id, game=state.game)
    return ship


def ship_id_typed(state: GameState, text: str, *, on_the_board: bool = False) -> str:
    """The id of the ship ``text`` names as ``place`` reads a name (case and spacing aside), when
    exactly one ship matches (``on_the_board``: one of the placed ships, which every viewer sees);
    ``text`` itself when a ship has exactly that id or no single ship matches, for the caller's
    check to refuse naming its field."""
    if text in state.ships:
        return text
    folded = name_key(text)
    named = [
        ship_id
        for ship_id, ship in state.ships.items()
        if name_key(ship_id) == folded and (ship.at is not None or not on_the_board)
    ]
    return named[0] if len(named) == 1 else text


def player_typed(players: Iterable[str], text: str) -> str:
    """The player ``text`` names as every command reads a player (case and spacing aside), when
    exactly one matches; ``text`` itself when a player has exactly that name or no single player
    matches, for the caller's check to refuse naming its field."""
    players = tuple(players)
    if text in players:
        return text
    named = names_matching(text, players)
    return named[0] if len(named) == 1 else text


def with_ship(state: GameState, ship: ShipState) -> GameState:
    """``state`` with ``ship`` in it, in place of any ship with its id.

    A new state with a new dict of ships, except inside a fold, whose private dict is changed in
    place and the state handed in returned (see :func:`fold_with`): no caller sees it again.
    """
    ships = state.ships
    if type(ships) is WorkingShips and ships.open:
        ships[ship.id] = ship
        return state
    return _replace(state, ships={**ships, ship.id: ship})


def without_ship(state: GameState, ship_id: str) -> GameState:
    """``state`` without the ship ``ship_id`` (in place inside a fold, like :func:`with_ship`)."""
    ships = state.ships
    if type(ships) is WorkingShips and ships.open:
        ships.pop(ship_id, None)
        return state
    return replace(state, ships={k: v for k, v in ships.items() if k != ship_id})


def give_tokens(state: GameState, ship_id: str, tokens: tuple[str | None, ...]) -> GameState:
    """``state`` with ``tokens`` given to ``ship_id`` for this turn: a new dict of tokens, except
    inside a fold, where the turn's tokens live in one private dict (:class:`WorkingTokens`)
    changed in place, as the ships' do."""
    given = state.tokens
    if type(given) is WorkingTokens and given.open:
        given[ship_id] = tokens
        return state
    ships = state.ships
    if type(ships) is WorkingShips and ships.open:  # inside a fold: this turn's working dict
        working = WorkingTokens(given)
        working[ship_id] = tokens
        working.open = True
        return _replace(state, tokens=working)
    return _replace(state, tokens={**given, ship_id: tokens})


def move_ship(state: GameState, ship_id: str, at: tuple[int, int] | None, facing: str) -> GameState:
    """:func:`change_ship` of a ship's square and facing, the fold's most frequent change, without
    the keyword arguments' packing (a tenth of a long game's fold)."""
    ships = state.ships
    ship = _replace(ships[ship_id], at=at, facing=facing)
    if type(ships) is WorkingShips and ships.open:
        ships[ship_id] = ship
        return state
    return _replace(state, ships={**ships, ship_id: ship})


def change_ship(state: GameState, ship_id: str, **changes: Any) -> GameState:
    """``state`` with ``changes`` made to the fields of one of its ships (the most frequent change
    of a fold: :func:`with_ship` inlined)."""
    ships = state.ships
    ship = _replace(ships[ship_id], **changes)
    if type(ships) is WorkingShips and ships.open:
        ships[ship_id] = ship
        return state
    return _replace(state, ships={**ships, ship_id: ship})


def shared_fields(source: msgspec.Struct, target: type[msgspec.Struct]) -> dict[str, Any]:
    """``source``'s values for every field ``target`` also has, by name: a command, its event
    and the state it builds share their field names, so none of them lists the others' fields."""
    return {name: getattr(source, name) for name in _shared_names(type(source), target)}


@functools.cache
def _shared_names(source: type[msgspec.Struct], target: type[msgspec.Struct]) -> tuple[str, ...]:
    return tuple(name for name in target.__struct_fields__ if name in source.__struct_fields__)


# ------------------------------------------------------------------ life cycle


class CreateGame(Command, frozen=True, kw_only=True):
    game: str
    ruleset: str
    players: tuple[str, ...]
    budget: int
    board: Board
    dice_mode: str = "seeded"
    seed_sha256: str | None = None
    seed_salt: str | None = None
    seed_hmac: str | None = None
    #: the dice scheme (``None``: D2 alone; ``"contributed"``: D3), for seeded games only
    dice_scheme: str | None = None
    rules_version: str = ""
    forked_from: str | None = None
    forked_at_seq: int | None = None
    scenario: bool = False


class EndGame(Command, frozen=True, kw_only=True):
    reason: str = "referee"
    winner: str | None = None
    seed: str | None = None


class ResolveTurn(Command, frozen=True, kw_only=True):
    """Resolve the current turn. ``partial``: ships without orders do nothing instead of blocking.

    Every ruleset takes it, each with its own turn resolver (``Ruleset.play_turn``).
    """

    partial: bool = False
    rounds: int | None = None
    #: the secret seed, revealed in the GameEnded event if this turn ends the game (T3, D2)
    reveal_seed: str | None = None
    #: a contributed game (D3), the one-step path: contributions the shell drew for players who
    #: committed none, committed, locked and revealed by this resolve (player -> 32 hex digits)
    contribute: dict[str, str] = {}
    #: a contributed game (D3): resolve without the contributions still unrevealed, for this reason
    absent_reason: str | None = None


def check_game_name(name: str) -> None:
    if len(name) > NAME_MAX:
        raise BadInput(
            "game",
            "{name!r}...: {count} characters, at most {name_max}",
            name=name[:NAME_MAX],
            count=len(name),
            name_max=NAME_MAX,
        )
    if not name or not all(c.isalnum() or c in "-_." for c in name):
        raise BadInput("game", "{name!r}: use letters, digits, '-', '_' or '.'", name=name)
    # Refused rather than stripped: the game would then answer to two names, and a later
    # ``state x.jsonl`` would look for ``x.jsonl.jsonl``.
    stem, dot, suffix = name.rpartition(".")
    if dot and f".{suffix.lower()}" in GAME_FILE_SUFFIXES:
        raise BadInput(
            "game",
            "{name!r} ends with the suffix of a game's file: name the game {stem!r}",
            name=name,
            stem=stem,
        )


def check_players_distinct(players: Iterable[str], field: str) -> None:
    """Refuse (BadInput naming ``field``) players two of whom look alike: one name case and
    spacing aside, or drawn alike (:func:`~mortecouille.core.limits.look_alike`).

    Project ruling under T3 (RULES.md): a player is named by one name. Every command reads a
    player's name case and spacing aside (:func:`~mortecouille.core.limits.name_key`), so
    ``Anne`` beside ``anne`` would make either name ambiguous to every command, and ``end
    --winner`` could not say who won; and ``Аnne`` (Cyrillic ``А``) beside ``Anne`` would let one
    player pass for the other on every page and sheet."""
    clash = name_clash(players)
    if clash is not None:
        earlier, later = clash
        raise BadInput(
            field,
            "{later!r} and {earlier!r} {alike}: every player needs a name of their own, or a command "
            "or a reader would take one for the other (T3, project ruling)",
            later=later,
            earlier=earlier,
            alike=how_alike(earlier, later),
        )


def decide_create(state: GameState, command: CreateGame, dice: DiceSource) -> list[Event]:
    """Open a game. ``decide`` has already found ``command.ruleset`` among the rulesets."""
    if state.created:
        raise BadInput("game", "game {game!r} already exists", game=state.game)
    check_game_name(command.game)
    if command.dice_mode not in DICE_MODES:
        modes = ", ".join(DICE_MODES)
        raise BadInput("dice", "{mode!r} is not one of {modes}", mode=command.dice_mode, modes=modes)
    players = command.players
    if not players:
        raise BadInput("players", "name at least one player")
    if len(players) > PLAYERS_MAX:
        raise BadInput("players", "{count} players: at most {most}", count=len(players), most=PLAYERS_MAX)
    for player in players:
        check_name("players", player)
    if any(not p.strip() for p in players):
        raise BadInput("players", "every player needs a name: {players!r}", players=players)
    check_players_distinct(players, "players")
    fewest = asked_named(command.ruleset).fewest_players
    if len(players) < fewest and not command.scenario:
        raise BadInput("players", "a {ruleset} game needs at least {fewest} players (T3)", rule="T3",
                       ruleset=command.ruleset, fewest=fewest)  # fmt: skip
    if not 0 <= command.budget <= BUDGET_MAX:
        raise BadInput("budget", "must be 0 to {most}, not {budget}", most=BUDGET_MAX, budget=command.budget)
    validate_board(command.board)
    if command.dice_mode == "seeded" and not commits_to_a_seed(command):
        raise BadInput("seed", "a seeded game must commit to its seed (D2)")
    if command.dice_scheme not in DICE_SCHEMES:
        raise BadInput(
            "dice_scheme", "{dice_scheme!r} is not a dice scheme (D2, D3)", dice_scheme=command.dice_scheme
        )
    created = shared_fields(command, GameCreated)
    if command.dice_mode != "seeded":
        created |= {"seed_sha256": None, "seed_salt": None, "seed_hmac": None, "dice_scheme": None}
    return [GameCreated(**created)]


def evolve_created(state: GameState, event: GameCreated) -> GameState:
    """The game as created, on top of its ruleset's initial state (``Ruleset.initial_state``)."""
    return replace(state, **shared_fields(event, GameState), created=True)


def decide_end(state: GameState, command: EndGame, dice: DiceSource) -> list[Event]:
    check_text("reason", command.reason)
    winner = command.winner
    if winner is not None:
        # matched as every command matches a player (case and spacing aside), logged as spelled
        winner = player_typed(state.players, winner)
        if winner not in state.players:
            players = ", ".join(state.players)
            raise BadInput(
                "winner",
                "{winner!r} is not a player of {game!r} (players: {players})",
                winner=winner,
                game=state.game,
                players=players,
            )
    seed = None
    if state.dice_mode == "seeded":
        if command.seed is None or not matches_commitment(command.seed, state):
            raise BadInput("seed", "the seed to reveal does not match the game's commitment (D2)")
        seed = command.seed
    return [GameEnded(reason=command.reason, winner=winner, seed=seed, rules=("T3", "D2"))]


def evolve_ended(state: GameState, event: GameEnded) -> GameState:
    return replace(state, ended=True, end_reason=event.reason, winner=event.winner, revealed_seed=event.seed)
