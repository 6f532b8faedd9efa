"""Each ruleset's narrators and event phases, looked up by the ruleset's name.

Apart from :mod:`mortecouille.core.narration` because the rulesets' tables build on that
module: the one dict here is what the ruleset table of issue 11 takes over.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, NamedTuple

from mortecouille.core.blockade import narrators as blockade
from mortecouille.core.errors import BadInput
from mortecouille.core.mortecouille import narrators as mortecouille
from mortecouille.core.narration import Narrator
from mortecouille.core.phases import Phase
from mortecouille.events.base import Event


class RulesetNarration(NamedTuple):
    """How ``explain`` tells one ruleset's events: a narrator per event type, and the phase
    of the event types whose own ``phase`` field does not name a phase of the turn."""

    narrators: Mapping[type[Event], Narrator]
    phases: Mapping[type[Event], Phase]


NARRATION_BY_RULESET: Final[Mapping[str, RulesetNarration]] = {
    "mortecouille": RulesetNarration(mortecouille.NARRATORS, mortecouille.PHASES),
    "blockade": RulesetNarration(blockade.NARRATORS, blockade.PHASES),
}


def narration_for(ruleset: str) -> RulesetNarration:
    """The narrators and event phases of ``ruleset``; an unknown name is refused."""
    narration = NARRATION_BY_RULESET.get(ruleset)
    if narration is None:
        raise BadInput("ruleset", f"{ruleset!r} is not one of {', '.join(NARRATION_BY_RULESET)}")
    return narration


def narrators_for(ruleset: str) -> Mapping[type[Event], Narrator]:
    """The narrator of each event type ``ruleset`` logs."""
    return narration_for(ruleset).narrators
