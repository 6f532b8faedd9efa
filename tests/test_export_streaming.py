"""``export --html`` and ``render --svg`` read the log once, as a stream, and still write
the very bytes they wrote when they held the whole decoded log.

The pinned digests were taken with the former implementation (every turn located by a scan from
the log's start, a replay with keyframes over the whole list): any change of a page or picture
shows here. A change made on purpose to the pictures or the page updates them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from mortecouille.app.botgame import play_in_memory
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import TableDice, seed_commitment
from mortecouille.core.errors import BadInput
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import Command, CreateGame, ResolveTurn
from mortecouille.core.state import EMPTY
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.events.base import GENESIS_HASH, Event
from mortecouille.events.board import Board
from mortecouille.events.codec import decode_lines, stamp_all
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.pictures.html import build_html
from mortecouille.replays.pictures.turns import turn_picture
from mortecouille.replays.reading.explain import story_span
from mortecouille.replays.reading.replay import resolved_turns
from tests.cli_helpers import run, tree_digest

pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).parent / "golden"

#: case -> (sha256 of the page, sha256 of every turn's picture in turn order), first 24 hex digits
#: (the pages' digests retaken when the page's template changed for phones: the game data between
#: the template's parts was checked to be, byte for byte, the one the former implementation wrote)
PINNED = {
    "blockade": ("8e24a771bd1d9560b84e8d27", "23b582d6d058a722a274d424"),
    "mortecouille": ("a4b5106d63090826e0699da9", "701a4970269dd8aff7e885dc"),
    "mortecouille_2026_2": ("700eb514cc71a26b992823d7", "ab25e9c0109ba47f319846aa"),
    "mortecouille_contributed": ("d22f2ba23d80354414dbf466", "c0942a201667815ba8c8b17b"),
    "mortecouille_scenario": ("3fb1cc005aaebeebfdbf8596", "9870ceec842c0f9b840c2351"),
    "mortecouille_seeded": ("33f05497293050a02188ba1b", "f8331c76636c6571a2522700"),
    "turn_started_v1": ("2bf7dfddfb940c94774d76a6", "36b9f077bf7e57eb6bbb2029"),
    "bot-demo": ("b41217e0a343e833de46c3ea", "7bac74ae7a095340bb540d05"),
    "bot-3": ("95a180782e7607f74bfbe361", "aca49fa3c1dd6a78602860dd"),
    "bot-7": ("fc0c0504eaa78fd827727a2c", "5ee194a8e1ddfc871c100a27"),
    "random-5": ("a694a93cd8aa30c6e2dfa8c1", "2bd0064d65102467e7bceff0"),
    "demo-cut-1": ("ad93c12a4c8e4b78d378cee6", "41c34c093fc1177c47c8558c"),
    "demo-cut-20": ("397f68d6b19fa10224debbcf", "a6e77336437f6cb1f445f3cc"),
    "demo-cut-57": ("f7c236a1e1f96e9e01df9f18", "0cd80cc0f2d367ce3740b46b"),
    "demo-cut-123": ("e9a7034da73e65cf59dc943a", "0f7f9d551278bac580b34a05"),
    "demo-cut-200": ("1401548ddf8779dedd10f439", "9254f0895f6aafdf9141ae39"),
    "demo-cut-333": ("9589056e0307099e1db64377", "4fe3525f58fcb36e84bb7bb4"),
    "newcomer": ("524d883f3edfdae13f46a3c2", "8f491959a580330629f4c5c0"),
}


def stamped(events: list[Event]) -> list[Event]:
    """Events as a log holds them: seqs, prevs and hashes (the page names each frame's seqs)."""
    return stamp_all(events, 0, GENESIS_HASH)[0]


def decided(*steps: Command | tuple[Command, str]) -> list[Event]:
    """The events of ``steps``, each command decided against the state the events before it fold
    to (table dice); a step given as ``(command, owner)`` has its events' owner forged to
    ``owner`` (the rules let only players own ships)."""
    state, log, dice = EMPTY, [], TableDice()
    for step in steps:
        command, owner = step if isinstance(step, tuple) else (step, None)
        produced = decide(state, command, dice)
        if owner is not None:
            produced = [msgspec.structs.replace(event, owner=owner) for event in produced]  # type: ignore[type-var]
        log.extend(produced)
        state = fold(produced, state)
    return log


def newcomer_game() -> list[Event]:
    """A blockade game where a ship of someone who is not a player (a forged owner) arrives after
    turn 1, so the earlier pictures' legend is not the final one: the page keeps those frames' own
    legend."""
    return stamped(
        decided(
            CreateGame(
                game="newcomer", ruleset="blockade", players=("A", "B"), budget=0, board=Board(8, 8),
                seed_sha256=seed_commitment("x"), rules_version="t",
            ),
            PlaceShip(ship="Ann", at=(2, 2), facing="N", kind="sloop", owner="A"),
            PlaceShip(ship="Bob", at=(5, 5), facing="S", kind="sloop", owner="B"),
            GiveTokens(ship="Ann", tokens=("F", "F", "R", None)),
            GiveTokens(ship="Bob", tokens=("F", None, None, None)),
            ResolveTurn(),
            (PlaceShip(ship="Zed", at=(6, 1), facing="W", kind="cutter", owner="B"), "Zoe"),
            GiveTokens(ship="Zed", tokens=("F", "L", None, None)),
            GiveTokens(ship="Ann", tokens=("F", None, None, None)),
            GiveTokens(ship="Bob", tokens=("F", None, None, None)),
            ResolveTurn(),
        )
    )  # fmt: skip


def case(name: str) -> list[Event]:
    if (GOLDEN / f"{name}.jsonl").exists():
        return decode_lines((GOLDEN / f"{name}.jsonl").read_bytes())
    if name == "newcomer":
        return newcomer_game()
    if name.startswith("bot-"):
        seed = name.removeprefix("bot-")
        return stamped(play_in_memory(f"demo-{seed}", seed, 40))
    if name == "random-5":
        return stamped(play_in_memory("demo-5", "5", 40, fleets="random", budget=100_000))
    # a demo game cut short: before any turn, between turns, in the middle of a resolution
    cut = int(name.removeprefix("demo-cut-"))
    return stamped(play_in_memory("demo-demo", "demo", 40))[:cut]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def once(events: list[Event]) -> Iterator[Event]:
    """The events as a stream that can be read only once."""
    yield from events


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_page_and_every_turn_picture_are_byte_for_byte_those_of_before(name: str) -> None:
    events = case(name)
    page, pictures = PINNED[name]
    assert digest(build_html(once(events))) == page
    drawn = hashlib.sha256()
    for turn in [0, *resolved_turns(events)]:
        drawn.update(turn_picture(once(events), turn).encode())
    assert drawn.hexdigest()[:24] == pictures


def test_a_middle_turn_is_drawn_without_reading_the_log_beyond_it() -> None:
    events = stamped(play_in_memory("demo-demo", "demo", 40))
    turn = resolved_turns(events)[len(resolved_turns(events)) // 2]
    _, last = story_span(events, turn)
    read: list[int] = []

    def watched() -> Iterator[Event]:
        for index, event in enumerate(events):
            read.append(index)
            yield event

    whole = turn_picture(events, turn)
    assert turn_picture(watched(), turn) == whole
    # the turn's story and the one line after it (to see whether a game-ended closes it)
    assert read[-1] == last
    assert len(read) < len(events)


def test_a_turn_not_yet_resolved_is_refused_naming_the_resolved_ones() -> None:
    events = stamped(play_in_memory("demo-demo", "demo", 40))[:200]
    done = resolved_turns(events)
    with pytest.raises(
        BadInput, match=rf"^turn: .*turn 99 has not been resolved \(resolved turns: 1..{done[-1]}\)"
    ):
        turn_picture(once(events), 99)


def test_a_log_that_does_not_start_with_its_creation_is_refused() -> None:
    events = stamped(play_in_memory("demo-demo", "demo", 40))
    with pytest.raises(BadInput, match="^game: .*does not start with game-created"):
        build_html(once(events[1:]))
    with pytest.raises(BadInput, match="^game: "):
        build_html(once([]))


def test_export_of_a_log_with_a_corrupt_line_writes_nothing(games: Path, tmp_path: Path) -> None:
    log = GameLog(games / "g.jsonl")
    games.mkdir()
    log.create(stamped(play_in_memory("g", "demo", 40)))
    lines = log.path.read_bytes().splitlines(keepends=True)
    lines[len(lines) // 2] = b'{"type": "no such event"}\n'  # the stream meets it halfway
    log.path.write_bytes(b"".join(lines))
    out = tmp_path / "out"
    out.mkdir()
    before = tree_digest(games), tree_digest(out)
    result = run(games, "export", "g", "--html", str(out / "g.html"))
    assert result.exit_code != 0
    assert "line" in result.output
    assert (tree_digest(games), tree_digest(out)) == before
