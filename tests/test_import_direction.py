"""The package's layers, checked on the source with ``ast``: imports only go down, only absolute, no cycles.

The layers, from the top: ``cli`` -> ``web`` -> ``app`` -> ``replays``, ``bots`` -> ``core`` -> ``events``. A
module may import its own part and any part below it; ``replays`` and ``bots`` sit side by side and
may not import each other; nothing imports ``cli`` but the ``python -m mortecouille`` entry point.
Every import names the package (``from mortecouille.core.state import ...``): a bare ``import core``
only works from the repository's folder, and a relative import hides which layer it reaches.

Every import statement counts, wherever it is: at module level, under ``if TYPE_CHECKING:`` or
inside a function. Deferring an import or keeping it for the type checker only hides an upward
dependency or a cycle from the interpreter, not from the design.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow

PACKAGE = "mortecouille"

#: The package's parts (top-level folders of the repository) and their layer, bottom = 1.
LAYERS: dict[str, int] = {"events": 1, "core": 2, "bots": 3, "replays": 3, "app": 4, "web": 5, "cli": 6}

#: ``mortecouille/__init__.py`` (a docstring and the version) sits under every part; the
#: ``python -m mortecouille`` entry point above them all.
ROOT_MODULE_LAYER = 0
ENTRY_POINT = f"{PACKAGE}.__main__"
ENTRY_POINT_LAYER = max(LAYERS.values()) + 1

class Import(NamedTuple):
    """One imported module name as written, where it is written, and its target in the package."""

    importer: str
    line: int
    written: str
    target: str | None  # the package module it loads (None: outside the package)
    level: int  # > 0 for a relative import


def module_files() -> dict[str, Path]:
    """Every module of the package by its dotted name, found through the parts' folders."""
    modules: dict[str, Path] = {}
    roots = [(ROOT / part, f"{PACKAGE}.{part}") for part in LAYERS]
    for folder, prefix in roots:
        for path in sorted(folder.rglob("*.py")):
            relative = path.relative_to(folder).with_suffix("")
            parts = [p for p in relative.parts if p != "__init__"]
            modules[".".join([prefix, *parts])] = path
    for path in sorted((ROOT / PACKAGE).glob("*.py")):
        name = PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"
        modules[name] = path
    return modules


MODULES = module_files()


def resolve(name: str) -> str | None:
    """The package module that loading ``name`` runs: itself, or its closest known parent package."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, node.lineno, alias.name, resolve(alias.name), 0)
        elif isinstance(node, ast.ImportFrom):
            written = node.module or ""
            if node.level:
                yield Import(module, node.lineno, "." * node.level + written, None, node.level)
                continue
            for alias in node.names:
                # ``from package import submodule`` loads the submodule; ``from module import name``
                # loads the module.
                yield Import(module, node.lineno, written, resolve(f"{written}.{alias.name}"), 0)


ALL_IMPORTS: list[Import] = [found for module, path in MODULES.items() for found in imports_of(module, path)]


def layer_of(module: str) -> tuple[str, int]:
    """The part a package module belongs to and that part's layer."""
    if module == PACKAGE:
        return PACKAGE, ROOT_MODULE_LAYER
    if module == ENTRY_POINT:
        return ENTRY_POINT, ENTRY_POINT_LAYER
    part = module.split(".")[1]
    return part, LAYERS[part]


def where(found: Import) -> str:
    return f"{MODULES[found.importer].relative_to(ROOT)}:{found.line}"


def test_the_walk_sees_every_part_and_the_imports_between_them() -> None:
    """Guards the test itself: an empty walk would pass everything."""
    assert {layer_of(m)[0] for m in MODULES} == set(LAYERS) | {PACKAGE, ENTRY_POINT}
    assert len(MODULES) > 80
    edges = {(layer_of(i.importer)[0], layer_of(i.target)[0]) for i in ALL_IMPORTS if i.target}
    assert {("cli", "app"), ("app", "core"), ("replays", "core"), ("core", "events")} <= edges


def test_every_import_is_absolute_through_the_package() -> None:
    bare = sorted(
        f"{where(i)}: {'relative import ' if i.level else ''}{i.written!r}"
        for i in ALL_IMPORTS
        if i.level or i.written.split(".")[0] in LAYERS
    )
    assert not bare, "import through `mortecouille.` only:\n" + "\n".join(bare)


