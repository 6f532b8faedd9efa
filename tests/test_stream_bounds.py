"""Streams with bounds (docs/service.md, "Live push"): the streams of a game share
its work, are capped, and never take the service down.

Promises, each through a real server on loopback (a stream needs a socket):

* the streams of one game share one read of its log and one rendering of each event per viewer:
  a new stream costs neither a read nor a rendering of the log, whatever its length;
* what a game's streams hold is released when they close: no watcher, no shared rendering, no
  count left behind;
* past a cap (streams per game, per client address, in all) a stream is refused, 503 with the
  service's JSON error and ``Retry-After``, while every other request and submit still answers;
  a slot freed is taken again;
* a stream whose reader falls too far behind is closed; reconnecting with ``Last-Event-ID`` gets
  exactly the rest, nothing lost, nothing twice;
* a failure inside one stream ends that stream only.
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage.file_log import GameLog
from mortecouille.web import access
from mortecouille.web.server import build_app
from tests import web_server
from tests.test_web_api import FakeClock, StreamReader, create, placed_blockade

pytestmark = pytest.mark.slow

#: A guard against a hang, not a speed requirement (the machine may be loaded).
PATIENCE_SECONDS = 60.0


def eventually(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


def event_ids(reader: StreamReader) -> list[int]:
    return [m.id for m in reader.events() if m.id is not None]


def ended(reader: StreamReader) -> bool:
    """Whether the stream is over (the server ended it; its reading thread returned)."""
    return not reader._thread.is_alive()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def serving(games: Path, clock: FakeClock, send_buffer: int | None = None, **options: Any) -> Any:
    app = build_app(games, clock=clock, deadline_seconds=None, poll_seconds=0.05, heartbeat_seconds=0.5, **options)
    return web_server.serving_in_a_thread(app, send_buffer=send_buffer), app


# ------------------------------------------------------------------------------- shared work


def test_the_streams_of_a_game_share_one_read_of_its_log_and_one_rendering_per_viewer(
    games: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    served, _app = serving(games, clock)
    with served as http:
        game = placed_blockade(http)  # type: ignore[arg-type]
        reads: list[str] = []
        renders: Counter[tuple[str | None, int]] = Counter()
        real_read, real_view = GameLog.read, access.event_view

        def read(log_: GameLog) -> Any:
            reads.append(log_.name)
            return real_read(log_)

        def rendered(event: Any, viewer: access.Viewer, known: Any, *link: Any) -> Any:
            renders[(viewer.player or viewer.role, event.seq)] += 1
            return real_view(event, viewer, known, *link)

        monkeypatch.setattr(GameLog, "read", read)
        monkeypatch.setattr(access, "event_view", rendered)
        readers = [StreamReader(http, {}) for _ in range(6)]
        readers += [StreamReader(http, game.players["Anne"]) for _ in range(3)]
        for reader in readers:
            reader.until(lambda ms: len([m for m in ms if m.event == "event"]) == 3)
        assert reads == ["g"], "one read of the log for every stream of the game"
        assert set(renders.values()) == {1}, renders  # each event rendered once per viewer
        assert {who for who, _ in renders} == {"spectator", "Anne"}
        renders.clear()
        answer = http.post("/api/games/g/tokens", json={"ship": "B1", "tokens": ["F"]}, headers=game.players["Bart"])
        assert answer.status_code == 200, answer.text
        for reader in readers:
            reader.until(lambda ms: any(m.id == 3 for m in ms))
            reader.close()
        assert renders[("spectator", 3)] == 1 and renders[("Anne", 3)] == 1, renders


def test_what_the_streams_of_a_game_hold_is_released_when_they_close(games: Path, clock: FakeClock) -> None:
    served, app = serving(games, clock)
    with served as http:
        game = placed_blockade(http)  # type: ignore[arg-type]
        readers = [StreamReader(http, {}), StreamReader(http, game.players["Anne"]), StreamReader(http, {})]
        for reader in readers:
            reader.until(lambda ms: len([m for m in ms if m.event == "event"]) == 3)
        hub = app.state.service.hub
        assert hub.watchers
        for reader in readers:
            reader.close()

        def released() -> bool:
            gc.collect()
            return not hub.watchers and not getattr(hub, "channels", {}) and not _alive_stream_objects()

        eventually(released, "every watcher, channel, shared rendering and stream released")
        assert hub.open_streams() == 0
        # and the game streams again as before
        again = StreamReader(http, {})
        again.until(lambda ms: len([m for m in ms if m.event == "event"]) == 3)
        again.close()


def _alive_stream_objects() -> list[object]:
    """Whatever the streams made and left alive (renderings, places, watchers, batches...): every
    object of the live push's and the redaction's modules but the hub, its caps and its turns."""
    modules = (
        "mortecouille.web.live",
        "mortecouille.web.live_channel",
        "mortecouille.web.live_streams",
        "mortecouille.web.access",
    )
    return [
        o for o in gc.get_objects()
        if getattr(type(o), "__module__", "") in modules
        and type(o).__name__ not in ("LiveHub", "StreamLimits", "SendGate")
    ]  # fmt: skip


# ------------------------------------------------------------------------------- caps


def open_stream(url: str, game: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """Open a stream and close it at once: its status, headers and (for a refusal) body."""
    with httpx.Client(base_url=url, timeout=30) as client, client.stream(
        "GET", f"/api/games/{game}/stream", headers=headers or {}
    ) as answer:
        body = answer.read().decode() if answer.status_code != 200 else ""
        return answer.status_code, dict(answer.headers), body


def test_streams_past_their_caps_are_refused_503_and_every_other_request_still_answers(
    games: Path, clock: FakeClock
) -> None:
    from mortecouille.web.live_streams import StreamLimits

    served, app = serving(games, clock, streams=StreamLimits(per_game=2, per_address=3, total=100))
    with served as http:
        game = placed_blockade(http)  # type: ignore[arg-type]
        create(http, "h")  # type: ignore[arg-type]
        url = str(http.base_url).rstrip("/")
        held = [StreamReader(http, {}), StreamReader(http, game.players["Anne"])]
        for reader in held:
            reader.until(lambda ms: len(ms) >= 3)
        answers: list[int] = []

        def keep_playing() -> None:
            for index in range(6):
                tokens = http.post(
                    "/api/games/g/tokens",
                    json={"ship": "B1", "tokens": ["F"] * (index % 4 + 1), "replace": index > 0},
                    headers=game.players["Bart"],
                )
                answers.append(tokens.status_code)
                answers.append(http.get("/api/games/g/view").status_code)
                answers.append(http.get("/api/games").status_code)

        player = threading.Thread(target=keep_playing)
        player.start()
        with ThreadPoolExecutor(max_workers=12) as pool:
            burst = list(pool.map(lambda _: open_stream(url, "g"), range(24)))
        player.join(PATIENCE_SECONDS)
        assert answers and set(answers) == {200}, answers
        assert {status for status, _, _ in burst} == {503}
        for _status, headers, body in burst:
            assert int(headers["retry-after"]) > 0 and headers["content-type"].startswith("application/json")
            error = json_of(body)["error"]
            assert error["status"] == 503 and "g" in error["message"] and "stream" in error["message"]
        # another game: the address's third slot, then the address is full
        other = StreamReader(http, {}, game="h")
        other.until(lambda ms: len(ms) >= 1)
        status, _headers, body = open_stream(url, "h")
        assert status == 503 and "address" in json_of(body)["error"]["message"]
        other.close()
        held[0].close()
        eventually(lambda: app.state.service.hub.open_streams() == 1, "the closed stream's slot freed")
        again = StreamReader(http, {})
        again.until(lambda ms: len(ms) >= 3)  # the freed slot is taken again
        again.close()
        held[1].close()
        assert http.get("/api/games/g/view").status_code == 200


def json_of(body: str) -> Any:
    return json.loads(body)


# ------------------------------------------------------------------------------- slow readers


class StalledReader:
    """A stream read through a raw socket with a tiny receive buffer, and only when asked to: while
    it is not read, the server soon can send it nothing more (with a small send buffer)."""

    def __init__(self, url: str, game: str, last_event_id: int | None = None) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
        self.sock.connect((host, int(port)))
        resume = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id is not None else ""
        self.sock.sendall(f"GET /api/games/{game}/stream HTTP/1.1\r\nHost: {host}\r\n{resume}\r\n".encode())
        self.data = b""
        self.finished = False

    def read(self, until: Callable[[bytes], bool]) -> list[int]:
        """Read until ``until(everything read)`` or the server ends the stream (``finished``), for
        half of :data:`PATIENCE_SECONDS` at most (its heartbeats keep coming); every id read."""
        self.sock.settimeout(1.0)
        deadline = time.monotonic() + PATIENCE_SECONDS / 2
        while not self.finished and time.monotonic() < deadline and not until(self.data):
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            self.data += chunk
            # the chunked body's end: the server ended the stream
            self.finished = not chunk or self.data.endswith(b"\r\n0\r\n\r\n")
        return [int(line[4:]) for line in self.data.split(b"\n") if line.startswith(b"id: ")]

    def close(self) -> None:
        self.sock.close()


def test_a_stream_that_falls_too_far_behind_is_closed_and_resumes_with_nothing_lost_or_twice(
    games: Path, clock: FakeClock
) -> None:
    from mortecouille.web.live_streams import StreamLimits

    served, _app = serving(games, clock, send_buffer=4096, streams=StreamLimits(lag=8))
    with served as http:
        create(http)  # type: ignore[arg-type]
        url = str(http.base_url).rstrip("/")
        stalled = StalledReader(url, "g")
        log_ = GameLog(games / "g.jsonl")
        stalled.read(lambda data: b"id: 0" in data)  # open; not read from now on
        text = "a long ruling that fills the stream's buffers " * 40
        for index in range(120):  # many appends, which the watcher hands on in many batches
            log_.append([RulingRecorded(turn=1, rule="T2", text=f"{index} {text}")])
            if index % 10 == 9:
                time.sleep(0.1)
        last = len(log_.read()) - 1
        ids = stalled.read(lambda data: False)
        stalled.close()
        assert stalled.finished, "the stream that fell behind was closed"
        assert ids and ids[-1] < last and ids == list(range(0, ids[-1] + 1))
        resumed = StalledReader(url, "g", last_event_id=ids[-1])
        rest = resumed.read(lambda data: f"id: {last}\n".encode() in data)
        resumed.close()
        assert ids + rest == list(range(0, last + 1))


# ------------------------------------------------------------------------------- failures


def test_a_failure_inside_one_stream_ends_that_stream_only(
    games: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    served, _app = serving(games, clock)
    with served as http:
        game = placed_blockade(http)  # type: ignore[arg-type]
        real_view = access.event_view

        def failing(event: Any, viewer: access.Viewer, known: Any, *link: Any) -> Any:
            if viewer.player == "Bart" and event.seq >= 3:
                raise MemoryError("a failure inside Bart's stream")
            return real_view(event, viewer, known, *link)

        spectator = StreamReader(http, {})
        bart = StreamReader(http, game.players["Bart"])
        for reader in (spectator, bart):
            reader.until(lambda ms: len(ms) >= 3)
        monkeypatch.setattr(access, "event_view", failing)
        answer = http.post("/api/games/g/tokens", json={"ship": "A1", "tokens": ["F"]}, headers=game.players["Anne"])
        assert answer.status_code == 200, answer.text
        spectator.until(lambda ms: any(m.id == 3 for m in ms))
        eventually(lambda: ended(bart), "Bart's failing stream ended")
        assert 3 not in event_ids(bart)
        monkeypatch.setattr(access, "event_view", real_view)
        assert http.get("/api/games/g/view").status_code == 200
        again = http.post("/api/games/g/tokens", json={"ship": "B1", "tokens": ["F"]}, headers=game.players["Bart"])
        assert again.status_code == 200, again.text
        spectator.until(lambda ms: any(m.id == 4 for m in ms))
        bart_again = StreamReader(http, {**game.players["Bart"], "Last-Event-ID": "2"})
        bart_again.until(lambda ms: any(m.id == 4 for m in ms))
        assert event_ids(bart_again) == [3, 4]
        for reader in (spectator, bart_again):
            reader.close()


# ------------------------------------------------------------------------------- backlogs in turn


def test_backlogs_are_sent_a_few_at_a_time_and_a_turn_not_given_back_is_taken_back() -> None:
    from mortecouille.web.live_streams import SendGate

    async def main() -> list[str]:
        gate = SendGate(width=2, patience=0.2)
        said: list[str] = []
        first, second = await gate.take(), await gate.take()
        waiting = asyncio.create_task(gate.take())
        await asyncio.sleep(0.05)
        said.append("third waits" if not waiting.done() else "third taken at once")
        gate.give(first)
        third = await asyncio.wait_for(waiting, PATIENCE_SECONDS)
        said.append("third takes the turn given back")
        gate.give(first)  # given back twice: counted once
        assert gate.free == 0
        fourth = await asyncio.wait_for(gate.take(), PATIENCE_SECONDS)  # second and third never given back
        said.append("fourth takes a turn the clock took back")
        for turn in (second, third, fourth):
            gate.give(turn)
        assert gate.free == 2
        return said

    assert asyncio.run(main()) == [
        "third waits", "third takes the turn given back", "fourth takes a turn the clock took back"
    ]


def test_a_client_that_never_reads_its_backlog_holds_up_no_other_stream_for_long(
    games: Path, clock: FakeClock
) -> None:
    from mortecouille.web.live_streams import SendGate

    served, app = serving(games, clock, send_buffer=4096)
    with served as http:
        create(http)  # type: ignore[arg-type]
        log_ = GameLog(games / "g.jsonl")
        text = "a long ruling that fills the stream's buffers " * 40
        log_.append([RulingRecorded(turn=1, rule="T2", text=f"{index} {text}") for index in range(100)])
        app.state.service.hub.gate = SendGate(width=1, patience=0.5)
        stalled = StalledReader(str(http.base_url).rstrip("/"), "g")
        stalled.read(lambda data: b"id: 0" in data)  # it has the one turn, and reads no more
        other = StreamReader(http, {})
        other.until(lambda ms: any(m.id == 100 for m in ms))  # sent its backlog all the same
        other.close()
        stalled.close()

