"""The archive's tables (see :mod:`mortecouille.replays.analytics.archive`): one row type per table,
whose fields are the table's columns, the Hive partition columns, and the README that documents
them for the archive's readers.

Each row type is the one definition of its table: :data:`TABLES` (every column and its DuckDB
type) is derived from the row types' fields, and the row builders
(:mod:`mortecouille.replays.analytics.rows`) construct the same row types, so a column cannot be
added to the schema and forgotten by the rows (mypy --strict refuses a row built without it). The
writer (:mod:`mortecouille.replays.analytics.archive`), the empty views of a young archive
(:mod:`mortecouille.replays.analytics.query`) and the README all read :data:`TABLES`.

A column's DuckDB type follows from its annotation: ``str`` is VARCHAR, ``bool`` BOOLEAN,
``float`` DOUBLE, ``list[T]`` T's type with ``[]``; an ``int`` says its width, :data:`Integer` or
:data:`Bigint`. ``X | None`` is the same column, holding nulls (every column may).
"""

from __future__ import annotations

import types
from typing import Annotated, Any, ClassVar, Union, get_args, get_origin, get_type_hints

import msgspec

#: Hive partition columns, in directory order; every table has them.
PARTITION_COLUMNS: tuple[str, ...] = ("ruleset", "month")

Columns = tuple[tuple[str, str], ...]


class SqlType(msgspec.Struct, frozen=True):
    """A column's DuckDB type, declared beside its Python type: ``Annotated[int, SqlType("BIGINT")]``."""

    name: str


Integer = Annotated[int, SqlType("INTEGER")]
Bigint = Annotated[int, SqlType("BIGINT")]

# The types whose DuckDB type needs no declaration.
_PLAIN_TYPES: dict[object, str] = {str: "VARCHAR", bool: "BOOLEAN", float: "DOUBLE"}


def sql_type(annotation: Any) -> str:
    """The DuckDB type of a column annotated ``annotation``.

    >>> sql_type(Integer | None), sql_type(list[str]), sql_type(float)
    ('INTEGER', 'VARCHAR[]', 'DOUBLE')
    """
    origin = get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        (column,) = [arg for arg in get_args(annotation) if arg is not type(None)]
        return sql_type(column)
    if origin is Annotated:
        return next(m.name for m in annotation.__metadata__ if isinstance(m, SqlType))
    if origin is list:
        return sql_type(get_args(annotation)[0]) + "[]"
    if annotation in _PLAIN_TYPES:
        return _PLAIN_TYPES[annotation]
    raise TypeError(f"no DuckDB type for {annotation!r}: an int column is Integer or Bigint")


class TableRow(msgspec.Struct, kw_only=True):
    """One row of the table named ``table``; its fields, in order, are the table's columns
    (without the partition columns)."""

    table: ClassVar[str]


def columns_of(row_type: type[TableRow]) -> Columns:
    """``row_type``'s columns and DuckDB types, in field order."""
    hints = get_type_hints(row_type, include_extras=True)
    return tuple((name, sql_type(hints[name])) for name in row_type.__struct_fields__)


class GameRow(TableRow):
    table: ClassVar[str] = "games"
    game: str
    players: list[str]
    budget: Bigint
    board_width: Integer
    board_height: Integer
    rules_version: str
    dice_mode: str
    forked_from: str | None
    scenario: bool
    turns: Integer
    winner: str | None
    end_reason: str | None
    events: Bigint
    last_hash: str


class EventRow(TableRow):
    table: ClassVar[str] = "events"
    game: str
    seq: Bigint
    turn: Integer | None
    type: str
    ship: str | None
    payload: str


class DieRow(TableRow):
    table: ClassVar[str] = "dice"
    game: str
    seq: Bigint
    turn: Integer
    phase: str
    ship: str | None
    purpose: str
    index: Integer
    sides: Integer
    value: Integer
    source: str


class ShotRow(TableRow):
    table: ClassVar[str] = "shots"
    game: str
    seq: Bigint
    turn: Integer
    ship: str
    weapon: str
    target: str
    distance: Integer
    cannons: Integer
    mode: str
    dice: list[Integer]
    bonus: Integer
    needed: str
    needed_total: Integer | None
    hit: bool
    damage: Integer
    flaming: bool


class CollisionRow(TableRow):
    table: ClassVar[str] = "collisions"
    game: str
    seq: Bigint
    turn: Integer
    round: Integer | None
    phase: str
    step: Integer | None
    rule: str
    ship_a: str | None
    ship_b: str | None
    square_x: Integer
    square_y: Integer
    rock_x: Integer | None
    rock_y: Integer | None


