"""Events and states as text a referee reads: squares by name (``C5``), rules cited."""

from __future__ import annotations

from typing import Any

import msgspec

from mortecouille.core.board.geometry import square_label, square_name
from mortecouille.core.limits import shown
from mortecouille.core.narration import position_caption
from mortecouille.core.questions import asked_of
from mortecouille.core.state import GameState
from mortecouille.core.waiting import awaiting_text
from mortecouille.events.base import Event

_ENVELOPE = {"seq", "prev", "hash", "v", "type"}
_SQUARE_FIELDS = {"at", "to", "from_", "frm", "square", "rock", "start", "end", "pushed_to"}


def _is_square(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )


def square_text(value: Any) -> str:
    return square_label((value[0], value[1]))


def show_value(name: str, value: Any) -> str:
    if name in _SQUARE_FIELDS and _is_square(value):
        return square_text(value)
    if name in ("path", "squares") and isinstance(value, (list, tuple)):
        return "-".join(square_text(v) for v in value if _is_square(v))
    if isinstance(value, (list, tuple)):
        # a None inside a list is an empty slot (a round without a token, P1): shown "-" as typed
        return ",".join("-" if v is None else show_value(name, v) for v in value) if value else "-"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict):
        return "{" + " ".join(f"{k}={show_value(k, v)}" for k, v in value.items()) + "}"
    return str(value)


def describe_event(event: Event, hide: tuple[str, ...] = ()) -> str:
    """One event as a line of ``key=value``; ``hide`` leaves out fields a caller shows otherwise."""
    tag = type(event).__struct_config__.tag
    body = msgspec.to_builtins(event)
    rules = body.pop("rules", None)
    parts = [
        f"{key}={show_value(key, value)}"
        for key, value in body.items()
        if key not in _ENVELOPE and value is not None and key != "board" and key not in hide
    ]
    cited = f"  [{', '.join(rules)}]" if rules else ""
    # names and texts come from the log, which may be old or forged: escaped, they stay one line
    return shown(f"{event.seq:>6}  {tag:<18} {' '.join(parts)}{cited}")


def describe_state(state: GameState) -> str:
    lines = [
        f"game {state.game} ({state.ruleset}, rules {state.rules_version or '-'}, {state.dice_mode} dice)",
        f"board {state.board.width}x{state.board.height}; players {', '.join(state.players)}"
        + (f"; budget {state.budget}" if asked_of(state).buys_fleets else ""),
        position_caption(state).render(),
    ]
    for player, fleet in sorted(state.fleets.items()):
        # sealed, the money not spent is given up (F3): not money still to spend
        money = (
            f"{fleet.money_left} forfeited (sealed)"
            if fleet.sealed and fleet.money_left
            else f"{fleet.money_left} left ({'sealed' if fleet.sealed else 'open'})"
        )
        lines.append(f"fleet {player}: {len(fleet.ships)} ships, spent {fleet.spent}, {money}")
    for ship in sorted(state.ships.values(), key=lambda s: s.id):
        where = square_name(ship.at) if ship.at is not None else "unplaced"
        status = (
            "sunk"
            if ship.sunk
            else "lost"
            if ship.lost
            else "gone"
            if ship.gone
            else "afloat"
            if ship.at is not None
            else "bought, not placed"
        )
        lines.append(
            f"  {ship.id:<16} {ship.kind:<16} {ship.owner or '-':<10} {where:>5} {ship.facing:<2} "
            f"damage {show_value('damage', ship.damage):>6}  {status}"
        )
    waiting = awaiting_text(state)
    if waiting is not None:
        lines.append(waiting.render())
    return "\n".join(shown(line) for line in lines)
