"""Start-up: a command imports what it uses. ``--help`` and ``state`` load neither the
analytics (duckdb), nor the service (litestar, uvicorn, asyncio), nor the network (urllib.request,
http, ssl), nor ICU (the confusable names' tables), nor structlog while nothing is logged; and
``--help`` lists every command with its own summary without importing the command modules."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import msgspec
import pytest

from mortecouille.app.snapshots import Anchor, write_snapshot
from mortecouille.cli.main import COMMAND_TABLE, COMMANDS, cli
from mortecouille.core.fleet.purchase import Fleet
from mortecouille.core.game import fold
from mortecouille.core.state import GameState
from mortecouille.events.schema import EVENT_CLASSES
from mortecouille.events.storage.file_log import GameLog
from tests.cli_helpers import run

pytestmark = pytest.mark.slow

HEAVY = (
    "duckdb",
    "litestar",
    "uvicorn",
    "asyncio",
    "urllib.request",
    "http",
    "http.client",
    "ssl",
    "structlog",
    "icu",  # PyICU, for the names a game takes in (core/limits.skeleton), not for reading one
)

PROBE = """
import runpy, sys, json, atexit
def report():
    sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
atexit.register(report)
sys.argv = ["mortecouille", *ARGS]
runpy.run_module("mortecouille", run_name="__main__")
"""


def modules_loaded_by(*args: str, games: Path | None = None) -> set[str]:
    """The modules a fresh interpreter has loaded once ``mortecouille ARGS`` has run."""
    env = {**os.environ}
    if games is not None:
        env["MORTECOUILLE_GAMES"] = str(games)
    code = PROBE.replace("ARGS", repr(list(args)))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    marker = done.stderr.rindex("MODULES ")
    return set(json.loads(done.stderr[marker + len("MODULES ") :].splitlines()[0]))


def test_help_imports_no_heavy_module_and_no_command_module() -> None:
    loaded = modules_loaded_by("--help")
    assert not loaded & set(HEAVY)
    assert not {name for name in loaded if name.startswith("mortecouille.cli.") and "_command" in name}


@pytest.mark.parametrize("args", [("state", "g"), ("order", "g", "Nobody", "advance"), ("log", "g")])
def test_a_game_command_imports_no_heavy_module(tmp_path: Path, args: tuple[str, ...]) -> None:
    games = tmp_path / "games"
    assert run(games, "new", "g", "--ruleset", "blockade", "--players", "A,B").exit_code == 0
    loaded = modules_loaded_by(*args, games=games)
    assert "mortecouille.core.game" in loaded  # the probe saw the command run
    assert not loaded & set(HEAVY)


#: What ``order`` on a mortecouille game never needs: it runs the command path (``app.commands``)
#: but sends no idempotency key (the service's), resolves no turn, reads no scenario or turn index
#: and tells no story (module names: a package covers its modules).
NOT_FOR_ORDER = (
    "mortecouille.app.idempotency",
    "mortecouille.app.turn_index",
    "mortecouille.core.readiness",
    "mortecouille.core.scenario",
    "mortecouille.core.mortecouille.scenario",
    "mortecouille.core.mortecouille.narrators",
    "mortecouille.core.mortecouille.turn",
    "mortecouille.core.blockade",
    "mortecouille.app.seats",
    "mortecouille.web",
    "mortecouille.replays.analytics",
    "mortecouille.replays.pictures",
)

#: What ``state`` on a mortecouille game never needs either (the CLI's start-up): the
#: command path itself (``state`` reads through ``app.games``: no locking, dice or deciding),
#: resolving a turn (its phases, the movement, the gunnery), giving orders (their checks), ``new``
#: and the seats' commands, and the standard library modules only a rare path uses (a secret
#: drawn, a name suggested, logging's levels, a seed's HMAC). A plain ``state GAME`` is run by the
#: launcher (``cli.launch``) without click: neither click nor what it pulls (``gettext`` and
#: ``locale`` for its messages, ``inspect`` is msgspec's too), nor the click group and commands.
NOT_FOR_STATE = (
    *NOT_FOR_ORDER,
    "click",
    "gettext",
    "locale",
    "hmac",
    "mortecouille.cli.main",
    "mortecouille.cli.shared",
    "mortecouille.cli.game_commands",
    "mortecouille.app.commands",
    "mortecouille.core.mortecouille.combat",
    "mortecouille.core.mortecouille.movement",
    "mortecouille.core.mortecouille.collisions",
    "mortecouille.core.mortecouille.upkeep",
    "mortecouille.core.mortecouille.order_checks",
    "mortecouille.core.mortecouille.gunnery",
    "mortecouille.core.mortecouille.maneuver",
    "mortecouille.core.board.movement",
    "mortecouille.cli.seat_commands",
    "mortecouille.cli.new_command",
    "secrets",
    "difflib",
    "logging",
    "dataclasses",
    "fractions",
)


def game_with_a_ship(tmp_path: Path) -> Path:
    """A games folder holding ``g``, a mortecouille game where A bought Hope."""
    games = tmp_path / "games"
    assert run(games, "new", "g", "--players", "A,B", "--budget", "100000").exit_code == 0
    assert run(games, "buy", "g", "A", "red-small", "Hope").exit_code == 0
    return games


def imported_of(loaded: set[str], never: tuple[str, ...]) -> set[str]:
    """The modules of ``loaded`` that are, or lie in, one of ``never``."""
    return {name for name in loaded if name.startswith(never)}


def test_state_of_a_mortecouille_game_imports_only_what_showing_it_needs(tmp_path: Path) -> None:
    loaded = modules_loaded_by("state", "g", games=game_with_a_ship(tmp_path))
    assert "mortecouille.core.mortecouille.ruleset" in loaded  # the probe saw the game folded
    assert "mortecouille.replays.reading.describe" in loaded  # and shown
    assert "mortecouille.cli.launch" in loaded  # by the launcher
    assert not imported_of(loaded, NOT_FOR_STATE)


#: What ``state`` never needs when the game's snapshot stands on its log's last line (a finished
#: game's state, a second look): nothing is folded, so neither the fold (``core.game``), nor the
#: rulesets' table, nor the game's ruleset and its evolvers; nor the rulings (the state's
#: caption is told without them); nor what only a store that keeps its snapshot itself returns
#: (PostgreSQL's ``StoredSnapshot``).
NOT_FOR_STATE_FROM_A_CURRENT_SNAPSHOT = (
    *NOT_FOR_STATE,
    "mortecouille.core.game",
    "mortecouille.core.rulesets",
    "mortecouille.core.ruleset",
    "mortecouille.core.mortecouille.ruleset",
    "mortecouille.core.mortecouille.evolution",
    "mortecouille.core.fleet.commands",
    "mortecouille.core.contributions",
    "mortecouille.core.rulings",
    "mortecouille.events.storage.stored_snapshot",
)


def snapshot_at_the_end(games: Path, game: str) -> None:
    """Write ``game``'s snapshot on its log's last line, as a command that folded past
    :data:`~mortecouille.app.snapshots.SNAPSHOT_EVERY` events would have."""
    log_ = GameLog(games / f"{game}.jsonl")
    events = log_.read()
    last = events[-1]
    anchor = Anchor(last.seq, last.hash, log_.path.stat().st_size)
    assert write_snapshot(log_, anchor, fold(events))


def state_printed(games: Path, game: str) -> str:
    """What ``mortecouille state GAME`` prints, run as a referee runs it (a fresh process)."""
    done = subprocess.run(
        [sys.executable, "-m", "mortecouille", "state", game],
        capture_output=True, text=True, timeout=120, env={**os.environ, "MORTECOUILLE_GAMES": str(games)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_state_from_a_current_snapshot_imports_neither_the_fold_nor_the_ruleset(tmp_path: Path) -> None:
    games = game_with_a_ship(tmp_path)
    folded = state_printed(games, "g")
    snapshot_at_the_end(games, "g")
    loaded = modules_loaded_by("state", "g", games=games)
    assert "mortecouille.app.snapshots" in loaded  # the probe saw the snapshot read
    assert "mortecouille.replays.reading.describe" in loaded  # and the state shown
    assert not imported_of(loaded, NOT_FOR_STATE_FROM_A_CURRENT_SNAPSHOT)
    assert state_printed(games, "g") == folded


def test_state_with_events_past_its_snapshot_folds_them_with_the_ruleset(tmp_path: Path) -> None:
    games = game_with_a_ship(tmp_path)
    snapshot_at_the_end(games, "g")
    assert run(games, "buy", "g", "B", "red-small", "Luck").exit_code == 0
    loaded = modules_loaded_by("state", "g", games=games)
    assert "mortecouille.core.mortecouille.ruleset" in loaded
    assert "Luck" in state_printed(games, "g")


def schema_and_state_structs() -> list[type[msgspec.Struct]]:
    """Every Struct class of the log's schema (each event type and the classes they are made of)
    and of the state a snapshot holds: what msgspec's decoders of a log line and of a snapshot
    are built from."""
    state_modules = {"mortecouille.core.state", "mortecouille.core.fleet.purchase"}
    modules = {cls.__module__ for cls in EVENT_CLASSES} | state_modules
    return [
        value
        for name in sorted(modules)
        for value in vars(importlib.import_module(name)).values()
        if isinstance(value, type) and issubclass(value, msgspec.Struct) and value.__module__ == name
    ]


def test_the_schema_and_the_state_hold_their_annotations_evaluated_not_as_text() -> None:
    """msgspec evaluates an annotation given as text (``from __future__ import annotations``) by
    compiling it (``typing.ForwardRef``) when it builds a decoder: 428 compilations for the event
    decoder, 95 for the state's, about a tenth of a ``state`` that folds events."""
    structs = schema_and_state_structs()
    assert GameState in structs and Fleet in structs and len(structs) > len(EVENT_CLASSES)
    as_text = {
        f"{cls.__module__}.{cls.__qualname__}.{field}"
        for cls in structs
        for field, annotation in vars(cls).get("__annotations__", {}).items()
        if isinstance(annotation, str)
    }
    assert not as_text


