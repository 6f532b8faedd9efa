"""What a person may type into a game, in one place: names and texts, board size, ship count.

Names (game, players, ships) and texts (rulings, an end's reason) reach terminals, HTML pages
and SVG files. One rule refuses, at input, every character that could act on a terminal or
rewrite what is shown around it: C0 and C1 controls (ESC starts terminal escapes, a newline
would forge an output line), DEL, line and paragraph separators, lone surrogates, and the
bidirectional controls that reorder text (the "Trojan Source" trick). Logs written before
this rule, or forged, may still hold them: :func:`shown` escapes the same characters on the
way out to a terminal.

The caps are generous for a real table and small enough that no command can be made to
build a picture or a state the size of a disk.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Final

from mortecouille.core.errors import BadInput

#: the longest game, player or ship name (characters)
NAME_MAX: Final = 64
#: the longest ruling text or end-of-game reason (characters)
TEXT_MAX: Final = 2000
#: the widest and tallest board, in squares (B1): a real table holds far less
BOARD_MAX: Final = 100
#: the most ships one game holds, bought, placed or set up
SHIPS_MAX: Final = 200

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
        raise BadInput(field, f"{len(value)} characters: at most {limit}")
    for position, char in enumerate(value):
        if unsafe(char):
            raise BadInput(
                field,
                f"'{shown(value)}': control character {_escape(char)} at position {position} "
                "(names and texts hold no control, separator or bidirectional characters)",
            )


def check_name(field: str, value: str) -> None:
    """:func:`check_text` for a game, player or ship name, with the names' shorter cap."""
    check_text(field, value, NAME_MAX)


def shown(text: str) -> str:
    """``text`` safe for a terminal: every character :func:`unsafe` refuses written as an
    escape (``\\x1b``, ``\\u202e``), so a name can neither drive the terminal nor start a line."""
    if text.isprintable():  # the usual case: nothing to look at character by character
        return text
    return "".join(_escape(c) if unsafe(c) else c for c in text)


def name_key(name: str) -> str:
    """What two player or ship names are compared by: their letters case aside (``casefold``) and
    their spacing aside (none at either end, any run of white space as one space).

    The one definition both sides use: every command matches a typed player or ship name by it
    (:func:`names_matching`), and a game refuses a player or ship whose name has the key of one it
    already has (:func:`name_clash`), so a typed name never matches two (RULES.md, T3, F1, P1)."""
    return " ".join(name.split()).casefold()


def names_matching(text: str, names: Iterable[str]) -> list[str]:
    """The names among ``names`` that ``text`` names, case and spacing aside (:func:`name_key`)."""
    key = name_key(text)
    return [name for name in names if name_key(name) == key]


def name_clash(names: Iterable[str]) -> tuple[str, str] | None:
    """The first two of ``names`` (in their order: the earlier one, then the later) that are one
    name case and spacing aside, or None when every name has a key of its own."""
    first: dict[str, str] = {}
    for name in names:
        key = name_key(name)
        if key in first:
            return first[key], name
        first[key] = name
    return None


def check_ship_count(count: int, field: str) -> None:
    """Refuse a game that would hold ``count`` ships, more than SHIPS_MAX (BadInput naming ``field``)."""
    if count > SHIPS_MAX:
        raise BadInput(field, f"{count} ships in one game: at most {SHIPS_MAX}")
