"""Events of the dice nobody can foresee (rule D3).

In a game of the ``contributed`` dice scheme, the dice of a turn derive from the committed game
seed (D2) *and* a random contribution of every player: each player commits to theirs with their
orders (:class:`DiceContributionCommitted`), the turn locks (:class:`TurnLocked`: no order,
token or commitment changes after it), then each contribution is revealed and checked against its
commitment (:class:`DiceContributionRevealed`). A player who withholds their reveal cannot veto
the turn: the referee resolves without it, logged with the reason (:class:`DiceContributionAbsent`).
"""

from mortecouille.events.base import Event


class DiceContributionCommitted(Event, tag="dice-contribution-committed", frozen=True):
    """``player``'s commitment for ``turn``: the SHA-256 (hex) of their secret contribution, 32 hex
    digits of fresh randomness. One per player and turn; a later one replaces it until the lock."""

    player: str
    turn: int
    commitment: str


class TurnLocked(Event, tag="turn-locked", frozen=True):
    """The inputs of ``turn`` are final: no order, token, purchase or commitment is taken for it
    any more, and the players' contributions may be revealed (D3)."""

    turn: int


class DiceContributionRevealed(Event, tag="dice-contribution-revealed", frozen=True):
    """``player``'s contribution for ``turn``, revealed after the lock; it matches their commitment."""

    player: str
    turn: int
    contribution: str


class DiceContributionAbsent(Event, tag="dice-contribution-absent", frozen=True):
    """``player`` committed for ``turn`` but never revealed: the referee resolved without their
    contribution (counted as absent), for ``reason``. Withholding can delay a turn, never veto it."""

    player: str
    turn: int
    reason: str
