"""The rows of the archive's tables for one game, built in Python from its typed events and its
final folded state, as the row types of :mod:`mortecouille.replays.analytics.schema` (whose fields
are the tables' columns).

Every row is built with its columns spelled out as keywords, those named as their event's field
too: the archive builds one row for about every third event, and a row copied by name
(:func:`~mortecouille.core.life_cycle.shared_fields`, a dict of the shared names, then keywords)
cost ten times as much, most of building the rows (2.5 against 0.2 us a die row). A
column cannot be forgotten for it: mypy --strict refuses a row built without one, and checks that
the event has the field it is read from.
"""

from __future__ import annotations

from collections.abc import Sequence

from mortecouille.core.game import fold
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.combat import FireChecked, ShotFired
from mortecouille.events.game import DieRolled, GameCreated
from mortecouille.events.movement import CollisionOccurred, DamageTaken
from mortecouille.events.rulings import RulingRecorded
from mortecouille.replays.analytics.schema import (
    TABLES,
    CollisionRow,
    DamageRow,
    DieRow,
    EventRow,
    FireRow,
    GameRow,
    RulingRow,
    ShipRow,
    ShotRow,
    TableRow,
)

# ------------------------------------------------------------------ rows


def _status(sunk: bool, lost: bool, gone: bool) -> str:
    return "sunk" if sunk else "lost" if lost else "gone" if gone else "afloat"


def game_rows(name: str, events: Sequence[Event], lines: Sequence[bytes]) -> dict[str, list[TableRow]]:
    """The rows of every table for one game (without partition columns), from its typed events.

    ``lines`` are the log's raw lines, stored as the events' payload byte for byte so the hash
    chain can be re-checked from the Parquet files alone. (``archive`` writes the events table
    with DuckDB straight from the verified log files, the same columns and values as
    :func:`event_rows`; it builds in Python only the :func:`derived_rows`.)
    """
    rows = derived_rows(name, events)
    rows["events"] = event_rows(name, events, lines)
    return {table: rows[table] for table in TABLES}


def event_rows(name: str, events: Sequence[Event], lines: Sequence[bytes]) -> list[TableRow]:
    """The events table's rows: one per log line, ``payload`` the line itself; ``turn`` and
    ``ship`` the event's fields of those names when it has them (an int, a str), else null."""
    rows: list[TableRow] = []
    for event, line in zip(events, lines, strict=True):
        turn = getattr(event, "turn", None)
        ship = getattr(event, "ship", None)
        rows.append(
            EventRow(
                game=name,
                seq=event.seq,
                turn=turn if isinstance(turn, int) else None,
                type=str(event.__struct_config__.tag),  # a string for every event (events.schema)
                ship=ship if isinstance(ship, str) else None,
                payload=line.decode("utf-8"),
            )
        )
    return rows


