"""``make_golden`` checks by default and rewrites only when told why: regenerating the
golden files from the current code can no longer hide a change of the log format."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.golden.make_golden import GOLDEN_FILES
from tests.helpers import GOLDEN, ROOT

pytestmark = pytest.mark.slow


def make_golden(*args: str) -> subprocess.CompletedProcess[str]:
    """The script as a referee runs it (``python -m tests.golden.make_golden``)."""
    command = [sys.executable, "-m", "tests.golden.make_golden", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def committed_copy(folder: Path) -> dict[str, bytes]:
    """The golden files and their README copied to ``folder``, expected.json edited as if the code
    had drifted from it; the bytes of every file."""
    for name in (*GOLDEN_FILES, "README.md"):
        shutil.copyfile(GOLDEN / name, folder / name)
    expected = json.loads((folder / "expected.json").read_text())
    expected["blockade.jsonl"]["state_hash"] = "0" * 64
    (folder / "expected.json").write_text(json.dumps(expected, indent=2, sort_keys=True) + "\n")
    return {path.name: path.read_bytes() for path in folder.iterdir()}


def test_make_golden_by_default_reports_a_difference_and_writes_nothing(tmp_path: Path) -> None:
    before = committed_copy(tmp_path)
    result = make_golden(str(tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "expected.json: differs from line" in result.stdout
    assert "nothing written" in result.stdout and "--rewrite" in result.stdout
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


def test_make_golden_rewrites_only_with_a_reason_and_records_it_in_the_changelog(tmp_path: Path) -> None:
    before = committed_copy(tmp_path)
    refused = make_golden(str(tmp_path), "--rewrite", " ")
    assert refused.returncode == 2 and "--rewrite needs the reason" in refused.stderr
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before
    done = make_golden(str(tmp_path), "--rewrite", "state hashes now cover the wind")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((tmp_path / "expected.json").read_text())["blockade.jsonl"]["state_hash"] != "0" * 64
    readme = (tmp_path / "README.md").read_text()
    changelog = readme[readme.index("## Changelog") :]
    assert "expected.json" in changelog and "state hashes now cover the wind" in changelog
    again = make_golden(str(tmp_path))
    assert again.returncode == 0 and "are what the current code builds" in again.stdout
