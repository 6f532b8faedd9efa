"""Phones as witnesses, through the pages (docs/service.md, "Phones as witnesses").

A real ``mortecouille serve`` and Debian's Chromium, as in tests/test_web_pages.py. A blockade game
is played through the API for three turns, with a ruling; Anne's phone (390x844) and the table
(1280x720, in French) follow it, each keeping on its device the heads of the log it was served.
Then the log is rewritten on disk as a careful forger would (the ruling's text changed, every turn's
state hash and the chain recomputed, the head anchor rewritten: plain ``verify`` passes), and the
service serves the rewritten history: the phone's page, reopened, shows the alarm naming the seq,
and so does the table's, in French; the same phone's page of a second game, untouched, shows none.
The phone's exported witness file makes ``verify --witness`` fail on the rewritten log, naming the
seq (exit 4), and pass on the original; the untouched game's passes too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.forgery import forge_with_turn_hashes
from tests.test_web_pages import WAIT_MS, Viewer, close_all, no_script_problems, player_url
from tests.web_helpers import NEEDS_CHROMIUM, Seats, Server, create_game

pytestmark = [NEEDS_CHROMIUM, pytest.mark.browser]

SCREENSHOTS = os.environ.get("MORTECOUILLE_SCREENSHOTS")


def mortecouille(server: Server, *words: str) -> subprocess.CompletedProcess[str]:
    """The CLI on the server's games directory."""
    return subprocess.run(
        [sys.executable, "-m", "mortecouille", *words],
        env={**os.environ, "MORTECOUILLE_GAMES": str(server.games)},
        cwd=server.logs,
        capture_output=True,
        text=True,
        timeout=120,
    )


def placed(server: Server, game: str) -> Seats:
    """A blockade game created through the API, a sloop each placed by the referee."""
    seats = create_game(server, game, ruleset="blockade", players=["Anne", "Bart"], board={"width": 8, "height": 8})

    def send(path: str, body: dict[str, Any], token: str) -> None:
        answer = server.api("POST", f"/api/games/{game}/{path}", token=token, body=body)
        assert answer.status_code == 200, (path, answer.text)

    send("place", {"ship": "Sloopy", "square": "C2", "kind": "sloop", "owner": "Anne"}, seats.referee)
    send("place", {"ship": "Frig", "square": "C5", "facing": "S", "kind": "war-frigate", "owner": "Bart"}, seats.referee)
    return seats


def play_turns(server: Server, seats: Seats, turns: int) -> None:
    """``turns`` turns through the API, a ruling after the first."""
    game = seats.game
    for turn in range(1, turns + 1):
        for ship, player, given in (("Sloopy", "Anne", ["F"]), ("Frig", "Bart", ["L" if turn % 2 else "F"])):
            answer = server.api(
                "POST", f"/api/games/{game}/tokens", token=seats.players[player], body={"ship": ship, "tokens": given}
            )
            assert answer.status_code == 200, answer.text
        answer = server.api("POST", f"/api/games/{game}/resolve", token=seats.referee, body={})
        assert answer.status_code == 200, answer.text
        if turn == 1:
            ruling = {"rule": "B2", "text": "the frigate's bump stands"}
            answer = server.api("POST", f"/api/games/{game}/rulings", token=seats.referee, body=ruling)
            assert answer.status_code == 200, answer.text


def last_seq(server: Server, game: str) -> int:
    return int(server.api("GET", f"/api/games/{game}/view").json()["seq"])


def witnessed(page: Any, seq: int) -> None:
    """Wait until the page has witnessed the log up to ``seq``."""
    page.wait_for_function(
        "n => { const heads = window.MC.witness.state().heads; return heads.length && heads[heads.length - 1].seq >= n; }",
        arg=seq,
        timeout=WAIT_MS,
    )


def reopened(page: Any) -> None:
    page.reload()
    page.wait_for_selector("body[data-seq]", state="attached")


def alarm_shown(page: Any) -> str:
    alarm = page.locator("#witness-alarm")
    alarm.wait_for(state="visible", timeout=WAIT_MS)
    return str(alarm.inner_text())


def export(page: Any, folder: Path, name: str) -> Path:
    """Click the page's export link and keep what the browser saves."""
    link = page.locator("#witness-export")
    link.scroll_into_view_if_needed()
    with page.expect_download() as download:
        link.click()
    assert download.value.suggested_filename == name
    saved = folder / name
    download.value.save_as(saved)
    return saved


def shot(page: Any, name: str, where: str = "body") -> None:
    """A screenshot for whoever looks at the pages (MORTECOUILLE_SCREENSHOTS=DIR)."""
    if SCREENSHOTS:
        if where == "body":
            page.evaluate("() => window.scrollTo(0, 0)")
        else:
            page.locator(where).first.scroll_into_view_if_needed()
        page.screenshot(path=str(Path(SCREENSHOTS) / f"witness-{name}.png"))


