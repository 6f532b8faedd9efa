"""The grammar of a mortecouille ship's orders (T1), shared by the CLI's ``order`` and the game
service's ``POST /orders``: words in, :class:`~mortecouille.events.orders.Order` values out.

Actions are written as words, several joined with ``+`` (extra crew, or an action plus catapult
shots)::

    advance
    maneuver 1/4 left --sailing
    attack port Kraken --burst + catapult Kraken

Parsing only reads words: whether the orders are legal is the rules' part (``GiveOrder``'s decider).
"""

from __future__ import annotations

import shlex

import msgspec

from mortecouille.core.errors import BadInput
from mortecouille.core.life_cycle import ship_id_typed
from mortecouille.core.state import GameState
from mortecouille.events.orders import Advance, Attack, BecomeFireship, CatapultShot, Idle, Maneuver, Order

USAGE = (
    "advance | idle | fireship | maneuver 1/8|1/4|1/2 left|right [--sailing] | "
    "attack port|starboard|bow|stern TARGET [--burst] | catapult TARGET"
)

#: How many words (besides flags) each action takes, and the flags it accepts.
_ARGUMENTS = {"advance": 0, "idle": 0, "fireship": 0, "maneuver": 2, "attack": 2, "catapult": 1}
_FLAGS = {"maneuver": {"--sailing"}, "attack": {"--burst"}}


def parse_action(words: list[str], position: int, field: str = "ACTION") -> Order:
    """One action from its words; a refusal names ``field[position]`` (``ACTION[2]``)."""
    where = f"{field}[{position}]"
    if not words:
        raise BadInput(where, f"empty action; expected {USAGE}")
    verb, rest = words[0].lower(), words[1:]
    flags = {w for w in rest if w.startswith("--")}
    args = [w for w in rest if not w.startswith("--")]
    allowed = _FLAGS.get(verb, set())
    if flags - allowed:
        raise BadInput(where, f"{verb} takes no {', '.join(sorted(flags - allowed))}")
    if verb not in _ARGUMENTS:
        raise BadInput(where, f"{verb!r} is not an action; expected {USAGE}")
    if len(args) != _ARGUMENTS[verb]:
        raise BadInput(where, f"{verb} takes {_ARGUMENTS[verb]} argument(s), got {args}; expected {USAGE}")
    if verb == "advance":
        return Advance()
    if verb == "idle":
        return Idle()
    if verb == "fireship":
        return BecomeFireship()
    if verb == "maneuver":
        return Maneuver(turn=args[0], side=args[1].lower(), sailing="--sailing" in flags)
    if verb == "attack":
        return Attack(
            position=args[0].lower(), target=args[1], mode="burst" if "--burst" in flags else "normal"
        )
    return CatapultShot(target=args[0])


def parse_actions(words: tuple[str, ...] | list[str], field: str = "ACTION") -> tuple[Order, ...]:
    """Every action of ``words``, split at each ``+``."""
    groups: list[list[str]] = [[]]
    for word in words:
        if word == "+":
            groups.append([])
        else:
            groups[-1].append(word)
    return tuple(parse_action(group, index + 1, field) for index, group in enumerate(groups))


def parse_actions_text(text: str, field: str = "actions") -> tuple[Order, ...]:
    """The actions of one line of text, as the service receives them: split into words as a shell
    splits the CLI's arguments, so a name with spaces is quoted as it would be there
    (``"attack port 'Black Pearl' + catapult Kraken"``)."""
    try:
        words = shlex.split(text)
    except ValueError as error:  # an unclosed quote
        raise BadInput(field, f"{text!r}: {error}; quote a name with spaces as 'Black Pearl'") from None
    return parse_actions(words, field)


def with_targets_named(state: GameState, actions: tuple[Order, ...]) -> tuple[Order, ...]:
    """``actions`` with each target spelled as the game spells that ship, so that a target is
    matched as the ordered ship is (case and spacing aside: ``attack port black pearl``).

    Only ships on the board are matched (public to every viewer, so a match tells nobody of a
    purchase still secret); a name matching none of them, or several, is left as typed, for the
    rules to refuse naming ``actions[N].target``."""
    return tuple(_target_named(state, action) for action in actions)


def _target_named(state: GameState, action: Order) -> Order:
    if not isinstance(action, (Attack, CatapultShot)):
        return action
    target = ship_id_typed(state, action.target, on_the_board=True)
    return action if target == action.target else msgspec.structs.replace(action, target=target)
