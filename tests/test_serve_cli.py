"""``mortecouille serve``: the web part loads only for it, it warns off loopback, and a
real server process plays with the CLI on the same games, over HTTP."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from mortecouille.cli.serve_command import base_url, is_loopback
from tests import web_server
from tests.cli_helpers import run

pytestmark = pytest.mark.slow

PYTHON = sys.executable


def test_other_commands_do_not_load_the_web_framework() -> None:
    script = (
        "import sys; from click.testing import CliRunner; from mortecouille.cli.main import cli; "
        "result = CliRunner().invoke(cli, ['--help']); assert result.exit_code == 0, result.output; "
        "assert 'serve' in result.output; "
        "print(sorted(m for m in ('litestar', 'uvicorn', 'mortecouille.web.server') if m in sys.modules))"
    )
    done = subprocess.run([PYTHON, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_loopback_hosts_are_told_from_the_others() -> None:
    assert all(is_loopback(host) for host in ("127.0.0.1", "127.1.2.3", "::1", "localhost"))
    assert not any(is_loopback(host) for host in ("0.0.0.0", "192.168.1.20", "::", "example.org"))
    assert base_url("0.0.0.0", 8080) == "http://127.0.0.1:8080"
    assert base_url("::1", 8000) == "http://[::1]:8000"


def test_serve_warns_that_seat_links_are_secrets_off_loopback(
    games: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[uvicorn.Config] = []

    def serve_nothing(server: uvicorn.Server, sockets: list[socket.socket] | None = None) -> None:
        served.append(server.config)
        for sock in sockets or []:
            sock.close()

    monkeypatch.setattr(uvicorn.Server, "run", serve_nothing)
    assert run(games, "new", "harbour", "--players", "Anne,Bart", "--ruleset", "blockade").exit_code == 0
    port = web_server.free_port()
    result = run(games, "serve", "--host", "0.0.0.0", "--port", str(port))
    assert result.exit_code == 0, result.output
    assert "warning: listening on 0.0.0.0" in result.output and "bearer secrets" in result.output
    assert f"http://127.0.0.1:{port}/table/harbour" in result.output
    assert "--reissue" in result.output
    assert served and served[0].access_log is False
    quiet = run(games, "serve", "--port", str(port))
    assert "warning" not in quiet.output


def test_serve_refuses_a_port_in_use_before_printing_any_link(games: Path) -> None:
    assert run(games, "new", "harbour", "--players", "Anne,Bart", "--ruleset", "blockade").exit_code == 0
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run(games, "serve", "--port", str(port))
    assert result.exit_code == 2, result.output
    assert f"--port: {port} on 127.0.0.1: address already in use" in result.output
    assert "serving" not in result.output and "/table/" not in result.output


def test_serve_refuses_an_address_this_machine_cannot_listen_on_naming_host(games: Path) -> None:
    for host in ("999.1.1.1", "192.0.2.1"):  # not an address at all; TEST-NET-1, not this machine's
        result = run(games, "serve", "--host", host, "--port", "0")
        assert result.exit_code == 2, result.output
        assert f"--host: cannot listen on {host!r}" in result.output and "serving" not in result.output


class LoggingServer(web_server.ServerProcess):
    """``serve --access-log`` as a subprocess."""

    def command(self) -> list[str]:
        return [*super().command(), "--access-log"]


def test_serve_access_log_writes_a_line_per_request_without_query_string_header_or_token(games: Path) -> None:
    token_in_query = "q-secret-in-the-query"
    with LoggingServer(games) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        created = http.post("/api/games", json={"name": "g", "ruleset": "blockade", "players": ["Anne", "Bart"]})
        token = created.json()["referee"]["token"]
        headers = {"Authorization": f"Bearer {token}", "X-Secret": "h-secret-in-a-header"}
        assert http.get(f"/api/games/g/view?seq=0&token={token_in_query}#frag", headers=headers).status_code == 200
        assert http.get("/static/nothing%0Ahere.js").status_code == 404
        assert http.post("/api/games/g/lock", headers={"Authorization": "Bearer wrong"}).status_code == 401
        with http.stream("GET", "/api/games/g/stream", headers=headers) as stream:
            next(stream.iter_lines())  # a stream's line is written when it closes
        for _attempt in range(600):  # the lines reach the file as they are written; a loaded machine, later
            written = server.output_text()
            if '"GET /api/games/g/stream" 200' in written:
                break
            time.sleep(0.05)
    lines = [line for line in written.splitlines() if ' ms' in line and '"' in line]
    expected = [
        r'"POST /api/games" 201 \d+\.\d ms$',
        r'"GET /api/games/g/view" 200 \d+\.\d ms$',
        r'"GET /static/nothing%0Ahere\.js" 404 \d+\.\d ms$',
        r'"POST /api/games/g/lock" 401 \d+\.\d ms$',
        r'"GET /api/games/g/stream" 200 \d+\.\d ms$',
    ]
    for pattern in expected:
        assert any(re.search(r"127\.0\.0\.1:\d+ " + pattern, line) for line in lines), (pattern, written)
    for secret in (token_in_query, token, "h-secret-in-a-header", "seq=", "frag", "Bearer", "wrong"):
        assert secret not in written, secret


# ----------------------------------------------------------------------------- a real server process


def free_port() -> int:
    """A port nobody listens on (``$MORTECOUILLE_TEST_PORTS`` if set, else the system's pick)."""
    return web_server.free_port(web_server.ports_from_environment())


@pytest.fixture
def served(games: Path) -> Iterator[tuple[httpx.Client, subprocess.Popen[str]]]:
    games.mkdir(parents=True, exist_ok=True)
    port = free_port()
    process = subprocess.Popen(
        [PYTHON, "-m", "mortecouille", "--games-dir", str(games), "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
    try:
        for _ in range(600):  # the process starts in a few seconds; a loaded machine, longer
            try:
                http.get("/api/games")
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stdout.read() if process.stdout else ""
                time.sleep(0.1)
        yield http, process
    finally:
        http.close()
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_a_real_server_plays_alongside_the_cli_over_http(
    games: Path, served: tuple[httpx.Client, subprocess.Popen[str]]
) -> None:
    http, process = served
    created = http.post("/api/games", json={"name": "g", "ruleset": "blockade", "players": ["Anne", "Bart"]})
    assert created.status_code == 201, created.text
    seats = created.json()
    anne = {"Authorization": f"Bearer {seats['players']['Anne']['token']}"}
    assert (
        http.post(
            "/api/games/g/place", json={"ship": "A1", "square": "B2", "kind": "sloop"}, headers=anne
        ).status_code
        == 200
    )
    # the CLI appends on the same game while the server runs (same lock)
    assert (
        run(games, "place", "g", "B1", "H8", "--kind", "sloop", "--owner", "Bart", "--facing", "S").exit_code
        == 0
    )
    seen: list[tuple[int, str]] = []
    with http.stream("GET", "/api/games/g/stream", headers={"Last-Event-ID": "0"}) as stream:
        event_id: int | None = None
        for line in stream.iter_lines():
            if line.startswith("id: "):
                event_id = int(line.removeprefix("id: "))
            elif line.startswith("data: ") and event_id is not None:
                seen.append((event_id, json.loads(line.removeprefix("data: "))["type"]))
                if event_id == 2:
                    break
    assert seen == [(1, "ship-placed"), (2, "ship-placed")]
    view = http.get("/api/games/g/view").json()
    assert [ship["id"] for ship in view["ships"]] == ["A1", "B1"]
    assert run(games, "verify", "g").exit_code == 0
    assert process.poll() is None


class CappedServer(web_server.ServerProcess):
    """``serve --max-streams-per-game 1``."""

    def command(self) -> list[str]:
        return [*super().command(), "--max-streams-per-game", "1"]


def test_serve_takes_its_caps_on_streams_from_its_options(games: Path) -> None:
    with CappedServer(games) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        created = http.post("/api/games", json={"name": "g", "ruleset": "blockade", "players": ["Anne", "Bart"]})
        assert created.status_code == 201, created.text
        with http.stream("GET", "/api/games/g/stream") as first:
            assert first.status_code == 200
            refused = http.get("/api/games/g/stream")
            assert refused.status_code == 503 and int(refused.headers["retry-after"]) > 0
            assert "limit per game" in refused.json()["error"]["message"]
        assert http.get("/api/games/g/view").status_code == 200