def test_a_phone_witnessing_the_log_catches_a_rewritten_history_and_its_file_tells_verify(
    server: Server, browser: Any, tmp_path: Path
) -> None:
    seats = placed(server, "witnessed")
    calm = placed(server, "untouched")
    phone = Viewer(browser, player_url(server, seats, "Anne"), phone=True)
    table = Viewer(browser, f"{server.url}/table/witnessed", phone=False, locale="fr-FR")
    table.page.set_viewport_size({"width": 1280, "height": 720})
    # the same phone (one browser context: one device, one storage) follows the other game too
    other = phone.context.new_page()
    errors: list[str] = []
    other.on("pageerror", lambda error: errors.append(str(error)))
    other.goto(player_url(server, calm, "Anne"))
    other.wait_for_selector("body[data-seq]", state="attached")
    try:
        play_turns(server, seats, 3)
        play_turns(server, calm, 2)
        witnessed(phone.page, last_seq(server, "witnessed"))
        witnessed(table.page, last_seq(server, "witnessed"))
        witnessed(other, last_seq(server, "untouched"))
        heads = phone.page.evaluate("() => window.MC.witness.state().heads")
        assert len(heads) >= 2 and all(len(head["hash"]) == 64 for head in heads), heads
        assert "witnessed" in phone.page.locator("#witness-status").inner_text()
        assert phone.page.locator("#witness-alarm").is_hidden()
        shot(phone.page, "phone-witness", "#witness")
        shot(table.page, "table-fr-before")

        # a careful forger rewrites what the referee ruled; plain verify cannot tell
        log = server.games / "witnessed.jsonl"
        original = tmp_path / "original"
        original.mkdir()
        for suffix in (".jsonl", ".head"):
            shutil.copy(log.with_suffix(suffix), original / f"witnessed{suffix}")

        rewritten_at: list[int] = []

        def rewrite(bodies: list[dict[str, Any]]) -> None:
            (ruling,) = [body for body in bodies if body["type"] == "ruling"]
            ruling["text"] = "the frigate's bump is void"
            rewritten_at.append(ruling["seq"])

        forge_with_turn_hashes(log, rewrite)
        assert mortecouille(server, "verify", "witnessed").returncode == 0

        reopened(phone.page)
        said = alarm_shown(phone.page)
        seq = int(phone.page.locator("#witness-alarm").get_attribute("data-seq") or -1)
        assert seq >= 0 and f"At event {seq} this device saw" in said, said
        assert "mortecouille verify witnessed --witness witnessed-witness.json" in said
        shot(phone.page, "phone-alarm")
        reopened(table.page)
        dit = alarm_shown(table.page)
        assert "une autre histoire" in dit and f"l'événement {seq}" in dit, dit
        shot(table.page, "table-fr-alarm")
        reopened(other)
        other.wait_for_function("() => Number(document.getElementById('witness-status').dataset.heads) > 0")
        other.wait_for_timeout(1000)  # its check of the untouched log has run
        assert other.locator("#witness-alarm").is_hidden()
        assert other.evaluate("() => window.MC.witness.state().mismatches") == []

        # the files: verify fails on the rewritten log, naming the seq, and passes on the original
        phone_file = export(phone.page, tmp_path, "witnessed-witness.json")
        kept = json.loads(phone_file.read_text())
        assert kept["game"] == "witnessed" and kept["mismatches"] and kept["heads"] == heads
        rewritten = mortecouille(server, "verify", "witnessed", "--witness", str(phone_file))
        assert rewritten.returncode == 4, rewritten.stdout + rewritten.stderr
        # named at the first head the page witnessed at or after the line rewritten
        first_after = min(head["seq"] for head in heads if head["seq"] >= rewritten_at[0])
        assert "FAIL witness" in rewritten.stdout and f"FAILED at seq {first_after}" in rewritten.stdout
        for suffix in (".jsonl", ".head"):
            shutil.copy(original / f"witnessed{suffix}", log.with_suffix(suffix))
        honest = mortecouille(server, "verify", "witnessed", "--witness", str(phone_file))
        assert honest.returncode == 0, honest.stdout + honest.stderr
        calm_file = export(other, tmp_path, "untouched-witness.json")
        checked = mortecouille(server, "verify", "untouched", "--witness", str(calm_file), "--json")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert [f["ok"] for f in json.loads(checked.stdout)["findings"] if f["check"] == "witness"] == [True]
        no_script_problems([phone, table])
        assert errors == []
    finally:
        close_all([phone, table])
