"""Build the golden logs of the current schema through the real CLI, and compare them with the
committed ones.

By default it only checks (never rewriting ``expected.json`` and the logs from
whatever the code does, silently): it builds every log in a scratch folder, reports each file that
differs from the committed one (at its first differing line) and exits 1, writing nothing::

    .venv/bin/python -m tests.golden.make_golden

Only when the log format changes on purpose, rewrite them with the reason, which is added to the
"Changelog" section of ``tests/golden/README.md``; commit both::

    .venv/bin/python -m tests.golden.make_golden --rewrite "why the log format changed"

It writes ``blockade.jsonl`` (a seeded blockade game through several resolved turns and its end,
with every event type the blockade ruleset produces), ``turn_started_v1.jsonl`` (the same kind of
game with its ``turn-started`` lines rewritten as version 1, no ``rounds``, the chain recomputed),
the mortecouille logs (``mortecouille.jsonl``: a table-dice game whose dice are typed in so that
every outcome the engine can produce happens, up to a victory; ``mortecouille_seeded.jsonl``: the
same fleets with seeded dice, ended by the referee so the seed is revealed;
``mortecouille_scenario.jsonl``: a one-turn scenario, the only source of ``ship-set-up``) and
``expected.json`` (each log's final state hash and event types). ``tests/test_schema_evolution.py``
replays and re-derives them; a change of the schema that breaks old logs fails there.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import itertools
import json
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from unittest import mock

from click.testing import CliRunner

from mortecouille.app.games import load
from mortecouille.cli.main import cli
from mortecouille.core.state import state_hash
from mortecouille.events.base import GENESIS_HASH
from mortecouille.events.codec import canonical, line_hash
from mortecouille.events.storage.file_log import GameLog

HERE = Path(__file__).resolve().parent
SEED = "golden-seed"
#: the salt of every seeded golden game's commitment (D2)
GOLDEN_SALT = "5a17" * 8

#: Every command of the golden blockade game, in order (arguments after the game name).
BLOCKADE_SCRIPT: tuple[tuple[str, ...], ...] = (
    ("place", "Sloopy", "C2", "--kind", "sloop", "--owner", "Anne", "--facing", "N"),
    ("place", "Frig", "C4", "--kind", "war-frigate", "--owner", "Bart", "--facing", "S"),
    ("place", "Tiny", "A6", "--kind", "sloop", "--owner", "Anne", "--facing", "N"),
    ("place", "Wall", "A7", "--kind", "war-frigate", "--owner", "Bart", "--facing", "E"),
    ("place", "Brig", "G7", "--kind", "war-brig", "--owner", "Bart", "--facing", "W"),
    ("place", "Dhow", "F7", "--kind", "dhow", "--owner", "Anne", "--facing", "N"),
    ("tokens", "Sloopy", "F", "F", "L", "-"),
    ("tokens", "Frig", "F", "-", "R", "F"),
    ("tokens", "Tiny", "F", "F", "F", "F"),
    ("tokens", "Brig", "F", "F", "-", "-"),
    ("resolve", "--partial"),
    ("tokens", "Sloopy", "R", "F"),
    ("tokens", "Frig", "R", "-"),
    ("resolve", "--partial"),
    ("resolve", "--idle-turn"),  # no tokens: every ship drifts, on purpose
    ("end", "--winner", "Bart"),
)


def cli_run(games: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--games-dir", str(games), *args])
    if result.exit_code != 0:
        raise SystemExit(f"mortecouille {' '.join(args)}: exit {result.exit_code}\n{result.output}")
    return result.output


def build_blockade_game(games: Path, name: str = "blockade", script: Sequence[tuple[str, ...]] = ()) -> Path:
    """The golden blockade game (or ``script`` instead of its commands) built with the CLI; its log."""
    cli_run(
        games, "new", name, "--ruleset", "blockade", "--players", "Anne,Bart", "--board", "8x8",
        "--rock", "E5", "--wind", "C3:E", "--wind", "G6:N", "--whirlpool", "F2", "--seed", SEED,
        "--weak-seed",  # SEED is short: the golden logs were written before the rule
    )  # fmt: skip
    for command, *rest in script or BLOCKADE_SCRIPT:
        cli_run(games, command, name, *rest)
    return games / f"{name}.jsonl"


def rechain_lines(bodies: list[dict[str, object]]) -> bytes:
    """Canonical lines with every seq, prev and hash recomputed (the chain made valid again)."""
    prev = GENESIS_HASH
    out = []
    for seq, body in enumerate(bodies):
        body = {key: value for key, value in body.items() if key != "hash"}
        body["seq"] = seq
        body["prev"] = prev
        body["hash"] = prev = line_hash(body)
        out.append(canonical(body))
    return b"\n".join(out) + b"\n"


def as_turn_started_v1(data: bytes) -> bytes:
    """The log with each ``turn-started`` line written as version 1 would: no ``rounds``, ``v`` 1."""
    bodies = [json.loads(line) for line in data.splitlines()]
    for body in bodies:
        if body["type"] == "turn-started":
            if body["rounds"] != 1:
                raise ValueError("a v1 turn-started line can only stand for a one-round turn")
            del body["rounds"]
            body["v"] = 1
    return rechain_lines(bodies)


def anchor(path: Path) -> None:
    """Write the head anchor of a log that was rewritten by hand."""
    last = json.loads(path.read_bytes().splitlines()[-1])
    GameLog(path).write_head(int(last["seq"]), str(last["hash"]))


#: A one-round-per-turn game: what a v1 log (no ``rounds`` in ``turn-started``) could hold.
V1_SCRIPT: tuple[tuple[str, ...], ...] = (
    ("place", "Sloopy", "C2", "--kind", "sloop", "--owner", "Anne", "--facing", "N"),
    ("place", "Frig", "C4", "--kind", "war-frigate", "--owner", "Bart", "--facing", "S"),
    ("tokens", "Sloopy", "F"),
    ("tokens", "Frig", "F"),
)


#: The fleets of the mortecouille golden games (after ``new``): every kind of purchase (options
#: at purchase, an option fitted later, a fleet option), sealed with money left (forfeit), and the
#: ships placed close together (Torch right above Kraken, Skiff right ahead of Pearl, Hope one step
#: from the wind tile C3 that pushes it into Minnow's side).
MORTECOUILLE_SETUP: tuple[tuple[str, ...], ...] = (
    ("buy", "Anne", "blue-big", "Pearl", "--option", "catapult", "--option", "elite-gunner",
     "--option", "extra-crew"),
    ("buy", "Anne", "red-small", "Hope", "--option", "flaming-shot", "--option", "siren"),
    ("equip", "Hope", "extra-sail"),
    ("buy", "Anne", "green-small", "Torch", "--option", "fireship"),
    ("equip", "Anne", "slave-fleet", "--fleet"),
    ("seal", "Anne", "--forfeit"),
    ("buy", "Bart", "yellow-big", "Kraken", "--option", "hull-1", "--option", "super-shot"),
    ("buy", "Bart", "red-small", "Minnow", "--option", "extra-cannons"),
    ("buy", "Bart", "blue-small", "Skiff", "--option", "continuous-burst"),
    ("seal", "Bart", "--forfeit"),
    ("place", "Pearl", "E5", "--facing", "N"),
    ("place", "Hope", "B3", "--facing", "E"),
    ("place", "Torch", "B6", "--facing", "S"),
    ("place", "Kraken", "B5", "--facing", "E"),
    ("place", "Minnow", "C4", "--facing", "E"),
    ("place", "Skiff", "E6", "--facing", "E"),
)  # fmt: skip

#: Turn 1's orders: every ship has some (a full resolution).
MORTECOUILLE_TURN_1: tuple[tuple[str, ...], ...] = (
    ("order", "Pearl", "attack", "port", "Kraken", "--burst", "+", "catapult", "Minnow"),
    ("order", "Hope", "attack", "port", "Kraken"),
    ("order", "Torch", "fireship"),
    ("order", "Kraken", "advance"),
    ("order", "Minnow", "idle"),
    ("order", "Skiff", "attack", "starboard", "Pearl", "--burst"),
)

#: The table-dice game, turn by turn, and what each turn is there to show. ``--dice`` lists the
#: values in the order the engine asks for them (upkeep, wind by ship, shots by shooter, movement,
#: board wind); the comments name the dice that matter.
MORTECOUILLE_SCRIPT: tuple[tuple[str, ...], ...] = (
    *MORTECOUILLE_TURN_1,
    # T1: Pearl's wind die 1 is rerolled (slave-fleet: wind-reroll), Kraken's 1 leaves it no point
    # (move-unaffordable), Minnow idles (wind-points lost); Hope's flaming hit on Kraken (3,3,3:
    # fire-scheduled), Pearl's burst and Skiff's burst (burst-streak), Pearl's catapult hits the
    # small Minnow (3,3,3,3: catapult-hits, countdown 3), Torch becomes a fireship.
    ("resolve", "--no-prompt", "--yes", "--dice", "4,1,4,1,4,4,4,3,3,3,3,3,3,3"),
    ("order", "Pearl", "advance"),
    ("order", "Pearl", "catapult", "Kraken", "--replace"),
    ("order", "Hope", "attack", "port", "Kraken"),
    ("order", "Kraken", "attack", "port", "Torch"),
    ("order", "Skiff", "attack", "starboard", "Pearl", "--burst"),
    # T2: Kraken's fire check fails (1: fire-checked, damage), Hope hits it again with a flaming
    # shot, Pearl's catapult hits the big Kraken, Skiff bursts a second time (continuous-burst),
    # the fireship Torch rams Kraken's side (collision, fireship-explosion, ship-sunk), Kraken does
    # not capsize (5); X3: Kraken burns at phase 2(2) next turn; Minnow's countdown ticks.
    ("resolve", "--partial", "--no-prompt", "--yes", "--dice", "1,4,4,4,4,4,4,4,4,4,4,4,4,5"),
    ("order", "Pearl", "advance", "+", "attack", "port", "Kraken"),
    ("order", "Kraken", "attack", "starboard", "Hope"),
    ("order", "Hope", "advance"),
    ("order", "Skiff", "idle"),
    ("order", "Minnow", "idle"),
    ("ruling", "--rule", "A1", "--text", "the referee grants Pearl a fair wind", "--adjust", "Pearl", "wind=7"),
    # T3: Kraken's crew abandons it (fire 1 at phase 2(2)), so its shot and Pearl's shot at it are
    # not fired (shot-not-fired); Pearl rams Skiff's side, pushes and sinks it and crosses the wreck
    # (crossing 1, crossing-damage 3,3,3); the wind tile pushes Hope into Minnow's side (side-side
    # contact 2,2: ship-pushed).
    ("resolve", "--partial", "--no-prompt", "--yes", "--dice", "1,4,4,4,4,1,3,3,3,2,2"),
    ("order", "Pearl", "maneuver", "1/8", "right"),
    ("order", "Hope", "attack", "port", "Minnow"),
    ("order", "Minnow", "attack", "starboard", "Hope", "--burst"),
    # T4: Minnow's countdown reaches 0, its crew jumps: Bart has no ship left, Anne wins (T3).
    ("resolve", "--no-prompt", "--yes", "--dice", "4,4,4,5,5,5"),
)  # fmt: skip

#: The seeded game: the same fleets and first orders, seeded dice, two turns, then the referee ends
#: it (revealing the seed, which ``verify`` checks every die against).
MORTECOUILLE_SEEDED_SCRIPT: tuple[tuple[str, ...], ...] = (
    *MORTECOUILLE_TURN_1,
    ("resolve", "--no-prompt", "--yes"),
    ("resolve", "--idle-turn", "--no-prompt", "--yes"),  # no orders: every ship idles, on purpose
    ("end", "--winner", "Anne"),
)

#: The 2026.2 edition's game: a table-dice game under the rules version
#: new games get, pinning its two corrections. Four catapults hit the small Minnow in turn 1, whose
#: countdown reaches 0 through hits: it sinks at once in combat (K), so it neither advances nor rams
#: Kraken, although a ruling gave it the wind points to. The big fireship Torch sails from turn 2,
#: rams Kraken's stern in turn 3 (the rock behind Kraken stops the push): its barrels explode (C6),
#: it is not sunk by that and stays a fireship; in turn 4 Kraken puts its fire out, and Torch rams it
#: again, an ordinary collision now, its barrels spent. The referee then ends the game.
EDITION_2026_2_SETUP: tuple[tuple[str, ...], ...] = (
    ("buy", "Anne", "red-big", "Ram", "--option", "catapult", "--option", "catapult"),
    ("buy", "Anne", "red-big", "Bolt", "--option", "catapult", "--option", "catapult"),
    ("buy", "Anne", "blue-big", "Torch", "--option", "fireship"),
    ("seal", "Anne", "--forfeit"),
    ("buy", "Bart", "red-small", "Minnow"),
    ("buy", "Bart", "yellow-big", "Kraken"),
    ("seal", "Bart", "--forfeit"),
    ("place", "Ram", "B2", "--facing", "N"),
    ("place", "Bolt", "D2", "--facing", "N"),
    ("place", "Torch", "A6", "--facing", "E"),
    ("place", "Minnow", "C5", "--facing", "N"),
    ("place", "Kraken", "C6", "--facing", "E"),
    ("ruling", "--rule", "A1", "--text", "Minnow starts with a fair wind", "--adjust", "Minnow", "wind=2"),
)  # fmt: skip

EDITION_2026_2_SCRIPT: tuple[tuple[str, ...], ...] = (
    ("order", "Ram", "catapult", "Minnow", "+", "catapult", "Minnow"),
    ("order", "Bolt", "catapult", "Minnow", "+", "catapult", "Minnow"),
    ("order", "Torch", "fireship"),
    ("order", "Minnow", "advance"),
    ("order", "Kraken", "idle"),
    # T1: wind (Bolt, Kraken, Minnow, Ram, Torch), then four catapult shots of 3d6 at distance 3
    # (13 needed, +1 for two ships on one target): four hits, Minnow's countdown 3 -> 0, it sinks in
    # combat (K); Torch becomes a fireship.
    ("resolve", "--no-prompt", "--yes", "--dice", "5,5,5,5,5," + ",".join(["5"] * 12)),
    ("order", "Kraken", "idle"),
    # T2: wind (Bolt, Kraken, Ram; a fireship rolls none); Torch sails on to B6.
    ("resolve", "--partial", "--no-prompt", "--yes", "--dice", "5,5,5"),
    ("order", "Kraken", "idle"),
    # T3: Torch rams Kraken's stern: collision, its barrels explode (30 each), it sails on.
    ("resolve", "--partial", "--no-prompt", "--yes", "--dice", "5,5,5"),
    ("order", "Kraken", "idle"),
    # T4: Kraken's fire check (4: out), wind; Torch rams Kraken again, no explosion.
    ("resolve", "--partial", "--no-prompt", "--yes", "--dice", "4,5,5,5"),
    ("end", "--winner", "Anne"),
)  # fmt: skip

#: A one-turn scenario (architecture.md): ships set up in a given condition (ship-set-up).
MORTECOUILLE_SCENARIO: dict[str, object] = {
    "ruleset": "mortecouille",
    "board": {"width": 8, "height": 8},
    "ships": [
        {"id": "Red", "kind": "red-small", "owner": "Anne", "at": [3, 3], "facing": "E", "wind": 2,
         "options": ["siren"]},
        {"id": "Yellow", "kind": "yellow-big", "owner": "Bart", "at": [4, 3], "facing": "N", "fire": "1",
         "countdown": 2, "catapult_hits": 1},
        {"id": "Blue", "kind": "blue-small", "owner": "Bart", "at": [4, 6], "facing": "S", "damage": 5,
         "bursts_in_a_row": 1},
    ],
    "orders": {"Red": ["advance"], "Yellow": ["idle"], "Blue": ["idle"]},
    "dice": {"seed": 7, "fixed": [{"ship": "Yellow", "purpose": "capsize", "values": [5]}]},
}  # fmt: skip


def build_mortecouille_game(
    games: Path,
    name: str = "mortecouille",
    script: Sequence[tuple[str, ...]] = MORTECOUILLE_SCRIPT,
    dice: str = "table",
) -> Path:
    """A mortecouille golden game built with the CLI: fleets, placement, then ``script``; its log."""
    seed = ("--seed", SEED, "--weak-seed") if dice == "seeded" else ()
    cli_run(
        games, "new", name, "--players", "Anne,Bart", "--budget", "200000", "--board", "10x10",
        "--wind", "C3:N", "--dice", dice, *seed,
    )  # fmt: skip
    for command, *rest in (*MORTECOUILLE_SETUP, *script):
        cli_run(games, command, name, *rest)
    return games / f"{name}.jsonl"


def build_edition_2026_2_game(games: Path, name: str = "mortecouille_2026_2") -> Path:
    """The 2026.2 edition's golden game (``EDITION_2026_2_SCRIPT``), built with the CLI; its log."""
    cli_run(
        games, "new", name, "--players", "Anne,Bart", "--budget", "250000", "--board", "10x10",
        "--rock", "D6", "--dice", "table",
    )  # fmt: skip
    for command, *rest in (*EDITION_2026_2_SETUP, *EDITION_2026_2_SCRIPT):
        cli_run(games, command, name, *rest)
    return games / f"{name}.jsonl"


