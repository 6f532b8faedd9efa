"""Receipts: every accepted submission gives its submitter a receipt, and
``verify --receipts`` names every way a log can betray one.

A receipt commits, with the submitter's salt, to the submission's log lines minus their envelope,
and holds the log's head hash after the append. The tamper matrix changes each field of a
receipt, then edits, drops, reorders and cuts the log as a careful forger would (the chain
re-hashed and the head anchor rewritten, so the chain check alone passes).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mortecouille.app.commands import Idempotency, Outcome, run_command
from mortecouille.app.games import game_log, load
from mortecouille.app.idempotency import IdempotencyIndex, key_digest
from mortecouille.app.receipts import append_receipt, new_receipt_salt, receipt_for
from mortecouille.core.errors import BadInput
from mortecouille.core.state import GameState
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.orders import Advance
from mortecouille.replays.reading.receipts import Receipt, log_lines, parse_receipts, verify_receipts
from tests.cli_helpers import ok, run, set_up_harbour, tree_digest
from tests.forgery import log_bodies, write_rechained

pytestmark = pytest.mark.slow

#: Anne's and Bart's submissions, each keeping its receipt in its player's file: two turns.
SETUP: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Anne", ("buy", "g", "Anne", "red-small", "Hope")),
    ("Anne", ("buy", "g", "Anne", "blue-big", "Black Pearl")),
    ("Anne", ("seal", "g", "Anne", "--forfeit")),
    ("Bart", ("buy", "g", "Bart", "yellow-big", "Kraken")),
    ("Bart", ("seal", "g", "Bart", "--forfeit")),
    ("Anne", ("place", "g", "Hope", "C3", "--facing", "N")),
    ("Anne", ("place", "g", "Black Pearl", "E3", "--facing", "E")),
    ("Bart", ("place", "g", "Kraken", "E7", "--facing", "S")),
)
TURN: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Anne", ("order", "g", "Hope", "advance")),
    ("Bart", ("order", "g", "Kraken", "idle")),
    ("Anne", ("order", "g", "Black Pearl", "idle")),
)


def receipts_file(games: Path, player: str) -> Path:
    return games.parent / f"{player.lower()}.json"


def play(games: Path, turns: int = 2) -> Path:
    """Game g played from the command line for ``turns`` turns, each player's receipts in their
    file; returns the log's path."""
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10")
    for player, words in SETUP:
        ok(games, *words, "--receipts", str(receipts_file(games, player)))
    for _ in range(turns):
        for player, words in TURN:
            ok(games, *words, "--receipts", str(receipts_file(games, player)))
        ok(games, "resolve", "g")
    return games / "g.jsonl"


def receipts_of(games: Path, player: str) -> list[dict[str, Any]]:
    document = json.loads(receipts_file(games, player).read_text())
    entries: list[dict[str, Any]] = document["receipts"]
    return entries


def receipt_findings(games: Path, file: Path) -> tuple[int, list[dict[str, Any]]]:
    """``verify g --receipts FILE --json``: its exit code and its receipt findings."""
    result = run(games, "verify", "g", "--receipts", str(file), "--json")
    report = json.loads(result.output)
    return result.exit_code, [f for f in report["findings"] if f["check"] == "receipt"]


def problem(finding: dict[str, Any]) -> str | None:
    """The problem a receipt finding names (None when the receipt holds): ``FILE: receipt N:
    PROBLEM: ...``."""
    detail: str = finding["detail"]
    return None if finding["ok"] else detail.split(": ", 3)[2]


@pytest.fixture
def played(games: Path) -> Path:
    return play(games)


# --- what a receipt is ------------------------------------------------------------------------


