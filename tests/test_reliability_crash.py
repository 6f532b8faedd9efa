"""Crash safety: a writer killed with SIGKILL at any point of an append loses nothing it
was told was written, never leaves a partial event accepted, and a torn tail is reported and repaired.

A forked writer process runs the real command path (``run_command``: lock, read, fold, decide,
one write, one fsync, head anchor): in a blockade game placing ships and giving tokens, in a
mortecouille game (every other game; fleets bought, sealed and placed beforehand) giving orders,
resolving turns (many events in one append, seeded dice) and recording rulings; plus raw
multi-event appends through ``GameLog.append``. After each append returns it reports the seq range and the
last hash, unbuffered, to an acknowledgement file. The writer is killed at a point chosen for the
cycle (a fixed number of kills, whatever the machine's speed): just before or just
after its k-th write to the log, its k-th fsync or its k-th rename of the head anchor (k from 1 to
6), by a SIGKILL it sends itself from inside that system call's wrapper. The test then reopens the
game and checks every acknowledged event is there with that hash and the log verifies.

SIGKILL cannot interrupt a small ``write`` half way, so torn tails are also injected
deterministically: the bytes of a whole append, stamped exactly as the store would, are written
only up to a random cut (possibly after some complete lines of the same append), which is what a
power cut mid-write leaves. Reopening must raise TornTail; ``repair`` must cut the whole
unfinished append (back to the head anchor) and leave a log that verifies.

``MORTECOUILLE_SOAK=1`` runs ten times more cycles.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from mortecouille.app.commands import run_command, store_seed
from mortecouille.app.games import load
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import TableDice, seed_commitment
from mortecouille.core.errors import MortecouilleError
from mortecouille.core.fleet.catalogue import RULES_VERSION
from mortecouille.core.fleet.commands import BuyShip, SealFleet
from mortecouille.core.game import decide
from mortecouille.core.life_cycle import Command, CreateGame, ResolveTurn
from mortecouille.core.rulings import RecordRuling
from mortecouille.core.state import EMPTY, GameState
from mortecouille.core.turn_commands import GiveOrder, GiveTokens
from mortecouille.events.board import Board
from mortecouille.events.codec import TornTail, stamp
from mortecouille.events.game import DieRolled, TurnEnded
from mortecouille.events.orders import Advance, Attack, Idle, Maneuver, Order
from mortecouille.events.rulings import Adjustment, RulingRecorded
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.conftest import SEED, created_log

pytestmark = pytest.mark.slow

SOAK = os.environ.get("MORTECOUILLE_SOAK") == "1"
CYCLES = 2400 if SOAK else 240
CYCLES_PER_GAME = 24
WIDTH = 10
RULESETS = ("blockade", "mortecouille")
#: Where a writer dies: just before or just after a system call of the append path (the log's
#: write, its fsync, the head anchor's update: a ``pwrite`` in place); every one is chosen the same number of times.
KILL_POINTS = tuple((call, when) for call in ("write", "fsync", "pwrite") for when in ("before", "after"))
MAX_OCCURRENCE = 6


MORTECOUILLE_SHIPS = {"P": ("Anne", (4, 4), "N"), "Q": ("Anne", (6, 4), "W"), "R": ("Bart", (5, 5), "S"),
                      "S": ("Bart", (4, 6), "E")}  # fmt: skip


def new_game(games: Path, name: str, ruleset: str = "blockade") -> GameLog:
    if ruleset == "mortecouille":  # priced against a real catalogue (the fixture's version is "test")
        log = GameLog(games / f"{name}.jsonl")
        create = CreateGame(
            game=name, ruleset=ruleset, players=("Anne", "Bart"), budget=100000, board=Board(width=WIDTH, height=WIDTH),
            seed_sha256=seed_commitment(SEED), rules_version=RULES_VERSION,
        )  # fmt: skip
        log.create(decide(EMPTY, create, TableDice()))
    else:
        log = created_log(games, name, ruleset=ruleset)
    store_seed(log, SEED)
    if ruleset == "mortecouille":  # two red-smalls each, sealed and placed close together
        commands: list[Command] = [
            BuyShip(player=owner, kind="red-small", name=ship, options=("flaming-shot",) if ship in "PR" else ())
            for ship, (owner, _, _) in MORTECOUILLE_SHIPS.items()
        ]  # fmt: skip
        commands += [SealFleet(player="Anne", forfeit=True), SealFleet(player="Bart", forfeit=True)]
        commands += [
            PlaceShip(ship=ship, at=at, facing=facing) for ship, (_, at, facing) in MORTECOUILLE_SHIPS.items()
        ]
        for command in commands:
            run_command(log, lambda s, command=command: command)
    return log


def mortecouille_command(rng: random.Random, state: GameState) -> Command:
    """An order (often refused: a wrong side, a sunk ship), a resolution or a ruling."""
    ship = rng.choice(sorted(MORTECOUILLE_SHIPS))
    choice = rng.random()
    if choice < 0.6:
        target = rng.choice(sorted(set(MORTECOUILLE_SHIPS) - {ship}))
        action: Order = rng.choice(
            [Advance(), Idle(), Maneuver(turn="1/4", side=rng.choice(["left", "right"])),
             Attack(position=rng.choice(["port", "starboard"]), target=target)]
        )  # fmt: skip
        return GiveOrder(ship=ship, actions=(action,), replace=True)
    if choice < 0.9:
        return ResolveTurn(partial=True, reveal_seed=SEED)
    return RecordRuling(
        rule="A1", text="a fair wind", adjustments=(Adjustment(ship=ship, wind=rng.randint(1, 3)),)
    )


def die_at(call: str, when: str, occurrence: int, acks_fd: int) -> None:
    """Make this process SIGKILL itself before or after its ``occurrence``-th ``os.<call>`` (the
    acknowledgement file's writes are not counted: they are the test's, not the store's)."""
    original = getattr(os, call)
    seen = 0

    def wrapper(*args: object) -> object:
        nonlocal seen
        if call == "write" and args[0] == acks_fd:
            return original(*args)
        seen += 1
        if seen == occurrence and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        result = original(*args)
        if seen == occurrence and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(os, call, wrapper)  # this forked process's own os module: the parent is untouched


def writer(path: Path, acks: Path, seed: int, kill: tuple[str, str, int]) -> None:
    """Append until the chosen kill point, acknowledging every append that returned."""
    rng = random.Random(seed)
    log = GameLog(path)
    out = os.open(acks, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    die_at(*kill, acks_fd=out)
    _, state = load(log)
    placed = len(state.ships)
    while True:
        choice = rng.random()
        if state.ruleset == "mortecouille" and choice < 0.75:
            command = mortecouille_command(rng, state)
            try:
                appended, state = run_command(log, lambda s, command=command: command)
            except MortecouilleError:
                continue  # refused: nothing written, nothing to acknowledge
        elif choice < 0.45 and placed < WIDTH * WIDTH:
            name, at = f"S{placed}", (placed % WIDTH, placed // WIDTH)
            appended, state = run_command(
                log,
                lambda s, name=name, at=at: PlaceShip(
                    ship=name, at=at, facing="N", kind="sloop", owner="Anne"
                ),
            )
            placed += 1
        elif choice < 0.75 and state.ships:
            ship = rng.choice(sorted(state.ships))
            tokens = tuple(rng.choice(["F", "L", "R", None]) for _ in range(rng.randint(1, 4)))
            appended, state = run_command(
                log, lambda s, ship=ship, tokens=tokens: GiveTokens(ship=ship, tokens=tokens, replace=True)
            )
        else:
            # filler lines any game may hold between commands (a die outside a turn fails verify)
            batch = [
                RulingRecorded(turn=state.turn, rule="T2", text=f"filler {i}") for i in range(rng.randint(2, 6))
            ]
            appended = log.append(batch)
        os.write(out, f"{appended[0].seq} {appended[-1].seq} {appended[-1].hash}\n".encode())


def inject_torn_append(log: GameLog, rng: random.Random) -> bytes:
    """Write a prefix of a stamped multi-line append, as a crash mid-write would; return it."""
    data = log.path.read_bytes()
    last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    body = json.loads(last)
    seq, prev = body["seq"] + 1, body["hash"]
    lines = []
    for index in range(rng.randint(1, 4)):
        event, line = stamp(
            DieRolled(turn=9, phase="torn", ship=None, purpose="wind", index=index, sides=6, value=3,
                      source="table"),
            seq + index,
            prev,
        )  # fmt: skip
        prev = event.hash
        lines.append(line)
    payload = b"\n".join(lines) + b"\n"
    cut = rng.randrange(1, len(payload) - 1)
    while payload[cut - 1 : cut] == b"\n":  # a cut right after a newline is not torn; move it
        cut += 1
    with log.path.open("ab") as handle:
        handle.write(payload[:cut])
    return payload[:cut]


def check_acknowledged(log: GameLog, acks: Path) -> int:
    """Every acknowledged append is in the log with the hash the writer was given."""
    events = log.read()
    count = 0
    for row in acks.read_text().splitlines():
        first, last, digest = row.split()
        assert int(last) < len(events), f"acknowledged seq {last} is missing ({len(events)} events)"
        assert events[int(last)].hash == digest, f"seq {last} changed after it was acknowledged"
        assert all(events[s].seq == s for s in range(int(first), int(last) + 1))
        count += 1
    return count


def test_sigkill_at_chosen_points_of_the_append_path_loses_nothing_acknowledged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(8)
    context = multiprocessing.get_context("fork")
    stats: Counter[str] = Counter()
    log = new_game(tmp_path, "crash0")
    acks = tmp_path / "acks0"
    started = time.monotonic()
    for cycle in range(CYCLES):
        if cycle and cycle % CYCLES_PER_GAME == 0:  # keep each log short so each cycle stays fast
            ruleset = RULESETS[(cycle // CYCLES_PER_GAME) % len(RULESETS)]
            log = new_game(tmp_path, f"crash{cycle}", ruleset)
            acks = tmp_path / f"acks{cycle}"
        size_before = log.path.stat().st_size
        call, when = KILL_POINTS[cycle % len(KILL_POINTS)]
        kill = (call, when, rng.randint(1, MAX_OCCURRENCE))
        process = context.Process(target=writer, args=(log.path, acks, cycle, kill), daemon=True)
        process.start()
        process.join(600)  # only a hung writer waits this long: the kill point is always reached
        if process.exitcode is None:
            process.kill()
            process.join()
        assert process.exitcode == -signal.SIGKILL, f"cycle {cycle}: writer ended {process.exitcode} ({kill})"
        stats["kills"] += 1
        stats[f"kills {when} {call}"] += 1
        if log.path.stat().st_size > size_before:
            stats["kills after some append"] += 1
        try:
            log.read()
        except TornTail:
            stats["torn by a kill"] += 1
            assert log.repair()
        if cycle % 2 == 0:  # a deterministic torn tail every other cycle
            whole = log.path.read_bytes()
            injected = inject_torn_append(log, rng)
            with pytest.raises(TornTail):
                log.read()
            with pytest.raises(TornTail):  # every writer refuses to append after a torn tail
                log.append([DieRolled(turn=1, phase="x", ship=None, purpose="wind", index=0, sides=6,
                                      value=1, source="table")])  # fmt: skip
            torn = log.torn_tail()
            unanchored = len(torn) - (len(log.path.read_bytes()) - len(whole))
            assert torn and whole[len(whole) - unanchored :] + injected == torn
            if unanchored:  # the killed writer had written and fsynced, not yet moved the anchor
                stats["unacknowledged appends cut with a torn one"] += 1
            assert log.repair() == torn
            assert log.path.read_bytes() == whole[: len(whole) - unanchored]
            stats["torn tails injected and repaired"] += 1
        check_acknowledged(log, acks) if acks.exists() else None
        assert log.verify_chain() >= 1
    for path in sorted(tmp_path.glob("acks*")):
        game = GameLog(tmp_path / f"crash{path.name[4:]}.jsonl")
        stats["appends acknowledged"] += check_acknowledged(game, path)
        report = verify_log(game)
        assert report.ok, [f for f in report.findings if not f.ok]
        events, state = load(game)
        if state.ruleset == "mortecouille":
            stats["mortecouille turns resolved"] += sum(isinstance(e, TurnEnded) for e in events)
    elapsed = time.monotonic() - started
    text = ", ".join(f"{key}: {value}" for key, value in stats.items()) + f" in {elapsed:.1f} s"
    with capsys.disabled():
        print(f"\ncrash safety: {text}")
    # deterministic counts: every cycle is one kill, at a point every append passes through
    assert stats["kills"] == CYCLES, text
    assert all(stats[f"kills {when} {call}"] == CYCLES // len(KILL_POINTS) for call, when in KILL_POINTS), text
    assert stats["kills after some append"] >= CYCLES // 2, text
    assert stats["appends acknowledged"] >= CYCLES, text
    assert stats["mortecouille turns resolved"] >= 10, text


def test_a_crash_between_the_logs_fsync_and_the_head_write_leaves_a_valid_longer_log(
    tmp_path: Path,
) -> None:
    log = new_game(tmp_path, "g")
    head = log.head_path.read_bytes()
    appended = log.append([RulingRecorded(turn=1, rule="T2", text=f"filler {i}") for i in range(3)])
    log.head_path.write_bytes(head)  # as if the writer died before renaming the new anchor
    assert verify_log(log).ok and log.verify_chain() == 4
    assert log.torn_tail() == b""  # nothing is torn: the extra lines are whole and they chain
    assert [e.seq for e in log.read()] == [0, *(e.seq for e in appended)]
    assert log.append([appended[0]])[0].seq == 4  # the next writer carries on and moves the anchor
    assert log.read_head() is not None and log.read_head().seq == 4  # type: ignore[union-attr]
