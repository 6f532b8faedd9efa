"""Dice nobody can foresee (rule D3): the players' contributions to a turn's dice.

In a game of the ``contributed`` dice scheme (``GameCreated.dice_scheme``), the dice of a turn
derive from the committed game seed (D2) and a random contribution of every player
(:func:`mortecouille.core.dice.turn_key`), so neither the seed's holder nor any single player can
compute a die of the turn before every order is locked. The protocol, one turn:

1. each player commits, with their orders, to a contribution of their own
   (:class:`CommitDiceContribution`: the SHA-256 of 32 fresh random hex digits); a later
   commitment replaces theirs until the lock;
2. the turn locks (:class:`LockTurn`): its inputs are final, no order, token, purchase, placement
   or commitment is taken any more (:func:`refused_when_locked`);
3. each player reveals (:class:`RevealDiceContribution`), checked against their commitment;
4. the turn resolves (``ResolveTurn``) once every commitment is revealed, or, for a player who
   withholds, without their contribution when the referee gives a reason (``absent_reason``): a
   withheld reveal can delay the turn and never veto it; a withholder told the dice by the seed's
   holder chooses between two outcomes of the turn, which no rule here prevents, so each one is
   logged (``dice-contribution-absent``) for every page and ``verify`` to show (README, "Dice
   nobody can foresee").

The one-step path (the referee's CLI, bots, demo): ``ResolveTurn.contribute`` carries
contributions the shell drew for the players who committed none; the resolve commits them, locks
the turn, reveals them and resolves, in one append (:func:`contributed_play`).

Everything here is pure: the contributions are drawn by the shell (``app``) and come in as data.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import msgspec

from mortecouille.core.deadlines import PassDeadline, SetDeadline
from mortecouille.core.dice import (
    CONTRIBUTED,
    CONTRIBUTION_HEX_DIGITS,
    DiceSource,
    SeededDice,
    contribution_commitment,
    is_lower_hex,
)
from mortecouille.core.errors import BadInput, RuleViolation
from mortecouille.core.life_cycle import (
    Command,
    CreateGame,
    Decide,
    EndGame,
    Evolve,
    PlayedTurn,
    PlayTurn,
    ResolveTurn,
    fold_with,
    replace,
)
from mortecouille.core.limits import check_text
from mortecouille.core.questions import Questions
from mortecouille.core.rulings import RecordRuling
from mortecouille.core.state import DiceRound, GameState
from mortecouille.events.base import Event
from mortecouille.events.dice import (
    DiceContributionAbsent,
    DiceContributionCommitted,
    DiceContributionRevealed,
    TurnLocked,
)

#: the length of a commitment: a SHA-256, hex
COMMITMENT_HEX_DIGITS = 64


class CommitDiceContribution(Command, frozen=True, kw_only=True):
    """``player`` commits to their secret contribution to this turn's dice (D3)."""

    player: str
    commitment: str


class LockTurn(Command, frozen=True, kw_only=True):
    """The referee (or the service, once every order is in or at the deadline) locks the turn (D3)."""


class RevealDiceContribution(Command, frozen=True, kw_only=True):
    """``player`` reveals the contribution they committed to, after the lock (D3)."""

    player: str
    contribution: str


def contributed(state: GameState) -> bool:
    """Whether ``state``'s game takes its dice from the seed and the players' contributions (D3)."""
    return state.dice_mode == "seeded" and state.dice_scheme == CONTRIBUTED


def current_round(state: GameState) -> DiceRound:
    """The dice contributions of the turn being played (an earlier turn's count as none)."""
    found = state.dice_round
    return found if found is not None and found.turn == state.turn else DiceRound(turn=state.turn)


def awaited_reveals(state: GameState) -> list[str]:
    """The players whose committed contribution the turn still waits for, by name."""
    now = current_round(state)
    return sorted(p for p in now.commitments if p not in now.revealed and p not in now.absent)


def _check_contributed(state: GameState, what: str) -> None:
    if not contributed(state):
        scheme = "table dice" if state.dice_mode == "table" else "dice from its seed alone (D2)"
        raise RuleViolation(
            "D3", "{game!r} rolls {scheme}: it takes no {what}", game=state.game, scheme=scheme, what=what
        )


def _check_player(state: GameState, player: str) -> None:
    if player not in state.players:
        raise BadInput("player", "{player!r} is not a player of {game!r}", player=player, game=state.game)


def check_contribution(contribution: str, field: str = "contribution") -> None:
    """Refuse anything but 32 lowercase hex digits (128 random bits, D3)."""
    if not is_lower_hex(contribution, CONTRIBUTION_HEX_DIGITS):
        raise BadInput(
            field,
            "a contribution is {contribution_hex_digits} lowercase hex digits (D3)",
            contribution_hex_digits=CONTRIBUTION_HEX_DIGITS,
        )


