"""A real ``mortecouille serve`` for tests: a subprocess on 127.0.0.1 over a games directory.

``ServerProcess`` starts the server (``python -m mortecouille --games-dir DIR serve --host
127.0.0.1 --port P``) on a free port, waits until ``GET /api/games`` answers, and stops it
(SIGTERM) or kills it (SIGKILL, as a crash would). ``launch`` starts it without waiting (to kill
it in the middle of its start), ``answering`` then waits for it. It can be started again on the same games
directory and, when nobody took it meanwhile, the same port: clients read ``server.url`` for each
attempt, so a restart on another port is followed too. The server's output goes to a file beside
the games directory (not a pipe: a pipe nobody reads would block a chatty server), shown when the
server does not come up.

Tests use it as a context manager (``with ServerProcess(games) as server: ...``); the ports it may
use come from ``ports`` or ``$MORTECOUILLE_TEST_PORTS`` (``8300-8399``), else the system picks one.

Also here: reading what ``POST /api/games`` answers (``SeatTokens``) and the ``Authorization``
header of a token, which every test driving the API needs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import uvicorn

HOST = "127.0.0.1"
#: How long a server may take to answer after its start before the test gives up: a guard against
#: a server that never comes up, not a speed requirement (the machine may be loaded).
START_TIMEOUT_SECONDS = 120.0
#: Other tests on this machine may hold a port between our checks: how many ports to try.
START_ATTEMPTS = 5


def ports_from_environment() -> list[int] | None:
    """The ports ``$MORTECOUILLE_TEST_PORTS`` allows (``8300-8399`` or ``8300,8301``), else None."""
    text = os.environ.get("MORTECOUILLE_TEST_PORTS", "").strip()
    if not text:
        return None
    ports: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        ports.extend(range(int(low), int(high or low) + 1))
    return ports


def port_is_free(port: int) -> bool:
    """Whether a server could listen on ``port`` of 127.0.0.1 now (as uvicorn binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
        return True


def free_port(ports: Sequence[int] | None = None, avoid: int | None = None) -> int:
    """A port nobody listens on: the first free one of ``ports`` (from a random start, so tests
    running side by side spread out), else one the system picks."""
    if not ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((HOST, 0))
            port: int = probe.getsockname()[1]
            return port
    start = int.from_bytes(os.urandom(2), "big") % len(ports)
    for port in [*ports[start:], *ports[:start]]:
        if port != avoid and port_is_free(port):
            return port
    raise RuntimeError(f"no free port among {ports[0]}..{ports[-1]}")


class ServerProcess:
    """``mortecouille serve`` as a subprocess over ``games`` (see the module's docstring)."""

    def __init__(
        self,
        games: Path,
        *,
        ports: Sequence[int] | None = None,
        output: Path | None = None,
        environment: Mapping[str, str] | None = None,
    ) -> None:
        self.games = games
        self.ports = list(ports) if ports is not None else ports_from_environment()
        self.output = output or games.parent / f"serve-{games.name}.out"
        self.environment = {**os.environ, **(environment or {})}
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        #: how many times the server process was launched
        self.starts = 0
        #: how long each start took until the server answered, in seconds (for reports)
        self.start_seconds: list[float] = []

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "mortecouille",
            "--games-dir",
            str(self.games),
            "serve",
            "--host",
            HOST,
            "--port",
            str(self.port),
        ]

    def start(self) -> ServerProcess:
        """Start the server and wait until it answers; on the port it had if that is still free."""
        if self.running:
            raise RuntimeError("the server is already running")
        self.launch()
        return self.answering()

    def answering(self) -> ServerProcess:
        """Wait until the launched server answers; launch it again on another port if its port
        was taken meanwhile."""
        began = time.monotonic()
        for _ in range(START_ATTEMPTS):
            if self.wait_until_answering():
                self.start_seconds.append(time.monotonic() - began)
                return self
            self.launch()
        raise RuntimeError(f"the server did not start in {START_ATTEMPTS} attempts:\n{self.output_text()}")

    def launch(self) -> None:
        """Start the server process and return at once (it answers a little later, see
        :meth:`wait_until_answering`): to kill a server in the middle of its start."""
        if not self.port or not port_is_free(self.port):
            self.port = free_port(self.ports, avoid=self.port or None)
        self.games.mkdir(parents=True, exist_ok=True)
        with self.output.open("ab") as sink:
            sink.write(f"\n--- start on port {self.port}\n".encode())
            sink.flush()
            self.process = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=self.environment,
            )
        self.starts += 1

    def wait_until_answering(self) -> bool:
        """Wait until the launched server answers ``GET /api/games``; False if it exited first
        because its port was taken (start it again on another), an error if it failed otherwise."""
        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        with httpx.Client(timeout=5.0) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    text = self.output_text()
                    if "address already in use" in text.lower().rsplit("--- start", 1)[-1]:
                        return False
                    raise RuntimeError(f"the server exited with {self.process.returncode}:\n{text}")
                try:
                    if client.get(f"{self.url}/api/games").status_code == 200:
                        return True
                except httpx.TransportError:
                    pass
                time.sleep(0.02)
        self.kill()
        raise RuntimeError(
            f"the server did not answer within {START_TIMEOUT_SECONDS:g} s:\n{self.output_text()}"
        )

    def kill(self) -> None:
        """SIGKILL the server, as a crash or a power cut would stop it, and reap it."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait()

    def stop(self) -> None:
        """Stop the server as an operator would (SIGTERM); SIGKILL it if it does not stop."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()

    def restart(self) -> ServerProcess:
        self.stop()
        return self.start()

    def output_text(self) -> str:
        """What the server printed (every start, appended), for a failure's message."""
        with contextlib.suppress(FileNotFoundError):
            return self.output.read_text(errors="replace")[-6000:]
        return ""

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


