"""Relabelled, invented, dropped and moved dice never pass ``verify``.

Each test forges a log as a careful forger would (tests/forgery.py: every hash recomputed, the
head anchor rewritten, and where the dice change the outcomes, the turn resolved again by the
project's own decider), so only the dice checks can tell.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mortecouille.app.botgame import DEMO_GAME, play_demo
from mortecouille.core.dice import RollIdentity, seeded_value
from mortecouille.core.game import decide, evolve, fold
from mortecouille.core.life_cycle import ResolveTurn
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.game import DieRolled, GameEnded, TurnEnded, TurnStarted
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.analytics.archive import Refusal, prepare_game
from mortecouille.replays.reading.findings import Report
from mortecouille.replays.reading.verify import verify_log
from tests.forgery import forge, forge_with_turn_hashes, log_bodies, write_forged_events

pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).parent / "golden"

#: ``die(state, identity, logged) -> (value, source)``: what a forger makes a die show
ForgedDie = Callable[[GameState, RollIdentity, DieRolled | None], tuple[int, str]]


class ForgedDice:
    """A dice source a forger would write: the logged die, or whatever ``die`` chooses."""

    def __init__(self, state: GameState, logged: dict[tuple[Any, ...], DieRolled], die: ForgedDie):
        self.state, self.logged, self.die = state, logged, die

    def value(self, identity: RollIdentity, label: str) -> tuple[int, str]:
        key = (identity.turn, identity.phase, identity.ship, identity.purpose, identity.index)
        return self.die(self.state, identity, self.logged.get(key))


def resolve_again_from(
    events: list[Event], first_turn: int, die: ForgedDie, through: int | None = None
) -> list[Event]:
    """The log with every turn from ``first_turn`` on (to ``through``, the log cut after it)
    resolved again by the rules with forged dice, the referee's orders kept: outcomes that
    follow from the forged dice, as the attack has them."""
    logged = {(e.turn, e.phase, e.ship, e.purpose, e.index): e for e in events if isinstance(e, DieRolled)}
    seed = next((e.seed for e in events if isinstance(e, GameEnded)), None)
    forged: list[Event] = []
    state = EMPTY
    index = 0
    while index < len(events):
        event = events[index]
        if not (isinstance(event, TurnStarted) and event.turn >= first_turn):
            forged.append(event)
            state = evolve(state, event)
            index += 1
            continue
        command = ResolveTurn(partial=True, rounds=event.rounds, reveal_seed=seed)
        produced = decide(state, command, ForgedDice(state, logged, die))
        forged.extend(produced)
        state = fold(produced, state)
        if state.ended or event.turn == through:
            return forged
        index = next(i for i in range(index, len(events)) if isinstance(events[i], TurnEnded)) + 1
    return forged


#: A demo seed whose game Anne wins in turn 27 (was "demo", whose game changed when a demo's dice
#: stopped depending on its file's name, "demo-demo")
SEED = "demo-1"


def demo(tmp_path: Path) -> GameLog:
    """A demo game: Anne wins in turn 27."""
    run = play_demo(tmp_path, SEED)
    assert run.report.ok and run.summary.winner == "Anne"
    return run.log


def failed(report: Report, check: str) -> Any:
    """The failed finding of ``check``; the report as a whole must have failed."""
    assert not report.ok
    finding = next(f for f in report.findings if not f.ok)
    assert finding.check == check, report.findings
    return finding


def dice_lines(log: GameLog, turn: int) -> list[dict[str, Any]]:
    return [b for b in log_bodies(log.path) if b["type"] == "die-rolled" and b["turn"] == turn]


def test_demo_winner_swapped_by_dice_relabelled_as_table_fails_verify_and_archive(tmp_path: Path) -> None:
    """The red team's attack end to end: Bart's dice all 6 and Anne's all 1 from turn 24, labelled
    "table", outcomes re-derived by the decider, log re-chained and re-anchored: Bart wins."""
    log = demo(tmp_path)

    def loaded(state: GameState, identity: RollIdentity, logged: DieRolled | None) -> tuple[int, str]:
        owner = state.ships[identity.ship].owner if identity.ship in state.ships else None
        return (6 if owner == "Bart" else 1), "table"

    write_forged_events(log.path, resolve_again_from(log.read(), 24, loaded))
    assert fold(log.read()).winner == "Bart"
    first_forged = dice_lines(log, 24)[0]["seq"]
    finding = failed(verify_log(log), "dice")
    assert finding.seq == first_forged and f"seq {first_forged}" in finding.detail
    assert "'table'" in finding.detail and "seeded" in finding.detail
    assert isinstance(prepare_game(log.path), Refusal)


@pytest.mark.parametrize("source", ["table", "fixed", "loaded", ""])
def test_seeded_die_with_its_source_changed_fails_verify(tmp_path: Path, source: str) -> None:
    log = demo(tmp_path)
    target = dice_lines(log, 3)[2]
    forge(log.path, {target["seq"]: {"source": source}})
    finding = failed(verify_log(log), "dice")
    assert finding.seq == target["seq"]


@pytest.mark.parametrize("value", [0, 7, 1000, -3])
def test_table_die_out_of_range_with_outcomes_rederived_fails_verify(tmp_path: Path, value: int) -> None:
    shutil.copy(GOLDEN / "mortecouille.jsonl", tmp_path / "t.jsonl")
    shutil.copy(GOLDEN / "mortecouille.head", tmp_path / "t.head")
    log = GameLog(tmp_path / "t.jsonl")
    # the wind die: the rules take any value it shows (a fire check would refuse 0 itself)
    target = next(d for d in dice_lines(log, 2) if d["purpose"] == "wind")

    def one_changed(state: GameState, identity: RollIdentity, logged: DieRolled | None) -> tuple[int, str]:
        hit = (identity.phase, identity.ship, identity.purpose, identity.index) == (
            target["phase"], target["ship"], target["purpose"], target["index"]
        )  # fmt: skip
        return (value if hit else logged.value if logged else 1), "table"

    write_forged_events(log.path, resolve_again_from(log.read(), 2, one_changed, through=2))
    finding = failed(verify_log(log), "dice")
    assert finding.seq == target["seq"] and f"not {value}" in finding.detail


@pytest.mark.parametrize("value", [0, 7])
def test_seeded_die_out_of_range_fails_verify_before_the_seed_is_revealed(tmp_path: Path, value: int) -> None:
    """A player holding the log mid-game: no seed to check against yet, but no d6 shows 0 or 7."""
    log = demo(tmp_path)
    turn_5_end = next(b["seq"] for b in log_bodies(log.path) if b["type"] == "turn-ended" and b["turn"] == 5)

    def cut_after_turn_5(bodies: list[dict[str, Any]]) -> None:
        del bodies[turn_5_end + 1 :]
        target = next(b for b in bodies if b["type"] == "die-rolled" and b["turn"] == 5)
        target["value"] = value

    forge_with_turn_hashes(log.path, cut_after_turn_5)
    assert not fold(log.read()).ended
    finding = failed(verify_log(log), "dice")
    assert finding.seq == dice_lines(log, 5)[0]["seq"]


def test_extra_die_between_turns_fails_verify_even_with_the_seeds_value(tmp_path: Path) -> None:
    """A die no rule rolled, given the very value the seed gives its identity."""
    log = demo(tmp_path)
    bodies = log_bodies(log.path)
    after = next(b["seq"] for b in bodies if b["type"] == "turn-ended" and b["turn"] == 1)
    identity = RollIdentity(DEMO_GAME, 1, "wind", "Kraken", "wind", 9)
    extra = {
        "type": "die-rolled", "v": 1, "seq": after + 1, "prev": "", "turn": 1, "phase": "wind",
        "ship": "Kraken", "purpose": "wind", "index": 9, "sides": 6,
        "value": seeded_value(SEED, identity), "source": "seeded",
    }  # fmt: skip
    forge_with_turn_hashes(log.path, lambda lines: lines.insert(after + 1, extra))
    finding = failed(verify_log(log), "dice")
    assert finding.seq == after + 1 and "outside" in finding.detail


def test_extra_die_inside_a_turn_fails_verify(tmp_path: Path) -> None:
    log = demo(tmp_path)
    first = dice_lines(log, 2)[0]
    copy = {**first, "index": 7, "value": seeded_value(SEED, RollIdentity(
        DEMO_GAME, 2, first["phase"], first["ship"], first["purpose"], 7))}  # fmt: skip
    forge_with_turn_hashes(log.path, lambda lines: lines.insert(first["seq"] + 1, copy))
    finding = failed(verify_log(log), "rederive")
    assert finding.seq == first["seq"] + 1


def test_die_removed_from_a_resolved_turn_fails_verify(tmp_path: Path) -> None:
    log = demo(tmp_path)
    target = dice_lines(log, 3)[1]
    forge_with_turn_hashes(log.path, lambda lines: lines.pop(target["seq"]))
    failed(verify_log(log), "rederive")


def test_log_cut_in_the_middle_of_a_turn_fails_verify_naming_the_turns_seq(tmp_path: Path) -> None:
    """The last turn's first die dropped, and everything after it, re-anchored (item 16)."""
    log = demo(tmp_path)
    started = next(b for b in log_bodies(log.path) if b["type"] == "turn-started" and b["turn"] == 27)
    last_die = dice_lines(log, 27)[-1]["seq"]
    forge(log.path, {})  # the untouched log verifies
    assert verify_log(log).ok

    def cut(lines: list[dict[str, Any]]) -> None:
        del lines[last_die:]

    forge_with_turn_hashes(log.path, cut)
    finding = failed(verify_log(log), "turns")
    assert finding.seq == started["seq"] and f"seq {started['seq']}" in finding.detail


