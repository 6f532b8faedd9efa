"""Commands and state changes for ships on the board, shared by both rulesets:
placing ships, and folding moves, damage and sinkings into the state."""

from __future__ import annotations

from collections.abc import Callable

from mortecouille.core.board.geometry import FACING_VECTORS, square_label, square_name
from mortecouille.core.board.terrain import board_index
from mortecouille.core.dice import DiceSource
from mortecouille.core.errors import BadInput, Phrase, RuleViolation
from mortecouille.core.life_cycle import Command, Decide, Evolve, change_ship, move_ship, replace, with_ship
from mortecouille.core.questions import Questions
from mortecouille.core.state import GameState, ShipState
from mortecouille.events.base import Event
from mortecouille.events.game import TurnEnded
from mortecouille.events.movement import DamageTaken, ShipMoved, ShipPlaced, ShipSunk


class PlaceShip(Command, frozen=True, kw_only=True):
    ship: str
    at: tuple[int, int]
    facing: str
    kind: str | None = None
    owner: str | None = None
    damage: float = 0


#: a ruleset's check of a placement beyond the board checks; returns the ShipPlaced to log
PlacementRule = Callable[[GameState, PlaceShip], ShipPlaced]


def check_placing_open(
    state: GameState, asked: Questions, what: str | Phrase = "a ship is placed", field: str | None = None
) -> None:
    """Refuse, citing F3, to put a mortecouille game's ship on the board before every fleet is sealed
    (project ruling): such a placement would be as secret as the purchase, so no answer to it, a
    refusal naming the ship, its kind, its owner or the occupied square included, may depend on
    what is still secret; refused first, the answer is the same for every ship and square, and
    names only who has not sealed (public). A scenario's ships are set up, not bought."""
    if not asked.buys_fleets or state.scenario:
        return
    unsealed = [p for p in state.players if not (p in state.fleets and state.fleets[p].sealed)]
    if unsealed:
        raise RuleViolation(
            "F3",
            "{what} once every fleet is sealed (the fleets are secret until then); not sealed yet: "
            "{unsealed}",
            field=field,
            what=what,
            unsealed=", ".join(unsealed),
        )


def check_square_free(state: GameState, ship: str, at: tuple[int, int], field: str = "at") -> None:
    """Refuse ``at`` (the command's ``field``) off the board, on a rock or under another ship."""
    index = board_index(state.board)
    if not index.on_board(at):
        raise RuleViolation(
            "B4",
            "{square} is off the {width}x{height} board",
            field=field,
            square=square_label(at),
            width=index.width,
            height=index.height,
        )
    if index.blocks(at):
        raise RuleViolation("B4", "{square} is a rock", field=field, square=square_name(at))
    for other in state.ships.values():
        if other.id != ship and other.afloat and other.at == at:
            raise RuleViolation(
                "M",
                "{square} already holds {other}: one ship per square",
                field=field,
                square=square_name(at),
                other=other.id,
            )


def placing_with(rule: PlacementRule, asked: Questions) -> Decide:
    """The PlaceShip decider of a ruleset whose own placement check is ``rule``, answering ``asked``
    (whether placing waits for the fleets, the facings a ship may take)."""

    def decide(state: GameState, command: PlaceShip, dice: DiceSource) -> list[Event]:
        return decide_place(state, command, rule, asked)

    return decide


def decide_place(state: GameState, command: PlaceShip, rule: PlacementRule, asked: Questions) -> list[Event]:
    check_placing_open(state, asked)  # before anything the answer could depend on
    if command.facing not in FACING_VECTORS:
        raise BadInput("facing", "{facing!r} is not a facing (B2)", facing=command.facing)
    facings = asked.facings
    if command.facing not in facings:
        told = f"{', '.join(facings[:-1])} or {facings[-1]}"
        raise BadInput(
            "facing", "{facing!r}: {ruleset} ships face {facings} (B2)",
            facing=command.facing, ruleset=state.ruleset, facings=told,
        )  # fmt: skip
    check_square_free(state, command.ship, command.at)
    return [rule(state, command)]


def evolve_placed(state: GameState, event: ShipPlaced) -> GameState:
    previous = state.ships.get(event.ship)
    if previous is None:
        ship = ShipState(
            id=event.ship,
            kind=event.kind or "",
            owner=event.owner,
            at=event.at,
            facing=event.facing,
            damage=float(event.damage),
        )
        return with_ship(state, ship)
    return change_ship(state, event.ship, at=event.at, facing=event.facing)


def evolve_moved(state: GameState, event: ShipMoved) -> GameState:
    return move_ship(state, event.ship, event.at, event.facing)


def evolve_damage(state: GameState, event: DamageTaken) -> GameState:
    return change_ship(state, event.ship, damage=float(state.ships[event.ship].damage + event.amount))


def evolve_sunk(state: GameState, event: ShipSunk) -> GameState:
    how = {"sunk": {"sunk": True}, "lost": {"lost": True}, "gone": {"gone": True}}[event.how]
    return change_ship(state, event.ship, at=event.at, **how)


def evolve_turn_ended(state: GameState, event: TurnEnded) -> GameState:
    return replace(state, turn=event.turn + 1, tokens={})


#: How every ruleset folds ships on the board: placed, moved, damaged, sunk, and the turn's end.
BOARD_EVOLVERS: dict[type[Event], Evolve] = {
    ShipPlaced: evolve_placed,
    ShipMoved: evolve_moved,
    DamageTaken: evolve_damage,
    ShipSunk: evolve_sunk,
    TurnEnded: evolve_turn_ended,
}
