"""Dice nobody can foresee (rule D3): each turn's dice come from the committed seed
and every player's revealed contribution; the seed alone gives other dice, a reveal must match its
commitment, a withheld reveal delays the turn but cannot veto it, and ``verify`` re-derives it all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mortecouille.app.commands import (
    NEW_GAME_DICE_SCHEME,
    commit_dice_contribution,
    lock_turn,
    resolve_turn,
    reveal_dice_contribution,
    run_command,
)
from mortecouille.app.games import game_log, load
from mortecouille.core.contributions import awaited_reveals, current_round
from mortecouille.core.dice import (
    CONTRIBUTED,
    RollIdentity,
    contribution_commitment,
    revealed_contributions,
    seeded_value,
    turn_key,
)
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.turn_commands import GiveOrder
from mortecouille.events.base import Event
from mortecouille.events.dice import DiceContributionAbsent, DiceContributionRevealed, TurnLocked
from mortecouille.events.game import DieRolled, GameCreated, GameEnded, TurnStarted
from mortecouille.events.orders import Idle
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.cli_helpers import ok, refused, run
from tests.forgery import forge, log_bodies, write_rechained
from tests.golden.make_golden import MORTECOUILLE_TURN_1, SEED, build_mortecouille_game

GOLDEN = Path(__file__).parent / "golden"
ANNE_SECRET = "a1" * 16
BART_SECRET = "b2" * 16


def golden_copy(tmp_path: Path, name: str = "mortecouille_contributed") -> GameLog:
    for suffix in (".jsonl", ".head"):
        shutil.copyfile(GOLDEN / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    return GameLog(tmp_path / f"{name}.jsonl")


def ordered_game(games: Path, name: str = "c") -> GameLog:
    """A new seeded mortecouille game (fleets placed, turn 1 ordered), not resolved yet."""
    games.mkdir(parents=True, exist_ok=True)
    build_mortecouille_game(games, name, MORTECOUILLE_TURN_1, dice="seeded")
    return game_log(games, name)


def both_commit_and_lock(log: GameLog) -> None:
    commit_dice_contribution(log, "Anne", contribution_commitment(ANNE_SECRET))
    commit_dice_contribution(log, "Bart", contribution_commitment(BART_SECRET))
    lock_turn(log)


def rolls_of_turn(events: list[Event], turn: int) -> list[DieRolled]:
    return [e for e in events if isinstance(e, DieRolled) and e.turn == turn]


def identity(game: str, roll: DieRolled) -> RollIdentity:
    return RollIdentity(game, roll.turn, roll.phase, roll.ship, roll.purpose, roll.index, roll.sides)


# --- the scheme -------------------------------------------------------------------------------


def test_D3_new_seeded_games_take_the_contributed_scheme_and_old_lines_keep_their_bytes(games: Path) -> None:
    assert NEW_GAME_DICE_SCHEME == CONTRIBUTED
    created = json.loads((ordered_game(games).path).read_bytes().splitlines()[0])
    assert created["dice_scheme"] == "contributed"
    # a game of the seed-alone scheme (D2) writes no dice_scheme at all: every older line is unchanged
    old = json.loads((GOLDEN / "mortecouille_seeded.jsonl").read_bytes().splitlines()[0])
    assert "dice_scheme" not in old and old["dice_mode"] == "seeded"
    ok(games, "new", "t", "--players", "Anne,Bart", "--dice", "table")
    assert "dice_scheme" not in json.loads((games / "t.jsonl").read_bytes().splitlines()[0])


def test_D3_the_seed_alone_gives_the_wrong_dice_for_a_turn(tmp_path: Path) -> None:
    events = golden_copy(tmp_path).read()
    created = events[0]
    assert isinstance(created, GameCreated) and created.dice_scheme == CONTRIBUTED
    contributions = revealed_contributions(events)
    assert set(contributions[1]) == {"Anne", "Bart"}
    rolls = rolls_of_turn(events, 1)
    assert len(rolls) >= 6
    logged = [roll.value for roll in rolls]
    key = turn_key(SEED, created.game, 1, contributions[1])
    assert [seeded_value(key, identity(created.game, roll)) for roll in rolls] == logged
    # whoever holds the seed alone computes other dice...
    assert [seeded_value(SEED, identity(created.game, roll)) for roll in rolls] != logged
    # ...and so does whoever has the seed and every contribution but one
    for left_out in ("Anne", "Bart"):
        partial = {p: c for p, c in contributions[1].items() if p != left_out}
        other_key = turn_key(SEED, created.game, 1, partial)
        assert [seeded_value(other_key, identity(created.game, roll)) for roll in rolls] != logged


def test_D3_verify_rederives_a_contributed_game_from_the_seed_and_the_contributions(games: Path) -> None:
    log = ordered_game(games)
    outcome = resolve_turn(log)  # the one-step path: the referee draws both contributions
    kinds = [type(e).__name__ for e in outcome.events]
    first_turn = kinds.index("TurnStarted")
    assert kinds[:first_turn] == [
        "DiceContributionCommitted",
        "DiceContributionCommitted",
        "TurnLocked",
        "DiceContributionRevealed",
        "DiceContributionRevealed",
    ]
    ok(games, "end", "c", "--winner", "Anne")
    report = verify_log(log)
    assert report.ok, report.findings
    dice = next(f for f in report.findings if f.check == "dice")
    assert "keyed by the players' contributions (D3): 2 revealed" in dice.detail
    assert "rolls reproduced" in dice.detail
    assert run(games, "verify", "c").exit_code == 0


def test_D3_the_contributed_golden_log_verifies(tmp_path: Path) -> None:
    report = verify_log(golden_copy(tmp_path))
    assert report.ok, report.findings


# --- commitments, lock and reveals --------------------------------------------------------------


def test_D3_a_reveal_not_matching_its_commitment_is_refused_and_writes_nothing(games: Path) -> None:
    log = ordered_game(games)
    commit_dice_contribution(log, "Anne", contribution_commitment(ANNE_SECRET))
    before = log.path.read_bytes()
    with pytest.raises(RuleViolation, match=r"\[D3\].*not locked"):
        reveal_dice_contribution(log, "Anne", ANNE_SECRET)  # before the lock: too early
    assert log.path.read_bytes() == before
    lock_turn(log)
    before = log.path.read_bytes()
    with pytest.raises(RuleViolation, match=r"\[D3\].*does not match their commitment"):
        reveal_dice_contribution(log, "Anne", BART_SECRET)
    with pytest.raises(RuleViolation, match=r"\[D3\] Bart committed no dice contribution"):
        reveal_dice_contribution(log, "Bart", BART_SECRET)
    with pytest.raises(BadInput, match="contribution: a contribution is 32 lowercase hex digits"):
        reveal_dice_contribution(log, "Anne", "not hex")
    assert log.path.read_bytes() == before
    revealed = reveal_dice_contribution(log, "Anne", ANNE_SECRET).events
    assert [type(e) for e in revealed] == [DiceContributionRevealed]
    with pytest.raises(RuleViolation, match=r"\[D3\].*already settled"):
        reveal_dice_contribution(log, "Anne", ANNE_SECRET)


def test_D3_a_forged_reveal_in_the_log_is_named_by_verify(tmp_path: Path) -> None:
    log = golden_copy(tmp_path)
    seq = next(b["seq"] for b in log_bodies(log.path) if b["type"] == "dice-contribution-revealed")
    forge(log.path, {seq: {"contribution": "ff" * 16}})
    report = verify_log(log)
    assert not report.ok
    failed = [f for f in report.findings if not f.ok]
    assert any(f.seq == seq and "does not match their commitment" in f.detail for f in failed), failed


def test_D3_a_forged_die_of_a_contributed_game_is_named_by_verify(tmp_path: Path) -> None:
    log = golden_copy(tmp_path)
    die = next(b for b in log_bodies(log.path) if b["type"] == "die-rolled")
    forge(log.path, {die["seq"]: {"value": die["value"] % 6 + 1}})
    report = verify_log(log)
    dice = next(f for f in report.findings if f.check == "dice")
    assert not dice.ok and dice.seq == die["seq"]
    assert "the seed and the 2 contribution(s) of turn 1 give" in dice.detail and "(D3)" in dice.detail


def test_D3_a_turn_resolved_without_its_lock_is_named_by_verify(tmp_path: Path) -> None:
    log = golden_copy(tmp_path)
    bodies = log_bodies(log.path)
    # the one-step turn 1 without its commitments, lock and reveals: forged by hand, chain made valid
    cut = [b for b in bodies if not (b["type"].startswith("dice-contribution") or b["type"] == "turn-locked")]
    write_rechained(log.path, cut)
    dice = next(f for f in verify_log(log).findings if f.check == "dice")
    assert not dice.ok and "resolved before it was locked" in dice.detail and "(D3)" in dice.detail


def test_D3_a_locked_turn_takes_no_more_orders_or_commitments(games: Path) -> None:
    log = ordered_game(games)
    both_commit_and_lock(log)
    before = log.path.read_bytes()
    with pytest.raises(RuleViolation, match=r"\[D3\] turn 1 is locked: its inputs are final"):
        run_command(log, lambda state: GiveOrder(ship="Minnow", actions=(Idle(),), replace=True))
    with pytest.raises(RuleViolation, match=r"\[D3\] turn 1 is locked"):
        commit_dice_contribution(log, "Anne", contribution_commitment(BART_SECRET))
    with pytest.raises(RuleViolation, match=r"\[D3\] turn 1 is already locked"):
        lock_turn(log)
    result = run(games, "order", "c", "Minnow", "idle", "--replace")
    assert result.exit_code == 2 and "[D3]" in result.output
    assert log.path.read_bytes() == before


def test_D3_a_commitment_replaces_the_earlier_one_until_the_lock(games: Path) -> None:
    log = ordered_game(games)
    commit_dice_contribution(log, "Anne", contribution_commitment(BART_SECRET))
    commit_dice_contribution(log, "Anne", contribution_commitment(ANNE_SECRET))
    lock_turn(log)
    reveal_dice_contribution(log, "Anne", ANNE_SECRET)
    _, state = load(log)
    assert current_round(state).revealed == {"Anne": ANNE_SECRET}


def test_D3_a_withheld_reveal_delays_the_turn_until_the_referee_resolves_without_it(games: Path) -> None:
    log = ordered_game(games)
    both_commit_and_lock(log)
    reveal_dice_contribution(log, "Anne", ANNE_SECRET)
    _, state = load(log)
    assert awaited_reveals(state) == ["Bart"]
    before = log.path.read_bytes()
    with pytest.raises(RuleViolation, match=r"\[D3\] turn 1 waits for the dice contribution of Bart"):
        resolve_turn(log)
    refused = run(games, "resolve", "c", "--no-prompt")
    assert refused.exit_code == 2 and "waits for the dice contribution of Bart" in refused.output
    assert log.path.read_bytes() == before
    # the referee goes on without Bart's contribution: logged with the reason, the dice from the rest
    outcome = resolve_turn(log, absent_reason="Bart's phone went dark")
    absent = [e for e in outcome.events if isinstance(e, DiceContributionAbsent)]
    assert [(e.player, e.turn, e.reason) for e in absent] == [("Bart", 1, "Bart's phone went dark")]
    assert isinstance(outcome.events[1], TurnStarted)
    rolls = rolls_of_turn(outcome.events, 1)
    key = turn_key(SEED, "c", 1, {"Anne": ANNE_SECRET})
    assert [r.value for r in rolls] == [seeded_value(key, identity("c", r)) for r in rolls]
    ok(games, "end", "c")
    assert verify_log(log).ok


def test_D3_verify_counts_each_players_withheld_contributions(games: Path) -> None:
    """A player who withholds a reveal, told the dice by whoever holds the seed, chooses between
    two outcomes of the turn (README, "Dice nobody can foresee"): the table cannot stop it, so
    ``verify`` counts every such turn per player, from the ``dice-contribution-absent`` lines."""
    log = ordered_game(games)
    both_commit_and_lock(log)
    reveal_dice_contribution(log, "Anne", ANNE_SECRET)
    resolve_turn(log, absent_reason="Bart's phone went dark")
    anne, bart = "c1" * 16, "d2" * 16
    commit_dice_contribution(log, "Anne", contribution_commitment(anne))
    commit_dice_contribution(log, "Bart", contribution_commitment(bart))
    lock_turn(log)
    reveal_dice_contribution(log, "Bart", bart)
    resolve_turn(log, idle_turn=True, absent_reason="Anne left the table")
    report = json.loads(run(games, "verify", "c", "--json").output)
    dice = next(f for f in report["findings"] if f["check"] == "dice")
    assert dice["ok"] and "withheld: Anne 1 (turn 2), Bart 1 (turn 1)" in dice["detail"], dice
    assert "withheld: Anne 1 (turn 2), Bart 1 (turn 1)" in ok(games, "verify", "c")


def test_D3_the_referee_locks_then_resolves_from_the_cli(games: Path) -> None:
    log = ordered_game(games)
    commit_dice_contribution(log, "Anne", contribution_commitment(ANNE_SECRET))
    before = log.path.read_bytes()
    # one step would lock and resolve at once, leaving Anne no moment to reveal: refused
    refused = run(games, "resolve", "c", "--no-prompt")
    assert refused.exit_code == 2 and "Anne committed a dice contribution of their own" in refused.output
    assert "lock the turn first" in refused.output and log.path.read_bytes() == before
    locked = ok(games, "resolve", "c", "--lock")
    assert "turn-locked" in locked
    reveal_dice_contribution(log, "Anne", ANNE_SECRET)
    # Bart committed nothing before the lock: his part is simply absent from the key, nobody waits
    resolved = ok(games, "resolve", "c", "--no-prompt")
    assert "turn-started" in resolved and "dice-contribution-absent" not in resolved
    events = log.read()
    assert revealed_contributions(events) == {1: {"Anne": ANNE_SECRET}}
    assert sum(isinstance(e, TurnLocked) for e in events) == 1
    assert run(games, "resolve", "c", "--lock", "--partial").exit_code == 2


def test_D3_F3_a_lock_before_the_game_can_start_is_refused_and_the_game_goes_on(games: Path) -> None:
    """A locked turn takes no purchase, seal or placement (D3): locking turn 1 before every fleet is
    sealed and every bought ship placed (F3), or a game with no ship afloat (P1), would leave a game
    nobody can start, resolve or unlock. Refused naming the rule, nothing written; the game goes on."""
    ok(games, "new", "m", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10")
    ok(games, "buy", "m", "Anne", "red-small", "Hope")
    unsealed = refused(games, "resolve", "m", "--lock")
    assert "[F3] turn 1 cannot be locked" in unsealed and "fleet not sealed yet for Anne, Bart" in unsealed
    ok(games, "seal", "m", "Anne", "--forfeit")
    ok(games, "buy", "m", "Bart", "yellow-big", "Kraken")
    ok(games, "seal", "m", "Bart", "--forfeit")
    unplaced = refused(games, "resolve", "m", "--lock")
    assert "[F3]" in unplaced and "Hope (Anne), Kraken (Bart) bought but not placed" in unplaced
    ok(games, "place", "m", "Hope", "C3")
    ok(games, "place", "m", "Kraken", "E6", "--facing", "S")
    assert "turn-locked" in ok(games, "resolve", "m", "--lock")  # the game can start: it locks
    ok(games, "new", "h", "--ruleset", "blockade", "--players", "Anne,Bart", "--board", "8x8")
    assert "[P1] turn 1 cannot be locked before it can be played: no ship is afloat" in refused(
        games, "resolve", "h", "--lock"
    )
    ok(games, "place", "h", "Sloopy", "C2", "--kind", "sloop", "--owner", "Anne")
    assert "turn-locked" in ok(games, "resolve", "h", "--lock")


def test_D3_F3_the_deadline_never_locks_a_turn_before_the_game_can_start(games: Path) -> None:
    """A player's page may commit while the fleets are still bought; the turn's deadline then
    records its passing and neither locks nor resolves (F3): the fleets can still be sealed."""
    from datetime import UTC, datetime, timedelta

    from mortecouille.app.deadlines import pass_deadline_if_due, set_deadline

    ok(games, "new", "m", "--players", "Anne,Bart", "--budget", "100000", "--board", "10x10")
    ok(games, "buy", "m", "Anne", "red-small", "Hope")
    log = game_log(games, "m")
    commit_dice_contribution(log, "Anne", contribution_commitment(ANNE_SECRET))
    now = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)
    set_deadline(log, 60, now)
    passed = pass_deadline_if_due(log, now + timedelta(seconds=61))
    assert passed is not None and [type(e).__name__ for e in passed.events] == ["DeadlinePassed"]
    assert not any(isinstance(e, TurnLocked) for e in log.read())
    ok(games, "seal", "m", "Anne", "--forfeit")


def test_D3_games_of_table_dice_or_of_the_seed_alone_take_no_contribution(
    games: Path, tmp_path: Path
) -> None:
    ok(games, "new", "t", "--players", "Anne,Bart", "--dice", "table")
    with pytest.raises(RuleViolation, match=r"\[D3\] 't' rolls table dice"):
        commit_dice_contribution(game_log(games, "t"), "Anne", contribution_commitment(ANNE_SECRET))
    old = golden_copy(tmp_path, "mortecouille_seeded")
    events = old.read()
    assert isinstance(events[-1], GameEnded)  # ended: refused before the scheme is even asked
    assert not any(isinstance(e, TurnLocked) for e in events)


def test_D3_a_withheld_reason_is_checked_like_any_text(games: Path) -> None:
    log = ordered_game(games)
    both_commit_and_lock(log)
    before = log.path.read_bytes()
    with pytest.raises(BadInput, match="absent_reason"):
        resolve_turn(log, absent_reason="bad\x1b[2Jreason")
    assert log.path.read_bytes() == before


def test_D3_the_turn_key_takes_every_contribution_in_no_particular_order() -> None:
    both = {"Anne": ANNE_SECRET, "Bart": BART_SECRET}
    key = turn_key(SEED, "g", 3, both)
    assert key == turn_key(SEED, "g", 3, {"Bart": BART_SECRET, "Anne": ANNE_SECRET})
    assert key != turn_key(SEED, "g", 3, {"Anne": ANNE_SECRET, "Bart": "b3" * 16})  # one digit pair
    assert key != turn_key(SEED, "g", 3, {"Anne": BART_SECRET, "Bart": ANNE_SECRET})  # swapped owners
    assert key != turn_key(SEED, "g", 4, both) != turn_key(SEED, "h", 3, both)
    assert key != turn_key("another seed", "g", 3, both)


def test_D3_a_table_dice_fork_of_a_contributed_game_rolls_the_tables_dice(games: Path) -> None:
    log = ordered_game(games)
    resolve_turn(log)
    ok(games, "fork", "c", "f", "--at", str(len(log.read()) - 1), "--dice", "table")
    fork = game_log(games, "f")
    assert fork.read()[0].dice_mode == "table"  # type: ignore[attr-defined]
    with pytest.raises(RuleViolation, match=r"\[D3\] 'f' rolls table dice"):
        lock_turn(fork)
    ok(games, "order", "f", "Minnow", "idle")
    resolved = run(games, "resolve", "f", "--partial", "--prompt", "--yes", input="4\n" * 40)
    assert resolved.exit_code == 0, resolved.output
    assert verify_log(fork).ok


def test_D3_a_deadline_that_resolves_a_contributed_turn_locks_it_first(games: Path) -> None:
    from datetime import UTC, datetime, timedelta

    from mortecouille.app.deadlines import pass_deadline_if_due, set_deadline

    log = ordered_game(games)
    now = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)
    set_deadline(log, 60, now)
    passed = pass_deadline_if_due(log, now + timedelta(seconds=61))
    assert passed is not None
    kinds = [type(e).__name__ for e in passed.events]
    assert kinds[:3] == ["DeadlinePassed", "TurnLocked", "TurnStarted"]
    ok(games, "end", "c")
    assert verify_log(log).ok
    # once a page committed, the clock cannot resolve past its reveal: it locks the turn and records
    # the passing unresolved, so the reveals can come (app.deadlines.resolve_after_deadline)
    second = ordered_game(games, "d")
    commit_dice_contribution(second, "Anne", contribution_commitment(ANNE_SECRET))
    set_deadline(second, 60, now)
    waiting = pass_deadline_if_due(second, now + timedelta(seconds=61))
    assert waiting is not None
    assert [type(e).__name__ for e in waiting.events] == ["TurnLocked", "DeadlinePassed"]
    assert not any(isinstance(e, TurnStarted) for e in second.read())
