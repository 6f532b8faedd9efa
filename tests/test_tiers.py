"""The fast tier (``pytest -m "not (browser or postgres or slow)"``) holds no test that drives Chromium
or needs the PostgreSQL cluster: every module that reaches either carries its marker in ``pytestmark``."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from tests.helpers import ROOT

#: What a module writes when it drives a browser or needs PostgreSQL, and the marker that must say so.
REACHES: dict[str, re.Pattern[str]] = {
    "browser": re.compile(r"\b(launched_chromium|NEEDS_CHROMIUM|playwright)\b|which\(\"chromium|[\"']browser[\"']"),
    "postgres": re.compile(r"\b(postgres_server|postgres_cluster|throwaway_cluster|PostgresServer)\b"),
}
#: Fixture parameters that reach the same (the fixtures of ``tests/conftest.py``).
FIXTURES = {"browser": "browser", "postgres_server": "postgres"}
MENTIONS = re.compile("browser|chromium|playwright|postgres", re.IGNORECASE)


def module_marks(tree: ast.Module) -> set[str]:
    """The markers named in a module's top-level ``pytestmark`` (one mark or a list of them)."""
    marks: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            for part in ast.walk(node.value):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Attribute) and part.value.attr == "mark":
                    marks.add(part.attr)
    return marks


def tiers_needed(source: str, tree: ast.Module) -> set[str]:
    """The slow tiers a module reaches, by its source's words and its tests' fixture parameters."""
    needed = {tier for tier, pattern in REACHES.items() if pattern.search(source)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            needed |= {FIXTURES[arg.arg] for arg in node.args.args if arg.arg in FIXTURES}
    return needed


@functools.cache
def tiers(folder: Path) -> dict[str, tuple[set[str], set[str]]]:
    """Each test module of ``folder`` (but this one, which names every tier's words): the tiers it
    reaches and the markers its ``pytestmark`` names."""
    found = {}
    for path in sorted(folder.glob("test_*.py")):
        if path.resolve() == Path(__file__).resolve():
            continue
        source = path.read_text(encoding="utf-8")
        if not MENTIONS.search(source):  # every way of reaching a tier names one of these words
            found[path.name] = (set(), set())
            continue
        tree = ast.parse(source)
        found[path.name] = (tiers_needed(source, tree), module_marks(tree))
    return found


def unmarked(folder: Path) -> list[str]:
    """``module: marker`` for every test module of ``folder`` missing the marker of a tier it reaches."""
    return [
        f"{name}: {tier}" for name, (needed, marks) in tiers(folder).items() for tier in sorted(needed - marks)
    ]


def test_every_module_reaching_chromium_or_postgresql_carries_its_marker() -> None:
    assert unmarked(ROOT / "tests") == []


def test_the_check_sees_the_modules_of_each_tier() -> None:
    """Guards the check itself: it must see today's browser and PostgreSQL modules."""
    reached = {name: needed for name, (needed, _) in tiers(ROOT / "tests").items()}
    assert "browser" in reached["test_web_pages.py"] and "browser" in reached["test_export_html.py"]
    assert "postgres" in reached["test_store_conformance.py"] and "postgres" in reached["test_pg_turns.py"]
    assert reached["test_rules_m.py"] == set()


def test_an_unmarked_browser_or_postgresql_module_is_found(tmp_path: Path) -> None:
    (tmp_path / "test_page.py").write_text("def test_page(browser: object) -> None:\n    pass\n")
    (tmp_path / "test_store.py").write_text(
        "import pytest\n\npytestmark = pytest.mark.slow\n\n"
        "def test_store(request):\n    request.getfixturevalue('postgres_server')\n"
    )
    (tmp_path / "test_marked.py").write_text(
        "import pytest\n\npytestmark = [pytest.mark.browser, pytest.mark.postgres]\n\n"
        "def test_both(browser, postgres_server):\n    pass\n"
    )
    assert unmarked(tmp_path) == ["test_page.py: browser", "test_store.py: postgres"]