def decide_commit(state: GameState, command: CommitDiceContribution, dice: DiceSource) -> list[Event]:
    _check_contributed(state, "dice contribution")
    _check_player(state, command.player)
    if not is_lower_hex(command.commitment, COMMITMENT_HEX_DIGITS):
        raise BadInput(
            "commitment",
            "a commitment is a SHA-256: {commitment_hex_digits} lowercase hex digits (D3)",
            commitment_hex_digits=COMMITMENT_HEX_DIGITS,
        )
    if current_round(state).locked:
        raise RuleViolation("D3", "turn {turn} is locked: its dice contributions are final", turn=state.turn)
    return [DiceContributionCommitted(player=command.player, turn=state.turn, commitment=command.commitment)]


def locking_with(asked: Questions) -> Decide:
    """The LockTurn decider of a ruleset answering ``asked`` (whether its turn can be played)."""

    def decide(state: GameState, command: LockTurn, dice: DiceSource) -> list[Event]:
        return decide_lock(state, command, dice, asked)

    return decide


def decide_lock(state: GameState, command: LockTurn, dice: DiceSource, asked: Questions) -> list[Event]:
    _check_contributed(state, "turn lock")
    if current_round(state).locked:
        raise RuleViolation("D3", "turn {turn} is already locked", turn=state.turn)
    # imported by the lock only, as the resolve imports the table's checks: not by every command
    from mortecouille.core.readiness import check_turn_can_lock

    check_turn_can_lock(state, asked)
    return [TurnLocked(turn=state.turn)]


def reveal(state: GameState, player: str, contribution: str, field: str = "contribution") -> Event:
    """The reveal of ``player``'s ``contribution``, or a refusal citing D3: only after the lock,
    once, and only the contribution their commitment was made from."""
    _check_player(state, player)
    check_contribution(contribution, field)
    now = current_round(state)
    if not now.locked:
        raise RuleViolation(
            "D3", "turn {turn} is not locked: a contribution is revealed after the lock", turn=state.turn
        )
    commitment = now.commitments.get(player)
    if commitment is None:
        raise RuleViolation(
            "D3", "{player} committed no dice contribution for turn {turn}", player=player, turn=state.turn
        )
    if player in now.revealed or player in now.absent:
        raise RuleViolation(
            "D3", "{player}'s contribution for turn {turn} is already settled", player=player, turn=state.turn
        )
    if contribution_commitment(contribution) != commitment:
        raise RuleViolation(
            "D3",
            "the contribution revealed for {player} does not match their commitment for turn {turn}",
            player=player,
            turn=state.turn,
        )
    return DiceContributionRevealed(player=player, turn=state.turn, contribution=contribution)


def decide_reveal(state: GameState, command: RevealDiceContribution, dice: DiceSource) -> list[Event]:
    _check_contributed(state, "dice contribution")
    return [reveal(state, command.player, command.contribution)]


def contributed_play(
    play: PlayTurn, evolvers: Mapping[type[Event], Evolve], ignored: Collection[type[Event]]
) -> PlayTurn:
    """``play`` (a ruleset's turn) preceded by the contributions' part of D3 in a contributed game.

    Before the turn's own events, in one append: the one-step path's commitments (``contribute``,
    for players who committed none) and the lock, if the turn is not locked yet; the reveals of
    ``contribute``; then each player still unrevealed as absent when ``absent_reason`` is given,
    else the resolve is refused naming them. The turn then resolves on the state those events
    lead to, its seeded dice keyed by the seed and the revealed contributions (D3); the state it
    settles on is the turn's own."""

    def played(state: GameState, command: ResolveTurn, dice: DiceSource) -> PlayedTurn:
        if not contributed(state):
            if command.contribute or command.absent_reason is not None:
                _check_contributed(state, "dice contribution")
            return play(state, command, dice)
        before: list[Event] = []
        current = state

        def record(event: Event) -> None:
            nonlocal current
            before.append(event)
            current = fold_with(evolvers, ignored, (event,), current)

        for player, contribution in sorted(command.contribute.items()):
            _check_player(state, player)
            check_contribution(contribution, f"contribute[{player}]")
        now = current_round(state)
        if not now.locked:
            for player, contribution in sorted(command.contribute.items()):
                if player not in now.commitments:
                    record(
                        DiceContributionCommitted(
                            player=player, turn=state.turn, commitment=contribution_commitment(contribution)
                        )
                    )
            record(TurnLocked(turn=state.turn))
        for player, contribution in sorted(command.contribute.items()):
            record(reveal(current, player, contribution, f"contribute[{player}]"))
        missing = awaited_reveals(current)
        if missing:
            if command.absent_reason is None:
                who = ", ".join(missing)
                if not now.locked:  # they committed themselves: they reveal only after a lock
                    raise RuleViolation(
                        "D3",
                        "{who} committed a dice contribution of their own to turn {turn}: lock the "
                        "turn first so they can reveal it, or resolve without it giving the reason",
                        who=who,
                        turn=state.turn,
                    )
                raise RuleViolation(
                    "D3",
                    "turn {turn} waits for the dice contribution of {who}: let them reveal it, or "
                    "resolve without it giving the reason",
                    turn=state.turn,
                    who=who,
                )
            check_text("absent_reason", command.absent_reason)
            for player in missing:
                record(DiceContributionAbsent(player=player, turn=state.turn, reason=command.absent_reason))
        if isinstance(dice, SeededDice):
            dice = dice.for_turn(state.game, state.turn, current_round(current).revealed)
        turn = play(current, command, dice)
        return PlayedTurn([*before, *turn.events], turn.settled)

    return played


