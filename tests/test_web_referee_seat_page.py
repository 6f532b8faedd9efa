"""The referee page's seats in Chromium (docs/service.md, "HTTP API"): a new link for a player
called "Referee" is that player's (a /player/ link that opens their page), and the referee's own
new link (its own button) ends the old one while the page goes on with the new one, on a phone
and on the table's screen. ``MORTECOUILLE_SCREENSHOTS=DIR`` keeps a picture of the seats in DIR."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.web_helpers import NEEDS_CHROMIUM, PHONE, Server, create_game, token_of

pytestmark = [NEEDS_CHROMIUM, pytest.mark.browser]

WAIT_MS = 30_000
TABLE = {"width": 1280, "height": 720}


def picture(page: Any, name: str) -> None:
    folder = os.environ.get("MORTECOUILLE_SCREENSHOTS", "")
    if folder and folder != "1":
        Path(folder).mkdir(parents=True, exist_ok=True)
        seats = page.locator('section[aria-labelledby="seats-title"]')
        seats.screenshot(path=str(Path(folder) / f"{name}.png"))


@pytest.mark.parametrize(("viewport", "name"), [(PHONE, "phone"), (TABLE, "table")])
def test_the_referee_page_gives_a_player_called_referee_and_the_referee_their_own_links(
    server: Server, browser: Any, viewport: dict[str, int], name: str
) -> None:
    game = f"seats-{name}"
    seats = create_game(server, game, ruleset="blockade", players=["Referee", "Bart"], board={"width": 8, "height": 8})
    context = browser.new_context(viewport=viewport, locale="en-GB")
    try:
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.on("dialog", lambda dialog: dialog.accept())
        page.goto(f"{server.url}/referee/{game}#token={seats.referee}")
        page.locator('.seat[data-player="Referee"] button').wait_for()
        own = page.locator('.seat[data-seat="referee"] button')
        assert own.inner_text() == "New link for the referee (this page)"
        assert page.locator('.seat[data-player="Referee"] button').inner_text() == "New link for Referee"

        page.locator('.seat[data-player="Referee"] button').click()
        link = page.locator('.seat[data-player="Referee"] a.link')
        link.wait_for()
        players_link = str(link.get_attribute("href"))
        assert f"/player/{game}#token=" in players_link
        assert page.locator('.seat[data-player="Referee"] .qr svg').count() == 1
        assert server.api("GET", f"/api/games/{game}/view", token=token_of(players_link)).json()["viewer"] == {
            "role": "player", "player": "Referee",
        }  # fmt: skip
        picture(page, f"referee-seats-player-{name}")

        own.click()
        own_link = page.locator('.seat[data-seat="referee"] a.link')
        own_link.wait_for()
        new_referee = token_of(str(own_link.get_attribute("href")))
        assert f"/referee/{game}#token=" in str(own_link.get_attribute("href"))
        assert server.api("GET", f"/api/games/{game}/view", token=seats.referee).status_code == 401
        assert server.api("GET", f"/api/games/{game}/view", token=new_referee).json()["viewer"]["role"] == "referee"
        # the page goes on with the new link: another player's link still works from it
        page.locator('.seat[data-player="Bart"] button').click()
        page.locator('.seat[data-player="Bart"] a.link').wait_for()
        assert page.locator("#errors").inner_text().strip() == ""
        assert page.locator('.seat[data-seat="referee"] a.link').count() == 1
        picture(page, f"referee-seats-own-{name}")
    finally:
        context.close()
