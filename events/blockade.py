"""Events of the blockade ruleset's orders (P1)."""

from mortecouille.events.base import Event


class TokensGiven(Event, tag="tokens-given", frozen=True):
    """A ship's movement tokens for the current turn, one per round: F, L, R or none (P1)."""

    ship: str
    tokens: tuple[str | None, ...]
    rules: tuple[str, ...] = ("P1",)
