"""``export --html``: one self-contained page, checked in a real headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from mortecouille.core.state import GameState
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.pictures.html import BOARD_MARKER, build_html, frame_picture, game_over
from tests.cli_helpers import play_blockade_turn, run

pytestmark = pytest.mark.browser

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
)  # fmt: skip


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium, which ``tools/system-packages.sh`` (run by the README's test command and by
    CI) installs: a missing browser fails the browser tests loudly, never installs or skips."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail(
            "Chromium is missing: run tools/system-packages.sh (it installs Debian's package chromium)"
        )
    return found


def browse(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def page(games: Path, tmp_path: Path) -> Path:
    play_blockade_turn(games)
    # a second turn with edge collisions, so the slider has something to move over
    assert run(games, "tokens", "b", "Sloopy", "F", "R", "F", "F").exit_code == 0
    assert run(games, "tokens", "b", "Frig", "L", "F", "F", "-").exit_code == 0
    assert run(games, "ruling", "b", "--rule", "M6", "--text", "edge bump agreed").exit_code == 0
    out = tmp_path / "game.html"
    result = run(games, "export", "b", "--html", str(out))
    assert result.exit_code == 0, result.output
    return out


def game_data(html: str) -> Any:
    """The JSON the page embeds, as its script reads it."""
    found = re.search(r'<script type="application/json" id="game-data">(.*?)</script>', html, re.S)
    assert found is not None
    return json.loads(found.group(1))


def picture(data: Any, frame: Any) -> str:
    """A frame's picture as the page shows it: the shared layers put back where their markers are."""
    assert BOARD_MARKER in frame["svg"]
    return frame_picture(data, frame)


def test_the_page_is_self_contained(page: Path) -> None:
    html = page.read_text()
    assert "<script src" not in html and "<link" not in html and "@import" not in html
    assert "url(http" not in html and "@font-face" not in html
    # the only URL is the SVG namespace, which is a name, never fetched
    assert set(re.findall(r"https?://[^\s\"'<>\\]+", html)) == {"http://www.w3.org/2000/svg"}
    data = game_data(html)
    assert [t["turn"] for t in data["turns"]] == [0, 1]
    assert data["turns"][1]["frames"][-1]["label"] == "turn 1: after"
    # every step of the page is a picture: before, one per phase of the story, after
    labels = [f["label"] for f in data["turns"][1]["frames"]]
    assert labels[0] == "turn 1: before" and len(labels) > 3
    for turn in data["turns"]:
        for frame in turn["frames"]:
            assert ET.fromstring(picture(data, frame)).tag == "{http://www.w3.org/2000/svg}svg"
    # the page draws nothing itself: no drawing code left in its script
    assert "createElementNS" not in html and "polyline" not in html.split('id="game-data"')[0]


def test_each_turn_on_the_page_is_the_render_picture_byte_for_byte(
    games: Path, page: Path, tmp_path: Path
) -> None:
    data = game_data(page.read_text())
    for turn in data["turns"]:
        drawn = tmp_path / f"turn-{turn['turn']}.svg"
        assert run(games, "render", "b", "--turn", str(turn["turn"]), "--svg", str(drawn)).exit_code == 0
        # a turn opens on its last frame, the outcome: the very picture ``render`` writes
        assert picture(data, turn["frames"][-1]) == drawn.read_text(encoding="utf-8")


def test_the_layers_every_frame_shares_are_kept_once(page: Path) -> None:
    """The board, the legend and the arrowheads are the same in every frame: the page holds each
    once, so its size grows with what changes, not with the number of frames."""
    html = page.read_text()
    data = game_data(html)
    frames = [frame for turn in data["turns"] for frame in turn["frames"]]
    assert len(frames) > 2
    for mark, layer in data["shared_layers"].items():
        assert all(mark in frame["svg"] for frame in frames), mark
        embedded = json.dumps(layer)[1:-1].replace("</", "<\\/")  # as the page embeds it
        assert html.count(embedded) == 1, mark
    assert html.count('class=\\"legend\\"') == 1 and html.count("<defs>") == 1


