"""The ``>>>`` examples in the docstrings a newcomer reads first run, and stay true.

The modules are listed here, explicitly: a module whose examples are not run is a module whose
examples may silently rot. Each listed module must have at least one example.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

#: Modules with runnable examples: a fold, square names, the gunnery table and exact odds, the C3
#: collision, the archive's column types, a request body's nesting.
MODULES_WITH_EXAMPLES: tuple[str, ...] = (
    "mortecouille.core.game",
    "mortecouille.core.board.geometry",
    "mortecouille.core.mortecouille.gunnery",
    "mortecouille.core.mortecouille.collision_damage",
    "mortecouille.replays.analytics.schema",
    "mortecouille.web.guards",
)

@pytest.mark.parametrize("name", MODULES_WITH_EXAMPLES)
def test_the_examples_of_the_module_run_and_hold(name: str) -> None:
    module = importlib.import_module(name)
    examples = sum(len(test.examples) for test in doctest.DocTestFinder().find(module))
    assert examples > 0, f"{name} is listed but has no >>> example"
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=False)
    assert result.failed == 0, f"{result.failed} example(s) of {name} failed: see the captured stdout"
