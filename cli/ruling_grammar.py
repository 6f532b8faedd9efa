"""The CLI's words for a ruling's adjustments: ``--adjust SHIP damage=+2,position=C5`` into the
``adjust`` objects of a :class:`~mortecouille.app.requests.bodies.RulingRequest`, one per change,
as the service's clients send them."""

from __future__ import annotations

from typing import Any

from mortecouille.core.errors import BadInput
from mortecouille.core.rulings import ADJUSTABLE, ADJUSTMENT_MAX


def adjustments(typed: tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    """Every ``(SHIP, CHANGES)`` typed, each change of CHANGES (comma-separated) an object."""
    return [
        adjustment(ship, change.strip())
        for ship, changes in typed
        for change in changes.split(",")
        if change.strip()
    ]


def adjustment(ship: str, change: str) -> dict[str, Any]:
    """``("Frig", "damage=+3")`` -> ``{"ship": "Frig", "damage": 3}``; BadInput naming ``--adjust``."""
    name, sep, value = change.partition("=")
    name, value = name.strip().lower(), value.strip()
    if not sep or not value:
        raise BadInput("--adjust", "{change!r}: write FIELD=VALUE, FIELD one of {fields}",
                       change=change, fields=", ".join(ADJUSTABLE))  # fmt: skip
    try:
        if name == "damage":
            if value[0] not in "+-":
                raise ValueError(f"damage {value!r}: give a change such as +3 or -2")
            return {"ship": ship, "damage": _whole(value)}
        if name == "position":
            return {"ship": ship, "position": value}
        if name == "facing":
            return {"ship": ship, "facing": value}
        if name == "wind":
            return {"ship": ship, "wind": _whole(value)}
        if name == "sunk":
            if value.lower() not in ("true", "false"):
                raise ValueError(f"sunk {value!r}: true or false")
            return {"ship": ship, "sunk": value.lower() == "true"}
    except ValueError as error:
        key = "{ship} {change}: {problem}"
        raise BadInput("--adjust", key, ship=ship, change=change, problem=str(error)) from None
    raise BadInput("--adjust", "{change!r}: {name!r} is not one of {fields}",
                   change=change, name=name, fields=", ".join(ADJUSTABLE))  # fmt: skip


def _whole(value: str) -> int:
    """A whole number within ADJUSTMENT_MAX either way: ``1e308``, ``inf`` and ``nan`` are refused."""
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a whole number") from None
    if abs(number) > ADJUSTMENT_MAX:
        raise ValueError(f"{value!r} is beyond {ADJUSTMENT_MAX} either way")
    return number
