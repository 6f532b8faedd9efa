"""Every ruleset, by name: the one table that ``decide``, ``evolve``, ``fold``, ``scenario`` and
the command line read (a CreateGame names one of its keys)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from mortecouille.core.blockade.ruleset import BLOCKADE
from mortecouille.core.errors import BadInput
from mortecouille.core.mortecouille.ruleset import MORTECOUILLE
from mortecouille.core.ruleset import Ruleset

RULESETS: Mapping[str, Ruleset] = MappingProxyType({r.name: r for r in (MORTECOUILLE, BLOCKADE)})


def ruleset_named(name: str, field: str = "ruleset") -> Ruleset:
    """The ruleset called ``name``; any other name is refused (BadInput naming ``field``), naming
    the ones there are."""
    ruleset = RULESETS.get(name)
    if ruleset is None:
        raise BadInput(field, f"{name!r} is not one of {', '.join(RULESETS)}")
    return ruleset
