"""A fork copies only what the forking referee may read (docs/service.md, "Fork").

Three originals hold a marker string in every kind of secret still kept now: purchases of fleets
not all sealed (ship names, kinds, options, a withdrawn purchase, the money seals forfeit, a ship
placed before every seal as an older engine wrote it, a ruling's text on a ship still secretly
bought), the orders of a turn not resolved (one of them withdrawn), a blockade turn's tokens. A
fork is tried at every command boundary, from the CLI and through the service: every point up
to which something is still secret is refused alike (exit 2, 400 naming ``at``), saying which
secret and naming the latest seq allowed; every other fork is allowed, and no channel of it,
for any viewer, shows a marker: the views of the spectator, the referee and each seat, their
streams, ``log``, ``export --html``, and all of them again once the fork has ended."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from mortecouille.app.botgame import play_in_memory
from mortecouille.app.commands import SeedCommitment
from mortecouille.app.fork import fork_events, latest_fork_point
from mortecouille.app.games import game_log
from mortecouille.core.errors import BadInput
from mortecouille.events.game import GameEnded
from mortecouille.events.movement import ShipPlaced
from mortecouille.web.server import build_app
from tests import web_server
from tests.cli_helpers import ok, run, tree_digest
from tests.web_server import bearer

pytestmark = pytest.mark.slow


@dataclass
class Original:
    """A game whose secrets are kept now, the markers planted in them (each with the ways a
    channel may write it), the seq of its first secret and what its fork refusal must say."""

    name: str
    referee: str
    markers: dict[str, tuple[str, ...]]
    first_secret: int
    reason: str


def created(output: str) -> str:
    """The referee's token from ``new``'s seat links."""
    found = re.search(r"referee\s+\S+#token=([\w-]+)", output)
    assert found is not None, output
    return found.group(1)


def next_seq(games: Path, name: str) -> int:
    return len((games / f"{name}.jsonl").read_bytes().splitlines())


def buying(games: Path) -> Original:
    """Fleets bought, Bart's never sealed: every purchase, seal, early placement and ruling on a
    bought ship is secret for good (until every fleet is sealed, or the game ends)."""
    referee = created(ok(games, "new", "buying", "--players", "Anne,Bart,Cora", "--budget", "103579"))
    first = next_seq(games, "buying")
    ok(games, "buy", "buying", "Anne", "blue-big", "Qzlantern", "--option", "siren")
    ok(games, "equip", "buying", "Anne", "super-shot-fleet", "--fleet")
    ok(games, "buy", "buying", "Cora", "red-small", "Qzdecoy")
    ok(games, "unbuy", "buying", "Qzdecoy")
    ok(games, "buy", "buying", "Cora", "green-small", "Qzminnow")
    ok(games, "seal", "buying", "Anne", "--forfeit")  # forfeits 103,579 - 90,000
    ok(games, "seal", "buying", "Cora", "--forfeit")  # forfeits 103,579 - 10,000
    ok(games, "buy", "buying", "Bart", "yellow-small", "Qzkraken")
    # an older engine placed a bought ship before every fleet was sealed: sealed with the purchases
    early = ShipPlaced(ship="Qzlantern", at=(7, 8), facing="N", kind="blue-big", owner="Anne", rules=("F3", "B2"))
    game_log(games, "buying").append([early])
    ok(games, "ruling", "buying", "--rule", "F3", "--text", "Qzruling off Tortuga", "--adjust", "Qzlantern",
       "facing=SW")  # fmt: skip
    markers = {
        "ship names": ("Qzlantern", "Qzdecoy", "Qzminnow", "Qzkraken"),
        "kinds": ("blue-big", "yellow-small", "green-small"),
        "options": ("siren", "super-shot-fleet"),
        "forfeits": ("forfeited=13579", '"forfeited":13579', "forfeited=93579", '"forfeited":93579'),
        "ruling text": ("Qzruling", "Tortuga"),
    }
    reason = "purchases stay secret until every fleet is sealed (not sealed yet: Bart)"
    return Original("buying", referee, markers, first, reason)


def playing(games: Path) -> Original:
    """Fleets sealed and placed (public), turn 1 played; turn 2's orders given, one withdrawn."""
    referee = created(ok(games, "new", "playing", "--players", "Anne,Bart", "--budget", "100000"))
    ok(games, "buy", "playing", "Anne", "red-small", "Hope")
    ok(games, "seal", "playing", "Anne", "--forfeit")
    ok(games, "buy", "playing", "Bart", "yellow-big", "Kraken")
    ok(games, "seal", "playing", "Bart", "--forfeit")
    ok(games, "place", "playing", "Hope", "C3")
    ok(games, "place", "playing", "Kraken", "E6", "--facing", "S")
    ok(games, "order", "playing", "Hope", "advance")
    ok(games, "order", "playing", "Kraken", "idle")
    ok(games, "resolve", "playing")
    first = next_seq(games, "playing")
    ok(games, "order", "playing", "Kraken", "maneuver", "1/4", "right")
    ok(games, "order", "playing", "Hope", "advance")
    ok(games, "unorder", "playing", "Hope")
    markers = {"turn 2's orders": ("turn=1/4", '"turn":"1/4"', "1/4 right")}
    return Original("playing", referee, markers, first, "the orders of turn 2 are still secret")


