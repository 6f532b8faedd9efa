"""A refusal in the command line's words: the field path a command names (``players``,
``adjustments[1]``) as the option or argument a player typed (``--players``, ``--adjust``).

The engine's refusals name the command's fields (:mod:`mortecouille.core.errors`); this table is
the one place that knows which option or argument of the CLI fills each of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from mortecouille.core.errors import BadInput, MortecouilleError, RuleViolation, fill

#: Each command field to the option or argument of the CLI that gives it.
OPTION_OF_FIELD: Final[dict[str, str]] = {
    "adjustments": "--adjust",
    "archive": "ARCHIVE",
    "at": "--at",
    "budget": "--budget",
    "dice": "--dice",
    "destination": "--to",
    "dice_mode": "--dice",
    "expected_seq": "--expect-seq",
    "facing": "--facing",
    "fleets": "--fleets",
    "game": "GAME",
    "games": "--games",
    "kind": "--kind",
    "log_path": "--log",
    "logs": "--logs",
    "memory_limit": "--memory-limit",
    "owner": "--owner",
    "player": "PLAYER",
    "players": "--players",
    "reason": "--reason",
    "report": "NAME",
    "receipts": "--receipts",
    "rule": "--rule",
    "ruleset": "--ruleset",
    "seed": "--seed",
    "ship": "SHIP",
    "sql": "SQL",
    "square": "SQUARE",
    "store": "--store",
    "text": "--text",
    "timeout": "--timeout",
    "tokens": "TOKENS",
    "turn": "--turn",
    "winner": "--winner",
}

#: ``name[index]`` (an item of a list field) and what follows it (``.target``)
_ITEM = re.compile(r"^([a-z_]+)\[(\d+)\](.*)$")


def option_of(field: str) -> str:
    """The option or argument that gives ``field``: ``players`` -> ``--players``, ``ship`` ->
    ``SHIP``, ``adjustments[1]`` -> ``--adjust``, ``tokens[0]`` -> ``TOKENS[1]`` and
    ``actions[0].target`` -> ``ACTION[1].target`` (counted from 1, as typed); a field the CLI
    has no word for (``board.width``, ``ships[2].kind``) as it is."""
    if field in OPTION_OF_FIELD:
        return OPTION_OF_FIELD[field]
    item = _ITEM.match(field)
    if item is None:
        return field
    name, index, rest = item.groups()
    if name == "adjustments" and not rest:
        return OPTION_OF_FIELD[name]
    if name == "tokens" and not rest:
        return f"TOKENS[{int(index) + 1}]"
    if name == "actions":  # the order's actions as typed, joined with +, counted from 1
        return f"ACTION[{int(index) + 1}]{rest}"
    return field


def refusal_text(error: Exception, translate: Callable[[str], str] | None = None) -> str:
    """``error`` as the CLI says it: a rule's refusal as ``[S7] message`` (``[S7] SHIP: message``
    when it names a field), bad input as ``--option: message``, in the language of ``translate``
    (English by default)."""
    if isinstance(error, RuleViolation):
        where = f"{option_of(error.field)}: " if error.field else ""
        return f"[{error.rule}] {where}{fill(error.key, error.params, translate)}"
    if isinstance(error, BadInput):
        return f"{option_of(error.field)}: {fill(error.key, error.params, translate)}"
    if isinstance(error, MortecouilleError):
        return error.render(translate)
    return str(error)
