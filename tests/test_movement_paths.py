"""A turn played (``core.game.play_turn``) gives the events ``decide`` gives and settles on the
state they lead to before its TurnEnded: the one ``verify``'s re-derivation goes on from (so
the turn is not folded a second time).
"""

from __future__ import annotations

from mortecouille.core.dice import DicePolicy, LoggedDice, revealed_contributions
from mortecouille.core.game import decide, fold, play_turn
from mortecouille.core.life_cycle import ResolveTurn
from mortecouille.core.state import EMPTY
from mortecouille.events.base import Event
from mortecouille.events.game import DieRolled, GameCreated, GameEnded, TurnEnded, TurnStarted
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.rederive import revealed_seed, turn_segments
from tests.helpers import GOLDEN


def test_T2_P1_every_golden_turn_settles_on_the_state_its_events_lead_to() -> None:
    rulesets_played: set[str] = set()
    for path in sorted(GOLDEN.glob("*.jsonl")):
        events = GameLog(path).read()
        state = EMPTY
        for resolved, segment in turn_segments(events):
            if resolved and state.created and not state.ended:
                started, ending = segment[0], segment[-1]
                assert isinstance(started, TurnStarted)
                command = ResolveTurn(
                    partial=True,
                    rounds=started.rounds,
                    reveal_seed=ending.seed if isinstance(ending, GameEnded) else None,
                )
                expected = decide(state, command, logged_dice(events))
                produced, settled = play_turn(state, command, logged_dice(events))
                assert produced == expected
                end = next(i for i, e in enumerate(produced) if isinstance(e, TurnEnded))
                assert settled == fold(produced[:end], state)
                rulesets_played.add(state.ruleset)
            state = fold(segment, state)
    assert rulesets_played == {"blockade", "mortecouille"}


def logged_dice(events: list[Event]) -> LoggedDice:
    """The dice a log recorded, as re-derivation reads them."""
    created = events[0]
    assert isinstance(created, GameCreated)
    rolls = [e for e in events if isinstance(e, DieRolled)]
    return LoggedDice(rolls, DicePolicy.of(created, revealed_seed(events), revealed_contributions(events)))
