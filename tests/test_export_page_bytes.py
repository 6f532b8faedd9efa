"""``export --html`` writes its page as a stream (memory flat in the log's length), and
the page is byte for byte the one written when the whole page was built in memory first.

The pinned digests below were taken with that former implementation (``game_data`` building
every turn's frames before the first byte was written), on games whose every user-typed text
(game name, players, ships, a ruling) tries to break out of the page: markup, a script end, a
comment start, the page's own placeholders and layer markers, the JSON key the page is cut at,
non-ASCII text, a bidi override, DEL and line separators. Both rulesets. The other pinned pages
(golden logs, bot games, cut logs) are in ``tests/test_export_streaming.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from mortecouille.cli import replay_commands
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import seed_commitment
from mortecouille.core.errors import BadInput
from mortecouille.core.life_cycle import CreateGame, ResolveTurn
from mortecouille.core.rulings import RecordRuling
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.board import Board
from mortecouille.events.codec import decode_lines, stamp_all
from mortecouille.events.game import TurnEnded
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.pictures.html import build_html, page_parts
from tests.cli_helpers import run, tree_digest
from tests.test_export_streaming import decided, digest, once

GOLDEN = Path(__file__).parent / "golden"

HOSTILE_GAME = '</script><!--x-->__TITLE__ __GAME_DATA__ "turns":[] é→\u202e'
HOSTILE_PLAYER = "<i>Anne</i>\x7f\u2028"
HOSTILE_SHIP = '<img src=x onerror=alert(1)>"]]></svg><!--board--><!--legend-->'
HOSTILE_OTHER_SHIP = "<!--defs-->\u202eØ</"
HOSTILE_RULING = "<!-- </script><script>alert(2)</script> ☠ \x85 __GAME_DATA__"

#: case -> sha256 of the page (first 24 hex digits), as the former implementation wrote it (retaken
#: when the page's template changed for phones: the game data between the template's parts was
#: checked to be, byte for byte, the one the former implementation wrote; retaken again when the
#: pictures began to cut a name longer than svg.LABEL_MAX_CHARS / LEGEND_NAME_MAX_CHARS, which
#: these hostile names are, keeping it whole in the hull's tooltip)
PINNED = {
    "hostile-blockade": "3c133912537bdb90169b6cef",
    "hostile-mortecouille": "4d0a10750c8c46b349769b96",
}


def hostile_blockade() -> list[Event]:
    """A blockade game of two turns with a ruling, every name and text hostile."""
    log = decided(
        CreateGame(
            game="hostile", ruleset="blockade", players=("A", "B"), budget=0, board=Board(8, 8),
            seed_sha256=seed_commitment("x"), rules_version="t",
        ),
        PlaceShip(ship="Ann", at=(2, 2), facing="N", kind="sloop", owner="A"),
        PlaceShip(ship="Bob", at=(2, 4), facing="S", kind="war-frigate", owner="B"),
        GiveTokens(ship="Ann", tokens=("F", "F", "L", None)),
        GiveTokens(ship="Bob", tokens=("F", None, "R", "F")),
        RecordRuling(rule="M6", text="RULING"),
        ResolveTurn(),
        GiveTokens(ship="Ann", tokens=("F", None, None, None)),
        GiveTokens(ship="Bob", tokens=("F", "F", None, None)),
        ResolveTurn(),
    )  # fmt: skip
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


@pytest.mark.parametrize("name", sorted(PINNED))
def test_a_page_full_of_hostile_text_is_byte_for_byte_the_former_one(name: str) -> None:
    assert digest(build_html(once(CASES[name]()))) == PINNED[name]


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_exported_file_is_the_same_page_written_as_a_stream(
    name: str, games: Path, tmp_path: Path
) -> None:
    games.mkdir()
    GameLog(games / "h.jsonl").create(CASES[name]())
    out = tmp_path / "h.html"
    result = run(games, "export", "h", "--html", str(out))
    assert result.exit_code == 0, result.output
    assert digest(out.read_text(encoding="utf-8")) == PINNED[name]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games", "h.html"]  # no temporary left


def test_each_turn_is_written_before_the_next_one_is_read() -> None:
    """The page comes out a turn at a time: when the part of a turn is given, the second pass has
    not read the log beyond that turn's story and the line after it; nothing holds every frame."""
    events = hostile_blockade()
    passes: list[list[int]] = []

    def read() -> Iterator[Event]:
        seen: list[int] = []
        passes.append(seen)
        for event in events:
            seen.append(event.seq)
            yield event

    parts = page_parts(read)
    written = []
    read_when_written = []
    for part in parts:
        written.append(part)
        read_when_written.append(len(passes[-1]))
    assert "".join(written) == build_html(events)
    assert len(passes) == 2 and len(passes[0]) == len(passes[1]) == len(events)
    turn_ends = [i for i, event in enumerate(events) if isinstance(event, TurnEnded)]
    assert len(turn_ends) == 2
    # head, data before the turns, turn 0 and turn 1 (given once turn 1's story is read), turn 2...
    assert read_when_written[3] <= turn_ends[0] + 2 < len(events)
    assert read_when_written[-1] == len(events)


def test_lines_appended_between_the_two_passes_are_not_on_the_page() -> None:
    events = hostile_blockade()
    cut = max(i for i, event in enumerate(events) if isinstance(event, TurnEnded) and event.turn == 1) + 1
    reads = iter([events[:cut], events])
    page = "".join(page_parts(lambda: iter(next(reads))))
    assert page == build_html(events[:cut])


@pytest.mark.parametrize("second", ["shorter", "rewritten"])
def test_a_log_changed_between_the_two_passes_is_refused(second: str) -> None:
    events = hostile_blockade()
    # shorter; or as long, but another game: the same events of another ship
    changed = events[:-3] if second == "shorter" else forged(events, {HOSTILE_SHIP: "Ann"})
    reads = iter([events, changed])
    with pytest.raises(BadInput, match="^game: .*the log changed while the page was written"):
        "".join(page_parts(lambda: iter(next(reads))))


def test_an_export_refused_halfway_leaves_no_file(
    games: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second pass fails after the head and the first turns went to the temporary file: the
    target is not written, the temporary file is gone, and the log is unchanged."""
    games.mkdir()
    events = hostile_blockade()
    GameLog(games / "h.jsonl").create(events)
    before = tree_digest(games)
    reads = iter([events, events[:-3]])
    monkeypatch.setattr(replay_commands, "events_from", lambda store, seq: iter(next(reads)))
    out = tmp_path / "out"
    out.mkdir()
    result = run(games, "export", "h", "--html", str(out / "h.html"))
    assert result.exit_code != 0
    assert "the log changed while the page was written" in result.output
    assert list(out.iterdir()) == []
    assert tree_digest(games) == before
