"""Requests into the rules' commands: the one place both shells' typed values become a
:class:`~mortecouille.core.life_cycle.Command` (ships named case and spacing aside, squares read,
a board checked), so a value is read alike whichever shell sent it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import msgspec

from mortecouille.app.commands import (
    AskDie,
    ConfirmDice,
    Idempotency,
    Outcome,
    new_game,
    resolve_turn,
)
from mortecouille.app.requests.bodies import (
    Action,
    AdjustmentRequest,
    Advance,
    Attack,
    BoardRequest,
    BuyRequest,
    Catapult,
    CommitRequest,
    CreateRequest,
    EquipRequest,
    Fireship,
    Idle,
    LockRequest,
    Maneuver,
    OrderRequest,
    PlaceRequest,
    ResolveRequest,
    RevealRequest,
    RulingRequest,
    SealRequest,
    Square,
    TokensRequest,
    UnbuyRequest,
    UnorderRequest,
)
from mortecouille.core.board.geometry import parse_facing, parse_square
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.board.terrain import validate_board
from mortecouille.core.contributions import CommitDiceContribution, LockTurn, RevealDiceContribution
from mortecouille.core.errors import BadInput, MortecouilleError, Phrase
from mortecouille.core.fleet.commands import (
    BuyShip,
    EquipFleet,
    EquipShip,
    SealFleet,
    WithdrawShip,
    resolve_ship,
)
from mortecouille.core.life_cycle import Command, ship_id_typed
from mortecouille.core.limits import DICE_MODES, names_matching
from mortecouille.core.questions import asked_of
from mortecouille.core.rulings import RecordRuling
from mortecouille.core.state import GameState
from mortecouille.core.turn_commands import GiveOrder, GiveTokens, WithdrawOrder
from mortecouille.events import orders
from mortecouille.events.base import Event
from mortecouille.events.board import Board, WindTile
from mortecouille.events.rulings import Adjustment
from mortecouille.events.storage.contract import EventStore

R = TypeVar("R")

#: the longest text a square is written with (``AB100``, ``99,99``)
SQUARE_TEXT_MAX = 8


class Caller(msgspec.Struct, frozen=True):
    """Who sends a request: ``player``, the seat it speaks for (None: nobody's, the referee's
    own); ``referee``, whether it may name any ship (the referee, and the CLI at the table)."""

    player: str | None = None
    referee: bool = False


#: The CLI's caller: the referee at the table, naming any ship and acting for any player.
AT_THE_TABLE = Caller(referee=True)


def for_player(player: str) -> Caller:
    """The referee at the table acting for ``player`` (buying, sealing: the CLI's PLAYER)."""
    return Caller(player=player, referee=True)


class NotYours(MortecouilleError):
    """A player naming a ship that is not theirs (403 over HTTP). Any other name is refused alike,
    another player's ship or none: telling them apart would reveal a purchase still secret (F3)."""

    exit_code = 2


# --------------------------------------------------------------------- decoding


def decode(kind: type[R], data: Any) -> R:
    """``data`` (builtins, as JSON or a command line gives them) as the request ``kind``, or
    BadInput naming the path at fault (``actions[1].target``)."""
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as error:
        text = str(error)
        raise BadInput(path_in(text) or "body", "{problem}", problem=problem_of(text)) from None


#: msgspec's words for a value past a limit, as the refusals' keys (the limits of core/limits.py)
_LIMITS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"Expected `str` of length <= (\d+)"), "at most {limit} characters", "limit"),
    (re.compile(r"Expected `str` of length >= (\d+)"), "at least {least} characters", "least"),
    (re.compile(r"Expected `array` of length <= (\d+)"), "at most {limit} items", "limit"),
    (re.compile(r"Expected `array` of length >= (\d+)"), "at least {least} items", "least"),
    (re.compile(r"Expected `int` <= (-?\d+)"), "at most {limit}", "limit"),
    (re.compile(r"Expected `int` >= (-?\d+)"), "at least {least}", "least"),
)


def problem_of(message: str) -> Phrase:
    """What a decoding refusal says, from msgspec's ``message``: a limit in the refusals' words
    (``at most {limit} characters``), anything else as msgspec says it.

    >>> problem_of("Expected `str` of length <= 64 - at `$.name`").render()
    'at most 64 characters'
    """
    for pattern, key, name in _LIMITS:
        found = pattern.match(message)
        if found is not None:
            return Phrase(key, {name: int(found.group(1))})
    return Phrase("{problem}", {"problem": message.split(" - at ")[0]})