@contextlib.contextmanager
def running_server(games: Path, **options: Any) -> Iterator[ServerProcess]:
    """A started ``ServerProcess`` over ``games``, stopped (or killed) when the block ends."""
    server = ServerProcess(games, **options)
    with server:
        yield server


# --- what the API answers ------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatTokens:
    """The tokens ``POST /api/games`` issued: the referee's and one per player (seat)."""

    game: str
    referee: str
    seats: dict[str, str]


def bearer(token: str) -> dict[str, str]:
    """The ``Authorization`` header that carries ``token``."""
    return {"Authorization": f"Bearer {token}"}


def seat_tokens(game: str, created: Mapping[str, Any]) -> SeatTokens:
    """The tokens in ``POST /api/games``'s answer: ``referee`` and ``players`` (each player's seat),
    each ``{"token": T, "link": L}``."""
    return SeatTokens(
        game=game,
        referee=_token(created["referee"]),
        seats={player: _token(seat) for player, seat in created["players"].items()},
    )


def _token(entry: Any) -> str:
    """A token given alone or with its link (``{"token": T, "link": L}``)."""
    return str(entry["token"] if isinstance(entry, Mapping) else entry)


def create_game(client: httpx.Client, name: str, **fields: Any) -> SeatTokens:
    """``POST /api/games`` (``fields``: ruleset, players, budget, board, ...); its tokens.
    Fails the test with the server's answer unless the game was created (201)."""
    answer = client.post("/api/games", json={"name": name, **fields})
    assert answer.status_code == 201, f"creating {name}: {answer.status_code} {answer.text}"
    return seat_tokens(name, answer.json())


@contextlib.contextmanager
def serving_in_a_thread(app: Any, *, send_buffer: int | None = None) -> Iterator[httpx.Client]:
    """``app`` (an ASGI app, e.g. ``build_app(...)``) served by uvicorn in a thread on a free
    loopback port, for tests that need a real socket (a stream), and a client for it.
    ``send_buffer``: the kernel's send buffer of each connection, in bytes (small: a client that
    does not read soon stops the server's writes; the kernel otherwise takes megabytes)."""
    port = free_port(ports_from_environment())
    running = uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level="warning"))
    sockets = None
    if send_buffer is not None:
        listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)  # accepted ones inherit it
        listening.bind((HOST, port))
        sockets = [listening]
    thread = threading.Thread(target=running.run, kwargs={"sockets": sockets}, daemon=True)
    thread.start()
    try:
        while not running.started:
            if not thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        with httpx.Client(base_url=f"http://{HOST}:{running.config.port}", timeout=30) as http:
            yield http
    finally:
        running.should_exit = True
        thread.join(timeout=30)
