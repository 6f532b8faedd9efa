"""The service's pages in a real browser.

A real ``mortecouille serve`` on 127.0.0.1 and Debian's Chromium (through the ``playwright``
package, ``executable_path``): two players on phone-sized pages and a spectator on the table page
play a whole blockade game and a mortecouille turn; before each turn resolves, everything the other
player's and the spectator's browsers received (every HTTP body, every pushed message, the DOM) is
searched for each player's secret orders, and none is found; the owner's own page shows them (so
the search can find what it looks for). A table page cut off for ten seconds catches up with no
gap and no duplicate; ``#seq=N`` reopens the game there; the language switch, keyboard-only
orders, and a refusal naming its rule.

``MORTECOUILLE_SCREENSHOTS=1`` also writes the README's picture of the table page, docs/table.png.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from typing import Any

import pytest

from tests.helpers import ROOT
from tests.web_helpers import (
    NEEDS_CHROMIUM,
    PHONE,
    SCREEN,
    Seats,
    Server,
    Watch,
    create_game,
    create_game_with_the_cli,
    everything_seen,
    received_seqs,
)

pytestmark = [NEEDS_CHROMIUM, pytest.mark.browser]

#: How long a page may take to show what the server has (the machine is shared and loaded).
WAIT_MS = 30_000
#: A resolved turn is replayed on the table phase by phase, a few seconds each.
REPLAY_MS = 120_000


class Viewer:
    """One browser context with one page of the service open, and what it received."""

    def __init__(self, browser: Any, url: str, *, phone: bool, locale: str = "en-GB") -> None:
        self.context = browser.new_context(viewport=PHONE if phone else SCREEN, locale=locale)
        self.watch = Watch()
        self.watch.attach(self.context)
        self.page = self.context.new_page()
        self.page.set_default_timeout(WAIT_MS)
        self.problems: list[str] = []  # what the browser's console said went wrong, for the failure message
        self.page.on("console", self.note_console)
        self.page.on("pageerror", lambda error: self.problems.append(f"script error: {error}"))
        self.page.goto(url)
        try:
            self.page.wait_for_selector("body[data-seq]", state="attached")
        except Exception as error:
            raise AssertionError(f"{url.split('#')[0]} never showed its game: {self.problems}") from error

    def note_console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(message.text)

    def seq(self) -> int:
        return int(self.page.evaluate("() => Number(document.body.dataset.seq)"))

    def reaches(self, seq: int) -> None:
        """Wait until the page shows the game at ``seq`` or later (it follows the stream)."""
        self.page.wait_for_function("n => Number(document.body.dataset.seq) >= n", arg=seq, timeout=WAIT_MS)

    def seen(self) -> list[tuple[str, str]]:
        return everything_seen(self.page, self.watch)

    def close(self) -> None:
        self.context.close()

    def script_problems(self) -> list[str]:
        """Script errors, and anything the Content-Security-Policy blocked (no inline script or style)."""
        return [p for p in self.problems if p.startswith("script error") or "Content Security Policy" in p]


def no_script_problems(viewers: list[Viewer]) -> None:
    """No page had a script error or a CSP violation."""
    problems = {viewer.page.url.split("#")[0]: viewer.script_problems() for viewer in viewers}
    assert not any(problems.values()), problems


def close_all(viewers: list[Viewer]) -> None:
    for viewer in viewers:
        viewer.close()


def player_url(server: Server, seats: Seats, player: str) -> str:
    return f"{server.url}/player/{seats.game}#token={seats.players[player]}"


def referee_url(server: Server, seats: Seats) -> str:
    return f"{server.url}/referee/{seats.game}#token={seats.referee}"


def notice_says(viewer: Viewer, text: str) -> None:
    """The page confirms what was done (and shows no refusal)."""
    viewer.page.wait_for_function(
        "() => document.getElementById('notice').textContent || document.getElementById('errors').textContent"
    )
    assert viewer.page.locator("#errors").inner_text() == ""
    assert text in viewer.page.locator("#notice").inner_text()


def last_seq(server: Server, game: str) -> int:
    return int(server.api("GET", f"/api/games/{game}/view").json()["seq"])


def own_secrets(server: Server, game: str, token: str, ship: str, kind: str) -> list[str]:
    """What the owner's view shows of their ship's secret this turn: the event's line and its
    content as JSON; markers to search the other viewers' browsers for."""
    view = server.api("GET", f"/api/games/{game}/view", token=token).json()
    mine = [e for e in view["events"] if e["type"] == kind and e.get("ship") == ship and e["turn"] == view["turn"]]
    assert mine and not mine[-1]["sealed"], f"the owner does not see their own {kind}: {mine}"
    data = {k: v for k, v in mine[-1]["data"].items() if k in ("actions", "tokens")}
    assert data, mine[-1]
    content = next(iter(data.values()))
    return [mine[-1]["text"], json.dumps(content, separators=(",", ":"))]