_AT_PATH = re.compile(r"at `\$\.?([^`]*)`")
_NAMED = re.compile(r"(?:unknown|required) field `([^`]+)`")


def path_in(message: str) -> str | None:
    """The field path a msgspec message names: ``... - at `$.board.width``` -> ``board.width``,
    ``Object missing required field `ship``` -> ``ship``."""
    named = _NAMED.search(message)
    path = _AT_PATH.search(message)
    at = path.group(1) if path is not None and path.group(1) else None
    if named is not None:
        return f"{at}.{named.group(1)}" if at else named.group(1)
    return at


# --------------------------------------------------------------------- squares and boards


def square_of(field: str, square: Square) -> tuple[int, int]:
    """``square`` as ``(x, y)``: a name (``"C7"``) read, a pair taken as it is (the rules check
    it is on the board); BadInput naming ``field`` otherwise."""
    if isinstance(square, tuple):
        return square
    if len(square) > SQUARE_TEXT_MAX:
        raise BadInput(field, "{text!r}...: not a square, e.g. C7", text=square[:SQUARE_TEXT_MAX])
    try:
        return parse_square(square)
    except ValueError as error:
        raise BadInput(field, "{problem}", problem=str(error)) from None


def facing_of(field: str, text: str) -> str:
    try:
        return parse_facing(text)
    except ValueError as error:
        raise BadInput(field, "{problem}", problem=str(error)) from None


#: the rules' name of a board part's field -> the request's
_BOARD_FIELDS = {".at": ".square", ".dir": ".direction"}


def board_of(request: BoardRequest) -> Board:
    """The board ``request`` describes, checked (B1-B7), each refusal naming its field
    (``board.winds[0].direction``)."""
    winds = tuple(
        WindTile(
            at=square_of(f"board.winds[{i}].square", wind.square),
            dir=facing_of(f"board.winds[{i}].direction", wind.direction),
        )
        for i, wind in enumerate(request.winds)
    )
    board = Board(
        width=request.width,
        height=request.height,
        rocks=tuple(square_of(f"board.rocks[{i}]", rock) for i, rock in enumerate(request.rocks)),
        winds=winds,
        whirlpools=tuple(
            square_of(f"board.whirlpools[{i}]", pool) for i, pool in enumerate(request.whirlpools)
        ),
    )
    try:
        validate_board(board)
    except BadInput as error:
        field = error.field
        for rules_name, request_name in _BOARD_FIELDS.items():
            if field.endswith(rules_name):
                field = field.removesuffix(rules_name) + request_name
        if field == error.field:
            raise
        raise BadInput(field, error.key, rule=error.rule, **error.params) from None
    return board


def check_dice_mode(field: str, mode: str | None) -> None:
    """Refuse a dice mode that is not one of :data:`~mortecouille.core.limits.DICE_MODES`."""
    if mode is not None and mode not in DICE_MODES:
        raise BadInput(field, "{mode!r} is not one of {modes}", mode=mode, modes=", ".join(DICE_MODES))


# --------------------------------------------------------------------- ships


def ship_of(state: GameState, caller: Caller, text: str, field: str = "ship") -> str:
    """The id of the ship ``text`` names (case and spacing aside), as ``caller`` may name it:
    a player only their own (placed, or bought and not yet placed; NotYours otherwise), the
    referee any (a name matching none is left for the rules to refuse)."""
    if not caller.referee:
        return own_ship(state, caller.player or "", text, field)
    named = ship_id_typed(state, text)
    if named in state.ships or not any(fleet.ships for fleet in state.fleets.values()):
        return named
    return resolve_ship(state, text)


def own_ship(state: GameState, player: str, text: str, field: str = "ship") -> str:
    placed = [sid for sid, ship in state.ships.items() if ship.owner == player]
    bought = [purchase.name for purchase in state.fleets[player].ships] if player in state.fleets else []
    mine = list(dict.fromkeys([*placed, *bought]))
    if text in mine:
        return text
    found = names_matching(text, mine)
    if len(found) == 1:
        return found[0]
    theirs = ", ".join(sorted(mine)) or "none yet"
    raise NotYours("{ship!r} is not one of {player}'s ships (theirs: {theirs})", field=field,
                   ship=text, player=player, theirs=theirs)  # fmt: skip