def test_imports_only_go_down_the_layers() -> None:
    wrong = []
    for found in ALL_IMPORTS:
        if found.target is None:
            continue
        part, layer = layer_of(found.importer)
        target_part, target_layer = layer_of(found.target)
        if target_part == part:
            continue
        if target_layer >= layer:
            wrong.append(f"{where(found)}: {part} (layer {layer}) imports {found.target} (layer {target_layer})")
    assert not wrong, "imports against the layer order cli -> app -> replays, bots -> core -> events:\n" + (
        "\n".join(sorted(wrong))
    )


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for found in ALL_IMPORTS:
        if found.target is not None and found.target != found.importer:
            graph[found.importer].add(found.target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module: each holds a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return components


def one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A readable cycle through the component's first module: ``a -> b -> ... -> a``."""
    members = set(component)
    start = component[0]
    paths: dict[str, list[str]] = {start: [start]}
    queue = [start]
    while queue:
        module = queue.pop(0)
        for target in sorted(graph[module] & members):
            if target == start:
                return [*paths[module], start]
            if target not in paths:
                paths[target] = [*paths[module], target]
                queue.append(target)
    raise AssertionError(f"no cycle through {start} in {component}")


def test_no_import_cycle_between_modules() -> None:
    graph = import_graph()
    cycles = [
        " -> ".join(one_cycle(graph, component))
        for component in strongly_connected(graph)
    ]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_cycle_finder_reports_a_cycle_through_a_deferred_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert one_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def names_defined_in(path: Path) -> set[str]:
    """The names a module binds itself at its top level (functions, classes, assignments), including
    those bound under ``if TYPE_CHECKING:`` / ``else:``; imported names are not among them."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    statements: list[ast.stmt] = list(tree.body)
    while statements:
        node = statements.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.If, ast.Try)):
            statements.extend([*node.body, *node.orelse])
    return names


def borrowed_names(files: list[Path]) -> list[str]:
    """Every ``from mortecouille.X import name`` in ``files`` where ``name`` is neither a submodule of
    X nor defined by X itself: X only passes on a name it imported (a re-export shim)."""
    defined = {module: names_defined_in(path) for module, path in MODULES.items()}
    found = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.module in defined):
                continue
            for alias in node.names:
                if f"{node.module}.{alias.name}" not in MODULES and alias.name not in defined[node.module]:
                    found.append(f"{path.name}:{node.lineno}: {alias.name} from {node.module}")
    return found


def test_every_name_is_imported_from_the_module_that_defines_it() -> None:
    """No re-export shims: a name comes from its own module, so a reader finds it where it is said to be."""
    files = [*MODULES.values(), *sorted((ROOT / "tests").rglob("*.py")), *sorted((ROOT / "bench").glob("*.py"))]
    assert borrowed_names(files) == []


def test_a_re_exported_name_is_found(tmp_path: Path) -> None:
    shim = tmp_path / "uses_a_shim.py"
    shim.write_text("from mortecouille.core.game import CreateGame\nfrom mortecouille.core.game import fold\n")
    assert borrowed_names([shim]) == ["uses_a_shim.py:1: CreateGame from mortecouille.core.game"]


def test_a_part_imported_by_its_bare_name_from_the_repository_root_is_refused() -> None:
    """``import core.state`` from the repository's folder would load a second ``GameState`` and ruleset
    table beside ``mortecouille.core.state``: every part refuses its bare name, naming the package path."""
    script = (
        "import importlib, json, sys\n"
        "refused = {}\n"
        f"for part in {sorted(LAYERS)!r}:\n"
        "    try:\n"
        "        importlib.import_module(part)\n"
        "    except ImportError as error:\n"
        "        refused[part] = str(error)\n"
        "import mortecouille.core.state\n"
        "print(json.dumps({'refused': refused, 'loaded': sorted(m for m in sys.modules if m.split('.')[0] in refused)}))\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result["refused"]) == set(LAYERS), f"parts importable by their bare name: {set(LAYERS) - set(result['refused'])}"
    for part, message in result["refused"].items():
        assert f"mortecouille.{part}" in message, message
    assert result["loaded"] == [], f"modules loaded a second time under their bare name: {result['loaded']}"
