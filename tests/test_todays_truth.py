"""Code and docs state today's truth: no note of the tracker's numbered items, whose history
belongs in ``git log``, in the code, tests, docs, benchmarks or pages."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from tests.helpers import ROOT

#: A reference to a numbered item of the tracker ("issue" or "issues", a number, then anything):
#: spelt in two pieces so that this file does not match itself.
HISTORY_NOTE = re.compile("iss" + r"ues? #?\d", re.IGNORECASE)

#: Folders that are not the project's text: tools' caches, the virtualenv, build output.
SKIPPED = {".git", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", "out"}


def text_files(root: Path) -> Iterator[Path]:
    """Every text file under ``root``, outside :data:`SKIPPED` and the ``*.egg-info`` folders (links to
    folders are not followed: ``mortecouille/`` links to the parts walked anyway)."""
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in SKIPPED and not f.endswith(".egg-info"))
        for name in sorted(files):
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink() and b"\0" not in path.read_bytes()[:8192]:
                yield path


def history_notes(root: Path) -> list[str]:
    """``path:line: text`` of every line under ``root`` that cites a numbered tracker item."""
    found = []
    for path in text_files(root):
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if HISTORY_NOTE.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return found


def test_no_file_of_the_project_cites_a_numbered_tracker_item() -> None:
    notes = history_notes(ROOT)
    assert not notes, "state the contract or the why, not the history (it is in git log):\n" + "\n".join(notes)


def test_a_history_note_is_found_in_code_docs_and_pages(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text("Fixed in " + "Iss" + "ue 12.3.\n")
    (tmp_path / "module.py").write_text("x = 1  # see " + "iss" + "ue 16, item 2\n")
    (tmp_path / "page.html").write_text("<p>ok</p>\n<!-- " + "iss" + "ues 4 and 5 -->\n")
    (tmp_path / "clean.py").write_text("# an issue of the table, not of the tracker: 4 ships\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "lib.py").write_text("# " + "iss" + "ue 1\n")
    assert sorted(history_notes(tmp_path)) == [
        "docs/notes.md:1: Fixed in " + "Iss" + "ue 12.3.",
        "module.py:1: x = 1  # see " + "iss" + "ue 16, item 2",
        "page.html:2: <!-- " + "iss" + "ues 4 and 5 -->",
    ]
