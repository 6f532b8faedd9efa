"""An SSE listener for tests that run real servers: one game's stream on one server, read in a
thread, each ``event`` message's id and data kept in the order received."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx

from tests.web_server import bearer

#: How long a listener may take to receive a given event: a guard against a hang, not a speed
#: requirement (the machine may be loaded).
PATIENCE_SECONDS = 120.0


class Listener:
    """One SSE stream of one game on one process, read in a thread: each ``event`` message's id
    and data, in the order received. A stream that ends or fails is noted (``broken``), never
    reopened: in this test, a lost connection is a failure."""

    def __init__(self, url: str, game: str, who: str, token: str | None) -> None:
        self.url = url
        self.game = game
        self.who = who
        self.headers = bearer(token) if token else {}
        self.messages: list[tuple[int, dict[str, Any]]] = []
        self.revealed: list[int] = []
        self.broken: str | None = None
        self.connected = threading.Event()
        self.progress = threading.Condition()
        self.thread = threading.Thread(target=self._read, daemon=True, name=f"listen {game} {who}")

    def start(self) -> None:
        self.thread.start()

    def _read(self) -> None:
        kind, seq = "message", -1
        try:
            with (
                httpx.Client(base_url=self.url, timeout=httpx.Timeout(30.0, read=None)) as client,
                client.stream("GET", f"/api/games/{self.game}/stream", headers=self.headers) as response,
            ):
                assert response.status_code == 200, response.status_code
                self.connected.set()
                for line in response.iter_lines():
                    if line.startswith("event:"):
                        kind = line[6:].strip()
                    elif line.startswith("id:"):
                        seq = int(line[3:].strip())
                    elif line.startswith("data:"):
                        with self.progress:
                            if kind == "event":
                                self.messages.append((seq, json.loads(line[5:])))
                            elif kind == "revealed":
                                self.revealed.append(seq)
                            self.progress.notify_all()
                    elif not line:
                        kind = "message"
        except Exception as error:  # noqa: BLE001 - reported by the test, which waits on this listener
            with self.progress:
                self.broken = f"{type(error).__name__}: {error}"
                self.progress.notify_all()
        finally:
            self.connected.set()

    def wait_for(self, last_seq: int) -> None:
        """Wait until the event ``last_seq`` came (or the stream broke, or the patience ran out)."""
        with self.progress:
            self.progress.wait_for(
                lambda: self.broken is not None or (self.messages and self.messages[-1][0] >= last_seq),
                PATIENCE_SECONDS,
            )

    def __repr__(self) -> str:
        return f"<{self.who} on {self.url} listening to {self.game}>"
