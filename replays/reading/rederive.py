"""Re-derivation: the log proves its own outcomes (architecture.md, ``verify``).

For every resolved turn, fold the log up to the turn's first outcome event,
run the same decider again over the logged inputs with the dice the log
recorded, and compare what it produces with what the log holds, event by
event (envelopes aside). The first divergence is reported with both versions.
"""

from __future__ import annotations

from typing import Any

import msgspec

from mortecouille.core.dice import DiceForgery, DicePolicy, LoggedDice, revealed_contributions
from mortecouille.core.errors import MortecouilleError
from mortecouille.core.game import decide, evolve
from mortecouille.core.life_cycle import ResolveTurn
from mortecouille.core.state import EMPTY, GameState
from mortecouille.events.base import Event
from mortecouille.events.codec import CorruptLine
from mortecouille.events.game import DieRolled, GameCreated, GameEnded, TurnEnded, TurnStarted
from mortecouille.replays.reading.findings import Finding

_ENVELOPE = ("seq", "prev", "hash")


def content(event: Event) -> dict[str, Any]:
    body: dict[str, Any] = msgspec.to_builtins(event)
    for key in _ENVELOPE:
        body.pop(key, None)
    return body


def turn_spans(events: list[Event]) -> list[tuple[int, int]]:
    """(first, last) indexes of every resolved turn: TurnStarted .. TurnEnded, plus a GameEnded
    that directly follows (a victory is part of the turn's outcome)."""
    spans = []
    start: int | None = None
    for index, event in enumerate(events):
        if isinstance(event, TurnStarted):
            start = index
        elif isinstance(event, TurnEnded) and start is not None:
            following = events[index + 1] if index + 1 < len(events) else None
            victory = isinstance(following, GameEnded) and following.reason == "victory"
            spans.append((start, index + 1 if victory else index))
            start = None
    return spans


def revealed_seed(events: list[Event]) -> str | None:
    """The seed a game revealed as it ended (D2), if it has."""
    return next((e.seed for e in events if isinstance(e, GameEnded) and e.seed), None)


def rederive(events: list[Event]) -> list[Finding]:
    if not events or not isinstance(events[0], GameCreated):
        return []
    spans = turn_spans(events)
    if not spans:
        return [Finding("rederive", True, "no resolved turn to re-derive")]
    rolls = [e for e in events if isinstance(e, DieRolled)]
    # a contributed game's dice (D3) are re-derived from the seed and each turn's revealed contributions
    policy = DicePolicy.of(events[0], revealed_seed(events), revealed_contributions(events))
    state: GameState = EMPTY
    position = 0
    for first, last in spans:
        while position < first:
            try:
                state = evolve(state, events[position])
            except (CorruptLine, KeyError, ValueError, TypeError, AttributeError) as error:
                tag = type(events[position]).__struct_config__.tag
                detail = f"seq {events[position].seq}: {tag} does not apply to the game ({error!r})"
                return [Finding("rederive", False, detail, events[position].seq)]
            position += 1
        logged = events[first : last + 1]
        started = logged[0]
        assert isinstance(started, TurnStarted)
        ending = logged[-1]
        reveal = ending.seed if isinstance(ending, GameEnded) else None
        command = ResolveTurn(partial=True, rounds=started.rounds, reveal_seed=reveal)
        try:
            produced = decide(state, command, LoggedDice(rolls, policy))
        except DiceForgery as error:
            return [Finding("rederive", False, str(error), error.seq)]
        except (MortecouilleError, CorruptLine, KeyError, ValueError, TypeError, AttributeError) as error:
            # a forged state can make the rules fail in ways a real game never does: report, never crash
            return [
                Finding(
                    "rederive",
                    False,
                    f"turn {started.turn}: the rules cannot resolve it again: {error!r}",
                    started.seq,
                )
            ]
        for index in range(max(len(produced), len(logged))):
            again = content(produced[index]) if index < len(produced) else None
            recorded = content(logged[index]) if index < len(logged) else None
            if again != recorded:
                # past the logged span, the divergence is the line the rules expected next
                seq = logged[index].seq if index < len(logged) else logged[-1].seq + 1
                return [
                    Finding(
                        "rederive",
                        False,
                        f"seq {seq}: the log says {msgspec.json.encode(recorded).decode()}; "
                        f"the rules give {msgspec.json.encode(again).decode()}",
                        seq,
                    )
                ]
    return [
        Finding("rederive", True, f"{len(spans)} turns re-derived: every outcome follows from the inputs")
    ]
