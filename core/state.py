"""The state a log folds into, and its stable hash.

States are frozen msgspec Structs: ``evolve`` returns a new state and never
changes the one it was given, so a decider can try events on a state without
risk. Containers inside (dicts, tuples) are replaced, never mutated.
"""

import functools
import hashlib
from collections.abc import Callable
from typing import Any

import msgspec

from mortecouille.core.fleet.purchase import Fleet
from mortecouille.events.board import Board
from mortecouille.events.codec import canonical
from mortecouille.events.condition import ShipCondition
from mortecouille.events.orders import OrderSet


class ShipState(ShipCondition, frozen=True, kw_only=True):
    """One ship as the rules see it: where it is and whose, and its condition (declared once, in
    ShipCondition). Fields a ruleset does not use keep their defaults."""

    id: str
    kind: str
    owner: str | None = None
    at: tuple[int, int] | None = None
    facing: str = "N"
    # a float from the start, as every evolver stores it: ``state --json`` shows 0.0 for an
    # undamaged ship (the hash leaves equal defaults out either way)
    damage: float = 0.0
    sunk: bool = False
    lost: bool = False
    gone: bool = False
    price: int = 0
    #: C6 from the 2026.2 edition: this fireship's barrels exploded on its first impact, so it
    #: sails on without exploding again (left at its default in 2026.1, where it sank instead, so
    #: the state hashes of games played then do not change)
    barrels_spent: bool = False

    @property
    def afloat(self) -> bool:
        return not (self.sunk or self.lost or self.gone) and self.at is not None


class DiceRound(msgspec.Struct, frozen=True, kw_only=True):
    """The dice contributions of one turn of a ``contributed`` game (D3): who committed (player ->
    SHA-256 of their contribution), whether the turn is locked, what was revealed, and who was
    resolved without (player -> the referee's reason). A round of an earlier turn counts as none."""

    turn: int
    locked: bool = False
    commitments: dict[str, str] = {}
    revealed: dict[str, str] = {}
    absent: dict[str, str] = {}


class GameState(msgspec.Struct, frozen=True, kw_only=True):
    game: str = ""
    ruleset: str = ""
    players: tuple[str, ...] = ()
    budget: int = 0
    board: Board = Board(width=1, height=1)
    rules_version: str = ""
    dice_mode: str = "seeded"
    seed_sha256: str | None = None
    seed_salt: str | None = None
    seed_hmac: str | None = None
    #: the game's dice scheme (D2 alone when ``None``; ``"contributed"``: D3)
    dice_scheme: str | None = None
    forked_from: str | None = None
    scenario: bool = False
    created: bool = False
    #: the turn being ordered now (1 for the first), or the last one resolved once ended
    turn: int = 1
    ended: bool = False
    end_reason: str | None = None
    winner: str | None = None
    revealed_seed: str | None = None
    ships: dict[str, ShipState] = {}
    #: each player's purchases (F1-F3), created by their first purchase
    fleets: dict[str, Fleet] = {}
    #: blockade tokens given for the current turn, one per round (P1)
    tokens: dict[str, tuple[str | None, ...]] = {}
    #: mortecouille orders by ship (T1); a set from an earlier turn counts as none
    orders: dict[str, OrderSet] = {}
    #: the dice contributions of the current turn (D3); ``None`` until the first of a game
    dice_round: DiceRound | None = None


EMPTY = GameState()


class WorkingShips(dict[str, ShipState]):
    """The ships of the states inside one fold: a private dict the fold may change in place.

    A fold applies thousands of events and hands out only the last state, so copying the dict of
    every ship for each move (what keeps ``evolve`` pure) is wasted on states nobody sees. The
    fold that opens a WorkingShips copies the ships it was given into it (the caller's dict is
    never touched), lets :func:`~mortecouille.core.life_cycle.with_ship` set ships in it while
    ``open``, and closes it before handing the state out: from then on it is a dict like any
    other, and changing a ship copies it again. Equal to the dict it stands for, encoded and
    hashed the same (it is a dict), so states and their hashes are the same values either way.
    """

    __slots__ = ("open",)

    def __init__(self, ships: dict[str, ShipState]) -> None:
        super().__init__(ships)
        #: True only while the fold that made it runs: then no state holding it has left the fold
        self.open = False


class WorkingTokens(dict[str, tuple[str | None, ...]]):
    """The blockade tokens of the states inside one fold, changed in place as
    :class:`WorkingShips` are: a turn gives every ship its tokens, one event each, and copying the
    dict of all tokens for each was an eighth of a long blockade game's fold. Made by the first
    TokensGiven of a turn inside a fold (``open`` while that fold runs), closed by the fold before
    the state is handed out; a dict like any other from then on."""

    __slots__ = ("open",)

    def __init__(self, tokens: dict[str, tuple[str | None, ...]]) -> None:
        super().__init__(tokens)
        self.open = False


