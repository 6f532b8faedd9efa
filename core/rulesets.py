"""Every ruleset, by name: the one table that ``decide``, ``evolve``, ``fold``, ``scenario`` and
the command line read (a CreateGame names one of its keys).

A ruleset's module (its deciders, turn resolution, narrators) is imported the first time the
table is asked for that ruleset, not when this module is: a command on a game of one ruleset
never compiles the other (the CLI's start-up)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from mortecouille.core.errors import BadInput
from mortecouille.core.ruleset import Ruleset

#: name -> (module, attribute) of every ruleset, in the order they are listed to users
_WHERE: dict[str, tuple[str, str]] = {
    "mortecouille": ("mortecouille.core.mortecouille.ruleset", "MORTECOUILLE"),
    "blockade": ("mortecouille.core.blockade.ruleset", "BLOCKADE"),
}


class _Rulesets(Mapping[str, Ruleset]):
    """The read-only table of rulesets, each imported when first looked up."""

    def __init__(self) -> None:
        self._loaded: dict[str, Ruleset] = {}

    def __getitem__(self, name: str) -> Ruleset:
        loaded = self._loaded.get(name)
        if loaded is None:
            module, attribute = _WHERE[name]  # KeyError for any other name, as a dict's
            loaded = getattr(importlib.import_module(module), attribute)
            assert isinstance(loaded, Ruleset) and loaded.name == name, module
            self._loaded[name] = loaded
        return loaded

    def __contains__(self, name: object) -> bool:
        return name in _WHERE

    def __iter__(self) -> Iterator[str]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)


RULESETS: Mapping[str, Ruleset] = _Rulesets()


def ruleset_named(name: str, field: str = "ruleset") -> Ruleset:
    """The ruleset called ``name``; any other name is refused (BadInput naming ``field``), naming
    the ones there are."""
    if name not in RULESETS:
        raise BadInput(field, "{name!r} is not one of {rulesets}", name=name, rulesets=", ".join(RULESETS))
    return RULESETS[name]
