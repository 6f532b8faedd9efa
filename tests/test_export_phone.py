"""``export --html`` read on a phone (players watch replays on theirs), upright and sideways.

The page must be exactly as wide as the phone (a mobile browser widens its layout to the widest
element, and then every part of the page is smaller than the screen and scrolls sideways), show
the board at a real size, and keep the step buttons and the turn slider on the screen and working
with a finger. The game is the golden mortecouille game (fleets, fire, six ships) with names as
long as the limits allow and no space to break at: the game's, a player's and a ship's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mortecouille.core.limits import NAME_MAX
from mortecouille.events.codec import decode_lines
from mortecouille.replays.pictures.html import build_html
from tests.test_export_page_bytes import forged
from tests.web_helpers import NEEDS_CHROMIUM, PHONE, SCREEN

pytestmark = [NEEDS_CHROMIUM, pytest.mark.browser]

GOLDEN = Path(__file__).parent / "golden"
WAIT_MS = 30_000
#: the phone of :data:`PHONE` held upright, and sideways
VIEWS = {"upright": PHONE, "sideways": {"width": PHONE["height"], "height": PHONE["width"]}}
LONG_GAME = "G" * NAME_MAX
LONG_PLAYER = "Anne" + "N" * (NAME_MAX - 4)
LONG_SHIP = "Pearl" + "W" * (NAME_MAX - 5)
#: the golden game's last turn (the slider's right end)
LAST_TURN = 4


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    events = decode_lines((GOLDEN / "mortecouille.jsonl").read_bytes())
    events[0] = msgspec.structs.replace(events[0], game="longgame")  # not the ruleset's name
    out = tmp_path_factory.mktemp("phone") / "replay.html"
    out.write_text(
        build_html(forged(events, {"longgame": LONG_GAME, "Anne": LONG_PLAYER, "Pearl": LONG_SHIP})),
        encoding="utf-8",
    )
    return out


@pytest.fixture
def phone(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A page in a mobile browser of the view ``request.param`` names, with a touch screen."""
    context = browser.new_context(viewport=VIEWS[request.param], is_mobile=True, has_touch=True)
    try:
        opened = context.new_page()
        opened.set_default_timeout(WAIT_MS)
        yield opened
    finally:
        context.close()


def box(page: Any, selector: str) -> dict[str, float]:
    found = page.locator(selector).bounding_box()
    assert found is not None, f"{selector} is not shown"
    return dict(found)


def on_screen(page: Any, selector: str) -> bool:
    """Whether the whole of ``selector``'s box is inside the screen as it is scrolled now."""
    shown = box(page, selector)
    width, height = page.evaluate("() => [innerWidth, innerHeight]")
    return (
        shown["x"] >= 0
        and shown["y"] >= 0
        and shown["x"] + shown["width"] <= width
        and shown["y"] + shown["height"] <= height
    )


def step_label(page: Any) -> str:
    return str(page.locator("#step-label").text_content())


@pytest.mark.parametrize("phone", sorted(VIEWS), indirect=True)
def test_the_replay_is_as_wide_as_the_phone_and_its_board_is_drawn_at_a_real_size(
    phone: Any, page: Path, tmp_path: Path
) -> None:
    phone.goto(f"{page.as_uri()}#turn=1")
    phone.locator("#board svg").wait_for(state="attached")  # drawn, shown or not
    phone.screenshot(path=str(tmp_path / "replay.png"), full_page=True)
    width = phone.evaluate("() => innerWidth")
    assert width == phone.viewport_size["width"]  # a mobile browser widens to the widest element
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= width
    board = box(phone, "#board svg")
    assert board["x"] >= 0 and board["x"] + board["width"] <= width
    assert min(board["width"], board["height"]) >= 250
    # the long names wrap: the title, the players, the explanation and the ships list keep the width
    for selector in ["#title", "#players", "#explain", ".ship-list"]:
        shown = box(phone, selector)
        assert shown["x"] >= 0 and shown["x"] + shown["width"] <= width, selector
    ships = phone.locator(".ship-list")
    assert ships.evaluate("(list) => list.scrollWidth <= list.clientWidth")  # nothing hidden to scroll to
    assert phone.locator("#ships", has_text=LONG_SHIP).is_visible()


@pytest.mark.parametrize("phone", sorted(VIEWS), indirect=True)
def test_the_board_and_the_controls_fit_on_the_screen_together_and_a_finger_steps_through_turns(
    phone: Any, page: Path
) -> None:
    phone.goto(f"{page.as_uri()}#turn=1")
    phone.locator("#board svg").wait_for(state="attached")  # drawn, shown or not
    assert (
        phone.evaluate("() => innerWidth") == phone.viewport_size["width"]
    )  # the screen is the page's width
    phone.locator("main > section.card").evaluate("(card) => card.scrollIntoView()")
    for selector in ["#board svg", "#prev", "#play", "#next", "#turn-slider"]:
        assert on_screen(phone, selector), selector
    scrolled = phone.evaluate("() => scrollY")
    before, picture = step_label(phone), phone.locator("#board").inner_html()
    phone.locator("#next").tap()
    assert step_label(phone) != before
    assert phone.locator("#board").inner_html() != picture
    # The explanation of the step scrolls in its own box: the board and the buttons stay put.
    labels = [before, step_label(phone)]
    for _ in range(5):
        phone.locator("#next").tap()
        labels.append(step_label(phone))
    assert len(set(labels)) == len(labels)
    assert phone.evaluate("() => scrollY") == scrolled
    assert on_screen(phone, "#board svg") and on_screen(phone, "#next")
    phone.locator("#prev").tap()
    assert step_label(phone) == labels[-2]
    slider = box(phone, "#turn-slider")
    phone.touchscreen.tap(slider["x"] + slider["width"] - 2, slider["y"] + slider["height"] / 2)
    assert phone.locator("#turn-number").text_content() == str(LAST_TURN)
    assert phone.locator("#game-over").is_visible()
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= phone.evaluate("() => innerWidth")


def test_on_a_computer_screen_the_explanation_stays_beside_the_board(browser: Any, page: Path) -> None:
    context = browser.new_context(viewport=SCREEN)
    try:
        screen = context.new_page()
        screen.set_default_timeout(WAIT_MS)
        screen.goto(f"{page.as_uri()}#turn=1")
        screen.locator("#board svg").wait_for(state="attached")
        board, side = box(screen, "main > section.card"), box(screen, "main > section.side")
        assert side["x"] >= board["x"] + board["width"] and side["y"] == board["y"]
        assert board["width"] > side["width"]
        assert screen.locator("main .side thead").is_visible()  # the ships as a table
        # the long names wrap (or, in the ships table, scroll in its card): nothing widens the page
        assert screen.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
    finally:
        context.close()
