"""The house rules that tools can check: ruff and mypy --strict are clean."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent


def run_tool(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    tool = BIN / name if (BIN / name).exists() else shutil.which(name)
    if tool is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return subprocess.run([str(tool), *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean() -> None:
    result = run_tool("ruff", "check", "core", "cli", "events", "replays", "app", "web", "bots", "mortecouille", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = run_tool("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_test_reads_a_path_outside_the_repository() -> None:
    """A test that reads a machine's own file skips (or fails) everywhere else;
    ``/tmp``, ``/proc`` and ``/dev`` are only ever named as places an attack must not reach."""
    outside = re.compile(r"""Path\(\s*["']/(?!tmp/|proc\b|dev/)""")
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if outside.search(line)
    ]
    assert found == [], "\n".join(found)