# --- the turn's inputs are final once it is locked --------------------------------------------

#: What a locked turn still takes: its reveals and its resolution, the referee's rulings and end,
#: its deadline (set, moved or passed: the reveals may be waited for until one), and a lock again
#: (refused with its own reason: the turn is already locked).
TAKEN_WHEN_LOCKED: frozenset[type[Command]] = frozenset(
    {
        *(RevealDiceContribution, ResolveTurn, EndGame, CreateGame, RecordRuling),
        *(LockTurn, SetDeadline, PassDeadline),
    }
)


def refused_when_locked(command_type: type[Command], decide: Decide) -> Decide:
    """``decide``, refused citing D3 while the turn is locked: the dice of a locked turn can be
    computed as soon as the contributions are revealed, so no input of the turn may change then."""
    if command_type in TAKEN_WHEN_LOCKED:
        return decide

    def guarded(state: GameState, command: Command, dice: DiceSource) -> list[Event]:
        if contributed(state) and current_round(state).locked:
            raise RuleViolation(
                "D3", "turn {turn} is locked: its inputs are final until it is resolved", turn=state.turn
            )
        return decide(state, command, dice)

    return guarded


# --- evolvers: never fail on a log the deciders wrote; a forged one fails here (exit 4) -------


def _round_for(state: GameState, turn: int) -> DiceRound:
    if turn != state.turn:
        raise ValueError(f"a dice contribution event of turn {turn} during turn {state.turn}")
    return current_round(state)


def _with_round(state: GameState, now: DiceRound) -> GameState:
    return replace(state, dice_round=now)


def evolve_committed(state: GameState, event: DiceContributionCommitted) -> GameState:
    now = _round_for(state, event.turn)
    if now.locked or event.player not in state.players:
        raise ValueError(f"{event.player!r} cannot commit to turn {event.turn} (locked, or not a player)")
    return _with_round(
        state, msgspec.structs.replace(now, commitments={**now.commitments, event.player: event.commitment})
    )


def evolve_locked(state: GameState, event: TurnLocked) -> GameState:
    now = _round_for(state, event.turn)
    if now.locked:
        raise ValueError(f"turn {event.turn} locked twice")
    return _with_round(state, msgspec.structs.replace(now, locked=True))


def evolve_revealed(state: GameState, event: DiceContributionRevealed) -> GameState:
    now = _round_for(state, event.turn)
    commitment = now.commitments.get(event.player)
    if not now.locked or commitment is None or event.player in now.revealed or event.player in now.absent:
        raise ValueError(f"{event.player}'s reveal for turn {event.turn} has no place before it (D3)")
    if contribution_commitment(event.contribution) != commitment:
        raise ValueError(f"{event.player}'s revealed contribution does not match their commitment (D3)")
    return _with_round(
        state, msgspec.structs.replace(now, revealed={**now.revealed, event.player: event.contribution})
    )


def evolve_absent(state: GameState, event: DiceContributionAbsent) -> GameState:
    now = _round_for(state, event.turn)
    if not now.locked or event.player not in now.commitments or event.player in now.revealed:
        raise ValueError(f"{event.player} cannot be absent from turn {event.turn} (D3)")
    return _with_round(state, msgspec.structs.replace(now, absent={**now.absent, event.player: event.reason}))


CONTRIBUTION_DECIDERS: Mapping[type[Command], Decide] = {
    CommitDiceContribution: decide_commit,
    RevealDiceContribution: decide_reveal,
}

CONTRIBUTION_EVOLVERS: Mapping[type[Event], Evolve] = {
    DiceContributionCommitted: evolve_committed,
    TurnLocked: evolve_locked,
    DiceContributionRevealed: evolve_revealed,
    DiceContributionAbsent: evolve_absent,
}