def golden_contributions() -> Iterator[str]:
    """The contributions the golden contributed game draws, in order: fixed (never random) so the
    same code builds the same bytes, and each one 32 hex digits as a real one (D3)."""
    for index in itertools.count(1):
        yield f"{index:02x}" * 16


def build_contributed_game(games: Path, name: str = "mortecouille_contributed") -> Path:
    """The golden game of the contributed dice scheme (D3, under the current edition): the seeded
    game's fleets and first orders; turn 1 resolved by the referee in one step (a contribution
    drawn for each player, committed, locked and revealed with the resolution); turn 2 in two
    steps: both players commit from their pages, the referee locks, Anne reveals, Bart never does
    and the referee resolves without him (``--without-missing``); then the game ends, revealing
    the seed, and ``verify`` re-derives every die from it and the revealed contributions."""
    from mortecouille.app.commands import commit_dice_contribution, reveal_dice_contribution
    from mortecouille.app.games import game_log
    from mortecouille.core.dice import contribution_commitment

    drawn = golden_contributions()
    with mock.patch("mortecouille.app.commands.new_contribution", lambda: next(drawn)):
        path = build_mortecouille_game(games, name, (*MORTECOUILLE_TURN_1, ("resolve", "--no-prompt")), "seeded")
        log = game_log(games, name)
        anne, bart = next(drawn), next(drawn)
        commit_dice_contribution(log, "Anne", contribution_commitment(anne))
        commit_dice_contribution(log, "Bart", contribution_commitment(bart))
        cli_run(games, "resolve", name, "--lock")
        reveal_dice_contribution(log, "Anne", anne)
        cli_run(games, "resolve", name, "--idle-turn", "--no-prompt", "--without-missing", "Bart never revealed")
        cli_run(games, "end", name, "--winner", "Anne")
    return path