def test_order_on_a_mortecouille_game_imports_only_what_giving_it_needs(tmp_path: Path) -> None:
    loaded = modules_loaded_by("order", "g", "Hope", "advance", games=game_with_a_ship(tmp_path))
    assert "mortecouille.app.commands" in loaded  # the probe saw the command path run
    assert "mortecouille.core.mortecouille.ruleset" in loaded
    assert not imported_of(loaded, NOT_FOR_ORDER)


def test_a_command_that_logs_still_logs_through_structlog(tmp_path: Path) -> None:
    games = tmp_path / "games"
    assert run(games, "new", "g", "--ruleset", "blockade", "--players", "A,B").exit_code == 0
    done = subprocess.run(
        [sys.executable, "-m", "mortecouille", "--games-dir", str(games), "--log-json", "-v", "place",
         "g", "S1", "B2", "--kind", "sloop", "--owner", "A"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    logged = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert any(entry.get("event") == "appended" and entry.get("level") == "info" for entry in logged)


def test_the_command_table_names_every_command_of_every_module_once() -> None:
    assert [name for name, _, _ in COMMAND_TABLE] == [command.name for command in COMMANDS]
    assert len({name for name, _, _ in COMMAND_TABLE}) == len(COMMAND_TABLE)
    for name, module, _ in COMMAND_TABLE:
        assert cli.commands[name].callback is not None
        assert cli.commands[name].callback.__module__ == f"mortecouille.cli.{module}"


@pytest.mark.parametrize("limit", [30, 45, 80, 1000])
def test_each_summary_in_the_table_is_the_one_its_command_gives(limit: int) -> None:
    for name, _, summary in COMMAND_TABLE:
        own = cli.commands[name].get_short_help_str(limit)
        assert click.Command(name, help=summary).get_short_help_str(limit) == own, name


def test_the_cli_leaves_the_garbage_collector_running_with_its_start_up_objects_frozen() -> None:
    code = "import gc, mortecouille.cli.main; print(gc.isenabled(), gc.get_freeze_count() > 0)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["True", "True"], done.stderr
    paused = "import gc; gc.disable(); import mortecouille.cli.main; print(gc.isenabled())"
    done = subprocess.run([sys.executable, "-c", paused], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["False"], done.stderr  # a caller's own choice is kept