def targets_named(state: GameState, actions: Iterable[orders.Order]) -> tuple[orders.Order, ...]:
    """``actions`` with each target spelled as the game spells that ship (case and spacing aside),
    among the ships on the board only (public to every viewer: a match tells nobody of a purchase
    still secret); a name matching none, or several, is left as typed for the rules to refuse."""
    return tuple(
        msgspec.structs.replace(action, target=ship_id_typed(state, action.target, on_the_board=True))
        if isinstance(action, orders.Attack | orders.CatapultShot)
        else action
        for action in actions
    )


# --------------------------------------------------------------------- orders and rulings


def order_of(action: Action) -> orders.Order:
    """The logged order of one action."""
    if isinstance(action, Advance):
        return orders.Advance()
    if isinstance(action, Idle):
        return orders.Idle()
    if isinstance(action, Fireship):
        return orders.BecomeFireship()
    if isinstance(action, Maneuver):
        return orders.Maneuver(turn=action.angle, side=action.side.lower(), sailing=action.sailing)
    if isinstance(action, Attack):
        mode = "burst" if action.burst else "normal"
        return orders.Attack(position=action.position.lower(), target=action.target, mode=mode)
    assert isinstance(action, Catapult)
    return orders.CatapultShot(target=action.target)


def request_of(order: orders.Order) -> Action:
    """The action a body carries for the logged ``order``: :func:`order_of`'s inverse.

    >>> request_of(orders.Attack(position="port", target="Kraken", mode="burst"))
    Attack(position='port', target='Kraken', burst=True)
    """
    if isinstance(order, orders.Maneuver):
        return Maneuver(angle=order.turn, side=order.side, sailing=order.sailing)
    if isinstance(order, orders.Attack):
        return Attack(position=order.position, target=order.target, burst=order.mode == "burst")
    if isinstance(order, orders.CatapultShot):
        return Catapult(target=order.target)
    if isinstance(order, orders.BecomeFireship):
        return Fireship()
    return Advance() if isinstance(order, orders.Advance) else Idle()


def adjustment_of(index: int, adjust: AdjustmentRequest) -> list[Adjustment]:
    """The rules' adjustments of one ship (one per field changed), fields named ``adjust[i].x``."""
    where = f"adjust[{index}]"
    made = []
    if adjust.damage is not None:
        made.append(Adjustment(ship=adjust.ship, damage=float(adjust.damage)))
    if adjust.position is not None:
        made.append(Adjustment(ship=adjust.ship, at=square_of(f"{where}.position", adjust.position)))
    if adjust.facing is not None:
        made.append(Adjustment(ship=adjust.ship, facing=facing_of(f"{where}.facing", adjust.facing)))
    if adjust.wind is not None:
        made.append(Adjustment(ship=adjust.ship, wind=adjust.wind))
    if adjust.sunk is not None:
        made.append(Adjustment(ship=adjust.ship, sunk=adjust.sunk))
    if not made:
        raise BadInput(where, "change at least one of damage, position, facing, wind or sunk")
    return made


# --------------------------------------------------------------------- one command per request


def _player(caller: Caller) -> str:
    if caller.player is None:
        raise BadInput("player", "name the player this is for")
    return caller.player


def _buy(state: GameState, caller: Caller, r: BuyRequest) -> Command:
    return BuyShip(player=_player(caller), kind=r.kind, name=r.ship, options=r.options)


def _equip(state: GameState, caller: Caller, r: EquipRequest) -> Command:
    if r.ship is None:
        return EquipFleet(player=_player(caller), option=r.option)
    return EquipShip(ship=ship_of(state, caller, r.ship), option=r.option)


def _unbuy(state: GameState, caller: Caller, r: UnbuyRequest) -> Command:
    return WithdrawShip(ship=ship_of(state, caller, r.ship))


def _seal(state: GameState, caller: Caller, r: SealRequest) -> Command:
    return SealFleet(player=_player(caller), forfeit=r.forfeit)