def build_mortecouille_scenario(games: Path, name: str = "mortecouille_scenario") -> Path:
    """The golden scenario's log, kept by ``scenario --log``."""
    source = games / f"{name}.json"
    source.write_text(json.dumps(MORTECOUILLE_SCENARIO))
    path = games / f"{name}.jsonl"
    result = CliRunner().invoke(cli, ["scenario", str(source), "--log", str(path)])
    if result.exit_code != 0:
        raise SystemExit(f"mortecouille scenario: exit {result.exit_code}\n{result.output}")
    return path


#: Every golden log, in the order ``make`` writes them.
GOLDEN_LOGS = (
    "blockade.jsonl",
    "turn_started_v1.jsonl",
    "mortecouille.jsonl",
    "mortecouille_seeded.jsonl",
    "mortecouille_scenario.jsonl",
    "mortecouille_2026_2.jsonl",
    "mortecouille_contributed.jsonl",
)

#: The rules version the first five golden logs were written under, and are still built under: a
#: game keeps the rules it was created with, so these stay byte for byte what they were when new
#: games moved to 2026.2; ``mortecouille_2026_2.jsonl`` pins the newer
#: edition.
FIRST_EDITION = "2026.1"


def summary(path: Path) -> dict[str, object]:
    events, state = load(GameLog(path))
    return {
        "events": len(events),
        "types": sorted({type(e).__struct_config__.tag for e in events}),  # type: ignore[misc]
        "state_hash": state_hash(state),
    }


