"""``export --html`` writes its page as a stream (issue 16: memory flat in the log's length), and
the page is byte for byte the one written when the whole page was built in memory first.

The pinned digests below were taken with that former implementation (``game_data`` building
every turn's frames before the first byte was written), on games whose every user-typed text
(game name, players, ships, a ruling) tries to break out of the page: markup, a script end, a
comment start, the page's own placeholders and layer markers, the JSON key the page is cut at,
non-ASCII text, a bidi override, DEL and line separators. Both rulesets. The other pinned pages
(golden logs, bot games, cut logs) are in ``tests/test_export_streaming.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import TableDice, seed_commitment
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import Command, CreateGame, ResolveTurn
from mortecouille.core.rulings import RecordRuling
from mortecouille.core.state import EMPTY
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.board import Board
from mortecouille.events.codec import decode_lines, stamp_all
from mortecouille.events.store import GameLog
from mortecouille.replays.pictures.html import build_html
from tests.cli_helpers import run

GOLDEN = Path(__file__).parent / "golden"

HOSTILE_GAME = '</script><!--x-->__TITLE__ __GAME_DATA__ "turns":[] é→\u202e'
HOSTILE_PLAYER = "<i>Anne</i>\x7f\u2028"
HOSTILE_SHIP = '<img src=x onerror=alert(1)>"]]></svg><!--board--><!--legend-->'
HOSTILE_OTHER_SHIP = "<!--defs-->\u202eØ</"
HOSTILE_RULING = "<!-- </script><script>alert(2)</script> ☠ \x85 __GAME_DATA__"

#: case -> sha256 of the page (first 24 hex digits), as the former implementation wrote it
PINNED = {
    "hostile-blockade": "2eb79194baaf39eefa3aec9e",
    "hostile-mortecouille": "86d0f4bcf37553f42fdc00f4",
}


def hostile_blockade() -> list[Event]:
    """A blockade game of two turns with a ruling, every name and text hostile."""
    state, log, dice = EMPTY, [], TableDice()

    def apply(command: Command) -> None:
        nonlocal state
        produced = decide(state, command, dice)
        log.extend(produced)
        state = fold(produced, state)

    apply(
        CreateGame(
            game="hostile", ruleset="blockade", players=("A", "B"), budget=0, board=Board(8, 8),
            seed_sha256=seed_commitment("x"), rules_version="t",
        )
    )  # fmt: skip
    apply(PlaceShip(ship="Ann", at=(2, 2), facing="N", kind="sloop", owner="A"))
    apply(PlaceShip(ship="Bob", at=(2, 4), facing="S", kind="war-frigate", owner="B"))
    apply(GiveTokens(ship="Ann", tokens=("F", "F", "L", None)))
    apply(GiveTokens(ship="Bob", tokens=("F", None, "R", "F")))
    apply(RecordRuling(rule="M6", text="RULING"))
    apply(ResolveTurn())
    apply(GiveTokens(ship="Ann", tokens=("F", None, None, None)))
    apply(GiveTokens(ship="Bob", tokens=("F", "F", None, None)))
    apply(ResolveTurn())
    return forged(
        log,
        {"hostile": HOSTILE_GAME, "A": HOSTILE_PLAYER, "Ann": HOSTILE_SHIP, "Bob": HOSTILE_OTHER_SHIP,
         "RULING": HOSTILE_RULING},
    )  # fmt: skip


def hostile_mortecouille() -> list[Event]:
    """The golden mortecouille game (fleets, fire, a ruling, its end) with hostile names and text."""
    events = decode_lines((GOLDEN / "mortecouille.jsonl").read_bytes())
    events[0] = msgspec.structs.replace(events[0], game="hostile")  # not the ruleset's name
    return forged(
        events,
        {"hostile": HOSTILE_GAME, "Anne": HOSTILE_PLAYER, "Pearl": HOSTILE_SHIP, "Hope": HOSTILE_OTHER_SHIP,
         "the referee grants Pearl a fair wind": HOSTILE_RULING},
    )  # fmt: skip


def forged(events: list[Event], names: dict[str, str]) -> list[Event]:
    """``events`` with every JSON string equal to a key of ``names`` replaced by its value (as a
    forger would edit the log: the rules never see these names), stamped again."""
    body = b"\n".join(msgspec.json.encode(event) for event in events).decode()
    for plain, hostile in names.items():
        body = body.replace(json.dumps(plain), json.dumps(hostile))
    return stamp_all(decode_lines(body.encode() + b"\n"), 0, GENESIS_HASH)[0]


CASES = {"hostile-blockade": hostile_blockade, "hostile-mortecouille": hostile_mortecouille}


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def once(events: list[Event]) -> Iterator[Event]:
    yield from events


@pytest.mark.parametrize("name", sorted(PINNED))
def test_a_page_full_of_hostile_text_is_byte_for_byte_the_former_one(name: str) -> None:
    assert digest(build_html(once(CASES[name]()))) == PINNED[name]