def with_earlier_ships(after: GameState, before: GameState) -> GameState:
    """``after`` with every ship equal to the one of the same id in ``before`` replaced by that one.

    An equal state (``==``, the same hash), so any caller may use it in place of ``after``. What it
    is for: a fold makes a new ShipState for every move, so a ship that sailed round its box and
    came back where it started (most of a blockade turn's) is a new object, and
    :func:`state_hash` converts a ship it has not seen (its cache is by object) again. Given back
    the object ``before`` held, the hash of the turn's end reuses its bytes (every turn
    end is hashed, and ``verify`` resolves every turn again). ``after`` itself when no ship is new.
    """
    earlier = before.ships
    ships = after.ships
    if ships is earlier:
        return after
    kept: dict[str, ShipState] | None = None
    get = earlier.get
    for sid, ship in ships.items():
        old = get(sid)
        if old is not None and old is not ship and old == ship:
            if kept is None:
                kept = dict(ships)
            kept[sid] = old
    if kept is None:
        return after
    return msgspec.structs.replace(after, ships=kept)


def state_as_dict(state: GameState) -> dict[str, Any]:
    """Every field, defaults included, as plain JSON-ready values (``state --json``)."""
    body = msgspec.structs.asdict(state)
    body["ships"] = {sid: msgspec.structs.asdict(ship) for sid, ship in state.ships.items()}
    result: dict[str, Any] = msgspec.to_builtins(body)
    return result


def state_hash(state: GameState) -> str:
    """SHA-256 of the canonical encoding: equal states, equal hashes, whatever the fold order.

    Fields equal to their default are left out, at every depth, so a field added to
    the state later does not change the hashes old logs recorded. The encoding is that of
    :func:`without_defaults`; the parts that are frozen Structs come from a private cache of
    their canonical bytes (see :func:`_canonical_struct`).
    """
    body: dict[str, Any] = {}
    for name, default in _field_defaults(GameState):
        value = getattr(state, name)
        if default is not _REQUIRED and value == default:
            continue
        if name == "ships":
            # the bulk of a big game: the same result as without_defaults, at C speed, and a ship
            # left unchanged by the last events (sunk, at anchor) is not converted again
            body[name] = {sid: _canonical_ship(ship) for sid, ship in value.items()}
        elif name == "tokens":
            # plain strings and None in tuples: encoded as they are, the JSON without_defaults
            # gives (a tuple is an array), without converting every ship's tokens each turn end
            body[name] = value
        else:
            body[name] = _hashable(value)
    return hashlib.sha256(canonical(body)).hexdigest()


def ship_without_defaults(ship: ShipState) -> dict[str, Any]:
    """:func:`without_defaults` of a ship: its fields that differ (``!=``) from their defaults. A
    ship's fields hold plain values only (strings, numbers, None, tuples or lists of them), which
    ``to_builtins`` leaves as they are and which encode as they are: read all at once, in field
    order (``astuple``, in C), beside their names and defaults (:func:`_struct_layout`), rather than
    converted first, as every turn end hashes every ship that moved (and ``verify`` every turn
    again), and every snapshot written encodes every ship (a tuple encodes as the list
    without_defaults gives, in JSON and msgpack alike). The same bytes as before
    (tests/test_verify_speed_invariants.py, tests/test_snapshot_encoding.py)."""
    _, names, defaults = _struct_layout(ShipState)
    values = _astuple(ship)
    return {
        name: value for name, value, default in zip(names, values, defaults, strict=True) if value != default
    }


_astuple = msgspec.structs.astuple


@functools.cache
def _ship_builtin_defaults() -> dict[str, Any]:
    """ShipState's defaults as to_builtins gives them (tuples as lists); its fields hold no Struct."""
    return {
        name: msgspec.to_builtins(default)
        for name, default in _field_defaults(ShipState)
        if default is not _REQUIRED
    }


_REQUIRED = object()


@functools.cache
def _field_defaults(struct_type: type[msgspec.Struct]) -> tuple[tuple[str, Any], ...]:
    """Each field's name and default value (``_REQUIRED`` when it has none), once per class."""
    result = []
    for field in msgspec.structs.fields(struct_type):
        if field.default is not msgspec.NODEFAULT:
            default = field.default
        elif field.default_factory is not msgspec.NODEFAULT:
            default = field.default_factory()
        else:
            default = _REQUIRED
        result.append((field.name, default))
    return tuple(result)


def without_defaults(value: Any) -> Any:
    """Plain values with every Struct field equal (``==``, so 0 and 0.0 alike) to its default dropped.

    msgspec's own ``omit_defaults`` compares some values by identity, which a decoded
    string never shares with the default, so it cannot be used for a stable hash.
    Every call builds new containers: the caller owns what it gets and may change it.
    """
    return _convert(value, without_defaults)


