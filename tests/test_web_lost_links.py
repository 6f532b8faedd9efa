"""A page opened without its token (a link copied without its ``#token=``, a bookmark): each page
says what to do, and the referee, who has nobody to ask, is told the command that issues a new
link."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web_helpers import NEEDS_CHROMIUM, SCREEN, Server, create_game

pytestmark = [NEEDS_CHROMIUM, pytest.mark.browser]

WAIT_MS = 30_000


def error_shown(browser: Any, url: str) -> str:
    context = browser.new_context(viewport=SCREEN, locale="en-GB")
    try:
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(url)
        page.locator("#errors:not(:empty)").wait_for(state="attached")
        return str(page.locator("#errors").inner_text())
    finally:
        context.close()


def test_the_referees_page_without_its_token_names_the_command_for_a_new_link(
    server: Server, browser: Any
) -> None:
    create_game(server, "nolink", players=["Anne", "Bart"], board={"width": 8, "height": 8})
    shown = error_shown(browser, f"{server.url}/referee/nolink")
    assert "--reissue referee" in shown and "Ask the referee" not in shown


def test_a_players_page_without_its_token_says_to_ask_the_referee(server: Server, browser: Any) -> None:
    create_game(server, "nolink2", players=["Anne", "Bart"], board={"width": 8, "height": 8})
    assert "Ask the referee for a new link" in error_shown(browser, f"{server.url}/player/nolink2")
