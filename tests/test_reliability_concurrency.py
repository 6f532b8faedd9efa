"""Concurrency: four processes issuing commands against one game at once.

Each worker places its own ships (names and squares no other worker uses) and gives them tokens,
through the real click commands (``CliRunner`` in a forked process; one worker runs the installed
``mortecouille`` executable). Some commands carry an ``--expect-seq`` that is surely stale (a seq
already taken) and some one read just before (stale if another writer got in first). Afterwards:
the log verifies; every command that exited 0 is in it exactly once; every command refused with
exit 3 said so, named the stale seq and wrote nothing; nothing exited otherwise.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from mortecouille.cli.main import cli
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log

pytestmark = pytest.mark.slow

WORKERS = 4
COMMANDS_PER_WORKER = 24
EXECUTABLE = Path(sys.executable).parent / "mortecouille"


def next_seq(games: Path) -> int:
    return (games / "c.jsonl").read_bytes().count(b"\n")


def invoke(games: Path, args: list[str], real: bool) -> tuple[int, str]:
    if real:
        done = subprocess.run(
            [str(EXECUTABLE), "--games-dir", str(games), *args], capture_output=True, text=True, timeout=60
        )
        return done.returncode, done.stdout + done.stderr
    result = CliRunner().invoke(cli, ["--games-dir", str(games), *args])
    return result.exit_code, result.output


def worker(games: Path, number: int, results: Path) -> None:
    rng = random.Random(number)
    real = number == WORKERS - 1 and EXECUTABLE.exists()
    count = 6 if real else COMMANDS_PER_WORKER
    records = []
    for index in range(count):
        ship = f"W{number}x{index}"
        square = f"{'ABCDEFGHIJKL'[index % 12]}{number * 3 + index // 12 + 1}"
        expect: list[str] = []
        mode = rng.choice(["none", "none", "stale", "fresh"])
        if mode == "stale":
            expect = ["--expect-seq", str(max(1, next_seq(games) - 1))]
        elif mode == "fresh":
            expect = ["--expect-seq", str(next_seq(games))]
        place = ["place", "c", ship, square, "--kind", "sloop", "--owner", "Anne", *expect]
        code, output = invoke(games, place, real)
        records.append({"kind": "place", "ship": ship, "mode": mode, "code": code, "output": output})
        if code == 0:
            tokens = [
                "tokens",
                "c",
                ship,
                rng.choice("FLR"),
                "-",
                *(["--expect-seq", "1"] if index % 5 == 4 else []),
            ]
            code, output = invoke(games, tokens, real)
            mode = "stale" if index % 5 == 4 else "none"
            records.append({"kind": "tokens", "ship": ship, "mode": mode, "code": code, "output": output})
    results.write_text(json.dumps(records))


def test_four_writers_at_once_lose_nothing_and_stale_commands_write_nothing(tmp_path: Path) -> None:
    games = tmp_path / "games"
    created = CliRunner().invoke(
        cli,
        ["--games-dir", str(games), "new", "c", "--ruleset", "blockade", "--players", "Anne,Bart",
         "--board", "12x12", "--seed", "s", "--weak-seed"],
    )  # fmt: skip
    assert created.exit_code == 0, created.output
    context = multiprocessing.get_context("fork")
    outputs = [tmp_path / f"worker{n}.json" for n in range(WORKERS)]
    processes = [context.Process(target=worker, args=(games, n, outputs[n])) for n in range(WORKERS)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(300)
        assert process.exitcode == 0
    records = [record for path in outputs for record in json.loads(path.read_text())]

    log = GameLog(games / "c.jsonl")
    report = verify_log(log)
    assert report.ok, [f for f in report.findings if not f.ok]
    lines = [json.loads(line) for line in log.path.read_text().splitlines()]
    placed = Counter(line["ship"] for line in lines if line["type"] == "ship-placed")
    tokens = Counter(line["ship"] for line in lines if line["type"] == "tokens-given")
    outcome: Counter[str] = Counter()
    for record in records:
        found = (placed if record["kind"] == "place" else tokens)[record["ship"]]
        outcome[f"{record['kind']} {record['mode']} exit {record['code']}"] += 1
        if record["code"] == 0:
            assert found == 1, record
        else:
            assert record["code"] == 3, record
            assert record["mode"] in ("stale", "fresh"), record
            assert "expected seq" in record["output"] and "Nothing was written" in record["output"]
            assert found == 0, record
    assert sum(placed.values()) == sum(1 for r in records if r["kind"] == "place" and r["code"] == 0)
    assert sum(tokens.values()) == sum(1 for r in records if r["kind"] == "tokens" and r["code"] == 0)
    assert outcome["place stale exit 3"] > 0 and outcome["tokens stale exit 3"] > 0, outcome
    assert not [r for r in records if r["mode"] == "stale" and r["code"] == 0], "a stale seq was accepted"
    print(dict(outcome))
    shutil.rmtree(games)