def _convert(value: Any, convert_item: Callable[[Any], Any]) -> Any:
    """One level of :func:`without_defaults`; ``convert_item`` converts what is inside."""
    if type(value) in _PLAIN:  # most of what a state holds: nothing to look into
        return value
    if isinstance(value, msgspec.Struct):
        return _struct_body(value, convert_item)
    if isinstance(value, dict):
        return {key: convert_item(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [convert_item(item) for item in value]
    return value


#: Types whose values :func:`without_defaults` gives back as they are (exact types: a subclass,
#: such as a str enum, takes the general path)
_PLAIN: frozenset[type] = frozenset((str, int, float, bool, type(None)))


def _struct_body(value: msgspec.Struct, convert_item: Callable[[Any], Any]) -> dict[str, Any]:
    """A Struct's tag and its fields that differ from their defaults, each through ``convert_item``.

    Its values read all at once, in field order (``astuple``, in C), beside the names and defaults
    of :func:`_struct_layout`, rather than one ``getattr`` each: every turn end hashes the state's
    orders and fleets, and ``verify`` and ``archive`` every turn end again."""
    tag, names, defaults = _struct_layout(type(value))
    body: dict[str, Any] = dict(tag)
    # a required field's default is _REQUIRED, unequal to every value: always kept
    for name, item, default in zip(names, _astuple(value), defaults, strict=True):
        if item != default:
            body[name] = convert_item(item)
    return body


@functools.cache
def _struct_layout(
    struct_type: type[msgspec.Struct],
) -> tuple[tuple[tuple[str, Any], ...], tuple[str, ...], tuple[Any, ...]]:
    """A Struct class's tag (as the one key and value it adds, or none), its field names and their
    defaults (:func:`_field_defaults`), in field order, once per class."""
    config = struct_type.__struct_config__
    tag = ((config.tag_field, config.tag),) if config.tag_field is not None else ()
    fields = _field_defaults(struct_type)
    return tag, tuple(name for name, _ in fields), tuple(default for _, default in fields)


def _hashable(value: Any) -> Any:
    """:func:`without_defaults` for the hash: frozen Structs inside become their canonical bytes,
    kept in the cache below (a fleet, an order set, the board: carried from state to state)."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, msgspec.Struct) and value.__struct_config__.frozen:
        return _canonical_struct(value)
    return _convert(value, _hashable)


def _hashable_inside(value: Any) -> Any:
    """:func:`_hashable` for what is inside a frozen Struct being converted: a Struct the cache
    holds gives its bytes, one it does not is converted in place, not encoded and cached apart
    (the steps of a new order set are new too, and are never hashed again but as its part)."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, msgspec.Struct) and value.__struct_config__.frozen:
        cached = _CANONICAL_CACHE.get(id(value))
        if cached is not None and cached[0] is value:
            return cached[1]
        return _struct_body(value, _hashable_inside)
    return _convert(value, _hashable_inside)


#: Canonical bytes of frozen Structs by ``id``, for :func:`state_hash` only. A frozen Struct (a
#: fleet, an order set, the board) is carried unchanged from state to state, so hashing a run of
#: states converts it once. Each entry holds its Struct, so the id cannot be reused while the entry
#: lives; the values are immutable ``msgspec.Raw`` bytes and never leave this module except
#: inside the hash. Bounded: cleared when full (a state's working set is far smaller).
_CANONICAL_CACHE: dict[int, tuple[msgspec.Struct, msgspec.Raw]] = {}
_CANONICAL_CACHE_SIZE = 16_384


def _canonical_struct(value: msgspec.Struct) -> msgspec.Raw:
    """The canonical JSON of ``without_defaults(value)``, ready to embed in an encoding."""
    cached = _CANONICAL_CACHE.get(id(value))
    if cached is not None and cached[0] is value:
        return cached[1]
    return _remember(value, _struct_body(value, _hashable_inside))


def _canonical_ship(ship: ShipState) -> msgspec.Raw:
    """:func:`_canonical_struct` of a ship, converted by the fast path."""
    cached = _CANONICAL_CACHE.get(id(ship))
    if cached is not None and cached[0] is ship:
        return cached[1]
    return _remember(ship, ship_without_defaults(ship))


def _remember(value: msgspec.Struct, body: dict[str, Any]) -> msgspec.Raw:
    raw = msgspec.Raw(canonical(body))
    if len(_CANONICAL_CACHE) >= _CANONICAL_CACHE_SIZE:
        _CANONICAL_CACHE.clear()
    _CANONICAL_CACHE[id(value)] = (value, raw)
    return raw
