"""The blockade ruleset as commands and events (rules P1-P3 over the M engine).

Ships are placed without buying; each turn every ship gets up to four tokens;
``ResolveTurn`` plays the rounds through :func:`mortecouille.core.blockade.rounds.resolve_round`
and logs every move, push, collision, damage and sinking with its rule IDs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from mortecouille.core.blockade.rounds import (
    BLOCKADE_KINDS,
    PHASES,
    ROUNDS_PER_TURN,
    TOKENS,
    BlockadeShip,
    RoundOutcome,
    next_round,
    resolve_round,
)
from mortecouille.core.board.geometry import ORTHOGONAL_FACINGS
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import DiceSource
from mortecouille.core.errors import BadInput, RuleViolation, phrase
from mortecouille.core.hints import PARTIAL_HINT
from mortecouille.core.life_cycle import (
    Evolve,
    PlayedTurn,
    ResolveTurn,
    give_tokens,
    player_typed,
    shared_fields,
    ship_named,
)
from mortecouille.core.limits import check_name, check_ship_count, drawn_like, names_clashing, names_matching
from mortecouille.core.phases import END
from mortecouille.core.ruleset import SHARED_EVOLVERS, SHARED_IGNORED
from mortecouille.core.state import GameState, ShipState, state_hash
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.events.base import Event
from mortecouille.events.blockade import TokensGiven
from mortecouille.events.game import TurnEnded, TurnStarted
from mortecouille.events.movement import (
    CollisionOccurred,
    DamageTaken,
    ShipMoved,
    ShipPlaced,
    ShipPushed,
    ShipSunk,
)


def place_blockade_ship(state: GameState, command: PlaceShip) -> ShipPlaced:
    if command.kind is None:
        raise BadInput(
            "kind", "a blockade ship needs a kind: {blockade_kinds}", blockade_kinds=", ".join(BLOCKADE_KINDS)
        )
    # a kind in any case (the kinds are lower case), the owner as every command reads a player
    # (case and spacing aside, when exactly one matches): logged as the game spells them
    owner = None if command.owner is None else player_typed(state.players, command.owner)
    command = msgspec.structs.replace(command, kind=command.kind.strip().lower(), owner=owner)
    if command.kind not in BLOCKADE_KINDS:
        raise BadInput(
            "kind",
            "{kind!r} is not a blockade kind: {blockade_kinds}",
            kind=command.kind,
            blockade_kinds=", ".join(BLOCKADE_KINDS),
        )
    if command.owner is not None and command.owner not in state.players:
        raise BadInput("owner", "{owner!r} is not a player of {game!r}", owner=command.owner, game=state.game)
    if command.ship in state.ships:
        raise RuleViolation("P1", "{ship!r} is already on the board", ship=command.ship)
    check_name("ship", command.ship)
    same = names_clashing(command.ship, state.ships)
    if same:
        # project ruling under P1: a ship is placed under a name of its own, case and spacing
        # aside, the key every command reads a ship's name by (else either name is ambiguous), and
        # not drawn like another's (else a reader takes one for the other)
        why = (
            phrase("ship names match case and spacing aside")
            if names_matching(command.ship, same)
            else phrase("the two names look alike ({drawn})", drawn=drawn_like(command.ship, same[0]))
        )
        raise RuleViolation(
            "P1",
            "{ship!r}: {same!r} is already on the board, and {why}; every ship needs a name of its own "
            "(project ruling), or a command or a reader would take one for the other",
            field="ship",
            ship=command.ship,
            same=same[0],
            why=why,
        )
    check_ship_count(len(state.ships) + 1, "ship")
    if command.damage < 0 or command.damage >= BLOCKADE_KINDS[command.kind].max_damage:
        raise BadInput(
            "damage",
            "{damage} is not below the {kind}'s maximum (P3)",
            damage=command.damage,
            kind=command.kind,
        )
    return ShipPlaced(**shared_fields(command, ShipPlaced), rules=("P1", "B2"))


def decide_tokens(state: GameState, command: GiveTokens, dice: DiceSource) -> list[Event]:
    ship = ship_named(state, command.ship, "ship")
    if not ship.afloat:
        raise RuleViolation("P3", "{ship} has sunk and takes no tokens", ship=command.ship)
    if not 1 <= len(command.tokens) <= ROUNDS_PER_TURN:
        raise BadInput(
            "tokens",
            "give 1 to {rounds_per_turn} tokens, one per round (P1)",
            rounds_per_turn=ROUNDS_PER_TURN,
        )
    for index, token in enumerate(command.tokens):
        if token is not None and token not in TOKENS:
            raise BadInput(f"tokens[{index}]", "{token!r} is not F, L, R or - (P1)", token=token)
    earlier = state.tokens.get(ship.id)
    if earlier is not None and not command.replace:
        # Silently overwriting hid a typo naming another ship.
        shown = ",".join(t or "-" for t in earlier)
        raise RuleViolation(
            "P1",
            "{ship} already has its tokens for turn {turn} ({shown}); give them with --replace",
            ship=ship.id,
            turn=state.turn,
            shown=shown,
        )
    return [TokensGiven(ship=command.ship, tokens=command.tokens)]


def evolve_tokens(state: GameState, event: TokensGiven) -> GameState:
    return give_tokens(state, event.ship, event.tokens)


BLOCKADE_EVOLVERS: dict[type[Event], Evolve] = {**SHARED_EVOLVERS, TokensGiven: evolve_tokens}
#: a blockade game logs nothing beyond the shared record-only events
BLOCKADE_IGNORED: frozenset[type[Event]] = SHARED_IGNORED


def no_victory(state: GameState) -> None:
    """A blockade game has no end test: the referee ends it (T3)."""


def resolve_blockade_turn(state: GameState, command: ResolveTurn, dice: DiceSource) -> list[Event]:
    """Play the current turn's rounds (P1); blockade rolls no die."""
    return play_blockade_turn(state, command, dice).events


