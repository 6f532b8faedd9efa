"""Rules editions: which rule corrections apply to a game, by the rules version it was created with.

Every game's first event (``GameCreated``) records its ``rules_version``, and the state keeps it.
A correction that changes what happens in a turn applies only to the
games created under an edition that lists it: a game played before the correction keeps
re-deriving, turn by turn, exactly as it was played (``verify``), and its state hashes never
move. The table is data: a new edition is a new row, never a new ``if`` on a version string.

A correction that only refuses a purchase (item 16, continuous-burst on a ship that can never
burst) changes no log, so it is not an edition flag: it applies to every edition (see RULES.md, S4).
"""

from __future__ import annotations

from typing import Final

import msgspec

from mortecouille.core.errors import BadInput


class Edition(msgspec.Struct, frozen=True, kw_only=True):
    """The corrections one rules version applies (RULES.md, "Rules editions")."""

    rules_version: str
    #: K: a ship whose catapult countdown reaches 0 through hits sinks at once, in the combat
    #: phase ("coule immédiatement"), so it neither moves nor rams that turn; before, it left at
    #: the end of the turn
    immediate_catapult_sinking: bool = False
    #: C6: a fireship's barrels explode on its first impact only, and the explosion alone does not
    #: sink it ("jusqu'à qu'il soit coulé ou sorte de l'aire de jeu"): it sails on; before, it sank
    fireship_survives_impact: bool = False

    @property
    def corrections(self) -> tuple[str, ...]:
        """The names of the corrections this edition applies, in declaration order."""
        return tuple(
            name for name in self.__struct_fields__ if name != "rules_version" and getattr(self, name)
        )


#: Every edition the engine can referee, by rules version (the keys of ``catalogue.CATALOGUES``).
EDITIONS: Final[dict[str, Edition]] = {
    # the rules as first implemented
    "2026.1": Edition(rules_version="2026.1"),
    # the French source read again: K and the C6 ruling
    "2026.2": Edition(
        rules_version="2026.2",
        immediate_catapult_sinking=True,
        fireship_survives_impact=True,
    ),
}


def edition_for(rules_version: str) -> Edition:
    """The edition of ``rules_version``; BadInput naming ``rules_version`` if the engine does not
    know it (a log written by a later engine, or edited), rather than guessing which rules apply."""
    try:
        return EDITIONS[rules_version]
    except KeyError:
        known = ", ".join(sorted(EDITIONS))
        raise BadInput(
            "rules_version",
            "unknown rules version {rules_version!r}: this engine referees {known}; a game is played "
            "and re-derived only with the rules it was created with",
            rules_version=rules_version,
            known=known,
        ) from None
