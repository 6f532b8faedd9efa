"""The narrators of a blockade game: the shared ones (:mod:`mortecouille.core.narration`) and
the movement tokens, in one explicit table, :data:`NARRATORS`, with the phase of each event
type that names none (:data:`PHASES`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from mortecouille.core.blockade.rounds import BLOCKADE_KINDS
from mortecouille.core.errors import Phrase, phrase
from mortecouille.core.narration import (
    NOTHING,
    SHARED_NARRATORS,
    SHARED_PHASES,
    ExplainContext,
    Narrator,
    damage_narrator,
    num,
    tell_collision,
)
from mortecouille.core.phases import ORDERS, Phase
from mortecouille.events.base import Event
from mortecouille.events.blockade import TokensGiven
from mortecouille.events.movement import CollisionOccurred, DamageTaken


def damage_of_maximum(ctx: ExplainContext, ship_id: str) -> Phrase | str:
    """A damaged ship's damage so far against its kind's maximum (P3)."""
    ship = ctx.after.ships.get(ship_id)
    if ship is None:
        return NOTHING
    kind = BLOCKADE_KINDS.get(ship.kind)
    if kind is None:
        return phrase("; {damage} taken in all", damage=num(ship.damage))
    return phrase("; {damage} of {most} taken", damage=num(ship.damage), most=num(kind.max_damage))


def tell_tokens(event: TokensGiven, ctx: ExplainContext) -> Phrase:
    shown = " ".join(token or "-" for token in event.tokens)
    return phrase("{ship} gets its tokens, one per round: {tokens}", ship=event.ship, tokens=shown)


NARRATORS: Final[Mapping[type[Event], Narrator]] = {
    **SHARED_NARRATORS,
    CollisionOccurred: tell_collision,
    DamageTaken: damage_narrator(damage_of_maximum),
    TokensGiven: tell_tokens,
}

#: The phase of event types that carry no ``phase`` field of their own (P1).
PHASES: Final[Mapping[type[Event], Phase]] = {**SHARED_PHASES, TokensGiven: ORDERS}
