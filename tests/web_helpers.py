"""Helpers for the browser tests of the service's pages (tests/test_web_pages.py).

A real ``mortecouille serve`` runs as a subprocess on a free 127.0.0.1 port over a temporary games
directory; Chromium is Debian's (``/usr/bin/chromium``) driven by the ``playwright`` package through
``executable_path`` (playwright's own browser download is never used). ``Watch`` records what one
browser context received (every HTTP response body, every pushed message, the page's DOM), so a
test can search it for another player's secret.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.web_server import ports_from_environment

#: Debian's Chromium (``tools/system-packages.sh`` installs it as /usr/bin/chromium), found on PATH.
CHROMIUM: str | None = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: The ports this suite tries first: ``$MORTECOUILLE_TEST_PORTS`` (a range kept for this run on
#: a shared machine), else a range kept for it; then any free one.
PORTS = ports_from_environment() or range(8200, 8300)
PHONE = {"width": 390, "height": 844}
SCREEN = {"width": 1280, "height": 900}
START_TIMEOUT = 60.0


def free_port() -> int:
    """A port nothing listens on now: one of :data:`PORTS` if any is free, else any."""
    candidates = list(PORTS)
    random.shuffle(candidates)
    for port in [*candidates, 0]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(probe.getsockname()[1])
    raise RuntimeError("no free port on 127.0.0.1")


@dataclass
class Server:
    """``mortecouille serve`` on ``games``, as a subprocess; ``url`` once it answers."""

    games: Path
    logs: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        for _attempt in range(5):  # another process may take the port between the probe and the bind
            self.port = free_port()
            env = {**os.environ, "MORTECOUILLE_GAMES": str(self.games)}
            with (self.logs / "serve.out").open("ab") as out, (self.logs / "serve.err").open("ab") as err:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "mortecouille", "serve", "--host", "127.0.0.1", "--port", str(self.port)],
                    env=env,
                    cwd=self.logs,  # not the repository: what is installed is what runs
                    stdout=out,
                    stderr=err,
                )
            if self.wait_until_it_answers():
                return
            self.stop()
        raise RuntimeError(f"mortecouille serve did not start:\n{(self.logs / 'serve.err').read_text()[-3000:]}")

    def wait_until_it_answers(self) -> bool:
        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/api/games", timeout=2.0).status_code == 200:
                    return True
            time.sleep(0.2)
        return False

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def api(self, method: str, path: str, token: str | None = None, body: Any = None) -> httpx.Response:
        """One API request, as a client other than the pages would make it."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.request(method, f"{self.url}{path}", headers=headers, json=body, timeout=30.0)


@contextlib.contextmanager
def running_server(games: Path, logs: Path) -> Iterator[Server]:
    server = Server(games=games, logs=logs)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Seats:
    """A new game's links: the referee's and each player's token."""

    game: str
    referee: str
    players: dict[str, str]


def token_of(link: str) -> str:
    fragment = link.split("#", 1)[1]
    for part in fragment.split("&"):
        if part.startswith("token="):
            return part.removeprefix("token=")
    raise AssertionError(f"no token in {link}")


def create_game(server: Server, name: str, **body: Any) -> Seats:
    """Create a game through the API and read its seat tokens from the links it answers."""
    answer = server.api("POST", "/api/games", body={"name": name, **body})
    assert answer.status_code == 201, answer.text
    created = answer.json()
    links = created.get("links", created)
    referee = links.get("referee")
    players = links.get("players") or links.get("seats") or {}
    return Seats(
        game=name,
        referee=token_of(referee if isinstance(referee, str) else referee["link"]),
        players={
            player: token_of(link if isinstance(link, str) else link["link"]) for player, link in players.items()
        },
    )


def create_game_with_the_cli(server: Server, words: list[str]) -> Seats:
    """Run ``mortecouille new ...`` (as the README writes it) beside the running server, with
    ``--url`` naming the server, and read the links it prints: the referee's and each seat's."""
    assert words[:1] == ["new"], words
    done = subprocess.run(
        [sys.executable, "-m", "mortecouille", *words, "--url", server.url],
        env={**os.environ, "MORTECOUILLE_GAMES": str(server.games)},
        cwd=server.logs,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    links = dict(re.findall(r"^\s+(\S+)\s+(http\S+#token=\S+)$", done.stdout, re.M))
    referee = links.pop("referee")
    return Seats(game=words[1], referee=token_of(referee), players={p: token_of(link) for p, link in links.items()})


@dataclass
class Watch:
    """Everything one browser context received: response bodies and the pages' pushed messages."""

    responses: list[Any] = field(default_factory=list)

    def attach(self, context: Any) -> None:
        context.on("response", self.record)

    def record(self, response: Any) -> None:
        self.responses.append(response)

    def bodies(self) -> list[tuple[str, str]]:
        """Every response (its URL and body) but the streams' (read through the pages' reader)."""
        found = []
        for response in self.responses:
            if response.url.endswith("/stream"):
                continue
            with contextlib.suppress(Exception):  # a body the browser already let go (a redirect)
                found.append((response.url, response.body().decode("utf-8", "replace")))
        return found


def pushed_messages(page: Any) -> list[str]:
    """The data of every message the page's stream reader received."""
    return list(page.evaluate("() => window.MC.live.messages.slice()"))


def received_seqs(page: Any) -> list[int]:
    """The seqs the page's stream reader took, in the order it took them."""
    return list(page.evaluate("() => window.MC.live.received.slice()"))


def everything_seen(page: Any, watch: Watch) -> list[tuple[str, str]]:
    """What a viewer could read, each with where it came from: response bodies, pushed
    messages, and the page's DOM."""
    return [
        *watch.bodies(),
        *((f"pushed message {index}", data) for index, data in enumerate(pushed_messages(page))),
        ("the DOM", page.content()),
    ]


#: The browser tests' mark: outside CI a machine without Chromium skips them; in CI (``.ci/run``
#: sets CI) they run and fail, naming what is missing.
NEEDS_CHROMIUM = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="Chromium is missing: run tools/system-packages.sh (it installs Debian's package chromium)",
)


@contextlib.contextmanager
def launched_chromium() -> Iterator[Any]:
    """Debian's Chromium driven by playwright (never playwright's own download), closed after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()
