"""Phones as witnesses (docs/service.md, "Phones as witnesses"): what the service sends of the
chain, and ``verify --witness``.

A page keeps the heads of the log it saw and checks each new batch extends them; for that the
service sends each event's ``prev``, ``hash`` and, for a readable one, its exact ``line``, each
only when it says nothing a guess of a secret could be checked against: a line with a nonce, or
a chain of lines the viewer may read. A log written before nonces hides, from a viewer who may not
read a secret line of it, that line's hash and every one after it until it is revealed. The
witness file a page exports is checked by ``verify GAME --witness FILE``: each head at its seq.
(The browser test is tests/test_web_witness_pages.py; non-interference with the chain sent,
tests/test_view.py.)
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from mortecouille.app.commands import run_command
from mortecouille.app.games import game_log
from mortecouille.app.seats import REFEREE, SPECTATOR, Viewer
from mortecouille.app.view import chain_links, disclosure, visible
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.base import Event
from mortecouille.events.codec import spliced_line_hash
from mortecouille.events.orders import Advance, Idle
from mortecouille.web import access
from mortecouille.web.log_lines import LogLines
from mortecouille.web.server import build_app
from tests.cli_helpers import ok, run, tree_digest
from tests.forgery import forge_with_turn_hashes, log_bodies, write_rechained
from tests.test_secret_nonce import ready_duel
from tests.test_web_api import FakeClock, Game, mortecouille_ready

pytestmark = pytest.mark.service

ANNE, BART = Viewer.of_player("Anne"), Viewer.of_player("Bart")
EVERYONE = (SPECTATOR, REFEREE, ANNE, BART)


def log_lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def ordered(games: Path, nonce: bool) -> tuple[list[Event], list[bytes]]:
    """The duel of tests/test_secret_nonce.py, Anne's and Bart's orders given for turn 1 (with
    nonces, or as logs were written before them), not resolved: the log and its lines."""
    ready_duel(games)
    log_ = game_log(games, "g")
    run_command(log_, lambda s: GiveOrder(ship="Hope", actions=(Advance(),)), nonce=nonce)
    run_command(log_, lambda s: GiveOrder(ship="Kraken", actions=(Idle(),)), nonce=nonce)
    return log_.read(), log_lines_of(games / "g.jsonl")


# --- what of the chain is sent ---------------------------------------------------------------


def test_with_a_nonce_on_every_secret_line_every_viewer_gets_every_hash_and_the_lines_it_may_read(
    games: Path,
) -> None:
    events, lines = ordered(games, nonce=True)
    known = disclosure(events)
    for viewer in EVERYONE:
        links = chain_links(events, lines, viewer, known)
        for event, line, link in zip(events, lines, links, strict=True):
            assert (link.prev, link.hash) == (event.prev, event.hash), (viewer, event.seq)
            if visible(event, viewer, known):
                assert link.line is not None and link.line.encode() == line  # the line as the log holds it
                assert spliced_line_hash(line, event.hash) == event.hash
            else:
                assert link.line is None, (viewer, event.seq)


def test_a_secret_line_without_a_nonce_hides_its_hash_and_every_later_one_from_those_who_may_not_read_it(
    games: Path,
) -> None:
    events, lines = ordered(games, nonce=False)
    known = disclosure(events)
    annes = next(e.seq for e in events if isinstance(e, type(events[-1])) and getattr(e, "ship", "") == "Hope")
    for viewer in (SPECTATOR, REFEREE, BART):
        links = chain_links(events, lines, viewer, known)
        for event, link in zip(events, links, strict=True):
            if event.seq < annes:
                assert link.hash == event.hash and link.prev == event.prev
            else:  # Anne's order and everything after it: a function of what she ordered
                assert link.hash is None and link.line is None, (viewer, event.seq)
                assert link.prev is None or event.seq == annes, (viewer, event.seq)
        sent = msgspec.json.encode(access.chain(events, viewer, -1, lines))
        assert all(e.hash.encode() not in sent for e in events[annes:]), viewer
    # Anne reads her own line: her chain stops at Bart's
    anne = chain_links(events, lines, ANNE, known)
    assert anne[annes].hash == events[annes].hash and anne[annes].line is not None
    assert anne[-1].hash is None and anne[-1].prev == events[annes].hash


def test_once_the_turn_is_resolved_the_hidden_lines_hashes_are_sent_again(games: Path) -> None:
    ordered(games, nonce=False)
    ok(games, "resolve", "g")
    log_ = game_log(games, "g")
    events, lines = log_.read(), log_lines_of(games / "g.jsonl")
    links = chain_links(events, lines, SPECTATOR, disclosure(events))
    assert [link.hash for link in links] == [event.hash for event in events]
    assert all(link.line is not None for link in links)


def test_the_event_view_sends_no_chain_without_the_lines(games: Path) -> None:
    events, _ = ordered(games, nonce=True)
    sent = msgspec.json.encode(access.game_view(events, SPECTATOR, None))
    assert b'"prev":' not in sent and b'"hash":' not in sent and b'"line":' not in sent


# --- the service -----------------------------------------------------------------------------


@pytest.fixture
def client(games: Path) -> Iterator[TestClient[Litestar]]:
    with TestClient(build_app(games, clock=FakeClock(), deadline_seconds=None)) as test_client:
        yield test_client


def ordered_through_the_api(client: TestClient[Litestar]) -> Game:
    game = mortecouille_ready(client)
    for ship, who in (("Hope", "Anne"), ("Kraken", "Bart")):
        answer = client.post("/api/games/g/orders", json={"ship": ship, "actions": [{"kind": "advance"}]}, headers=game.players[who])
        assert answer.status_code == 200, answer.text
    return game


def test_the_chain_endpoint_lists_the_events_after_a_seq_with_their_links(
    client: TestClient[Litestar], games: Path
) -> None:
    game = ordered_through_the_api(client)
    lines = log_lines_of(games / "g.jsonl")
    bodies = [json.loads(line) for line in lines]
    for headers in ({}, game.players["Anne"], game.referee):
        answer = client.get("/api/games/g/chain?since=3", headers=headers).json()
        assert answer["game"] == "g" and answer["next_seq"] == len(lines)
        assert [e["seq"] for e in answer["events"]] == list(range(4, len(lines)))
        for event in answer["events"]:
            body = bodies[event["seq"]]
            assert (event["prev"], event["hash"]) == (body["prev"], body["hash"])
            assert ("line" in event) == (not event["sealed"])
            if "line" in event:
                assert event["line"].encode() == lines[event["seq"]]
    # Anne reads her own order's line; the table reads none of the orders
    mine = client.get("/api/games/g/chain?since=-1", headers=game.players["Anne"]).json()["events"]
    spectator = client.get("/api/games/g/chain?since=-1").json()["events"]
    orders = [e["seq"] for e in spectator if e["type"] == "order-given"]
    assert all("line" not in spectator[seq] for seq in orders)
    assert ["line" in mine[seq] for seq in orders] == [True, False]


def test_a_seq_past_the_end_lists_nothing_and_a_negative_one_is_refused(client: TestClient[Litestar]) -> None:
    ordered_through_the_api(client)
    past = client.get("/api/games/g/chain?since=500").json()
    assert past["events"] == [] and past["next_seq"] < 500
    refused = client.get("/api/games/g/chain?since=-2")
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "since"


def test_a_long_chain_comes_a_page_at_a_time(client: TestClient[Litestar], monkeypatch: pytest.MonkeyPatch) -> None:
    ordered_through_the_api(client)
    monkeypatch.setattr(access, "CHAIN_PAGE", 3)
    first = client.get("/api/games/g/chain?since=-1").json()["events"]
    second = client.get(f"/api/games/g/chain?since={first[-1]['seq']}").json()["events"]
    assert [e["seq"] for e in first] == [0, 1, 2] and [e["seq"] for e in second] == [3, 4, 5]
    assert second[0]["prev"] == first[-1]["hash"]


def test_the_view_and_the_stream_carry_the_same_links(client: TestClient[Litestar], games: Path) -> None:
    game = ordered_through_the_api(client)
    chain = {e["seq"]: e for e in client.get("/api/games/g/chain?since=-1", headers=game.players["Bart"]).json()["events"]}
    view = client.get("/api/games/g/view", headers=game.players["Bart"]).json()
    assert view["events"] and all(e == chain[e["seq"]] for e in view["events"])
    shared = access.SharedView(BART, lambda event: LogLines().line(game_log(games, "g"), event))
    shared.start(game_log(games, "g").read())
    streamed = [msgspec.json.decode(message.split(b"data: ", 1)[1]) for message in shared.backlog(-1)]
    assert {e["seq"]: e for e in streamed} == chain


def test_a_stream_sends_a_revealed_lines_hash_and_line_once_the_log_reveals_it(games: Path) -> None:
    events, lines = ordered(games, nonce=False)
    by_seq = dict(enumerate(lines))
    shared = access.SharedView(SPECTATOR, lambda event: by_seq.get(event.seq))
    annes = next(e.seq for e in events if getattr(e, "ship", "") == "Hope" and e.seq > 5)
    shared.start(events)
    sent = [msgspec.json.decode(m.split(b"data: ", 1)[1]) for m in shared.backlog(-1)]
    assert "hash" not in sent[annes] and "prev" in sent[annes]
    ok(games, "resolve", "g")
    after = game_log(games, "g").read()
    by_seq.update(enumerate(log_lines_of(games / "g.jsonl")))
    # each new event's piece: its message, then a revealed message when it reveals something
    messages = [m for _, piece in shared.more(after[len(events) :]) for m in piece.split(b"\n\n") if m]
    revealed = [msgspec.json.decode(m.split(b"data: ", 1)[1]) for m in messages if b"event: revealed" in m]
    shown = {e["seq"]: e for message in revealed for e in message["events"]}
    assert shown[annes]["hash"] == events[annes].hash and shown[annes]["line"].encode() == lines[annes]


def test_the_lines_kept_are_read_again_when_the_log_is_rewritten(games: Path) -> None:
    events, _ = ordered(games, nonce=True)
    log_ = game_log(games, "g")
    kept = LogLines()
    before = log_lines_of(games / "g.jsonl")
    assert kept.lines(log_, events) == before
    bodies = log_bodies(games / "g.jsonl")
    bodies[3]["price"] += 1
    write_rechained(games / "g.jsonl", bodies)  # every line from seq 3 on is another
    rewritten = log_.read()
    after = log_lines_of(games / "g.jsonl")
    assert after[3:] != before[3:]
    assert kept.lines(log_, rewritten) == after


# --- verify --witness --------------------------------------------------------------------------


def witness_file(path: Path, game: str, heads: list[tuple[int, str]], **more: Any) -> Path:
    document = {"version": 1, "game": game, "heads": [{"seq": s, "hash": h} for s, h in heads], "mismatches": []}
    document.update(more)
    path.write_text(json.dumps(document))
    return path


@pytest.fixture
def played(games: Path) -> Path:
    """The duel, one turn resolved and a ruling after it, as the CLI plays it."""
    ordered(games, nonce=True)
    ok(games, "resolve", "g")
    ok(games, "ruling", "g", "--rule", "A1", "--text", "agreed")
    ok(games, "order", "g", "Hope", "advance")
    ok(games, "order", "g", "Kraken", "idle")
    ok(games, "resolve", "g")
    return games / "g.jsonl"


def heads_of(path: Path, seqs: list[int]) -> list[tuple[int, str]]:
    bodies = log_bodies(path)
    return [(seq, bodies[seq]["hash"]) for seq in seqs]


def test_verify_accepts_a_witness_file_whose_every_head_the_log_holds(played: Path, games: Path) -> None:
    last = len(log_bodies(played)) - 1
    saw = witness_file(games.parent / "g-witness.json", "g", heads_of(played, [3, 10, last]))
    result = run(games, "verify", "g", "--witness", str(saw), "--json")
    assert result.exit_code == 0, result.output
    [finding] = [f for f in json.loads(result.output)["findings"] if f["check"] == "witness"]
    assert finding["ok"] and f"3 head(s) witnessed, seq 3 to {last}" in finding["detail"]
    assert str(saw) in finding["detail"]


def test_a_rewritten_log_fails_the_first_head_at_or_after_the_line_changed(played: Path, games: Path) -> None:
    bodies = log_bodies(played)
    ruling = next(b["seq"] for b in bodies if b["type"] == "ruling")
    saw = witness_file(games.parent / "w.json", "g", heads_of(played, [ruling - 1, ruling + 1, len(bodies) - 1]))

    def edit(lines: list[dict[str, Any]]) -> None:
        lines[ruling]["text"] = "refused"

    forge_with_turn_hashes(played, edit)
    assert run(games, "verify", "g").exit_code == 0  # what the chain alone cannot see
    result = run(games, "verify", "g", "--witness", str(saw))
    assert result.exit_code == 4, result.output
    assert f"FAIL witness  {saw}: at seq {ruling + 1} the page saw" in result.output
    assert "2 of 3 head(s) witnessed" in result.output and f"FAILED at seq {ruling + 1}" in result.output


def test_a_log_cut_short_before_a_witnessed_head_fails_naming_it(played: Path, games: Path) -> None:
    bodies = log_bodies(played)
    last = len(bodies) - 1
    saw = witness_file(games.parent / "w.json", "g", heads_of(played, [5, last]))
    write_rechained(played, bodies[:-3])
    result = run(games, "verify", "g", "--witness", str(saw))
    assert result.exit_code == 4 and f"at seq {last} the page saw" in result.output and "cut short" in result.output


def test_every_witness_file_given_is_checked(played: Path, games: Path) -> None:
    good = witness_file(games.parent / "a.json", "g", heads_of(played, [4]))
    bad = witness_file(games.parent / "b.json", "g", [(4, "0" * 64)])
    result = run(games, "verify", "g", "--witness", str(bad), "--witness", str(good))
    assert result.exit_code == 4
    assert f"FAIL witness  {bad}:" in result.output and f"ok   witness  {good}:" in result.output


def test_the_mismatches_a_page_noted_are_said_but_only_heads_decide(played: Path, games: Path) -> None:
    noted = [{"seq": 4, "kind": "rewritten", "seen": "a" * 64, "served": "b" * 64, "at": "2026-12-03T20:00:00Z"}]
    saw = witness_file(games.parent / "w.json", "g", heads_of(played, [4]), mismatches=noted)
    result = run(games, "verify", "g", "--witness", str(saw))
    assert result.exit_code == 0 and "the page noted 1 mismatch(es) as it was served (at seq 4)" in result.output


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("not json", "not a witness file"),
        ("[]", "not a witness file"),
        ('{"version": 1, "game": "g", "heads": []}', "holds no head"),
        ('{"version": 2, "game": "g", "heads": [{"seq": 1, "hash": "' + "a" * 64 + '"}]}', "version 2"),
        ('{"version": 1, "game": "g", "heads": [{"seq": -1, "hash": "' + "a" * 64 + '"}]}', "heads[0]"),
        ('{"version": 1, "game": "g", "heads": [{"seq": 1, "hash": "short"}]}', "heads[0]"),
        ('{"version": 1, "game": "g", "heads": [{"seq": 1, "hash": "' + "a" * 64 + '"}], "x": 1}', "not a witness file"),
        ('{"version": 1, "game": "other", "heads": [{"seq": 1, "hash": "' + "a" * 64 + '"}]}', "of game 'other'"),
    ],
    ids=["text", "list", "no-head", "version", "seq", "hash", "unknown-field", "other-game"],
)
def test_a_file_that_is_no_witness_file_of_the_game_is_refused_naming_the_option(
    played: Path, games: Path, content: str, said: str
) -> None:
    path = games.parent / "w.json"
    path.write_text(content)
    before = tree_digest(games)
    result = run(games, "verify", "g", "--witness", str(path))
    assert result.exit_code == 2 and "--witness" in result.output and said in result.output, result.output
    assert "verified" not in result.output and tree_digest(games) == before


def test_a_missing_witness_file_is_refused(played: Path, games: Path) -> None:
    result = run(games, "verify", "g", "--witness", str(games.parent / "none.json"))
    assert result.exit_code == 2 and "--witness: cannot read" in result.output


def test_the_golden_logs_verify_against_their_own_heads(tmp_path: Path) -> None:
    golden = Path(__file__).parent / "golden"
    games = tmp_path / "games"
    games.mkdir()
    for name in ("blockade", "mortecouille"):
        shutil.copy(golden / f"{name}.jsonl", games / f"{name}.jsonl")
        shutil.copy(golden / f"{name}.head", games / f"{name}.head")
        bodies = log_bodies(games / f"{name}.jsonl")
        assert bodies[0]["game"] == name
        saw = witness_file(tmp_path / f"{name}.json", name, [(len(bodies) - 1, bodies[-1]["hash"])])
        assert run(games, "verify", name, "--witness", str(saw)).exit_code == 0
