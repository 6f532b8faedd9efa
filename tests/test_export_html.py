"""``export --html``: one self-contained page, checked in a real headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli_helpers import play_blockade_turn, run

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
)  # fmt: skip


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium, installed with apt-get when missing; skipped if that cannot be done."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    try:
        for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
            subprocess.run(
                command,
                check=True,
                capture_output=True,
                timeout=900,
                env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
            )
    except (OSError, subprocess.SubprocessError) as error:
        pytest.skip(f"Chromium is not installed and `apt-get install chromium` failed: {error}")
    found = shutil.which("chromium")
    if not found:
        pytest.skip("apt-get installed no `chromium` executable")
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


def test_the_page_is_self_contained(page: Path) -> None:
    html = page.read_text()
    assert "<script src" not in html and "<link" not in html and "@import" not in html
    assert "url(http" not in html and "@font-face" not in html
    # the only URL is the SVG namespace, which is a name, never fetched
    assert set(re.findall(r"https?://[^\s\"'<>]+", html)) == {"http://www.w3.org/2000/svg"}
    data = json.loads(re.search(r'id="game-data">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    assert [t["turn"] for t in data["turns"]] == [0, 1]
    assert data["turns"][1]["frames"][-1]["label"] == "turn 1: after"


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
