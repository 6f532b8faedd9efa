"""The errors the engine raises on purpose: a refusal as data, rendered in words at the edge.

A refusal carries the rule ID at fault (if any), the field path of the command (``players[2]``,
``actions[1].target``; never a CLI flag), a message key and its parameters. The key is the English
template itself (gettext's convention: the English text is the catalogue's key), with ``{name}``
placeholders filled from the parameters, so a translation only adds a catalogue entry:

>>> error = BadInput("players", "a game needs at least {count} players", rule="T3", count=2)
>>> str(error)
'players: a game needs at least 2 players'
>>> error.key, error.params, error.rule
('a game needs at least {count} players', {'count': 2}, 'T3')
>>> str(RuleViolation("S7", "{ship} has no wind point left", ship="Kraken"))
'[S7] Kraken has no wind point left'

A parameter is never read as a template, so a name with braces in it is safe.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple


def fill(key: str, params: Mapping[str, object], translate: Callable[[str], str] | None = None) -> str:
    """The message of ``key`` in words: translated (``translate``: a catalogue's lookup, the key
    itself by default), its ``{name}`` placeholders filled from ``params`` (a :class:`Phrase`
    among them rendered through the same catalogue).

    >>> fill("{ship} is sunk", {"ship": "{x}"})
    '{x} is sunk'
    >>> fill("the game ends ({how})", {"how": Phrase("{winner} wins", {"winner": "Anne"})})
    'the game ends (Anne wins)'
    """
    template = translate(key) if translate is not None else key
    if not params:
        return template
    if any(type(value) is Phrase for value in params.values()):
        params = {name: _filled(value, translate) for name, value in params.items()}
    return template.format_map(params)


class Phrase(NamedTuple):
    """Words as data: a template key and its parameters, rendered at the edge (:meth:`render`)."""

    key: str
    params: Mapping[str, object]

    def render(self, translate: Callable[[str], str] | None = None) -> str:
        return fill(self.key, self.params, translate)

    def __str__(self) -> str:
        return self.render()


def phrase(key: str, /, **params: object) -> Phrase:
    """The words of ``key`` with ``params``: ``phrase("{ship} sinks", ship="Kraken")``."""
    return Phrase(key, params)


def joined(parts: Sequence[Phrase | str], separator: str) -> Phrase | str:
    """``parts`` one after the other, ``separator`` between two: ``{first}; {then}`` phrases."""
    result = parts[0]
    for part in parts[1:]:
        result = phrase("{first}" + separator + "{then}", first=result, then=part)
    return result


def _filled(value: object, translate: Callable[[str], str] | None) -> object:
    return value.render(translate) if type(value) is Phrase else value


class MortecouilleError(Exception):
    """Base of every error the engine raises deliberately: ``key`` and ``params`` (the message as
    data), ``field`` (the command's field path at fault) and ``rule`` (a rules.md ID), if known."""

    exit_code = 1

    def __init__(self, key: str, /, *, field: str | None = None, rule: str | None = None,
                 **params: object) -> None:  # fmt: skip
        self.key = key
        self.params: dict[str, object] = params
        self.field = field
        self.rule = rule
        super().__init__(self.render())

    @property
    def phrase(self) -> Phrase:
        """The message as words to render, to quote inside another refusal's."""
        return Phrase(self.key, self.params)

    @property
    def message(self) -> str:
        """The message in English, without the field or the rule."""
        return fill(self.key, self.params)

    def render(self, translate: Callable[[str], str] | None = None) -> str:
        """The whole refusal in words, in the language of ``translate`` (English by default)."""
        return fill(self.key, self.params, translate)


class RuleViolation(MortecouilleError):
    """A command the rules refuse (exit 2). ``rule`` is a rules.md ID such as ``S7``."""

    exit_code = 2
    rule: str

    def __init__(self, rule: str, key: str, /, *, field: str | None = None, **params: object) -> None:
        super().__init__(key, field=field, rule=rule, **params)

    def render(self, translate: Callable[[str], str] | None = None) -> str:
        where = f"{self.field}: " if self.field else ""
        return f"[{self.rule}] {where}{fill(self.key, self.params, translate)}"


class BadInput(MortecouilleError):
    """Malformed or out-of-range input (exit 2). ``field`` is the command's field path at fault."""

    exit_code = 2
    field: str

    def __init__(self, field: str, key: str, /, *, rule: str | None = None, **params: object) -> None:
        super().__init__(key, field=field, rule=rule, **params)

    def render(self, translate: Callable[[str], str] | None = None) -> str:
        return f"{self.field}: {fill(self.key, self.params, translate)}"