#: no token in any round (P1), to pad the tokens of a ship given fewer than a turn's rounds
_NO_TOKENS: tuple[None, ...] = (None,) * ROUNDS_PER_TURN


def play_blockade_turn(state: GameState, command: ResolveTurn, dice: DiceSource) -> PlayedTurn:
    """:func:`resolve_blockade_turn` with the state its rounds settle on (the blockade
    ``Ruleset.play_turn``)."""
    rounds = command.rounds if command.rounds is not None else ROUNDS_PER_TURN
    if not 1 <= rounds <= ROUNDS_PER_TURN:
        raise BadInput(
            "rounds",
            "a blockade turn plays 1 to {rounds_per_turn} rounds, not {rounds} (P1)",
            rounds_per_turn=ROUNDS_PER_TURN,
            rounds=rounds,
        )
    # one pass over the ships (a long game piles up wrecks, and verify plays every turn again):
    # those afloat, in the state's order, and whether every placed one passes the round's checks
    in_play: list[ShipState] = []
    every_wreck_passes = True
    for key, ship in state.ships.items():
        if ship.at is None:
            continue
        if not (ship.sunk or ship.lost or ship.gone):
            in_play.append(ship)
            if key != ship.id:
                every_wreck_passes = False
        elif every_wreck_passes and not (
            # a wreck the round's checks of a sunk ship (its key, kind, facing and damage,
            # ``rounds._validate``) would let through; inline, as a long game's wrecks outnumber
            # the ships afloat and every turn (each one ``verify`` plays again) walks them all
            key == ship.id
            and ship.kind in BLOCKADE_KINDS
            and ship.facing in ORTHOGONAL_FACINGS
            and ship.damage >= 0
        ):
            every_wreck_passes = False
    afloat = sorted(s.id for s in in_play)
    if not afloat:
        raise RuleViolation("P1", "no ship is afloat: nothing to resolve")
    missing = [sid for sid in afloat if sid not in state.tokens]
    if missing and not command.partial:
        raise RuleViolation(
            "P1",
            "no tokens yet for {missing}; {partial_hint}",
            missing=", ".join(missing),
            partial_hint=PARTIAL_HINT,
        )
    turn = state.turn
    if every_wreck_passes:
        # A wreck neither moves nor blocks (P3), and these would pass the round's checks
        # (``resolve_round``): the rounds go without them, which pile up over a long game.
        ships = {
            s.id: BlockadeShip(s.id, s.kind, s.at, s.facing, float(s.damage), False)  # type: ignore[arg-type]
            for s in in_play  # each placed (``at`` set)
        }
    else:
        ships = {
            s.id: BlockadeShip(s.id, s.kind, s.at, s.facing, float(s.damage), not s.afloat)
            for s in state.ships.values()
            if s.at is not None
        }
    produced: list[Event] = [TurnStarted(turn=turn, rounds=rounds)]
    outcome: RoundOutcome | None = None
    sank: dict[str, BlockadeShip] = {}  # each ship that sank in a round, as it sank
    # the tokens of the ships in the rounds, in the state's order: a ship that sinks is never
    # afloat again within the turn, so it is only ever dropped (after the round it sank in)
    # (each ship's tokens padded with none to a token a round, once, rather than checked every round)
    given_tokens = [
        (sid, given if len(given) >= rounds else (*given, *_NO_TOKENS[len(given) : rounds]))
        for sid, given in state.tokens.items()
        if sid in ships and not ships[sid].sunk
    ]
    for round_number in range(1, rounds + 1):
        index = round_number - 1
        tokens = {sid: given[index] for sid, given in given_tokens}
        if outcome is None:
            outcome = resolve_round(state.board, ships, tokens)
        else:
            # the ships the last round left, checked by it; a sunk one neither moves nor blocks
            # and is never afloat again within the turn: the later rounds go without the wrecks
            outcome = next_round(state.board, outcome, tokens)
        produced.extend(round_events(turn, round_number, outcome))
        if outcome.sinkings:
            ships = outcome.ships
            for sinking in outcome.sinkings:
                sank[sinking.ship] = ships[sinking.ship]
            given_tokens = [(sid, given) for sid, given in given_tokens if not ships[sid].sunk]
    assert outcome is not None  # (at least one round: checked above)
    after = settled_state(state, in_play, outcome.ships, sank)
    produced.append(TurnEnded(turn=turn, state_hash=state_hash(after), rules=("P1",)))
    return PlayedTurn(produced, after)


