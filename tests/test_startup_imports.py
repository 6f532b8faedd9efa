"""Start-up (issue 16): a command imports what it uses. ``--help`` and ``state`` load neither the
analytics (duckdb), nor the service (litestar, uvicorn, asyncio), nor the network (urllib.request,
http, ssl), nor structlog while nothing is logged; and ``--help`` lists every command with its own
summary without importing the command modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from mortecouille.cli.main import COMMAND_TABLE, COMMANDS, cli
from tests.cli_helpers import run

HEAVY = ("duckdb", "litestar", "uvicorn", "asyncio", "urllib.request", "http", "http.client", "ssl", "structlog")

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

#: What ``state`` on a mortecouille game never needs either (issue 16, the CLI's start-up): the
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
