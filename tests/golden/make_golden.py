"""Build the golden logs of the current schema through the real CLI.

Run once from the repository root when the schema changes on purpose, then commit the output::

    .venv/bin/python -m tests.golden.make_golden

It writes ``blockade.jsonl`` (a seeded blockade game through several resolved turns and its end,
with every event type the blockade ruleset produces), ``turn_started_v1.jsonl`` (the same kind of
game with its ``turn-started`` lines rewritten as version 1, no ``rounds``, the chain recomputed)
and ``expected.json`` (each log's final state hash and event types). ``tests/test_schema_evolution.py``
replays and re-derives them; a change of the schema that breaks old logs fails there.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from click.testing import CliRunner

from cli import board_commands as board_commands  # noqa: F401 - the blockade commands
from cli import game_commands as game_commands  # noqa: F401 - new, end
from cli.app import cli
from cli.session import load
from core.state import state_hash
from events.base import GENESIS_HASH
from events.codec import canonical, line_hash
from events.store import GameLog

HERE = Path(__file__).resolve().parent
SEED = "golden-seed"

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
    ("resolve", "--partial"),
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
        blockade = build_blockade_game(games)
        v1_source = build_v1_source(games)
        shutil.copyfile(blockade, out / "blockade.jsonl")
        (out / "turn_started_v1.jsonl").write_bytes(as_turn_started_v1(v1_source.read_bytes()))
    for name in ("blockade.jsonl", "turn_started_v1.jsonl"):
        anchor(out / name)
    expected = {name: summary(out / name) for name in ("blockade.jsonl", "turn_started_v1.jsonl")}
    (out / "expected.json").write_text(json.dumps(expected, indent=2, sort_keys=True) + "\n")
    return expected


def build_v1_source(games: Path) -> Path:
    """A game whose turns each play one round, resolved from Python (the CLI always plays four)."""
    from cli.session import game_log, run_command
    from core.blockade_game import ResolveTurn

    path = build_blockade_game(games, "v1", V1_SCRIPT)
    log = game_log(games, "v1")
    for _ in range(2):
        run_command(log, lambda state: ResolveTurn(partial=True, rounds=1))
    cli_run(games, "end", "v1")
    return path


if __name__ == "__main__":
    print(json.dumps(make(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE), indent=2))