def make(out: Path) -> dict[str, dict[str, object]]:
    with tempfile.TemporaryDirectory() as scratch:
        games = Path(scratch)
        with first_edition():
            blockade = build_blockade_game(games)
            v1_source = build_v1_source(games)
            shutil.copyfile(blockade, out / "blockade.jsonl")
            (out / "turn_started_v1.jsonl").write_bytes(as_turn_started_v1(v1_source.read_bytes()))
            shutil.copyfile(build_mortecouille_game(games), out / "mortecouille.jsonl")
            seeded = build_mortecouille_game(games, "seeded", MORTECOUILLE_SEEDED_SCRIPT, dice="seeded")
            shutil.copyfile(seeded, out / "mortecouille_seeded.jsonl")
            shutil.copyfile(build_mortecouille_scenario(games), out / "mortecouille_scenario.jsonl")
        shutil.copyfile(build_edition_2026_2_game(games), out / "mortecouille_2026_2.jsonl")
        shutil.copyfile(build_contributed_game(games), out / "mortecouille_contributed.jsonl")
    for name in GOLDEN_LOGS:
        anchor(out / name)
    expected = {name: summary(out / name) for name in GOLDEN_LOGS}
    (out / "expected.json").write_text(json.dumps(expected, indent=2, sort_keys=True) + "\n")
    return expected