class DamageRow(TableRow):
    table: ClassVar[str] = "damage"
    game: str
    seq: Bigint
    turn: Integer
    round: Integer | None
    phase: str
    ship: str
    amount: float
    cause: str
    other: str | None
    rules: list[str]


class FireRow(TableRow):
    table: ClassVar[str] = "fires"
    game: str
    seq: Bigint
    turn: Integer
    ship: str
    phase: str
    die: Integer
    out: bool
    damage: Integer
    next_phase: str | None
    abandoned: bool


class ShipRow(TableRow):
    table: ClassVar[str] = "ships"
    game: str
    owner: str | None
    ship: str
    kind: str
    options: list[str]
    fleet_options: list[str]
    price: Bigint
    damage: float
    damage_dealt: float
    status: str
    won: bool


class RulingRow(TableRow):
    table: ClassVar[str] = "rulings"
    game: str
    seq: Bigint
    turn: Integer
    rule: str
    text: str
    adjustments: Integer


#: The row type of every table, in the archive's table order.
ROW_TYPES: tuple[type[TableRow], ...] = (
    GameRow, EventRow, DieRow, ShotRow, CollisionRow, DamageRow, FireRow, ShipRow, RulingRow,
)  # fmt: skip

#: Every table's columns and DuckDB types, without the partition columns, derived from its row type.
TABLES: dict[str, Columns] = {row_type.table: columns_of(row_type) for row_type in ROW_TYPES}

# ------------------------------------------------------------------ README

_DESCRIPTIONS: dict[str, str] = {
    "games": "one row per archived game: its creation, how long it lasted, who won and why",
    "events": "every log line: `payload` is the exact canonical JSON line (its `hash` re-checkable "
    "with SHA-256); `turn` and `ship` are null for events without them",
    "dice": "every die (die-rolled): `index` counts this ship's rolls for this purpose in this phase; "
    "`source` is seeded, table or fixed",
    "shots": "every cannon volley or catapult shot (shot-fired): `mode` normal, burst or catapult; "
    "`needed` the total to reach or hit/miss when automatic (then `needed_total` is null and `dice` "
    "empty); `bonus` the S6 superiority bonus",
    "collisions": "every collision (rules M, C): two ships, or one ship (`ship_b` null) against a rock "
    "or the board's edge, `rock_x`/`rock_y` then being the square it claimed (off the board for the "
    "edge); `square_x`/`square_y` where it happened",
    "damage": "every loss (damage): `cause` ram, rock, shot, catapult, fire, wear, explosion...; "
    "`other` the ship that caused it, when one did",
    "fires": "every fire check at upkeep (fire-checked, X1): `next_phase` null when the fire is out "
    "or the crew abandoned the ship",
    "ships": "every ship as the game ended: individual `options` and the owner's `fleet_options`, "
    "`price` paid for the ship and its own options (F1-F2), `damage` taken, `damage_dealt` (damage "
    "rows naming it as `other`), `status` sunk, lost (abandoned), gone or afloat, `won` its owner won",
    "rulings": "every referee ruling: the rule it rests on, its text and how many adjustments it made",
}


def readme_text() -> str:
    lines = [
        "# Mortecouille game archive",
        "",
        "Plain Parquet files, hive-partitioned: `TABLE/ruleset=R/month=YYYY-MM/part-BATCH-N.parquet`.",
        "`ruleset` and `month` are partition columns (in the directory names, not in the files); "
        "`month` is when the game was archived. Any Parquet reader works, no project code needed:",
        "",
        "```sql",
        "SELECT * FROM read_parquet('ARCHIVE/shots/**/*.parquet', hive_partitioning = true);",
        "```",
        "",
        "`logs/GAME.jsonl` is each game's verified log, byte for byte (canonical JSON lines, each with",
        "`hash` = SHA-256 of the line without `hash`, chained by `prev`); `manifest.json` lists the",
        "archived games with their last hash.",
        "",
    ]
    for table, columns in TABLES.items():
        lines += [f"## {table}", "", _DESCRIPTIONS[table] + ".", "", "| column | type |", "|---|---|"]
        lines += [f"| {name} | {kind} |" for name, kind in columns]
        lines += [f"| {name} | VARCHAR (partition) |" for name in PARTITION_COLUMNS]
        lines.append("")
    return "\n".join(lines)