def test_each_submission_prints_a_receipt_whose_commitment_the_log_alone_reproduces(games: Path) -> None:
    """The commitment is recomputed with json and hashlib only, from the log line: the line
    without seq, prev and hash, in a list, as canonical JSON, after the salt and a newline."""
    play(games, turns=0)
    output = ok(games, "order", "g", "Hope", "advance")
    printed = [line for line in output.splitlines() if line.startswith("receipt: ")]
    assert len(printed) == 1
    receipt = json.loads(printed[0].removeprefix("receipt: "))
    line = log_bodies(games / "g.jsonl")[-1]
    assert (receipt["seq"], receipt["last"], receipt["head"]) == (line["seq"], line["seq"], line["hash"])
    assert (receipt["game"], receipt["kind"], receipt["subject"]) == ("g", "orders", "Hope")
    submission = [{k: v for k, v in line.items() if k not in ("seq", "prev", "hash")}]
    canonical = json.dumps(submission, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    expected = hashlib.sha256(f"{receipt['salt']}\n{canonical}".encode()).hexdigest()
    assert receipt["commitment"] == expected
    assert len(receipt["salt"]) == 32 and receipt["version"] == 1


@pytest.mark.parametrize(
    ("words", "kind", "subject"),
    [
        (("buy", "g", "Anne", "red-small", "Hope"), "purchase", "Hope"),
        (("equip", "g", "Anne", "fireship-fleet", "--fleet"), "purchase", "Anne"),
        (("unbuy", "g", "Hope"), "purchase-withdrawn", "Hope"),
        (("seal", "g", "Anne", "--forfeit"), "seal", "Anne"),
    ],
)
def test_purchases_and_seals_are_receipted_with_their_kind_and_subject(
    games: Path, words: tuple[str, ...], kind: str, subject: str
) -> None:
    ok(games, "new", "g", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10")
    if words[0] == "unbuy":
        ok(games, "buy", "g", "Anne", "red-small", "Hope")
    output = ok(games, *words)
    receipt = json.loads(output.splitlines()[-1].removeprefix("receipt: "))
    assert (receipt["kind"], receipt["subject"]) == (kind, subject)


def test_withdrawn_orders_and_blockade_tokens_are_receipted_too(games: Path) -> None:
    play(games, turns=0)
    ok(games, "order", "g", "Hope", "advance")
    withdrawn = ok(games, "unorder", "g", "Hope").splitlines()[-1]
    assert json.loads(withdrawn.removeprefix("receipt: "))["kind"] == "orders-withdrawn"
    set_up_harbour(games, "b")
    tokens = ok(games, "tokens", "b", "Sloopy", "F", "F", "L", "-").splitlines()[-1]
    assert json.loads(tokens.removeprefix("receipt: "))["kind"] == "tokens"


def test_the_app_gives_the_receipt_the_service_will_return_for_a_client_salt(games: Path) -> None:
    play(games, turns=0)
    log_ = game_log(games, "g")
    events, state = load(log_)
    salt = "ab" * 16
    # the CLI's placement carries a nonce on its line, which the decoded event does not hold: the
    # service's Outcome (run_command's) carries it beside the events
    nonce = json.loads(log_.read_bytes().splitlines()[-1])["nonce"]
    receipt = receipt_for(Outcome.with_nonces(events[-1:], state, [nonce]), salt)
    assert receipt.salt == salt and receipt.kind == "placement" and receipt.head == events[-1].hash
    [check] = verify_receipts(log_lines(log_.read_bytes()), [receipt])
    assert check.ok, check
    with pytest.raises(BadInput, match="salt"):
        receipt_for(Outcome(events[-1:], state), "not hex")
    with pytest.raises(BadInput, match="salt"):
        receipt_for(Outcome(events[-1:], state), "ab" * 4)  # 32 bits: guessable
    with pytest.raises(ValueError, match="not a player's submission"):
        receipt_for(Outcome(events[:1], state), salt)  # game-created is the referee's
    assert len(new_receipt_salt()) == 32


def test_honest_receipts_of_both_players_verify(played: Path, games: Path) -> None:
    for player in ("Anne", "Bart"):
        code, findings = receipt_findings(games, receipts_file(games, player))
        assert code == 0 and findings and all(f["ok"] for f in findings), findings
    assert len(receipts_of(games, "Anne")) == 5 + 2 * 2 and len(receipts_of(games, "Bart")) == 3 + 2
    bart = receipts_file(games, "Bart")
    text = ok(games, "verify", "g", "--receipts", str(bart))
    assert f"ok   receipt  {bart}: receipt 1: purchase for Kraken at seq" in text and text.endswith("g: verified\n")


def test_every_receipts_file_given_is_checked_and_each_finding_names_its_file(played: Path, games: Path) -> None:
    """``--receipts`` is repeatable: Anne's file, whose first receipt was altered, fails even when
    Bart's intact one is given after it; each finding says which file it is about."""
    anne, bart = receipts_file(games, "Anne"), receipts_file(games, "Bart")
    document = json.loads(anne.read_text())
    document["receipts"][0]["subject"] = "Kraken"
    anne.write_text(json.dumps(document))
    result = run(games, "verify", "g", "--receipts", str(anne), "--receipts", str(bart), "--json")
    assert result.exit_code == 4, result.output
    findings = [f for f in json.loads(result.output)["findings"] if f["check"] == "receipt"]
    assert len(findings) == len(receipts_of(games, "Anne")) + len(receipts_of(games, "Bart"))
    failed = [f for f in findings if not f["ok"]]
    assert len(failed) == 1 and failed[0]["detail"].startswith(f"{anne}: receipt 1: altered-receipt")
    assert sum(f["detail"].startswith(f"{bart}: receipt ") for f in findings) == len(receipts_of(games, "Bart"))
    # the order does not matter, and an empty file among them is still refused
    assert run(games, "verify", "g", "--receipts", str(bart), "--receipts", str(anne)).exit_code == 4
    empty = games.parent / "empty.json"
    empty.write_text("[]")
    refused = run(games, "verify", "g", "--receipts", str(bart), "--receipts", str(empty))
    assert refused.exit_code == 2 and f"{empty} holds no receipt" in refused.output


def test_a_receipts_file_may_be_a_plain_list_and_receipt_json_round_trips(played: Path, games: Path) -> None:
    listed = games.parent / "list.json"
    listed.write_text(json.dumps(receipts_of(games, "Anne")))
    assert receipt_findings(games, listed)[0] == 0
    [entry] = parse_receipts(json.dumps([receipts_of(games, "Anne")[0]]).encode())
    assert isinstance(entry, Receipt) and json.loads(entry.to_json()) == receipts_of(games, "Anne")[0]


# --- the tamper matrix: the receipt's fields ----------------------------------------------------

HEX = "0123456789abcdef"


def flip(text: str) -> str:
    """``text`` with its first hex digit changed."""
    return HEX[(HEX.index(text[0]) + 1) % 16] + text[1:]


#: (what is done to the last order receipt, the problem named, a word the detail holds)
FIELD_CHANGES: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    ("version", lambda r: r.update(version=2), "malformed", "`version`"),
    ("game", lambda r: r.update(game="other"), "other-game", "'other'"),
    ("seq", lambda r: r.update(seq=r["seq"] - 1), "altered-receipt", "head"),
    ("seq and last", lambda r: r.update(seq=r["seq"] - 1, last=r["last"] - 1), "altered-receipt", "`seq`"),
    ("last", lambda r: r.update(last=r["last"] + 1), "altered-receipt", "`last`"),
    ("last before seq", lambda r: r.update(last=r["seq"] - 1), "malformed", "`last`"),
    ("kind", lambda r: r.update(kind="tokens"), "altered-receipt", "`kind`"),
    ("unknown kind", lambda r: r.update(kind="bribe"), "malformed", "`kind`"),
    ("subject", lambda r: r.update(subject="Kraken"), "altered-receipt", "`subject`"),
    ("commitment", lambda r: r.update(commitment=flip(r["commitment"])), "altered-receipt", "commitment"),
    ("salt", lambda r: r.update(salt=flip(r["salt"])), "altered-receipt", "salt"),
    ("salt not hex", lambda r: r.update(salt="secret"), "malformed", "`salt`"),
    ("head", lambda r: r.update(head=flip(r["head"])), "rewritten", "head"),
    ("head not a hash", lambda r: r.update(head="abc"), "malformed", "`head`"),
    ("salt missing", lambda r: r.pop("salt"), "malformed", "field `salt`"),
    ("seq not a number", lambda r: r.update(seq="12"), "malformed", "field `seq`"),
    ("a field no receipt has", lambda r: r.update(note="x"), "malformed", "field `note`"),
]


@pytest.mark.parametrize(("field", "change", "named", "word"), FIELD_CHANGES, ids=[c[0] for c in FIELD_CHANGES])
def test_each_receipt_field_changed_is_named(
    played: Path, games: Path, field: str, change: Callable[[dict[str, Any]], None], named: str, word: str
) -> None:
    receipts = receipts_of(games, "Anne")
    change(receipts[-1])
    altered = games.parent / "altered.json"
    altered.write_text(json.dumps({"receipts": receipts}))
    before = tree_digest(games)
    code, findings = receipt_findings(games, altered)
    assert code == 4
    assert [problem(f) for f in findings] == [None] * (len(receipts) - 1) + [named], findings
    assert word in findings[-1]["detail"], findings[-1]
    assert tree_digest(games) == before  # verify reads only


# --- the tamper matrix: the log ---------------------------------------------------------------


def seq_of(games: Path, player: str, kind: str, subject: str, occurrence: int = 0) -> int:
    """The seq of a player's receipted submission (the ``occurrence``-th of that kind and subject)."""
    found = [r["seq"] for r in receipts_of(games, player) if (r["kind"], r["subject"]) == (kind, subject)]
    return int(found[occurrence])


def problems_of(games: Path, player: str) -> dict[int, str | None]:
    """Each of ``player``'s receipts (by its seq) and the problem ``verify`` names, exit 4 asserted."""
    code, findings = receipt_findings(games, receipts_file(games, player))
    assert code == 4
    receipts = receipts_of(games, player)
    assert len(findings) == len(receipts)
    return {int(r["seq"]): problem(f) for r, f in zip(receipts, findings, strict=True)}


def test_an_order_edited_and_rechained_is_named_edited_and_what_follows_rewritten(
    played: Path, games: Path
) -> None:
    hope = seq_of(games, "Anne", "orders", "Hope", occurrence=1)
    bodies = log_bodies(played)
    bodies[hope]["actions"] = [{"order": "idle"}]
    write_rechained(played, bodies)
    problems = problems_of(games, "Anne")
    assert problems[hope] == "edited"
    assert all(p is None for seq, p in problems.items() if seq < hope)
    assert all(p == "rewritten" for seq, p in problems.items() if seq > hope)


def test_an_order_dropped_and_rechained_is_named_dropped_and_later_ones_moved(
    played: Path, games: Path
) -> None:
    hope = seq_of(games, "Anne", "orders", "Hope", occurrence=1)
    bodies = log_bodies(played)
    del bodies[hope]
    write_rechained(played, bodies)
    problems = problems_of(games, "Anne")
    assert problems[hope] == "dropped"
    assert all(p == "moved" for seq, p in problems.items() if seq > hope)
    assert problems_of(games, "Bart")[seq_of(games, "Bart", "orders", "Kraken", occurrence=1)] == "moved"


def test_two_orders_swapped_and_rechained_are_both_named_moved(played: Path, games: Path) -> None:
    hope = seq_of(games, "Anne", "orders", "Hope", occurrence=1)
    kraken = seq_of(games, "Bart", "orders", "Kraken", occurrence=1)
    assert kraken == hope + 1
    bodies = log_bodies(played)
    bodies[hope], bodies[kraken] = bodies[kraken], bodies[hope]
    write_rechained(played, bodies)
    assert problems_of(games, "Anne")[hope] == "moved"
    assert problems_of(games, "Bart")[kraken] == "moved"


def test_a_turn_dropped_and_rechained_names_every_later_submission_moved(played: Path, games: Path) -> None:
    bodies = log_bodies(played)
    first = next(i for i, b in enumerate(bodies) if b["type"] == "turn-started")
    last = next(i for i, b in enumerate(bodies) if b["type"] == "turn-ended")
    del bodies[first : last + 1]
    write_rechained(played, bodies)
    for player in ("Anne", "Bart"):
        problems = problems_of(games, player)
        assert all(p is None for seq, p in problems.items() if seq < first)
        assert {p for seq, p in problems.items() if seq > last} == {"moved"}


def test_a_tail_cut_names_the_receipts_past_the_end_truncated(played: Path, games: Path) -> None:
    kraken = seq_of(games, "Bart", "orders", "Kraken", occurrence=1)
    write_rechained(played, log_bodies(played)[:kraken])
    problems = problems_of(games, "Bart")
    assert problems[kraken] == "truncated"
    assert all(p is None for seq, p in problems.items() if seq < kraken)


def test_history_rewritten_before_a_submission_is_named_rewritten(played: Path, games: Path) -> None:
    """Bart's purchase edited: Anne's later submissions are intact, but the log no longer passes
    through the heads her receipts hold."""
    kraken = seq_of(games, "Bart", "purchase", "Kraken")
    bodies = log_bodies(played)
    bodies[kraken]["kind"] = "red-small"
    write_rechained(played, bodies)
    problems = problems_of(games, "Anne")
    assert {p for seq, p in problems.items() if seq > kraken} == {"rewritten"}
    assert all(p is None for seq, p in problems.items() if seq < kraken)


def test_a_receipt_from_another_game_is_named(played: Path, games: Path) -> None:
    ok(games, "new", "h", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10")
    result = run(games, "verify", "h", "--receipts", str(receipts_file(games, "Anne")))
    assert result.exit_code == 4
    assert "receipt 1: other-game: purchase for Hope at seq 1: the receipt is for game 'g'" in result.output


# --- files --------------------------------------------------------------------------------------


@pytest.mark.parametrize("content", ["not json", '{"receipt": []}', '"a string"', "{}"])
def test_a_file_that_is_not_a_receipts_file_is_refused_naming_the_option(
    played: Path, games: Path, content: str
) -> None:
    bad = games.parent / "bad.json"
    bad.write_text(content)
    before = tree_digest(games.parent)
    for words in (("verify", "g", "--receipts", str(bad)), ("order", "g", "Hope", "idle", "--receipts", str(bad))):
        result = run(games, *words)
        assert result.exit_code == 2 and "--receipts" in result.output, result.output
    assert tree_digest(games.parent) == before  # the order was not given: its receipt could not be kept


def test_a_missing_receipts_file_is_refused_by_verify(played: Path, games: Path) -> None:
    result = run(games, "verify", "g", "--receipts", str(games.parent / "none.json"))
    assert result.exit_code == 2 and "--receipts: cannot read" in result.output


@pytest.mark.parametrize("content", ["[]", '{"receipts": []}'])
def test_a_receipts_file_holding_no_receipt_is_refused_by_verify_not_read_as_verified(
    played: Path, games: Path, content: str
) -> None:
    """A player who passes the wrong (empty) file must not read "verified" as "my receipts hold";
    an order may still start an empty file (its receipt is the first)."""
    empty = games.parent / "empty.json"
    empty.write_text(content)
    before = tree_digest(games.parent)
    result = run(games, "verify", "g", "--receipts", str(empty))
    assert result.exit_code == 2 and "--receipts" in result.output and "holds no receipt" in result.output
    assert "verified" not in result.output, result.output
    assert tree_digest(games.parent) == before


def test_append_receipt_keeps_earlier_entries_and_refuses_a_foreign_file(played: Path, games: Path, tmp_path: Path) -> None:
    first = parse_receipts(receipts_file(games, "Bart").read_bytes())[0]
    assert isinstance(first, Receipt)
    kept = tmp_path / "kept.json"
    append_receipt(kept, first)
    append_receipt(kept, first)
    assert parse_receipts(kept.read_bytes()) == [first, first]
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"orders": []}')
    with pytest.raises(BadInput, match="^receipts: "):
        append_receipt(foreign, first)
    assert foreign.read_text() == '{"orders": []}'


def test_a_receipt_holds_through_the_idempotency_envelope_and_a_retry_answers_the_same(games: Path) -> None:
    """The service writes ``idem`` on a batch's first line; the commitment leaves it out, and a
    retry (which returns the events read back from the log) gets the first append's receipt."""
    play(games, turns=0)
    log_ = game_log(games, "g")
    keys = IdempotencyIndex()
    key = Idempotency(key_digest("retry-me"), keys)
    salt = "cd" * 16

    def give(state: GameState) -> GiveOrder:
        return GiveOrder(ship="Hope", actions=(Advance(),))

    first = receipt_for(run_command(log_, give, idempotency=key), salt)
    assert "idem" in log_bodies(games / "g.jsonl")[first.seq]
    again = receipt_for(run_command(log_, give, idempotency=key), salt)
    assert again == first
    [check] = verify_receipts(log_lines(log_.read_bytes()), [first])
    assert check.ok, check