HOSTILE_SHIP = "<img src=x onerror=alert(1)>"
HOSTILE_FRIGATE = '"]]></svg><script>'
HOSTILE_PLAYER = "<i>Anne</i>"
HOSTILE_RULING = "<!-- </script><script>alert(2)</script>"


@pytest.fixture
def hostile_page(games: Path, tmp_path: Path) -> Path:
    """A game whose every user-typed text tries to break out of the page or its pictures."""
    created = run(
        games, "new", "h", "--ruleset", "blockade", "--players", f"{HOSTILE_PLAYER},Bart{HOSTILE_FRIGATE}",
        "--board", "8x8", "--seed", "1", "--weak-seed",
    )  # fmt: skip
    assert created.exit_code == 0, created.output
    ok = (
        ("place", "h", HOSTILE_SHIP, "C2", "--kind", "sloop", "--owner", HOSTILE_PLAYER),
        ("place", "h", HOSTILE_FRIGATE, "C4", "--kind", "war-frigate", "--owner", f"Bart{HOSTILE_FRIGATE}",
         "--facing", "S"),
        ("tokens", "h", HOSTILE_SHIP, "F", "F", "L", "-"),
        ("tokens", "h", HOSTILE_FRIGATE, "F", "-", "R", "F"),
        ("ruling", "h", "--rule", "M6", "--text", HOSTILE_RULING),
        ("resolve", "h"),
    )  # fmt: skip
    for args in ok:
        result = run(games, *args)
        assert result.exit_code == 0, result.output
    out = tmp_path / "hostile.html"
    assert run(games, "export", "h", "--html", str(out)).exit_code == 0
    return out


def test_user_typed_text_stays_text_in_the_page_and_its_pictures(hostile_page: Path) -> None:
    html = hostile_page.read_text()
    before_data, _, rest = html.partition('<script type="application/json" id="game-data">')
    embedded, _, after_data = rest.partition("</script>")
    # nothing typed reaches the markup outside the data, and nothing in the data can end its element
    for text in (HOSTILE_SHIP, HOSTILE_FRIGATE, HOSTILE_PLAYER, "alert(2)"):
        assert text not in before_data and text not in after_data
    assert "</" not in embedded and "<!--" not in embedded
    data = game_data(html)
    assert data["players"][0][0] == HOSTILE_PLAYER
    assert any(HOSTILE_RULING in line["text"] for line in data["turns"][1]["explain"])
    for turn in data["turns"]:
        for frame in turn["frames"]:
            drawn = ET.fromstring(picture(data, frame))  # well-formed: the names did not close anything
            # drawn whole, or cut on the board and whole in the hull's tooltip (a long name)
            names = {e.text for e in drawn.iter() if e.tag.endswith(("}text", "}title"))}
            assert {HOSTILE_SHIP, HOSTILE_FRIGATE} <= names
            assert not [e for e in drawn.iter() if e.tag.endswith(("script", "img"))]


def test_hostile_names_are_shown_not_run_in_chromium(
    chromium: str, hostile_page: Path, tmp_path: Path
) -> None:
    dom = browse(chromium, tmp_path / "profile", "--dump-dom", f"{hostile_page.as_uri()}#turn=1")
    assert dom.returncode == 0, dom.stderr[-2000:]
    shown = re.sub(r'<script type="application/json" id="game-data">.*?</script>', "", dom.stdout, flags=re.S)
    assert "<img" not in shown and "<i>" not in shown and shown.count("<script") == 1
    assert "&lt;img src=x onerror=alert(1)&gt;" in shown and 'data-turn="1"' in shown
    assert "&lt;/svg&gt;&lt;script&gt;" in shown