def assert_secret_kept(secrets: list[str], owner: Viewer, others: list[Viewer]) -> None:
    """The owner's page shows the secret (the search works); no other viewer received it."""
    assert any(marker in text for _, text in owner.seen() for marker in secrets), "the owner never got their own secret"
    for other in others:
        leaked = [
            (marker, where, text[max(0, text.index(marker) - 200) : text.index(marker) + 200])
            for where, text in other.seen()
            for marker in secrets
            if marker in text
        ]
        assert leaked == [], f"{other.page.url.split('#')[0]} received another player's secret: {leaked}"


# --- the player's forms, used as a player would -------------------------------------------------


def buy(player: Viewer, ship: str, kind: str) -> None:
    page = player.page
    page.locator("#buy-section").wait_for(state="visible")
    page.fill("#buy-name", ship)
    page.fill("#buy-kind", kind)
    page.click("#buy-submit")
    notice_says(player, ship)


def seal(player: Viewer) -> None:
    player.page.check("#seal-forfeit")
    player.page.click("#seal-submit")
    notice_says(player, "sealed")


def place(player: Viewer, ship: str, square: str, facing: str, kind: str | None = None) -> None:
    page = player.page
    page.locator("#place-section").wait_for(state="visible")
    page.fill("#place-ship", ship)
    if kind is not None:
        page.fill("#place-kind", kind)
    page.fill("#place-square", square)
    page.select_option("#place-facing", facing)
    page.click("#place-submit")
    notice_says(player, f"{ship} on {square}")


def order(player: Viewer, ship: str, verb: str, **details: str | bool) -> None:
    """Fill the first action row of the order form and submit it."""
    page = player.page
    page.locator("#orders-section").wait_for(state="visible")
    page.select_option("#orders-ship", ship)
    row = page.locator("#actions .action").first
    row.locator(".verb").select_option(verb)
    for name, value in details.items():
        field = row.locator(f".{name}")
        if isinstance(value, bool):
            field.set_checked(value)
        else:
            field.select_option(value)
    page.click("#orders-submit")


def tokens(player: Viewer, ship: str, given: list[str]) -> None:
    page = player.page
    page.locator("#tokens-section").wait_for(state="visible")
    page.select_option("#tokens-ship", ship)
    for round_number, token in enumerate(given, start=1):
        page.select_option(f"#token-{round_number}", "" if token == "-" else token)
    page.click("#tokens-submit")
    notice_says(player, f"Tokens given for {ship}: {' '.join(given)}")


def resolve(referee: Viewer) -> None:
    """Resolve once nothing of the dice is pending: in a game of contributed dice (D3) the pages
    committed with their orders, the service locked the turn once everything was in, and the
    pages revealed their contributions on their own."""
    try:
        referee.page.wait_for_selector('#resolve-form[data-ready="yes"]', state="attached")
    except Exception as error:
        shown = referee.page.evaluate(
            "() => [document.getElementById('dice-state').textContent, document.getElementById('errors').textContent,"
            " JSON.stringify({locked: MC.latest.locked, committed: MC.latest.committed, awaiting: MC.latest.awaiting_reveal, seq: MC.latest.seq})]"
        )
        raise AssertionError(f"the dice of the turn are still pending on the referee's page: {shown}") from error
    referee.page.click("#resolve-submit")
    notice_says(referee, "Turn resolved")


# --- the games --------------------------------------------------------------------------------