@contextlib.contextmanager
def first_edition() -> Iterator[None]:
    """New games (``new``, ``scenario``) created under ``FIRST_EDITION`` instead of the current
    rules version, as the golden logs written before 2026.2 were."""
    with (
        mock.patch("mortecouille.app.commands.RULES_VERSION", FIRST_EDITION),
        mock.patch("mortecouille.app.scenario.RULES_VERSION", FIRST_EDITION),
        # and with the dice from the seed alone (D2), as seeded games were before D3
        mock.patch("mortecouille.app.commands.NEW_GAME_DICE_SCHEME", None),
    ):
        yield


def build_v1_source(games: Path) -> Path:
    """A game whose turns each play one round, resolved from Python (the CLI always plays four)."""
    from mortecouille.app.commands import run_command
    from mortecouille.app.games import game_log
    from mortecouille.core.life_cycle import ResolveTurn

    path = build_blockade_game(games, "v1", V1_SCRIPT)
    log = game_log(games, "v1")
    for _ in range(2):
        run_command(log, lambda state: ResolveTurn(partial=True, rounds=1))
    cli_run(games, "end", "v1")
    return path


#: Every file ``make`` writes: each log, its head anchor, and ``expected.json``.
GOLDEN_FILES = (
    *(name for log in GOLDEN_LOGS for name in (log, log.replace(".jsonl", ".head"))),
    "expected.json",
)
CHANGELOG = "## Changelog"


