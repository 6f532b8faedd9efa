"""A name as long as the limits allow (64 characters, no space to break at) on a phone's page.

A player who names a ship with one long word must not push the page wider than the phone: on a
real phone (a mobile browser, which widens its layout to the widest element) every button would
move off the screen, and a tap on *Seal my fleet* would land on the buying form instead.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.web_helpers import NEEDS_CHROMIUM, PHONE, Server, create_game

pytestmark = [NEEDS_CHROMIUM, pytest.mark.browser]

WAIT_MS = 30_000
#: NAME_MAX characters (mortecouille.core.limits), and no space in them
LONGEST_SHIP = "W" * 64


def test_a_ship_named_with_one_long_word_keeps_the_players_phone_page_its_width(
    server: Server, browser: Any
) -> None:
    seats = create_game(server, "longnames", players=["Anne", "Bart"], budget=100000, board={"width": 10, "height": 10})
    bought = server.api(
        "POST",
        "/api/games/longnames/buy",
        token=seats.players["Anne"],
        body={"ship": LONGEST_SHIP, "kind": "red-small"},
    )
    assert bought.status_code == 200, bought.text
    # a mobile browser, as a phone runs it: its layout viewport grows to the widest element
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(f"{server.url}/player/longnames#token={seats.players['Anne']}")
        page.locator("#fleet h3", has_text=LONGEST_SHIP).wait_for()
        assert page.evaluate("() => window.innerWidth") == PHONE["width"]
        seal = page.locator("#seal-submit")
        seal.scroll_into_view_if_needed()
        box = seal.bounding_box()
        assert box is not None and box["x"] + box["width"] <= PHONE["width"]
        assert box["y"] + box["height"] <= PHONE["height"]  # on the screen once scrolled to
    finally:
        context.close()
