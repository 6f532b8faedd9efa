"""Events shared by both rulesets: a game's life cycle and its dice (rules D1-D2, T3)."""

from typing import Any, ClassVar

from mortecouille.events.base import Event
from mortecouille.events.board import Board


class GameCreated(Event, tag="game-created", frozen=True):
    """The first line of every log.

    A seeded game commits to its secret seed (D2), which :class:`GameEnded` reveals: new games
    publish ``seed_hmac``, HMAC-SHA256 of the seed keyed with ``seed_salt``, a random salt of
    their own (no table of precomputed seeds applies, and two games with one seed look unrelated);
    logs written before the salt have ``seed_sha256``, the seed's plain SHA-256, still accepted.
    A fork records where it came from.
    """

    game: str
    ruleset: str
    players: tuple[str, ...]
    budget: int
    board: Board
    rules_version: str
    dice_mode: str
    seed_sha256: str | None = None
    forked_from: str | None = None
    forked_at_seq: int | None = None
    #: a one-turn situation built by ``scenario``: ships are set up, not bought
    scenario: bool = False
    #: the salted commitment of new seeded games: added last, with ``None`` defaults,
    #: so older lines keep their bytes and hashes
    seed_salt: str | None = None
    seed_hmac: str | None = None
    #: how the dice derive from the seed: ``None``, the seed and the roll's identity
    #: alone (D2); ``"contributed"``, each turn's dice also from every player's revealed
    #: contribution (D3). Written only when set (``omitted_when_none``), so every line of a game
    #: of the older scheme keeps its bytes and hash, old logs and new games alike
    dice_scheme: str | None = None

    omitted_when_none: ClassVar[tuple[str, ...]] = ("dice_scheme",)


class DieRolled(Event, tag="die-rolled", frozen=True):
    """One die (D1). ``index`` counts this ship's rolls for this purpose in this phase (D2)."""

    turn: int
    phase: str
    ship: str | None
    purpose: str
    index: int
    sides: int
    value: int
    source: str


class TurnStarted(Event, tag="turn-started", frozen=True, kw_only=True):
    """Opens the resolution of a turn; ``rounds`` is how many rounds it plays (4 in blockade, P1).

    Version 2 added ``rounds``; a version 1 line has none and is read as one round
    (see :func:`turn_started_v1_to_v2`).
    """

    turn: int
    rounds: int = 1
    v: int = 2


def turn_started_v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
    """A v1 ``turn-started`` line has no ``rounds``: v1 turns played one round each.

    Listed in :data:`mortecouille.events.schema.UPCASTERS` for ``("turn-started", 1)``.

    The upcaster sees the raw line only (not the game's ruleset), so it cannot
    tell a blockade turn from a mortecouille one; v1 logs were written when every
    turn played one round, which is the only default it can justify. A v1 line
    that does carry ``rounds`` keeps it.
    """
    raw.setdefault("rounds", 1)
    return raw


class TurnEnded(Event, tag="turn-ended", frozen=True):
    """Closes a turn with the state hash of the position it leaves, for ``verify``."""

    turn: int
    state_hash: str
    rules: tuple[str, ...] = ()


class GameEnded(Event, tag="game-ended", frozen=True):
    """The end of a game (T3, or the referee's decision); reveals the seed (D2)."""

    reason: str
    winner: str | None = None
    seed: str | None = None
    rules: tuple[str, ...] = ()


class LossRecorded(Event, tag="loss-recorded", frozen=True):
    """``repair --record-loss``: complete lines the head anchor vouched for were gone from the log
    (a cut, not an unfinished append), and the referee chose to go on from what remains with the
    loss on the record rather than hide it. The anchor named seq ``anchored_seq`` with hash
    ``anchored_hash``; ``lost`` of those events were missing; ``cut_bytes`` of torn tail were cut.
    It changes no state: the game goes on from the events that remain."""

    anchored_seq: int
    anchored_hash: str
    lost: int
    cut_bytes: int = 0