def test_a_mortecouille_turn_through_the_pages_keeps_each_players_orders_secret(
    server: Server, browser: Any
) -> None:
    # the README's walkthrough: the game made with `new` while the server runs, the table page,
    # the referee's page, and Anne's seat code shown there (its link is what the QR code holds)
    seats = create_game_with_the_cli(server, readme_new_command())
    table = Viewer(browser, f"{server.url}/table/{seats.game}", phone=False)
    referee = Viewer(browser, referee_url(server, seats), phone=False)
    referee.page.click('button[data-player="Anne"]')
    seat = referee.page.locator('.seat[data-player="Anne"]')
    seat.locator("a.link").wait_for()
    assert seat.locator(".qr svg").count() == 1
    annes_link = seat.locator("a.link").get_attribute("href")
    assert annes_link is not None and annes_link.startswith(f"{server.url}/player/{seats.game}#token=")
    seats.players["Anne"] = annes_link.split("#token=", 1)[1]
    anne = Viewer(browser, annes_link, phone=True)
    bart = Viewer(browser, player_url(server, seats, "Bart"), phone=True)
    try:
        # the token left the address bar as soon as the page read it
        assert "token" not in anne.page.url and "#" not in anne.page.url.rstrip("#")
        buy(anne, "Hope", "red-small")
        seal(anne)
        # what Anne bought stays hers until every fleet is sealed (the contract makes a sealed
        # event's ship name public, not its kind)
        anne.page.locator("#fleet h3", has_text="Hope").wait_for()
        for viewer in (bart, table, referee):
            viewer.reaches(last_seq(server, seats.game))
        assert_secret_kept(['"kind":"red-small"', "kind=red-small"], anne, [bart, table, referee])
        buy(bart, "Kraken", "Jaune small")  # the French name works too
        seal(bart)
        place(anne, "Hope", "C3", "N")
        place(bart, "Kraken", "A3", "N")  # on Hope's port line, two squares off; Hope on its starboard line

        # Anne's page knows both placements (Kraken's position, and that the orders phase began)
        # before its form is read: until then the form may still be the one drawn without a ship
        anne.reaches(last_seq(server, seats.game))
        anne.page.locator("#orders-section").wait_for(state="visible")
        # the form offers only what Hope can do: no catapult shot, no fireship (no such options)
        verbs = anne.page.locator("#actions .action .verb option").evaluate_all("options => options.map(o => o.value)")
        assert verbs == ["advance", "maneuver", "attack", "idle"], verbs
        # targets in range, with the odds: Kraken is on Hope's port line, nothing on its starboard
        anne.page.select_option("#actions .action .verb", "attack")
        anne.page.select_option("#actions .action .position", "port")
        port_targets = anne.page.locator("#actions .action .target option").all_inner_texts()
        assert len(port_targets) == 1 and re.fullmatch(r"Kraken — \d+% to hit \(2 squares\)", port_targets[0]), port_targets
        anne.page.select_option("#actions .action .position", "starboard")
        assert anne.page.locator("#actions .action .target option").all_inner_texts() == ["nothing in range"]
        # a refusal shows its rule: two cannons a side are too few to burst (S4)
        order(anne, "Hope", "attack", position="port", target="Kraken", burst=True)
        refusal = anne.page.locator("#errors .error")
        refusal.wait_for(state="visible")
        assert refusal.get_attribute("data-rule") == "S4"
        assert "[S4]" in refusal.inner_text() and "burst" in refusal.inner_text()
        assert refusal.inner_text().count("[S4]") == 1
        anne.page.locator("#actions .action .burst").set_checked(False)

        order(anne, "Hope", "attack", position="port", target="Kraken")
        notice_says(anne, "Submitted for Hope: attack port Kraken")
        order_by_keyboard(bart)
        notice_says(bart, "Submitted for Kraken: attack starboard Hope")

        before_resolve = last_seq(server, seats.game)
        for viewer in (anne, bart, table, referee):
            viewer.reaches(before_resolve)
        referee.page.locator('#submitted li[data-player="Bart"][data-submitted="yes"]').wait_for()
        assert "Every order is in" in table.page.locator("#status").inner_text()
        assert_secret_kept(own_secrets(server, seats.game, seats.players["Anne"], "Hope", "order-given"), anne, [bart, table, referee])
        assert_secret_kept(own_secrets(server, seats.game, seats.players["Bart"], "Kraken", "order-given"), bart, [anne, table, referee])

        resolve(referee)
        # the pages took part in the dice (D3): each committed with its orders and revealed once
        # the turn locked; after it every page shows the same head code, the view's
        for player, name in ((anne, "Anne"), (bart, "Bart")):
            player.page.wait_for_selector('#dice-status[data-state="pending"][data-turn="2"]', state="attached")
            kinds = player.page.evaluate(
                "key => JSON.parse(localStorage.getItem(key) || '[]').map(r => r.kind)", f"mortecouille.receipts:{seats.game}:{name}"
            )
            assert kinds[-3:] == ["contribution", "orders", "contribution-revealed"], kinds
        head = server.api("GET", f"/api/games/{seats.game}/view").json()["head_code"]
        assert head["turn"] == 1, head
        for viewer in (anne, bart, table, referee):
            viewer.page.wait_for_selector(f'#head-code[data-code="{head["code"]}"]', state="visible")
        assert f"Head code after turn 1: {head['code']} — read it aloud" in table.page.locator("#head-code").inner_text()
        # the table replays the turn phase by phase, the explanation beside the board
        table.page.wait_for_selector('body[data-replaying="yes"]', state="attached", timeout=WAIT_MS)
        assert re.match(r"Phase \d+ of \d+: ", table.page.locator("#phase").inner_text())
        table.page.wait_for_selector('body[data-replaying="no"]', state="attached", timeout=REPLAY_MS)
        explained = table.page.locator("#explain li").all_inner_texts()
        assert any("Hope" in line and "Kraken" in line for line in explained), explained
        assert table.page.locator("#board svg").count() == 1
        if os.environ.get("MORTECOUILLE_SCREENSHOTS") == "1":
            table.page.screenshot(path=str(ROOT / "docs" / "table.png"), full_page=True)
        no_script_problems([anne, bart, table, referee])
    finally:
        close_all([anne, bart, table, referee])


