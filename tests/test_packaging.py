"""The installed project is one import package, ``mortecouille``, and shares site-packages peacefully.

The parts of the package are the repository's top-level folders (``events``, ``core``, ...), which
are common names: the PyPI project ``Events`` installs a top-level ``events`` package. Built as a
wheel and installed into a fresh virtualenv next to it, this project must neither shadow nor remove
it, and the editable install must not expose the folders as top-level packages either.

The wheel test needs the package index (for ``Events``, the build backend and our dependencies; pip's
cache usually answers); it is skipped, saying so, only when the index cannot be reached.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow

PARTS = ("events", "core", "bots", "replays", "app", "web", "cli")
#: The PyPI project whose top-level ``events`` package shares its name with our ``events`` folder.
EVENTS_REQUIREMENT = "Events==0.5"
TIMEOUT = 600


def run(*command: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run outside the repository, without PYTHONPATH, so only what is installed can be imported."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )


def check(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def source_copy(target: Path) -> Path:
    """What the wheel is built from, copied so the build leaves nothing in the repository."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, target / name)
    for part in PARTS:
        shutil.copytree(ROOT / part, target / part, ignore=ignore)
    shutil.copytree(ROOT / "mortecouille", target / "mortecouille", symlinks=True, ignore=ignore)
    return target


def test_the_editable_install_exposes_only_the_mortecouille_package(tmp_path: Path) -> None:
    script = (
        "import importlib.util, json, mortecouille; "
        f"print(json.dumps({{name: getattr(importlib.util.find_spec(name), 'origin', None) for name in {PARTS!r}}})); "
        "print(mortecouille.__file__)"
    )
    lines = check(run(sys.executable, "-c", script, cwd=tmp_path)).splitlines()
    found = {name: origin for name, origin in json.loads(lines[0]).items() if origin}
    inside = {name: origin for name, origin in found.items() if Path(origin).resolve().is_relative_to(ROOT)}
    assert not inside, f"the repository's folders import as top-level packages: {inside}"
    assert Path(lines[1]).resolve() == (ROOT / "mortecouille" / "__init__.py").resolve()
    failed = run(sys.executable, "-c", "import core", cwd=tmp_path)
    assert failed.returncode != 0 and "No module named 'core'" in failed.stderr


def test_the_wheel_installs_beside_the_pypi_events_package_and_uninstalls_cleanly(tmp_path: Path) -> None:
    downloads = tmp_path / "downloads"
    fetched = run(
        sys.executable, "-m", "pip", "download", "--no-deps", "-d", downloads, EVENTS_REQUIREMENT, cwd=tmp_path
    )
    if fetched.returncode != 0:
        pytest.skip(f"the package index is unreachable, cannot fetch {EVENTS_REQUIREMENT}:\n{fetched.stderr[-800:]}")
    (events_wheel,) = downloads.glob("*.whl")

    (tmp_path / "source").mkdir()
    source = source_copy(tmp_path / "source")
    wheels = tmp_path / "wheels"
    check(run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", wheels, source, cwd=tmp_path))
    (wheel,) = wheels.glob("mortecouille-*.whl")

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        (record,) = [n for n in names if n.endswith(".dist-info/RECORD")]
        assert archive.read(top_level).decode().split() == ["mortecouille"]
        recorded = [line.split(",")[0] for line in archive.read(record).decode().splitlines() if line]
    dist_info = record.split("/")[0]
    assert {path.split("/")[0] for path in recorded} == {"mortecouille", dist_info}
    assert {path.split("/")[0] for path in names} == {"mortecouille", dist_info}
    # the folders linked from mortecouille/ are in the wheel, as sub-packages
    for part in PARTS:
        assert f"mortecouille/{part}/__init__.py" in recorded, part
    assert {"mortecouille/events/codec.py", "mortecouille/core/state.py", "mortecouille/cli/main.py"} <= set(recorded)
    # the service's pages and their assets ship with it: every file of web/pages, and nothing else there
    pages = {
        f"mortecouille/web/{path.relative_to(ROOT / 'web').as_posix()}"
        for path in (ROOT / "web" / "pages").rglob("*")
        if path.is_file()
    }
    assert {"mortecouille/web/pages/table.html", "mortecouille/web/pages/static/common.js"} <= pages
    assert {path for path in recorded if path.startswith("mortecouille/web/pages/")} == pages

    venv = tmp_path / "venv"
    check(run(sys.executable, "-m", "venv", venv, cwd=tmp_path))
    python = venv / "bin" / "python"
    check(run(python, "-m", "pip", "install", "-q", events_wheel, cwd=tmp_path))
    check(run(python, "-m", "pip", "install", "-q", wheel, cwd=tmp_path))

    uses_pypi_events = (
        "import events; from events import Events; "
        "assert 'mortecouille' not in events.__file__, events.__file__; "
        "fired = []; hooks = Events(('on_move',)); hooks.on_move += fired.append; hooks.on_move(7); "
        "assert fired == [7], fired; print(events.__version__)"
    )
    assert check(run(python, "-c", uses_pypi_events, cwd=tmp_path)).strip() == "0.5"
    uses_ours = (
        "import mortecouille.cli.main, mortecouille.events.codec, mortecouille.core.state; "
        "from mortecouille.events.schema import EVENT_TYPES; "
        f"assert mortecouille.cli.main.__file__.startswith({str(venv)!r}), mortecouille.cli.main.__file__; "
        "print(len(EVENT_TYPES))"
    )
    assert int(check(run(python, "-c", uses_ours, cwd=tmp_path))) > 30
    assert "Usage" in check(run(venv / "bin" / "mortecouille", "--help", cwd=tmp_path))
    finds_pages = (
        "import importlib.resources as r; pages = r.files('mortecouille.web') / 'pages'; "
        "print((pages / 'player.html').is_file(), (pages / 'static' / 'common.js').is_file())"
    )
    assert check(run(python, "-c", finds_pages, cwd=tmp_path)).split() == ["True", "True"]
    for part in PARTS:
        if part != "events":
            assert run(python, "-c", f"import {part}", cwd=tmp_path).returncode != 0, part

    check(run(python, "-m", "pip", "uninstall", "-y", "mortecouille", cwd=tmp_path))
    assert check(run(python, "-c", uses_pypi_events, cwd=tmp_path)).strip() == "0.5"
    gone = run(python, "-c", "import mortecouille", cwd=tmp_path)
    assert gone.returncode != 0 and "No module named 'mortecouille'" in gone.stderr
