"""RULES.md's code pointers follow the code: each `path/module.name` it cites exists."""

from __future__ import annotations

import importlib
import re

from tests.helpers import ROOT

#: A code pointer: a module path under one of the package's folders, then a dotted name in it.
POINTER = re.compile(r"`((?:core|events|bots|replays|app|cli)(?:/[a-z_]+)+)\.([A-Za-z_][\w.]*)`")


def code_pointers() -> list[tuple[str, str]]:
    """Every (module path, name) cited on a ``Code:`` line of RULES.md."""
    text = (ROOT / "RULES.md").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.startswith("Code:")]
    return [(m.group(1), m.group(2)) for line in lines for m in POINTER.finditer(line)]


def test_rules_md_cites_code_for_its_rules() -> None:
    pointers = code_pointers()
    assert len(pointers) >= 200, f"only {len(pointers)} code pointers found: has the format changed?"


def test_every_code_pointer_of_rules_md_names_something_that_exists() -> None:
    missing = []
    for path, name in code_pointers():
        module = importlib.import_module("mortecouille." + path.replace("/", "."))
        target: object = module
        for part in name.split("."):
            if part in getattr(target, "__slots__", ()):
                target = part  # an attribute every instance carries, declared by __slots__
                continue
            fields = getattr(target, "__struct_fields__", None) or getattr(target, "__annotations__", {})
            if not hasattr(target, part) and part in fields:
                target = part  # a field without a class-level default
                continue
            if not hasattr(target, part):
                missing.append(f"{path}.{name}")
                break
            target = getattr(target, part)
    assert missing == [], "RULES.md cites code that does not exist:\n" + "\n".join(missing)