def readme_new_command() -> list[str]:
    """The first command of the README's "Playing at the table", as its words after `mortecouille`."""
    section = (ROOT / "README.md").read_text().split("## Playing at the table", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    words = shlex.split(block.group(1).splitlines()[0], comments=True)
    assert words[0] == "mortecouille", words
    return words[1:]


def order_by_keyboard(player: Viewer) -> None:
    """Bart's orders with the keyboard only: Tab to the form, arrows to choose, Space, Enter."""
    page = player.page
    page.locator("#orders-section").wait_for(state="visible")
    page.locator("body").focus()
    tab_to(page, "orders-ship")  # Kraken, the only ship
    page.keyboard.press("Tab")
    assert focused(page) == "action-1-verb"
    page.keyboard.press("ArrowDown")  # advance -> manoeuvre
    page.keyboard.press("ArrowDown")  # -> attack
    page.keyboard.press("Tab")
    assert focused(page) == "action-1-position"
    page.keyboard.press("ArrowDown")  # port -> starboard
    page.keyboard.press("Tab")
    assert focused(page) == "action-1-target"  # Hope, the only other ship
    page.keyboard.press("Tab")
    assert focused(page) == "action-1-burst"  # left unticked: two cannons a side are too few to burst (S4)
    tab_to(page, "orders-submit")
    page.keyboard.press("Enter")


def focused(page: Any) -> str:
    return str(page.evaluate("() => document.activeElement ? document.activeElement.id : ''"))


def tab_to(page: Any, element_id: str, most: int = 60) -> None:
    for _ in range(most):
        if focused(page) == element_id:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached #{element_id} (stuck on #{focused(page)})")


def test_a_whole_blockade_game_through_the_pages(server: Server, browser: Any) -> None:
    seats = create_game(
        server, "harbour", ruleset="blockade", players=["Anne", "Bart"],
        board={"width": 8, "height": 8, "rocks": ["E5"], "winds": [{"square": "C3", "direction": "E"}], "whirlpools": ["F2"]},
    )
    anne = Viewer(browser, player_url(server, seats, "Anne"), phone=True)
    bart = Viewer(browser, player_url(server, seats, "Bart"), phone=True)
    table = Viewer(browser, f"{server.url}/table/harbour", phone=False)
    referee = Viewer(browser, referee_url(server, seats), phone=False)
    try:
        place(anne, "Sloopy", "C2", "N", kind="sloop")
        place(bart, "Frig", "C4", "S", kind="war-frigate")
        turns = [(["F", "F", "L", "-"], ["F", "-", "R", "F"]), (["R", "-", "F", "L"], ["-", "L", "F", "-"])]
        for turn, (annes, barts) in enumerate(turns, start=1):
            tokens(anne, "Sloopy", annes)
            tokens(bart, "Frig", barts)
            before_resolve = last_seq(server, "harbour")
            for viewer in (anne, bart, table, referee):
                viewer.reaches(before_resolve)
            assert_secret_kept(own_secrets(server, "harbour", seats.players["Anne"], "Sloopy", "tokens-given"), anne, [bart, table, referee])
            assert_secret_kept(own_secrets(server, "harbour", seats.players["Bart"], "Frig", "tokens-given"), bart, [anne, table, referee])
            if turn == len(turns):
                # the table is cut off while the turn resolves, then comes back
                table.context.set_offline(True)
                table.page.wait_for_selector('body[data-connected="no"]', state="attached")
            resolve(referee)
        table.page.wait_for_timeout(10_000)
        after = last_seq(server, "harbour")
        assert table.seq() < after, "the table saw the turn while offline"
        table.context.set_offline(False)
        table.reaches(after)
        table.page.wait_for_function(
            "n => window.MC.live.received.includes(n)", arg=after, timeout=WAIT_MS
        )  # the stream resumed (Last-Event-ID) and brought what was missed
        seqs = received_seqs(table.page)
        assert table.page.evaluate("() => window.MC.live.connects") >= 2, "the stream never reconnected"
        assert seqs == list(range(seqs[0], after + 1)), f"gap or duplicate in what the table received: {seqs}"

        # the referee ends the game: the banner names the winner on every page
        referee.page.select_option("#end-winner", "Anne")
        referee.page.fill("#end-reason", "Frig ran aground")
        referee.page.once("dialog", lambda dialog: dialog.accept())
        referee.page.click("#end-submit")
        notice_says(referee, "Game ended")
        for viewer in (table, anne, bart):
            banner = viewer.page.locator("#banner")
            banner.wait_for(state="visible")
            assert "Anne wins" in banner.inner_text()
        assert server.api("GET", "/api/games/harbour/view").json()["status"] == "ended"
        no_script_problems([anne, bart, table, referee])
    finally:
        close_all([anne, bart, table, referee])


def played_through_the_api(server: Server, game: str) -> dict[str, Any]:
    """A blockade game of two resolved turns, ended: played through the API, not the pages."""
    return played_with_seats(server, game)[1]


def played_with_seats(server: Server, game: str) -> tuple[Seats, dict[str, Any]]:
    """:func:`played_through_the_api`'s game, with its seats."""
    seats = create_game(server, game, ruleset="blockade", players=["Anne", "Bart"], board={"width": 8, "height": 8})
    for player, ship, square, facing in (("Anne", "Sloopy", "C2", "N"), ("Bart", "Frig", "F7", "S")):
        body = {"ship": ship, "square": square, "facing": facing, "kind": "sloop", "owner": player}
        assert server.api("POST", f"/api/games/{game}/place", token=seats.players[player], body=body).status_code == 200
    for _turn in range(2):
        for player, ship in (("Anne", "Sloopy"), ("Bart", "Frig")):
            body = {"ship": ship, "tokens": ["F", None, "L", None]}
            assert server.api("POST", f"/api/games/{game}/tokens", token=seats.players[player], body=body).status_code == 200
        assert server.api("POST", f"/api/games/{game}/resolve", token=seats.referee, body={}).status_code == 200
    ended = server.api("POST", f"/api/games/{game}/end", token=seats.referee, body={"winner": "Anne"})
    assert ended.status_code == 200, ended.text
    return seats, dict(server.api("GET", f"/api/games/{game}/view").json())


def test_a_link_with_seq_reopens_the_game_there_and_the_scrubber_moves_by_turns(server: Server, browser: Any) -> None:
    view = played_through_the_api(server, "scrubbed")
    first, second = view["turns"][0], view["turns"][1]
    table = Viewer(browser, f"{server.url}/table/scrubbed#seq={first['last']}", phone=False)
    try:
        assert table.seq() == first["last"]
        assert "Game over" not in table.page.locator("#banner").inner_text()
        assert table.page.locator("#scrub-range").input_value() == str(first["last"])
        table.page.click("#scrub-next")
        table.page.wait_for_function("n => Number(document.body.dataset.seq) === n", arg=second["last"])
        assert re.search(rf"#seq={second['last']}$", table.page.url)
        table.page.click("#scrub-prev")
        table.page.wait_for_function("n => Number(document.body.dataset.seq) === n", arg=first["last"])
        table.page.click("#scrub-live")
        table.page.wait_for_function("n => Number(document.body.dataset.seq) === n", arg=view["seq"])
        assert "#seq" not in table.page.url
        no_script_problems([table])
    finally:
        close_all([table])


def test_the_pages_speak_the_browsers_language_and_remember_the_choice(server: Server, browser: Any) -> None:
    played_through_the_api(server, "spoken")
    table = Viewer(browser, f"{server.url}/table/spoken", phone=True, locale="fr-FR")
    try:
        page = table.page
        assert page.locator("html").get_attribute("lang") == "fr"
        assert page.locator("#board-title").inner_text() == "Plateau"
        assert "Partie terminée" in page.locator("#banner").inner_text()
        page.select_option("#lang", "en")
        assert page.locator("#board-title").inner_text() == "Board"
        assert "Game over" in page.locator("#banner").inner_text()
        page.reload()
        page.wait_for_selector("body[data-seq]", state="attached")
        assert page.locator("#board-title").inner_text() == "Board"
        no_script_problems([table])
    finally:
        close_all([table])


def test_hostile_names_are_shown_as_text_never_run(server: Server, browser: Any) -> None:
    zoe, ship = "<b>Zoé</b>", "<img src=x onerror=window.pwned=1>"
    seats = create_game(server, "hostile", ruleset="blockade", players=[zoe, "Bart"], board={"width": 8, "height": 8})
    placed = server.api("POST", "/api/games/hostile/place", token=seats.referee, body={"ship": ship, "square": "C2", "kind": "sloop", "owner": zoe})
    assert placed.status_code == 200, placed.text
    viewers = [
        Viewer(browser, f"{server.url}/table/hostile", phone=False),
        Viewer(browser, referee_url(server, seats), phone=False),
        Viewer(browser, player_url(server, seats, zoe), phone=True),
    ]
    games = browser.new_page()  # the list of games, at /
    try:
        games.goto(f"{server.url}/")
        games.locator('#games a[href="/table/hostile"]').wait_for()
        assert zoe in games.locator("#games").inner_text()  # whom the turn waits for, as text
        assert games.locator("main b, main img").count() == 0
        for viewer in viewers:
            page = viewer.page
            page.locator("#ships td", has_text=ship).first.wait_for()
            assert page.evaluate("() => window.pwned") is None
            assert page.locator("main img, main b").count() == 0  # no element made from a name
            assert zoe in page.locator("main").inner_text()
        assert viewers[2].page.locator("#player-name").inner_text() == zoe
        assert viewers[1].page.locator("#seats .seat[data-player] button").first.inner_text() == f"New link for {zoe}"
        no_script_problems(viewers)
    finally:
        games.close()
        close_all(viewers)


def test_the_fork_form_proposes_only_a_seq_with_nothing_secret_and_shows_a_refusal_beside_it(
    server: Server, browser: Any
) -> None:
    """A fork copies only what its referee may read: with turn 2's tokens given (secret), the form
    proposes the last seq before them, even scrubbed past them, says why, and a seq typed after
    them is refused under the form, naming the latest seq allowed; nothing is created."""
    seats = create_game(server, "secretive", ruleset="blockade", players=["Anne", "Bart"], board={"width": 8, "height": 8})
    for player, ship, square, facing in (("Anne", "Sloopy", "C2", "N"), ("Bart", "Frig", "F7", "S")):
        body = {"ship": ship, "square": square, "facing": facing, "kind": "sloop", "owner": player}
        assert server.api("POST", "/api/games/secretive/place", token=seats.players[player], body=body).status_code == 200
    for player, ship in (("Anne", "Sloopy"), ("Bart", "Frig")):
        body = {"ship": ship, "tokens": ["F", None, "L", None]}
        assert server.api("POST", "/api/games/secretive/tokens", token=seats.players[player], body=body).status_code == 200
    ended = server.api("POST", "/api/games/secretive/resolve", token=seats.referee, body={}).json()["seq"]
    body = {"ship": "Frig", "tokens": ["R", "R", "R", "L"]}
    secret = server.api("POST", "/api/games/secretive/tokens", token=seats.players["Bart"], body=body).json()["seq"]
    referee = Viewer(browser, f"{server.url}/referee/secretive#seq={secret}&token={seats.referee}", phone=True)
    try:
        page = referee.page
        page.wait_for_function("n => document.getElementById('fork-at').value === String(n)", arg=ended)
        assert f"Up to seq {ended} at the latest now" in page.locator("#fork-limit").inner_text()
        page.fill("#fork-name", "peek")
        page.fill("#fork-at", str(secret))
        page.click("#fork-submit")
        page.locator("#fork-error").wait_for(state="visible")
        said = page.locator("#fork-error").inner_text()
        assert "the tokens of turn 2 are still secret" in said
        assert f"the latest seq a fork may copy up to now is {ended}" in said
        assert page.locator("#fork-at").get_attribute("aria-invalid") == "true"
        assert not (server.games / "peek.jsonl").exists()
        no_script_problems([referee])
    finally:
        close_all([referee])


def test_the_referee_forks_a_what_if_from_the_page_and_opens_the_new_game(server: Server, browser: Any) -> None:
    from mortecouille.app.games import game_log
    from mortecouille.replays.reading.verify import verify_log

    seats, view = played_with_seats(server, "original")
    first = view["turns"][0]
    logged = [json.loads(line) for line in (server.games / "original.jsonl").read_bytes().splitlines()]
    inside_turn = next(line["seq"] for line in logged if line["type"] == "turn-started") + 1
    referee = Viewer(browser, f"{server.url}/referee/original#seq={first['last']}&token={seats.referee}", phone=False)
    opened: list[Any] = []
    try:
        page = referee.page
        # the page proposes the scrubber's position, a command boundary
        page.wait_for_function("n => document.getElementById('fork-at').value === String(n)", arg=first["last"])
        before = (server.games / "original.jsonl").read_bytes()
        # a seq inside a turn's resolution is refused, naming the field, and nothing is written
        page.fill("#fork-name", "what-if")
        page.fill("#fork-at", str(inside_turn))
        page.click("#fork-submit")
        page.wait_for_function("() => document.getElementById('errors').textContent")
        assert "at: " in page.locator("#errors").inner_text()
        assert page.locator("#fork-at").get_attribute("aria-invalid") == "true"
        assert not (server.games / "what-if.jsonl").exists()
        page.fill("#fork-at", str(first["last"]))
        page.select_option("#fork-dice", "table")
        page.click("#fork-submit")
        page.locator("#fork-result").wait_for(state="visible")
        assert page.locator("#errors").inner_text() == ""
        link = page.locator("#fork-referee-link")
        assert re.search(r"/referee/what-if#token=[\w-]+$", link.inner_text())
        assert link.get_attribute("href") == link.inner_text()
        assert (server.games / "original.jsonl").read_bytes() == before  # only read
        report = verify_log(game_log(server.games, "what-if"))
        assert report.ok, [f for f in report.findings if not f.ok]
        # the new game's referee page opens on request, as its referee
        with referee.context.expect_page() as new_referee:
            page.click("#fork-open")
        opened.append(new_referee.value)
        opened[-1].wait_for_selector("body[data-seq]", state="attached")
        assert opened[-1].locator("#game-name").inner_text() == "what-if"
        assert opened[-1].locator("#dice-field").is_visible()  # the table dice asked for
        # and its table page shows the game where it was forked
        with referee.context.expect_page() as table:
            page.click("#fork-table-link")
        opened.append(table.value)
        opened[-1].wait_for_function("n => Number(document.body.dataset.seq) === n", arg=first["last"])
        assert opened[-1].url.endswith("/table/what-if")
        no_script_problems([referee])
    finally:
        for extra in opened:
            extra.close()
        close_all([referee])

