"""Schema evolution: committed golden logs keep replaying, and old versions upcast.

``tests/golden/`` holds logs written by this engine (made by ``make_golden.py``) and the state
hash each one must fold to (``expected.json``). ``turn_started_v1.jsonl`` holds ``turn-started``
lines of version 1, before ``rounds`` existed; they must decode into today's class. The
mortecouille logs (a table-dice game reaching every outcome, a seeded game, a scenario) hold,
together with the blockade ones, every registered event type.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

import mortecouille.events
from mortecouille.app.games import load
from mortecouille.core.state import state_hash
from mortecouille.events.base import Event
from mortecouille.events.codec import CorruptLine, decode_line, decode_lines, stamp
from mortecouille.events.game import TurnStarted
from mortecouille.events.schema import CURRENT_VERSIONS, EVENT_CLASSES, EVENT_TYPES, UPCASTERS, event_tag
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.forgery import log_bodies
from tests.helpers import GOLDEN

EXPECTED: dict[str, dict[str, object]] = json.loads((GOLDEN / "expected.json").read_text())

#: Earlier generations of the golden logs, frozen as they were written (never rebuilt): each
#: folder has its own ``expected.json``. ``before-salt/``: seeded games committed to their seed
#: with a plain SHA-256, and game-created lines had no ``seed_salt``/``seed_hmac``.
FROZEN = ("before-salt",)

#: Every golden log of every generation, as (folder, name).
ALL_GOLDEN = [
    (folder, name)
    for folder in (GOLDEN, *(GOLDEN / generation for generation in FROZEN))
    for name in sorted(json.loads((folder / "expected.json").read_text()))
]


@pytest.fixture(params=ALL_GOLDEN, ids=[f"{folder.name}/{name}" for folder, name in ALL_GOLDEN])
def golden(request: pytest.FixtureRequest, tmp_path: Path) -> GameLog:
    """A copy of one golden log (and its head anchor), so no test can change the committed one."""
    folder, name = request.param
    for suffix in (".jsonl", ".head"):
        shutil.copyfile(folder / name.replace(".jsonl", suffix), tmp_path / name.replace(".jsonl", suffix))
    shutil.copyfile(folder / "expected.json", tmp_path / "expected.json")
    return GameLog(tmp_path / name)


def test_golden_logs_verify_rederive_and_fold_to_the_recorded_state(golden: GameLog) -> None:
    report = verify_log(golden)
    assert report.ok, [f for f in report.findings if not f.ok]
    assert {f.check for f in report.findings} >= {"chain", "state", "rederive"}
    events, state = load(golden)
    expected = json.loads((golden.path.parent / "expected.json").read_text())[golden.path.name]
    assert len(events) == expected["events"]
    assert sorted({type(e).__struct_config__.tag for e in events}) == expected["types"]  # type: ignore[misc]
    assert state_hash(state) == expected["state_hash"]


def test_the_blockade_golden_log_holds_every_event_type_blockade_produces() -> None:
    produced = set(EXPECTED["blockade.jsonl"]["types"])  # type: ignore[call-overload]
    blockade_types = {
        "game-created", "ship-placed", "tokens-given", "turn-started", "ship-moved", "ship-pushed",
        "collision", "damage", "ship-sunk", "turn-ended", "game-ended",
    }  # fmt: skip
    assert produced == blockade_types


def test_the_mortecouille_golden_logs_hold_every_event_type_mortecouille_produces() -> None:
    produced = set(EXPECTED["mortecouille.jsonl"]["types"])  # type: ignore[call-overload]
    mortecouille_types = {
        "game-created", "ship-bought", "ship-equipped", "fleet-equipped", "fleet-sealed", "ship-placed",
        "order-given", "ruling", "turn-started", "die-rolled", "wind-points", "fire-checked", "damage",
        "shot-fired", "shot-not-fired", "catapult-hits", "move-unaffordable", "collision",
        "fireship-explosion", "ship-sunk", "countdown", "burst-streak", "fire-scheduled",
        "became-fireship", "ship-pushed", "ship-moved", "wreck-crossed", "turn-ended", "game-ended",
    }  # fmt: skip
    assert produced == mortecouille_types
    assert "ship-set-up" in EXPECTED["mortecouille_scenario.jsonl"]["types"]  # type: ignore[operator]


#: Die purposes of D1; the mortecouille golden game rolls each of them at least once.
DIE_PURPOSES = {
    "wind", "wind-reroll", "shot", "catapult", "fire", "capsize", "crossing", "crossing-damage", "side-contact",
}  # fmt: skip


def test_the_mortecouille_golden_game_rolls_every_purpose_and_ends_in_a_victory() -> None:
    lines = log_bodies(GOLDEN / "mortecouille.jsonl")
    assert {line["purpose"] for line in lines if line["type"] == "die-rolled"} == DIE_PURPOSES
    assert lines[-1]["type"] == "game-ended"
    assert (lines[-1]["reason"], lines[-1]["winner"]) == ("victory", "Anne")
    seeded = log_bodies(GOLDEN / "mortecouille_seeded.jsonl")
    assert {line["source"] for line in seeded if line["type"] == "die-rolled"} == {"seeded"}
    assert seeded[-1]["type"] == "game-ended" and seeded[-1]["seed"]  # revealed: verify re-derives the dice


#: Registered event types no golden log can hold, each with the reason. Every other type the
#: engine registers is reachable (``ship-set-up`` only through ``scenario``, which is why
#: ``mortecouille_scenario.jsonl`` exists; ``tokens-given`` only in blockade).
UNREACHABLE: dict[str, str] = {
    "loss-recorded": "written only by `repair --record-loss` on a log cut before its anchor "
    "(a damaged log, not a played game); tests/test_repair_loss.py writes and reads it",
    "ship-withdrawn": "not yet in a golden log; tests/test_undo.py writes, verifies and audits it",
    "order-withdrawn": "not yet in a golden log; tests/test_undo.py writes, verifies and audits it",
    "deadline-set": "written by the game service's clock, not the CLI; "
    "tests/test_web_api.py writes and verifies it",
    "deadline-passed": "written by the game service's clock, not the CLI; "
    "tests/test_web_api.py writes and verifies it",
}


def test_every_registered_event_type_appears_in_some_golden_log() -> None:
    seen = set().union(*(set(summary["types"]) for summary in EXPECTED.values()))  # type: ignore[call-overload]
    missing = set(EVENT_TYPES) - seen - set(UNREACHABLE)
    assert not missing, f"event types in no golden log: {sorted(missing)}"
    assert not set(UNREACHABLE) & seen, "an event type listed as unreachable is in a golden log"


def test_expected_json_lists_exactly_the_logs_make_golden_writes() -> None:
    from tests.golden.make_golden import GOLDEN_LOGS

    assert sorted(EXPECTED) == sorted(GOLDEN_LOGS)
    for name in GOLDEN_LOGS:
        assert (GOLDEN / name).is_file() and (GOLDEN / name.replace(".jsonl", ".head")).is_file()


def test_verify_alone_in_a_fresh_process_verifies_a_mortecouille_golden_log(tmp_path: Path) -> None:
    for suffix in (".jsonl", ".head"):
        shutil.copyfile(GOLDEN / f"mortecouille{suffix}", tmp_path / f"m{suffix}")
    script = (
        "import sys; from pathlib import Path; from mortecouille.events.storage.file_log import GameLog; "
        "from mortecouille.replays.reading.verify import verify_log; "
        "report = verify_log(GameLog(Path(sys.argv[1]))); "
        "print(report.first_failure); sys.exit(0 if report.ok else 1)"
    )
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "m.jsonl")], cwd=root, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def v1_lines() -> list[bytes]:
    return [
        line
        for line in (GOLDEN / "turn_started_v1.jsonl").read_bytes().splitlines()
        if b"turn-started" in line
    ]


def test_a_v1_turn_started_line_upcasts_to_v2_on_both_decode_paths() -> None:
    lines = v1_lines()
    assert lines and all(b'"v":1' in line and b"rounds" not in line for line in lines)
    assert CURRENT_VERSIONS["turn-started"] == 2
    for number, line in enumerate(lines, 1):
        event = decode_line(line, number)  # the typed decode sees v 1: the slow path upcasts
        assert isinstance(event, TurnStarted)
        assert (event.v, event.rounds) == (2, 1)
        assert event.hash == json.loads(line)["hash"]  # the envelope survives the upcast
    batch = decode_lines(b"\n".join(lines) + b"\n")  # the batch path falls back per line
    assert [(type(e), e.v, e.rounds) for e in batch] == [(TurnStarted, 2, 1)] * len(lines)
    mixed = decode_lines((GOLDEN / "turn_started_v1.jsonl").read_bytes())
    assert all(e.v == CURRENT_VERSIONS[type(e).__struct_config__.tag] for e in mixed)  # type: ignore[index]


def test_a_v1_line_that_carries_rounds_keeps_them_and_new_lines_are_written_as_v2() -> None:
    line = b'{"hash":"h","prev":"p","rounds":4,"seq":3,"turn":2,"type":"turn-started","v":1}'
    event = decode_line(line, 4)
    assert isinstance(event, TurnStarted) and (event.v, event.rounds) == (2, 4)
    _, written = stamp(TurnStarted(turn=1, rounds=4), 0, "0" * 64)
    assert msgspec.json.decode(written)["v"] == 2


def test_a_version_newer_than_the_engine_or_a_wrong_type_is_a_corrupt_line_naming_the_field() -> None:
    with pytest.raises(CorruptLine, match=r"line 7: field `v`: turn-started version 3"):
        decode_line(b'{"hash":"h","prev":"p","seq":6,"turn":2,"type":"turn-started","v":3}', 7)
    with pytest.raises(CorruptLine, match=r"line 2: turn-started: .*rounds"):
        decode_line(
            b'{"hash":"h","prev":"p","rounds":"four","seq":1,"turn":2,"type":"turn-started","v":1}', 2
        )


def test_every_old_version_of_every_event_type_has_an_upcaster() -> None:
    """Bumping ``v`` without an upcaster would make old logs unreadable."""
    missing = [
        (tag, version)
        for tag, current in CURRENT_VERSIONS.items()
        for version in range(1, current)
        if (tag, version) not in UPCASTERS
    ]
    assert not missing
    assert set(CURRENT_VERSIONS) == set(EVENT_TYPES)


def event_classes_defined_in_the_events_package() -> list[type[Event]]:
    """Every public ``Event`` subclass declared by a module of ``mortecouille.events``, found by walking
    them (a private class such as ``_ShipSetUpOwnFields`` only lends its fields to a public one)."""
    found: list[type[Event]] = []
    for module_info in pkgutil.walk_packages(mortecouille.events.__path__, "mortecouille.events."):
        module = importlib.import_module(module_info.name)
        for _, member in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(member, Event)
                and member is not Event
                and member.__module__ == module.__name__
                and not member.__name__.startswith("_")
            ):
                found.append(member)
    return found


def test_every_event_class_is_in_the_schema_table_exactly_once_with_a_unique_tag() -> None:
    defined = event_classes_defined_in_the_events_package()
    assert len(defined) == len(set(defined)) >= 30
    assert sorted(c.__name__ for c in EVENT_CLASSES) == sorted(c.__name__ for c in defined)
    assert len(EVENT_CLASSES) == len(set(EVENT_CLASSES)), "a class is listed twice"
    tags = [event_tag(c) for c in EVENT_CLASSES]
    assert len(tags) == len(set(tags)), "two classes share a tag"
    assert dict(EVENT_TYPES) == dict(zip(tags, EVENT_CLASSES, strict=True))


def test_the_codec_decodes_every_type_of_the_table_without_importing_anything_else() -> None:
    """No side-effect import: a fresh process that imports only the codec reads every event type."""
    script = (
        "import sys; from mortecouille.events.codec import EVENT_TYPES, event_decoder; "
        "assert not any(m.startswith('mortecouille.core') for m in sys.modules), sorted(sys.modules); "
        "print(len(EVENT_TYPES))"
    )
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert int(done.stdout) == len(EVENT_CLASSES)
    for line in (GOLDEN / "mortecouille.jsonl").read_bytes().splitlines()[:5]:
        assert isinstance(decode_line(line, 1), Event)