@pytest.mark.parametrize("field", ["ship", "purpose"])
def test_die_moved_to_another_ship_or_purpose_fails_verify(tmp_path: Path, field: str) -> None:
    """The moved die shows the seed's value for its new identity, so only re-derivation tells."""
    log = demo(tmp_path)
    target = next(d for d in dice_lines(log, 1) if d["purpose"] == "wind")
    moved = {**target, "ship": "Sprat"} if field == "ship" else {**target, "purpose": "fire"}
    identity = RollIdentity(DEMO_GAME, 1, moved["phase"], moved["ship"], moved["purpose"], moved["index"])
    moved["value"] = seeded_value(SEED, identity)

    def move(lines: list[dict[str, Any]]) -> None:
        lines[target["seq"]] = moved

    forge_with_turn_hashes(log.path, move)
    assert not verify_log(log).ok


def test_fixed_dice_outside_a_scenarios_own_turn_fail_verify(tmp_path: Path) -> None:
    """A forger who marks the demo a scenario may not pass later dice off as fixed by its author."""
    log = demo(tmp_path)
    target = dice_lines(log, 3)[0]
    forge_with_turn_hashes(
        log.path,
        lambda lines: (lines[0].update(scenario=True), lines[target["seq"]].update(source="fixed")),
    )
    finding = failed(verify_log(log), "dice")
    assert finding.seq == target["seq"] and "'fixed'" in finding.detail