def derived_rows(
    name: str, events: Sequence[Event], final: GameState | None = None
) -> dict[str, list[TableRow]]:
    """The rows of every table but ``events`` (without partition columns): what the events say
    of dice, shots, collisions, damage, fires and rulings, and the game and its ships as they
    ended (the final folded state: ``final`` when the caller has folded ``events`` already, as
    the archive's verification has)."""
    rows: dict[str, list[TableRow]] = {table: [] for table in TABLES if table != "events"}

    def add(row: TableRow) -> None:
        rows[row.table].append(row)

    dealt: dict[str, float] = {}
    for event in events:
        if type(event) not in _DERIVED_FROM:  # most events (moves, orders...) give no row here
            continue
        if isinstance(event, DieRolled):
            rows["dice"].append(
                DieRow(
                    game=name,
                    seq=event.seq,
                    turn=event.turn,
                    phase=event.phase,
                    ship=event.ship,
                    purpose=event.purpose,
                    index=event.index,
                    sides=event.sides,
                    value=event.value,
                    source=event.source,
                )
            )
        elif isinstance(event, ShotFired):
            rows["shots"].append(
                ShotRow(
                    game=name,
                    seq=event.seq,
                    turn=event.turn,
                    ship=event.ship,
                    weapon=event.weapon,
                    target=event.target,
                    distance=event.distance,
                    cannons=event.cannons,
                    mode=event.mode,
                    dice=list(event.dice),
                    bonus=event.bonus,
                    needed=str(event.needed),
                    needed_total=event.needed if isinstance(event.needed, int) else None,
                    hit=event.hit,
                    damage=event.damage,
                    flaming=event.flaming,
                )
            )
        elif isinstance(event, CollisionOccurred):
            rows["collisions"].append(
                CollisionRow(
                    game=name,
                    seq=event.seq,
                    turn=event.turn,
                    round=event.round,
                    phase=event.phase,
                    step=event.step,
                    rule=event.rule,
                    ship_a=event.ships[0] if event.ships else None,
                    ship_b=event.ships[1] if len(event.ships) > 1 else None,
                    square_x=event.square[0],
                    square_y=event.square[1],
                    rock_x=event.rock[0] if event.rock is not None else None,
                    rock_y=event.rock[1] if event.rock is not None else None,
                )
            )
        elif isinstance(event, DamageTaken):
            rows["damage"].append(
                DamageRow(
                    game=name,
                    seq=event.seq,
                    turn=event.turn,
                    round=event.round,
                    phase=event.phase,
                    ship=event.ship,
                    amount=event.amount,
                    cause=event.cause,
                    other=event.other,
                    rules=list(event.rules),
                )
            )
            if event.other is not None and event.other != event.ship:
                dealt[event.other] = dealt.get(event.other, 0.0) + event.amount
        elif isinstance(event, FireChecked):
            rows["fires"].append(
                FireRow(
                    game=name,
                    seq=event.seq,
                    turn=event.turn,
                    ship=event.ship,
                    phase=event.phase,
                    die=event.die,
                    out=event.out,
                    damage=event.damage,
                    next_phase=event.next_phase,
                    abandoned=event.abandoned,
                )
            )
        elif isinstance(event, RulingRecorded):
            rows["rulings"].append(
                RulingRow(
                    game=name,
                    seq=event.seq,
                    turn=event.turn,
                    rule=event.rule,
                    text=event.text,
                    adjustments=len(event.adjustments),
                )
            )
    state = fold(events) if final is None else final
    add(_game_row(name, events, state))
    for ship_row in _ship_rows(name, state, dealt):
        add(ship_row)
    return rows


#: The event types :func:`derived_rows` makes rows of (exact types: events are final classes).
_DERIVED_FROM: frozenset[type[Event]] = frozenset(
    (DieRolled, ShotFired, CollisionOccurred, DamageTaken, FireChecked, RulingRecorded)
)


def _game_row(name: str, events: Sequence[Event], state: GameState) -> GameRow:
    created = events[0]
    forked_from = created.forked_from if isinstance(created, GameCreated) else None
    return GameRow(
        game=name,
        players=list(state.players),
        budget=state.budget,
        board_width=state.board.width,
        board_height=state.board.height,
        rules_version=state.rules_version,
        dice_mode=state.dice_mode,
        forked_from=forked_from,
        scenario=state.scenario,
        # as mortecouille.app.botgame.summarise counts: an ended state's turn is the last one resolved + 1
        turns=state.turn - 1 if state.ended else state.turn,
        winner=state.winner,
        end_reason=state.end_reason,
        events=len(events),
        last_hash=events[-1].hash,
    )


def _ship_rows(name: str, state: GameState, dealt: dict[str, float]) -> list[ShipRow]:
    rows = []
    for ship in sorted(state.ships.values(), key=lambda s: (s.owner or "", s.id)):
        fleet = state.fleets.get(ship.owner) if ship.owner is not None else None
        rows.append(
            ShipRow(
                game=name,
                owner=ship.owner,
                ship=ship.id,
                kind=ship.kind,
                options=list(ship.options),
                fleet_options=list(fleet.fleet_options) if fleet is not None else [],
                price=ship.price,
                damage=ship.damage,
                damage_dealt=dealt.get(ship.id, 0.0),
                status=_status(ship.sunk, ship.lost, ship.gone),
                won=ship.owner is not None and ship.owner == state.winner,
            )
        )
    return rows