def harbour(games: Path) -> Original:
    """A blockade game: turn 1 played, turn 2's tokens given."""
    referee = created(ok(games, "new", "harbour", "--ruleset", "blockade", "--players", "Anne,Bart", "--board", "8x8"))
    ok(games, "place", "harbour", "Sloopy", "C2", "--kind", "sloop", "--owner", "Anne")
    ok(games, "place", "harbour", "Frig", "F6", "--kind", "war-frigate", "--owner", "Bart", "--facing", "S")
    ok(games, "tokens", "harbour", "Sloopy", "F", "L")
    ok(games, "tokens", "harbour", "Frig", "F")
    ok(games, "resolve", "harbour")
    first = next_seq(games, "harbour")
    ok(games, "tokens", "harbour", "Frig", "R", "R", "R", "L")
    markers = {"turn 2's tokens": ("R,R,R,L", '"R","R","R","L"')}
    return Original("harbour", referee, markers, first, "the tokens of turn 2 are still secret")


def lines_of(games: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (games / f"{name}.jsonl").read_bytes().splitlines()]


def command_boundaries(games: Path, name: str) -> list[int]:
    """Every seq outside a turn's resolution (after its ``turn-started``, before its ``turn-ended``)."""
    found, inside = [], False
    for line in lines_of(games, name):
        inside = (inside or line["type"] == "turn-started") and line["type"] != "turn-ended"
        if not inside:
            found.append(line["seq"])
    return found


@pytest.fixture
def served(games: Path) -> Iterator[httpx.Client]:
    games.mkdir(parents=True, exist_ok=True)
    app = build_app(games, deadline_seconds=None, poll_seconds=0.05, heartbeat_seconds=0.05)
    with web_server.serving_in_a_thread(app) as http:
        yield http


def stream_text(http: httpx.Client, game: str, headers: dict[str, str]) -> str:
    """What a listener's stream sends of the whole log: every message up to the first heartbeat
    after the backlog (each ``revealed`` message follows its event at once)."""
    received: list[str] = []
    with http.stream("GET", f"/api/games/{game}/stream", headers=headers) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith(":"):
                break
            received.append(line)
    return "\n".join(received)


def channels(http: httpx.Client, games: Path, tmp: Path, game: str, seats: dict[str, dict[str, str]]) -> dict[str, str]:
    """Every channel of ``game`` for every viewer (``seats``: the viewers' headers)."""
    seen: dict[str, str] = {}
    for who, headers in seats.items():
        answer = http.get(f"/api/games/{game}/view", headers=headers)
        assert answer.status_code == 200, answer.text
        seen[f"view for {who}"] = answer.text
        seen[f"stream for {who}"] = stream_text(http, game, headers)
    seen["log"] = ok(games, "log", game)
    seen["log --json"] = ok(games, "log", game, "--json")
    page = tmp / f"{game}.html"
    ok(games, "export", game, "--html", str(page), "--force")
    seen["export --html"] = page.read_text()
    return seen


def assert_no_marker(seen: dict[str, str], original: Original, where: str) -> None:
    for channel, text in seen.items():
        for what, spellings in original.markers.items():
            for marker in spellings:
                assert marker not in text, f"{where}: {channel} shows {what} ({marker!r})"


