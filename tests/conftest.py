"""Shared fixtures: a fresh games directory and helpers to build real logs; for the page tests, a
`serve` process and a Chromium of a module's own."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from mortecouille.core.dice import TableDice, seed_commitment
from mortecouille.core.game import decide
from mortecouille.core.life_cycle import CreateGame
from mortecouille.core.state import EMPTY
from mortecouille.events.board import Board
from mortecouille.events.storage.file_log import GameLog

if TYPE_CHECKING:
    from tests.web_helpers import Server

SEED = "test-seed"


def created_log(directory: Path, name: str = "g", ruleset: str = "blockade", seed: str = SEED) -> GameLog:
    log = GameLog(directory / f"{name}.jsonl")
    command = CreateGame(
        game=name,
        ruleset=ruleset,
        players=("Anne", "Bart"),
        budget=100000,
        board=Board(width=10, height=10),
        dice_mode="seeded",
        seed_sha256=seed_commitment(seed),
        rules_version="test",
    )
    log.create(decide(EMPTY, command, TableDice()))
    return log


@pytest.fixture
def games(tmp_path: Path) -> Path:
    return tmp_path / "games"


# The throw-away PostgreSQL cluster of the store conformance suite (session-scoped).
from tests.postgres_server import postgres_server  # noqa: E402, F401


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A `serve` process on a fresh games directory, shared by one module's page tests (a module
    defining its own ``server`` uses that instead)."""
    from tests.web_helpers import running_server  # only the page tests start a server

    root = tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])
    (root / "games").mkdir()
    with running_server(root / "games", root) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium driven by playwright, shared by one module's page tests."""
    from tests.web_helpers import launched_chromium

    with launched_chromium() as launched:
        yield launched


#: The tiers the full suite runs beyond the fast one (docs/testing.md), each a marker of pyproject.toml.
SLOW_TIERS = ("browser", "postgres", "service", "slow")
#: Fixtures that put a test in a slow tier whatever module it is written in.
TIER_OF_FIXTURE = {"browser": "browser", "postgres_server": "postgres", "server": "slow"}
_MODULE_TIER = re.compile(r"^pytestmark\s*=\s*(\[[^\]]*\]|[^\n]*)", re.MULTILINE)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help="the fast tier only: no test marked " + ", ".join(SLOW_TIERS) + " (docs/testing.md)",
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With ``--fast``, a module whose ``pytestmark`` names a slow tier is not even imported."""
    if not (config.getoption("fast") and collection_path.name.startswith("test_") and collection_path.suffix == ".py"):
        return None
    found = _MODULE_TIER.search(collection_path.read_text(encoding="utf-8"))
    return bool(found and any(f"pytest.mark.{tier}" in found.group(1) for tier in SLOW_TIERS)) or None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that asks for Chromium, the PostgreSQL cluster or a ``serve`` process is out of the fast
    tier; with ``--fast``, every test of a slow tier is deselected."""
    for item in items:
        for fixture in sorted(TIER_OF_FIXTURE.keys() & set(getattr(item, "fixturenames", ()))):
            item.add_marker(TIER_OF_FIXTURE[fixture])
    if config.getoption("fast"):
        slow = [item for item in items if any(item.get_closest_marker(tier) for tier in SLOW_TIERS)]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if not any(item.get_closest_marker(tier) for tier in SLOW_TIERS)]
