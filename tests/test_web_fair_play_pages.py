"""Fair play through the pages: receipts kept and downloaded, head codes shown, dice
contributions committed and revealed by the players' phones.

A real ``mortecouille serve`` and Debian's Chromium, as in tests/test_web_pages.py. Two players
on phone-sized pages, the table and the referee play a blockade game of contributed dice (D3):

- turn 1: Anne's page commits her contribution with her tokens; Bart gives none; the referee
  locks the turn; Anne's page reveals on its own; the referee resolves (Bart's ship idle);
- turn 2: both pages commit with their tokens; the service locks once everything is in; both
  pages reveal on their own; the referee resolves;
- turn 3: Bart's phone commits and gives its tokens, then goes away; Anne's tokens lock the turn;
  the referee resolves without Bart's reveal, giving the reason.

Before each lock, a player's contribution is in nobody's browser traffic or page, not even in the
game's log (the server never sees it before the lock); once revealed it is in the log (so the
search could find it). Every page shows the same head code after each turn. Both players download
their receipt files; ``mortecouille verify GAME --receipts FILE`` accepts each (exit 0), and
``--head-code SEQ:CODE`` as the table shows it; a receipt file with one field changed is refused
(exit 4).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_web_pages import (
    WAIT_MS,
    Viewer,
    close_all,
    no_script_problems,
    place,
    player_url,
    referee_url,
    tokens,
)
from tests.web_helpers import (
    NEEDS_CHROMIUM,
    Server,
    create_game,
)

pytestmark = [NEEDS_CHROMIUM, pytest.mark.browser]

GAME = "fairplay"


def mortecouille(server: Server, *words: str) -> subprocess.CompletedProcess[str]:
    """The CLI on the server's games directory, as a player checking their receipts runs it."""
    return subprocess.run(
        [sys.executable, "-m", "mortecouille", *words],
        env={**os.environ, "MORTECOUILLE_GAMES": str(server.games)},
        cwd=server.logs,
        capture_output=True,
        text=True,
        timeout=120,
    )


def view_of(server: Server, token: str | None = None) -> dict[str, Any]:
    return dict(server.api("GET", f"/api/games/{GAME}/view", token=token).json())


def log_text(server: Server) -> str:
    return (server.games / f"{GAME}.jsonl").read_text()


def dice_status(player: Viewer, state: str) -> None:
    """Wait until the player's page says its contribution is in ``state``."""
    player.page.wait_for_selector(f'#dice-status[data-state="{state}"]', state="attached", timeout=WAIT_MS)


def kept_contribution(player: Viewer, name: str, turn: int) -> str:
    """The contribution the player's page drew for ``turn`` and keeps on the phone."""
    kept = player.page.evaluate(
        "key => JSON.parse(localStorage.getItem(key) || '{}')", f"mortecouille.contribution:{GAME}:{name}:{turn}"
    )
    assert len(kept) == 1, kept
    contribution = str(next(iter(kept.values())))
    assert re.fullmatch(r"[0-9a-f]{32}", contribution), contribution
    return contribution


def assert_nobody_has(contribution: str, server: Server, viewers: list[Viewer]) -> None:
    """Before the lock the contribution is nowhere but on its phone: in no response, pushed
    message or page of any viewer (the owner's included: the server never sent it), nor in the log."""
    for viewer in viewers:
        found = [where for where, text in viewer.seen() if contribution in text]
        assert found == [], f"{viewer.page.url.split('#')[0]} received a contribution before the lock: {found}"
    assert contribution not in log_text(server)


def resolve_when_ready(referee: Viewer, *, idle: bool = False, without: str | None = None) -> None:
    page = referee.page
    if without is None:
        page.wait_for_selector('#resolve-form[data-ready="yes"]', state="attached")
    page.set_checked("#resolve-idle", idle)
    page.click("#resolve-submit")
    page.wait_for_function(
        "() => document.getElementById('notice').textContent || document.getElementById('errors').textContent"
    )
    assert page.locator("#errors").inner_text() == ""
    assert "Turn resolved" in page.locator("#notice").inner_text()