def test_the_script_runs_and_shows_the_selected_turn(chromium: str, page: Path, tmp_path: Path) -> None:
    dom = browse(chromium, tmp_path / "profile", "--dump-dom", f"{page.as_uri()}#turn=1")
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert re.search(r'<span id="turn-number">1</span>', html), html[:3000]
    assert "Frig and Sloopy collide over C3" in html and "turn 1: after" in html
    assert 'data-turn="1"' in html
    assert html.count('class="ship"') >= 2  # drawn by the script, not in the static page
    shot = tmp_path / "page.png"
    taken = browse(
        chromium,
        tmp_path / "profile2",
        f"--screenshot={shot}",
        "--window-size=1200,900",
        f"{page.as_uri()}#turn=1",
    )
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert shot.stat().st_size > 20_000  # a drawn page, not a blank one


def test_stepping_swaps_in_each_frames_picture(chromium: str, page: Path, tmp_path: Path) -> None:
    """The buttons and the slider only switch frames: after each, the board is that frame's SVG."""
    data = game_data(page.read_text())
    frames = [(turn["turn"], frame) for turn in data["turns"] for frame in turn["frames"]]
    html = page.read_text()
    # a copy that, once shown on turn 1's outcome, goes back two steps: turn 1's second-to-last frame
    stepping = '$("prev").click(); $("prev").click(); $("next").click();</script>\n</body>'
    stepped = tmp_path / "stepped.html"
    stepped.write_text(html.replace("</script>\n</body>", stepping))
    dom = browse(chromium, tmp_path / "profile", "--dump-dom", f"{stepped.as_uri()}#turn=1")
    assert dom.returncode == 0, dom.stderr[-2000:]
    turn, shown = frames[-2]
    assert turn == 1 and shown["label"] != "turn 1: after"
    title = re.search(r"<title>[^<]*</title>", shown["svg"])
    assert title is not None and title.group(0) in dom.stdout
    assert f'<span class="phase" id="phase-label">{shown["label"]}</span>' in dom.stdout
    assert f"step {len(frames) - 1} of {len(frames)}" in dom.stdout
    # the board the frames share was put back into the picture shown (its first element, as the
    # browser serialises it), and no marker is left
    board_start = data["shared_layers"][BOARD_MARKER].partition("/>")[0]
    assert board_start.startswith("<rect") and board_start in dom.stdout
    assert "<!--board-->" not in dom.stdout


def test_the_replay_of_an_ended_game_ends_on_a_game_over_banner(chromium: str, tmp_path: Path) -> None:
    events = GameLog(Path(__file__).parent / "golden" / "mortecouille.jsonl").read()
    html = build_html(events)
    assert game_data(html)["game_over"] == {
        "headline": "Game over: Anne wins",
        "detail": "victory, Anne wins",
    }
    page = tmp_path / "ended.html"
    page.write_text(html)
    last = browse(chromium, tmp_path / "profile", "--dump-dom", f"{page.as_uri()}#turn=4")
    assert last.returncode == 0, last.stderr[-2000:]
    banner = re.search(r'<div id="game-over"[^>]*>', last.stdout)
    assert banner is not None and "hidden" not in banner.group(0)
    assert '<strong id="game-over-headline">Game over: Anne wins</strong>' in last.stdout
    earlier = browse(chromium, tmp_path / "profile2", "--dump-dom", f"{page.as_uri()}#turn=2")
    banner = re.search(r'<div id="game-over"[^>]*>', earlier.stdout)
    assert banner is not None and "hidden" in banner.group(0)  # only the end shows it


def test_the_banner_says_no_winner_when_no_one_won(page: Path) -> None:
    assert game_data(page.read_text())["game_over"] is None  # a game still going has no banner
    ended = GameState(game="g", players=("Anne", "Bart"), created=True, ended=True, end_reason="victory")
    assert game_over(ended) == {"headline": "Game over: no winner", "detail": "all ships lost: no winner"}