def settled_state(
    state: GameState,
    in_play: Iterable[ShipState],
    last: Mapping[str, BlockadeShip],
    sank: Mapping[str, BlockadeShip],
) -> GameState:
    """The state a blockade turn's events lead to from ``state`` (before its TurnEnded), from where
    its rounds left the ships rather than by folding those events: ``in_play`` the ships afloat at
    the turn's start, ``last`` the ships the last round left, ``sank`` each ship that sank in an
    earlier round as it sank (the later rounds go without it).

    The same value the fold gives (tests/test_movement_paths.py, tests/test_blockade_settled.py):
    a turn's events change only its ships afloat (TurnStarted, CollisionOccurred and ShipPushed
    are record-only), each ShipMoved setting a ship's square and facing, each DamageTaken adding
    to its damage (``float``, in the order the round adds them up) and a ShipSunk its square and
    ``sunk``; a ship that ends where it began, as it began, keeps its object, which is what
    :func:`~mortecouille.core.state.with_earlier_ships` gave the folded state (the hash of the
    turn's end reuses its bytes). Folding the turn's hundreds of moves, a new ShipState for each,
    was a fifth of the rules' time in a long game (``verify`` plays every turn again).
    """
    before = state.ships
    ships: dict[str, ShipState] | None = None
    for ship in in_play:
        sid = ship.id
        now = sank.get(sid)
        if now is None:
            now = last[sid]
        at, facing, damage = now.at, now.facing, now.damage
        if now.sunk:
            # (damage set only when it changed, as a fold sets it only on a DamageTaken: a ship may
            # sink on the damage a ruling gave it, which the fold leaves as the ruling wrote it)
            if damage == ship.damage:
                changed = _replace_ship(ship, at=at, facing=facing, sunk=True)
            else:
                changed = _replace_ship(ship, at=at, facing=facing, damage=damage, sunk=True)
        elif at == ship.at and facing == ship.facing and damage == ship.damage:
            continue  # back where it began, as it began: its object of before
        elif damage == ship.damage:
            changed = _replace_ship(ship, at=at, facing=facing)
        else:
            changed = _replace_ship(ship, at=at, facing=facing, damage=damage)
        if ships is None:
            ships = dict(before)
        ships[sid] = changed
    if ships is None:
        return state
    return _replace_state(state, ships=ships)


_replace_ship = msgspec.structs.replace
_replace_state = msgspec.structs.replace


def round_events(turn: int, round_number: int, outcome: RoundOutcome) -> list[Event]:
    """One round's outcome as events: per phase collisions, pushes and moves, then damage, sinkings."""
    produced: list[Event] = []
    # a round logs dozens of paths, the move phase's first: each phase's ShipMoved made in one walk
    moved: dict[str, list[Event]] = {phase: [] for phase in PHASES}
    for path in outcome.paths:
        moved[path.phase].append(
            ShipMoved(
                turn=turn,
                round=round_number,
                phase=path.phase,
                ship=path.ship,
                path=path.squares,
                at=path.squares[-1],
                facing=path.facing,
                rules=path.rules,
            )
        )
    for phase in PHASES:
        for c in outcome.collisions:
            if c.phase == phase:
                produced.append(
                    CollisionOccurred(turn=turn, round=round_number, **shared_fields(c, CollisionOccurred))
                )
        for p in outcome.pushes:
            if p.phase == phase:
                produced.append(
                    ShipPushed(turn=turn, round=round_number, ship=p.pushed, **shared_fields(p, ShipPushed))
                )
        produced += moved[phase]
    for d in outcome.damage:
        produced.append(DamageTaken(turn=turn, round=round_number, **shared_fields(d, DamageTaken)))
    for s in outcome.sinkings:
        produced.append(
            ShipSunk(turn=turn, round=round_number, phase=END.id, ship=s.ship, at=s.at, rules=s.rules)
        )
    return produced