def fork_every_boundary(http: httpx.Client, games: Path, tmp: Path, original: Original) -> tuple[int, int]:
    """Fork ``original`` at each command boundary from both shells; the number allowed and refused."""
    log_text = (games / f"{original.name}.jsonl").read_text()
    for what, spellings in original.markers.items():
        assert any(marker in log_text for marker in spellings), f"no {what} in {original.name}: the test plants it"
    boundaries = command_boundaries(games, original.name)
    latest = max(seq for seq in boundaries if seq < original.first_secret)
    referee = bearer(original.referee)
    allowed = refused = 0
    for at in boundaries:
        cli_name, api_name = f"c-{original.name}-{at}", f"h-{original.name}-{at}"
        before = tree_digest(games)
        cli = run(games, "fork", original.name, cli_name, "--at", str(at))
        api = http.post(f"/api/games/{original.name}/fork", json={"name": api_name, "at": at}, headers=referee)
        if at >= original.first_secret:
            refused += 1
            assert cli.exit_code == 2 and api.status_code == 400, (at, cli.output, api.text)
            error = api.json()["error"]
            assert error["field"] == "at" and cli.output.startswith("error: --at: ")
            said = cli.output.removeprefix("error: --at: ").strip()
            assert error["message"] == f"at: {said}"  # the one refusal, in both shells
            assert said.startswith(f"seq {at} cannot be forked now: {original.reason}"), said
            assert f"the latest seq a fork may copy up to now is {latest}," in said, said
            assert tree_digest(games) == before  # nothing created, the original untouched
            continue
        allowed += 1
        assert cli.exit_code == 0, (at, cli.output)
        assert api.status_code == 201, (at, api.text)
        made = api.json()
        seats = {"spectator": {}, "referee": bearer(made["referee"]["token"])}
        seats.update({player: bearer(seat["token"]) for player, seat in made["players"].items()})
        seen = {"fork's answer": api.text, "CLI fork's log": (games / f"{cli_name}.jsonl").read_text()}
        seen.update(channels(http, games, tmp, api_name, seats))
        assert_no_marker(seen, original, f"fork of {original.name} at {at}")
        first = lines_of(games, api_name)[0]
        assert "nonce" not in first  # nothing secret copied: no nonce on the creation
        ended = http.post(f"/api/games/{api_name}/end", json={"reason": "what-if over"}, headers=seats["referee"])
        assert ended.status_code == 200, ended.text
        seen = channels(http, games, tmp, api_name, seats)
        assert_no_marker(seen, original, f"fork of {original.name} at {at}, ended")
    return allowed, refused


@pytest.mark.parametrize("build", [buying, playing, harbour], ids=["purchases", "orders", "tokens"])
def test_a_fork_copies_nothing_secret_and_refuses_every_point_that_would(
    served: httpx.Client, games: Path, tmp_path: Path, build: Any
) -> None:
    original = build(games)
    before = (games / f"{original.name}.jsonl").read_bytes()
    allowed, refused = fork_every_boundary(served, games, tmp_path, original)
    assert allowed >= 1 and refused >= 1, (allowed, refused)
    assert (games / f"{original.name}.jsonl").read_bytes() == before  # a fork only reads


def test_what_the_table_knows_now_decides_a_fork_point(games: Path) -> None:
    """Purchases made before a fork point are copied once every fleet is sealed since, and
    everything once the game has ended, even a fleet never sealed (the game reveals it all)."""
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000")
    ok(games, "buy", "g", "Anne", "blue-big", "Qzlantern")
    refusal = run(games, "fork", "g", "early", "--at", "1").output
    assert "seq 1 may be forked once every fleet is sealed (or once the game has ended)" in refusal
    ok(games, "seal", "g", "Anne", "--forfeit")
    ok(games, "end", "g")
    ok(games, "fork", "g", "after", "--at", "2")
    assert "Qzlantern" in ok(games, "log", "after")  # public now: the original's table reads it


@pytest.mark.parametrize("cut", [0.3, 0.7, 1.0])
def test_the_latest_fork_point_offered_is_taken_and_no_later_one_is(cut: float) -> None:
    """``fork_at_most`` (the referee page's proposal) is a point the fork takes, and every seq after
    it is refused: in a bot game cut anywhere, and whole, ended by a victory."""
    played = play_in_memory("bots", "c", max_turns=40, fleets="random")  # seed "c": a victory
    events = [msgspec.structs.replace(e, seq=i) for i, e in enumerate(played)]
    if cut == 1.0:
        assert isinstance(events[-1], GameEnded) and events[-1].reason == "victory"
    events = events[: max(1, round(cut * len(events)))]
    latest = latest_fork_point(events)
    commitment = SeedCommitment("salt", "hmac")
    assert fork_events(events, latest, "what-if", "seeded", commitment)
    for at in range(latest + 1, len(events)):
        with pytest.raises(BadInput):
            fork_events(events, at, "what-if", "seeded", commitment)