def differences(built: Path, committed: Path) -> list[str]:
    """One line per golden file whose committed bytes are not what the current code builds."""
    found = []
    for name in GOLDEN_FILES:
        new, old = built / name, committed / name
        if not old.exists():
            found.append(f"{name}: not committed")
        elif old.read_bytes() != new.read_bytes():
            old_lines, new_lines = old.read_bytes().splitlines(), new.read_bytes().splitlines()
            line = next(
                (i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), 1) if a != b),
                min(len(old_lines), len(new_lines)) + 1,
            )
            found.append(
                f"{name}: differs from line {line} ({len(old_lines)} lines committed, {len(new_lines)} built)"
            )
    return found


def record(committed: Path, why: str, changed: list[str]) -> None:
    """Add a dated line to the README's changelog: a rewrite of the golden files never goes unsaid."""
    readme = committed / "README.md"
    text = readme.read_text() if readme.exists() else ""
    if CHANGELOG not in text:
        text = text.rstrip("\n") + f"\n\n{CHANGELOG}\n"
    files = ", ".join(sorted({name.split(": ")[0] for name in changed}))
    readme.write_text(text.rstrip("\n") + f"\n- {datetime.date.today().isoformat()} ({files}): {why}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make_golden", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=HERE, help="the committed golden files")
    parser.add_argument(
        "--rewrite", metavar="WHY", help="write the files the current code builds; WHY goes to the changelog"
    )
    args = parser.parse_args(argv)
    if args.rewrite is not None and not args.rewrite.strip():
        parser.error("--rewrite needs the reason the log format changed")
    committed: Path = args.folder
    with tempfile.TemporaryDirectory() as scratch:
        built = Path(scratch)
        # a seed's salt is random in play; here it is fixed, so the same code builds the same bytes;
        # and no secret batch draws a nonce: the golden logs are the logs written before nonces
        # (a nonce's line is pinned by tests/test_secret_nonce.py)
        with (
            mock.patch("mortecouille.app.commands.new_salt", lambda: GOLDEN_SALT),
            mock.patch("mortecouille.app.commands.NONCE_SECRET_BATCHES", False),
        ):
            make(built)
        found = differences(built, committed)
        if not found:
            print(f"the golden files in {committed} are what the current code builds")
            return 0
        print("\n".join(found))
        if args.rewrite is None:
            print(
                "nothing written: the current code no longer builds these golden files. If the log format "
                "changed on purpose, run again with --rewrite WHY (it goes to README.md's changelog)"
            )
            return 1
        for name in GOLDEN_FILES:
            shutil.copyfile(built / name, committed / name)
        record(committed, args.rewrite.strip(), found)
    print(f"rewritten in {committed}; the reason is in its README.md changelog")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
