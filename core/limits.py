"""What a person may type into a game, in one place: names and texts, board size, ship count.

Names (game, players, ships) and texts (rulings, an end's reason) reach terminals, HTML pages
and SVG files. One rule refuses, at input, every character that could act on a terminal or
rewrite what is shown around it: C0 and C1 controls (ESC starts terminal escapes, a newline
would forge an output line), DEL, line and paragraph separators, lone surrogates, and the
bidirectional controls that reorder text (the "Trojan Source" trick). Logs written before
this rule, or forged, may still hold them: :func:`shown` escapes the same characters on the
way out to a terminal.

Names (not texts) also hold no format character (Unicode category Cf: zero-width spaces and
joiners, soft hyphens, byte order marks...), which no reader sees; and within a game no two
players, nor two ships, have names that look alike: one name case and spacing aside
(:func:`name_key`), or the same Unicode TR39 skeleton (:func:`skeleton`: Cyrillic ``А``, Greek
``Α`` and full-width ``Ａ`` are all drawn as Latin ``A``).

The caps are generous for a real table and small enough that no command can be made to
build a picture or a state the size of a disk.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable
from typing import Any, Final

from mortecouille.core.errors import BadInput

#: the longest game, player or ship name (characters)
NAME_MAX: Final = 64
#: the longest ruling text or end-of-game reason (characters)
TEXT_MAX: Final = 2000
#: the widest and tallest board, in squares (B1): a real table holds far less
BOARD_MAX: Final = 100
#: the most ships one game holds, bought, placed or set up
SHIPS_MAX: Final = 200
#: the most players one game seats (T3)
PLAYERS_MAX: Final = 16
#: the most money a player may start with (F3)
BUDGET_MAX: Final = 1_000_000
#: how a game rolls its dice (D1, D2): from its committed seed, or as the table rolls them
DICE_MODES: Final = ("seeded", "table")
#: the most faces a table die has (D1)
DIE_FACES_MAX: Final = 20
#: the longest a deadline may be set ahead, in seconds: a week
DEADLINE_MAX_SECONDS: Final = 7 * 24 * 3600

#: the suffixes of a game's own files in the games directory (log, head anchor, secret seed, lock,
#: the seats' token hashes and their replacement, ``app.commands.SIBLINGS``; the derived snapshot
#: and turn index, ``app.snapshots.DERIVED_SUFFIXES``): a game name ending
#: with one (``new x.jsonl``) would make ``x.jsonl.jsonl``, and an output named like one could
#: destroy a game
GAME_FILE_SUFFIXES: Final = frozenset(
    {".jsonl", ".head", ".seed", ".lock", ".seats", ".seats-new", ".state", ".turns"}
)

#: Unicode categories refused: controls (C0, DEL, C1), surrogates, line and paragraph separators
_UNSAFE_CATEGORIES: Final = frozenset({"Cc", "Cs", "Zl", "Zp"})
#: bidirectional marks, embeddings, overrides and isolates: they reorder what a reader sees
_BIDI_CONTROLS: Final = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def unsafe(char: str) -> bool:
    """True for a character no name or text may hold (see the module's docstring)."""
    return char in _BIDI_CONTROLS or unicodedata.category(char) in _UNSAFE_CATEGORIES


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def check_text(field: str, value: str, limit: int = TEXT_MAX) -> None:
    """Refuse ``value`` (BadInput naming ``field``) if it is longer than ``limit`` characters
    or holds a character :func:`unsafe` refuses; the message shows that character escaped."""
    if len(value) > limit:
        raise BadInput(field, "{length} characters: at most {limit}", length=len(value), limit=limit)
    for position, char in enumerate(value):
        if unsafe(char):
            raise BadInput(
                field,
                "'{value}': control character {char} at position {position} "
                "(names and texts hold no control, separator or bidirectional characters)",
                value=shown(value),
                char=_escape(char),
                position=position,
            )


def _format(char: str) -> bool:
    """True for a format character (Unicode category Cf): drawn as nothing, or nearly."""
    return unicodedata.category(char) == "Cf"


def check_name(field: str, value: str) -> None:
    """:func:`check_text` for a game, player or ship name, with the names' shorter cap, and no
    format character (category Cf): the message shows it escaped and names it."""
    check_text(field, value, NAME_MAX)
    for position, char in enumerate(value):
        if _format(char):
            raise BadInput(
                field,
                "'{value}': format character {char} ({code_point}) at position {position}: names hold "
                "no invisible character (zero-width spaces and joiners, soft hyphens, byte order marks: "
                "Unicode category Cf), which would make two names that look one",
                value=_visible(value),
                char=_escape(char),
                code_point=_code_point(char),
                position=position,
            )


def _code_point(char: str) -> str:
    """``U+200B ZERO WIDTH SPACE``."""
    return f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed')}"


def _visible(text: str) -> str:
    """``text`` with every character :func:`unsafe` refuses and every format character escaped."""
    return "".join(_escape(c) if unsafe(c) or _format(c) else c for c in text)


def shown(text: str) -> str:
    """``text`` safe for a terminal: every character :func:`unsafe` refuses written as an
    escape (``\\x1b``, ``\\u202e``), so a name can neither drive the terminal nor start a line."""
    if text.isprintable():  # the usual case: nothing to look at character by character
        return text
    return "".join(_escape(c) if unsafe(c) else c for c in text)


def name_key(name: str) -> str:
    """What a typed player or ship name is matched by: its letters case aside (``casefold``) and
    its spacing aside (none at either end, any run of white space as one space).

    Every command matches a typed name by it (:func:`names_matching`), and a game refuses a player
    or ship whose name has the key of one it already has, or looks like it (:func:`name_clash`),
    so a typed name never matches two (RULES.md, T3, F1, P1)."""
    return " ".join(name.split()).casefold()


def names_matching(text: str, names: Iterable[str]) -> list[str]:
    """The names among ``names`` that ``text`` names, case and spacing aside (:func:`name_key`)."""
    key = name_key(text)
    return [name for name in names if name_key(name) == key]


@functools.cache
def _spoof_checker() -> Any:
    # PyICU, the Unicode Consortium's ICU: its TR39 tables are those of the ICU its wheel bundles.
    # Imported here only (about 25 ms): by the commands that bring a name into a game.
    import icu

    return icu.SpoofChecker()


def skeleton(text: str) -> str:
    """Unicode TR39's skeleton of ``text``, format characters removed first: two strings with one
    skeleton are drawn alike (Cyrillic ``А``, Greek ``Α``, full-width ``Ａ`` and Latin ``A`` all
    give ``A``; ``I`` and ``1`` give ``l``; ``m`` gives ``rn``). Case is kept."""
    text = "".join(c for c in text if not _format(c))
    drawn: str = _spoof_checker().getSkeleton(0, text)
    return drawn


def look_keys(name: str) -> tuple[str, str]:
    """What a reader sees of ``name``: the skeleton of its spacing (as :func:`name_key`, format
    characters aside), then of that case aside. Two names look alike when either key is the same
    for both: ``Кraken`` (Cyrillic) beside ``Kraken`` by the first, ``Аnne`` beside ``anne`` by
    the second."""
    spaced = " ".join("".join(c for c in name if not _format(c)).split())
    return skeleton(spaced), skeleton(spaced.casefold())


def look_alike(first: str, second: str) -> bool:
    """Whether ``first`` and ``second`` are one name to a reader: the same :func:`name_key`, or one
    of their :func:`look_keys`."""
    return bool(names_clashing(first, [second]))


def names_clashing(text: str, names: Iterable[str]) -> list[str]:
    """The names among ``names`` that a game could not hold beside ``text`` (:func:`look_alike`)."""
    key = name_key(text)
    keys = look_keys(text)
    return [
        name
        for name in names
        if name_key(name) == key or any(a == b for a, b in zip(look_keys(name), keys, strict=True))
    ]


class NamesHeld:
    """The names a game holds so far, by each of the keys :func:`look_alike` compares."""

    def __init__(self) -> None:
        self._by_key: tuple[dict[str, str], dict[str, str], dict[str, str]] = ({}, {}, {})

    def clashing(self, name: str) -> str | None:
        """The first name held that ``name`` looks like (:func:`look_alike`), or None."""
        for held, key in zip(self._by_key, (name_key(name), *look_keys(name)), strict=True):
            if key in held:
                return held[key]
        return None

    def add(self, name: str) -> None:
        for held, key in zip(self._by_key, (name_key(name), *look_keys(name)), strict=True):
            held.setdefault(key, name)


def name_clash(names: Iterable[str]) -> tuple[str, str] | None:
    """The first two of ``names`` (in their order: the earlier one, then the later) that a game
    cannot hold together (:func:`look_alike`), or None."""
    held = NamesHeld()
    for name in names:
        earlier = held.clashing(name)
        if earlier is not None:
            return earlier, name
        held.add(name)
    return None


def how_alike(earlier: str, later: str) -> str:
    """Why two names clash, to follow them in a refusal: ``are the same name``, ``are one name,
    case and spacing aside``, or ``look alike`` naming the characters drawn like others."""
    if earlier == later:
        return "are the same name"
    if name_key(earlier) == name_key(later):
        return "are one name, case and spacing aside"
    return f"look alike ({drawn_like(later, earlier)})"


def drawn_like(*names: str) -> str:
    """The characters of ``names`` that Unicode's confusables (TR39) draw like others, each with
    its code point and name (three at most), or the bare reference when there is none."""
    found: dict[str, str] = {}
    for name in names:
        for char in name:
            if char.isspace() or char in found:
                continue
            prototype = "" if _format(char) else skeleton(char)
            if prototype != char and len(found) < 3:
                like = f"like {prototype!r}" if prototype else "as nothing"
                found[char] = f"'{_visible(char)}' ({_code_point(char)}) is drawn {like}"
    return "; ".join([*found.values(), "Unicode confusables, TR39"])


def check_ship_count(count: int, field: str) -> None:
    """Refuse a game that would hold ``count`` ships, more than SHIPS_MAX (BadInput naming ``field``)."""
    if count > SHIPS_MAX:
        raise BadInput(field, "{count} ships in one game: at most {most}", count=count, most=SHIPS_MAX)
