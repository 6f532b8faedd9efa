"""The CLI's grammar of a mortecouille ship's orders (T1): the words typed after ``order GAME
SHIP`` into the actions of an :class:`~mortecouille.app.requests.bodies.OrderRequest`, as the
service's clients send them in JSON.

Actions are written as words, several joined with ``+`` (extra crew, or an action plus catapult
shots)::

    advance
    maneuver 1/4 left --sailing
    attack port Kraken --burst + catapult Kraken

Parsing only reads words: whether the orders are legal is the rules' part (``GiveOrder``'s decider).
"""

from __future__ import annotations

import re
from typing import Any

from mortecouille.core.errors import BadInput

USAGE = (
    "advance | idle | fireship | maneuver 1/8|1/4|1/2 left|right [--sailing] | "
    "attack port|starboard|bow|stern TARGET [--burst] | catapult TARGET"
)

#: Each action's words after the verb (the request's fields, in order), and the flags it accepts.
_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "advance": (),
    "idle": (),
    "fireship": (),
    "maneuver": ("angle", "side"),
    "attack": ("position", "target"),
    "catapult": ("target",),
}
_FLAGS = {"maneuver": {"--sailing": "sailing"}, "attack": {"--burst": "burst"}}


def parse_action(words: list[str], index: int) -> dict[str, Any]:
    """One action from its words, as the request's JSON object; a refusal names ``actions[index]``."""
    where = f"actions[{index}]"
    if not words:
        raise BadInput(where, "empty action; expected {usage}", usage=USAGE)
    verb, rest = words[0].lower(), words[1:]
    flags = [w for w in rest if w.startswith("--")]
    args = [w for w in rest if not w.startswith("--")]
    allowed = _FLAGS.get(verb, {})
    unknown = sorted(set(flags) - set(allowed))
    if unknown:
        raise BadInput(where, "{verb} takes no {flags}", verb=verb, flags=", ".join(unknown))
    if verb not in _ARGUMENTS:
        raise BadInput(where, "{verb!r} is not an action; expected {usage}", verb=verb, usage=USAGE)
    fields = _ARGUMENTS[verb]
    if len(args) != len(fields):
        raise BadInput(
            where,
            "{verb} takes {count} argument(s), got {args}; expected {usage}",
            verb=verb,
            count=len(fields),
            args=args,
            usage=USAGE,
        )
    return {"kind": verb, **dict(zip(fields, args, strict=True)), **{allowed[f]: True for f in flags}}


def parse_actions(words: tuple[str, ...] | list[str]) -> list[dict[str, Any]]:
    """Every action of ``words``, split at each ``+``."""
    groups: list[list[str]] = [[]]
    for word in words:
        if word == "+":
            groups.append([])
        else:
            groups[-1].append(word)
    return [parse_action(group, index) for index, group in enumerate(groups)]


_ACTION_FIELD = re.compile(r"actions\[(\d+)\](.*)")


def typed_words(error: BadInput) -> BadInput:
    """``error`` naming the action as the command line counts them: ``actions[0]`` -> ``ACTION[1]``."""
    found = _ACTION_FIELD.fullmatch(error.field)
    if found is None:
        return error
    field = f"ACTION[{int(found.group(1)) + 1}]{found.group(2)}"
    return BadInput(field, error.key, rule=error.rule, **error.params)