def head_code_everywhere(viewers: list[Viewer], turn: int) -> tuple[int, str]:
    """Every page shows the same head code after ``turn``; the table's words give SEQ and CODE."""
    for viewer in viewers:
        viewer.page.wait_for_selector(f'#head-code[data-turn="{turn}"]', state="visible", timeout=WAIT_MS)
    shown = {viewer.page.locator("#head-code").get_attribute("data-code") for viewer in viewers}
    assert len(shown) == 1, shown
    table_words = viewers[0].page.locator("#head-code").inner_text()
    said = re.fullmatch(rf"Head code after turn {turn}: (\d{{4}} \d{{4}} \d{{4}}) — read it aloud \(event (\d+)\)", table_words)
    assert said is not None, table_words
    return int(said.group(2)), said.group(1)


def download_receipts(player: Viewer, name: str, folder: Path) -> Path:
    page = player.page
    link = page.locator("#receipts-download")
    link.wait_for(state="visible")
    with page.expect_download() as started:
        link.click()
    download = started.value
    assert download.suggested_filename == f"{GAME}-{name}-receipts.json"
    path = folder / download.suggested_filename
    download.save_as(str(path))
    return path


def test_two_phones_play_contributed_dice_keep_receipts_and_show_the_same_head_code(
    server: Server, browser: Any, tmp_path: Path
) -> None:
    seats = create_game(server, GAME, ruleset="blockade", players=["Anne", "Bart"], board={"width": 12, "height": 12})
    assert view_of(server)["dice_scheme"] == "contributed"
    table = Viewer(browser, f"{server.url}/table/{GAME}", phone=False)
    referee = Viewer(browser, referee_url(server, seats), phone=False)
    anne = Viewer(browser, player_url(server, seats, "Anne"), phone=True)
    bart = Viewer(browser, player_url(server, seats, "Bart"), phone=True)
    viewers = [table, referee, anne, bart]
    try:
        assert anne.page.locator("#receipts-count").inner_text() == "Receipts: 0"
        assert anne.page.locator("#receipts-download").is_hidden()
        assert "verify" in anne.page.locator("#receipts-section").inner_text()
        place(anne, "Sloopy", "C6", "N", kind="sloop")
        place(bart, "Frig", "J6", "S", kind="war-frigate")
        anne.page.wait_for_function("() => document.getElementById('receipts-count').textContent === 'Receipts: 1'")
        assert "placement Sloopy" in anne.page.locator("#receipts-last").inner_text()
        dice_status(anne, "pending")

        # turn 1: Anne commits with her tokens; her contribution stays on her phone
        tokens(anne, "Sloopy", ["F", "-", "-", "-"])
        dice_status(anne, "committed")
        annes_first = kept_contribution(anne, "Anne", 1)
        assert view_of(server)["committed"] == ["Anne"]
        for viewer in viewers:
            viewer.reaches(view_of(server)["seq"])
        assert_nobody_has(annes_first, server, viewers)
        # Bart gives nothing: the referee stops waiting, locks, and Anne's page reveals by itself
        referee.page.wait_for_selector('#resolve-form[data-ready="no"]', state="attached")
        assert "Committed: Anne" in referee.page.locator("#dice-state").inner_text()
        referee.page.click("#lock-submit")
        dice_status(anne, "revealed")
        dice_status(bart, "none")
        assert annes_first in log_text(server)  # revealed: the search above could have found it
        resolve_when_ready(referee, idle=True)
        seq_1, code_1 = head_code_everywhere(viewers, 1)
        assert view_of(server)["head_code"] == {"turn": 1, "seq": seq_1, "code": code_1}

        # turn 2: both commit with their tokens; the service locks once everything is in, and
        # both pages reveal by themselves
        tokens(anne, "Sloopy", ["F", "-", "-", "-"])
        dice_status(anne, "committed")
        annes_second = kept_contribution(anne, "Anne", 2)
        assert annes_second != annes_first  # a new contribution each turn
        for viewer in viewers:
            viewer.reaches(view_of(server)["seq"])
        assert_nobody_has(annes_second, server, viewers)
        tokens(bart, "Frig", ["F", "-", "-", "-"])
        dice_status(anne, "revealed")
        dice_status(bart, "revealed")
        resolve_when_ready(referee)
        seq_2, code_2 = head_code_everywhere(viewers, 2)
        assert (seq_2, code_2) != (seq_1, code_1)
        barts_file = download_receipts(bart, "Bart", tmp_path)

        # turn 3: Bart's phone commits and gives its tokens, then goes away with its contribution
        tokens(bart, "Frig", ["F", "-", "-", "-"])
        dice_status(bart, "committed")
        bart.close()
        viewers.remove(bart)
        tokens(anne, "Sloopy", ["F", "-", "-", "-"])
        dice_status(anne, "revealed")
        referee.page.wait_for_selector('#resolve-form[data-awaiting="Bart"]', state="attached")
        assert "Awaiting reveal: Bart" in referee.page.locator("#dice-state").inner_text()
        assert referee.page.locator("#resolve-submit").inner_text() == "Resolve without Bart"
        assert "waiting for the dice contributions of Bart" in table.page.locator("#status").inner_text()
        referee.page.click("#resolve-submit")  # no reason given: asked for, nothing sent
        assert "Give a reason" in referee.page.locator("#errors").inner_text()
        assert view_of(server)["turn"] == 3
        referee.page.fill("#resolve-absent", "Bart's phone went flat")
        resolve_when_ready(referee, without="Bart")
        assert "Bart's phone went flat" in log_text(server)
        seq_3, code_3 = head_code_everywhere(viewers, 3)
        # a withheld contribution may be a choice between two outcomes (with the seed's holder):
        # every page says so, the table loudest, naming the player, the turn and the reason
        for viewer in viewers:
            viewer.page.wait_for_selector('#withheld[data-players="Bart"]', state="visible")
            said = viewer.page.locator("#withheld").inner_text()
            assert "Turn 3 was resolved without a withheld dice contribution: Bart" in said, said
            assert "Bart's phone went flat" in said and "Bart 1 (turns 3)" in said, said
        annes_file = download_receipts(anne, "Anne", tmp_path)

        # the files the players took home: verify accepts them and the code the table read out
        for path, name, at_least in ((annes_file, "Anne", 7), (barts_file, "Bart", 3)):
            receipts = json.loads(path.read_text())["receipts"]
            assert len(receipts) >= at_least, receipts
            assert {receipt["game"] for receipt in receipts} == {GAME}
            checked = mortecouille(server, "verify", GAME, "--receipts", str(path))
            assert checked.returncode == 0, f"{name}: {checked.stdout}{checked.stderr}"
        kinds = [receipt["kind"] for receipt in json.loads(annes_file.read_text())["receipts"]]
        assert kinds[:4] == ["placement", "contribution", "tokens", "contribution-revealed"], kinds
        for seq, code in ((seq_1, code_1), (seq_2, code_2), (seq_3, code_3)):
            checked = mortecouille(server, "verify", GAME, "--head-code", f"{seq}:{code}")
            assert checked.returncode == 0, checked.stdout + checked.stderr
        # a receipt file with one field changed is refused, naming the receipt
        edited = json.loads(annes_file.read_text())
        edited["receipts"][2]["subject"] = "Frig"
        edited_path = tmp_path / "edited.json"
        edited_path.write_text(json.dumps(edited))
        refused = mortecouille(server, "verify", GAME, "--receipts", str(edited_path))
        assert refused.returncode == 4, refused.stdout + refused.stderr
        assert "receipt 3" in refused.stdout + refused.stderr
        no_script_problems(viewers)
    finally:
        close_all(viewers)


def test_the_page_digest_without_crypto_subtle_is_sha256(server: Server, browser: Any) -> None:
    """A phone reaching the server by its address on the table's network (plain HTTP) has no
    crypto.subtle: the page's own SHA-256 gives the commitment the server checks (core.dice)."""
    from mortecouille.core.dice import contribution_commitment

    create_game(server, "digest", ruleset="blockade", players=["Anne"], board={"width": 8, "height": 8})
    table = Viewer(browser, f"{server.url}/table/digest", phone=False)
    try:
        for text in ["", "abc", "0123456789abcdef0123456789abcdef", "é" * 70]:
            plain = table.page.evaluate("text => window.MC.sha256HexPlain(new TextEncoder().encode(text))", text)
            assert plain == contribution_commitment(text)
            assert table.page.evaluate("text => window.MC.sha256Hex(text)", text) == plain
    finally:
        table.close()