def _place(state: GameState, caller: Caller, r: PlaceRequest) -> Command:
    """A player places only their own ships (a new blockade ship is theirs: ``owner`` defaults to
    them and may name nobody else), checked first, so another player's ship and no ship get one
    answer; the referee places any. In a mortecouille game ``kind`` never makes a new ship."""
    at = square_of("square", r.square)
    facing = facing_of("facing", r.facing)
    owner, ship = r.owner, r.ship
    if not caller.referee:
        player = _player(caller)
        if owner is not None and owner != player:
            raise NotYours(
                "{player} may place only their own ships, not {owner}'s", player=player, owner=owner
            )
        if r.kind is not None and not asked_of(state).buys_fleets and r.ship not in state.ships:
            owner = player  # a new blockade ship, theirs (a name taken is the rules' refusal)
        else:
            ship = own_ship(state, player, r.ship)
    return PlaceShip(ship=ship, at=at, facing=facing, kind=r.kind, owner=owner)


def _order(state: GameState, caller: Caller, r: OrderRequest) -> Command:
    actions = targets_named(state, (order_of(action) for action in r.actions))
    return GiveOrder(ship=ship_of(state, caller, r.ship), actions=actions, replace=r.replace)


def _unorder(state: GameState, caller: Caller, r: UnorderRequest) -> Command:
    return WithdrawOrder(ship=ship_of(state, caller, r.ship))


def _tokens(state: GameState, caller: Caller, r: TokensRequest) -> Command:
    given = tuple(None if token in (None, "-") else token.upper() for token in r.tokens)
    return GiveTokens(ship=ship_of(state, caller, r.ship), tokens=given, replace=r.replace)


def _commit(state: GameState, caller: Caller, r: CommitRequest) -> Command:
    return CommitDiceContribution(player=_player(caller), commitment=r.commitment)


def _reveal(state: GameState, caller: Caller, r: RevealRequest) -> Command:
    return RevealDiceContribution(player=_player(caller), contribution=r.contribution)


def _lock(state: GameState, caller: Caller, r: LockRequest) -> Command:
    return LockTurn()


def _ruling(state: GameState, caller: Caller, r: RulingRequest) -> Command:
    adjustments = tuple(made for i, adjust in enumerate(r.adjust) for made in adjustment_of(i, adjust))
    return RecordRuling(rule=r.rule, text=r.text, adjustments=adjustments)


_BUILDERS: dict[type[Any], Callable[[GameState, Caller, Any], Command]] = {
    BuyRequest: _buy,
    EquipRequest: _equip,
    UnbuyRequest: _unbuy,
    SealRequest: _seal,
    PlaceRequest: _place,
    OrderRequest: _order,
    UnorderRequest: _unorder,
    TokensRequest: _tokens,
    CommitRequest: _commit,
    RevealRequest: _reveal,
    LockRequest: _lock,
    RulingRequest: _ruling,
}


def command_for(state: GameState, caller: Caller, request: msgspec.Struct) -> Command:
    """The rules' command for ``request`` sent by ``caller`` on a game in ``state``."""
    return _BUILDERS[type(request)](state, caller, request)


def builder(caller: Caller, request: msgspec.Struct) -> Callable[[GameState], Command]:
    """:func:`command_for` as ``run_command`` takes it: the state in, the command out."""
    return lambda state: command_for(state, caller, request)


# --------------------------------------------------------------------- a new game


def create_game(
    log_: EventStore,
    request: CreateRequest,
    *,
    weak_seed: bool = False,
    idempotency_digest: str | None = None,
) -> list[Event]:
    """Create the game ``request`` describes on ``log_`` (:func:`~mortecouille.app.commands.new_game`)."""
    check_dice_mode("dice", request.dice)
    return new_game(
        log_,
        players=tuple(player.strip() for player in request.players),
        ruleset=request.ruleset,
        budget=request.budget,
        board=board_of(request.board),
        dice_mode=request.dice,
        seed=request.seed,
        weak_seed=weak_seed,
        idempotency_digest=idempotency_digest,
    )


def resolve(
    log_: EventStore,
    request: ResolveRequest,
    *,
    ask: AskDie | None = None,
    confirm: ConfirmDice | None = None,
    expected_seq: int | None = None,
    idempotency: Idempotency | None = None,
) -> Outcome:
    """Resolve the turn as ``request`` asks (:func:`~mortecouille.app.commands.resolve_turn`);
    ``ask`` and ``confirm``: a terminal's questions for the table dice not given."""
    return resolve_turn(
        log_,
        partial=request.partial,
        idle_turn=request.idle_turn,
        table_values=list(request.dice) if request.dice is not None else None,
        ask=ask,
        expected_seq=expected_seq,
        confirm=confirm,
        absent_reason=request.absent_reason,
        idempotency=idempotency,
    )
