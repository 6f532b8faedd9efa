"""The referee page's ruling form in a real browser: the adjustments typed as the CLI writes them
(``Sloopy damage=+1,position=C5``) reach the service as its typed body and are logged as such."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.web_helpers import NEEDS_CHROMIUM, SCREEN, Server, create_game

pytestmark = [NEEDS_CHROMIUM, pytest.mark.browser]

WAIT_MS = 30_000


def test_a_ruling_typed_on_the_referee_page_is_logged_with_its_adjustments(server: Server, browser: Any) -> None:
    seats = create_game(server, "ruled", ruleset="blockade", players=["Anne", "Bart"], board={"width": 8, "height": 8})
    for ship, square, owner in (("Sloopy", "C2", "Anne"), ("Frig", "F6", "Bart")):
        body = {"ship": ship, "square": square, "facing": "N", "kind": "sloop", "owner": owner}
        placed = server.api("POST", "/api/games/ruled/place", token=seats.referee, body=body)
        assert placed.status_code == 200, placed.text
    context = browser.new_context(viewport=SCREEN, locale="en-GB")
    try:
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(f"{server.url}/referee/ruled#token={seats.referee}")
        page.wait_for_selector("body[data-seq]", state="attached")
        page.fill("#ruling-rule", "B4")
        page.fill("#ruling-text", "the sloop scraped the quay")
        page.fill("#ruling-adjust", "Sloopy damage=+1,position=C5\nFrig facing=S")
        page.click("#ruling-submit")
        page.wait_for_function(
            "() => document.getElementById('notice').textContent || document.getElementById('errors').textContent"
        )
        assert page.locator("#errors").inner_text() == ""
        assert "Ruling recorded" in page.locator("#notice").inner_text()
    finally:
        context.close()
    lines = [json.loads(line) for line in (server.games / "ruled.jsonl").read_bytes().splitlines()]
    (ruling,) = [line for line in lines if line["type"] == "ruling"]
    changes = [{k: v for k, v in adjustment.items() if v is not None} for adjustment in ruling["adjustments"]]
    assert changes == [
        {"ship": "Sloopy", "damage": 1.0},
        {"ship": "Sloopy", "at": [2, 4]},
        {"ship": "Frig", "facing": "S"},
    ], ruling
