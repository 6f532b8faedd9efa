"""Mortecouille collision damage between the steps of a movement or wind phase (C1-C6, W3).

The movement engine (:mod:`mortecouille.core.board.movement_step`) says who collided; this module
prices those collisions with :mod:`mortecouille.core.mortecouille.collision_damage`, rolls the dice they
call for, sinks ships at once (W3, C2 capsizing, C6 fireships) and moves a bow
ship over the wreck of the side ship it sank (C2) - all before the next step, so
a ship sunk in step 1 neither moves nor blocks in step 2 (T2).

:class:`PhaseLedger` is the working state of one phase; it lives for one call
of a phase function, which keeps that function pure.

Rulings applied here (rules.md leaves them open):

- every collision of one step happens at the same instant: all of the step's
  collision losses are taken, then ships at 0 structure or less sink, then each
  side ship still afloat rolls its capsize die, then bow ships cross the wrecks;
  so the outcome never depends on the order the collisions are looked at;
- only a bow ship that was moving over the contact square carries on over a
  wreck (a stationary bow has no course to carry on); it pays the crossing
  losses even when it cannot enter the square (already there, rock or edge, a
  ship there, or another crossing ship aiming at it);
- a side-side contact without a 1-3 on either die costs nothing at all, own and
  inflicted losses included (a fireship still explodes);
- C6 by edition (mortecouille.core.editions): in 2026.1 an exploded fireship sinks at once; from
  2026.2 its barrels explode on its first impact only and it sails on until sunk (W3) or off the
  board, its later collisions being ordinary ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, NamedTuple

from mortecouille.core.board.geometry import Square
from mortecouille.core.board.movement_step import Claim, Collision, Piece, StepResult
from mortecouille.core.board.terrain import board_index
from mortecouille.core.dice import DiceCup
from mortecouille.core.editions import edition_for
from mortecouille.core.errors import BadInput
from mortecouille.core.fleet.catalogue import SHIP_CLASSES
from mortecouille.core.fleet.stats import ShipStats
from mortecouille.core.life_cycle import shared_fields
from mortecouille.core.mortecouille.collision_damage import (
    CROSSING_DAMAGE_DICE,
    CollisionLoss,
    CollisionSide,
    capsizes,
    collision_losses,
    contact_part,
    crossing_damage_roll_needed,
    crossing_extra,
)
from mortecouille.core.mortecouille.common import ship_stats
from mortecouille.core.phases import MOVE, MOVEMENT, WIND, WIND_COLLISIONS
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.mortecouille_movement import FireshipExplosion, WreckCrossed
from mortecouille.events.movement import (
    CollisionOccurred,
    Contact,
    DamageTaken,
    ShipMoved,
    ShipPushed,
    ShipSunk,
)

#: Event phase -> the phase name its dice are rolled under (D2 roll identity).
DICE_PHASES: Final[Mapping[str, str]] = {MOVE.id: MOVEMENT.id, WIND.id: WIND_COLLISIONS.id}

#: Mortecouille plays one movement round per turn; events carry it for the shared log format.
ROUND: Final = 1


def size_rank(stats: ShipStats) -> int:
    """The class rank the movement engine compares (M8): small below big."""
    return SHIP_CLASSES.index(stats.ship_class)


class PhaseLedger:
    """Ships in play during one phase: where they are, what they lost, and the events so far.

    ``pieces`` holds only the ships still in play (afloat and on the board); a ship
    that sinks or leaves is removed at once so the next step never sees it.
    """

    def __init__(self, state: GameState, phase: str, cup: DiceCup, lead_rules: tuple[str, ...]) -> None:
        if phase not in DICE_PHASES:
            raise BadInput(
                "phase",
                "{phase!r} is not one of {dice_phases}",
                phase=phase,
                dice_phases=", ".join(DICE_PHASES),
            )
        self.state = state
        self.phase = phase
        self.dice_phase = DICE_PHASES[phase]
        self.cup = cup
        self.turn = cup.turn
        self.lead_rules = lead_rules
        #: C6 by edition: whether a fireship's explosion alone leaves it afloat
        self.fireship_survives_impact = edition_for(state.rules_version).fireship_survives_impact
        #: fireships whose barrels exploded in this phase (C6: they never explode again)
        self.exploded: set[str] = set()
        self.index = board_index(state.board)
        self.events: list[Event] = []
        afloat = sorted(sid for sid, ship in state.ships.items() if ship.afloat)
        self.stats: dict[str, ShipStats] = {sid: ship_stats(state, sid) for sid in afloat}
        self.lost: dict[str, float] = {sid: float(state.ships[sid].damage) for sid in afloat}
        self.pieces: dict[str, Piece] = {}
        for sid in afloat:
            at = state.ships[sid].at
            if at is None:  # afloat implies a square; this keeps the type checker informed
                raise BadInput(f"ships.{sid}.at", "an afloat ship needs a square")
            self.pieces[sid] = Piece(sid, (at[0], at[1]), state.ships[sid].facing, size_rank(self.stats[sid]))
        self.start: dict[str, Piece] = dict(self.pieces)
        self.paths: dict[str, list[Square]] = {sid: [piece.at] for sid, piece in self.pieces.items()}
        #: ships that had a move this phase, with the rules their move followed
        self.move_rules: dict[str, tuple[str, ...]] = {}
        #: extra rules of what happened to a ship this phase (pushed, crossed a wreck)
        self.extra_rules: dict[str, list[str]] = {}

    # --- facts --------------------------------------------------------------------------------

    def structure(self, sid: str) -> float:
        return self.stats[sid].max_structure - self.lost[sid]

    def is_fireship(self, sid: str) -> bool:
        """Whether the ship sails as a fireship (C6): straight on, leaving as it sails off the board."""
        return self.state.ships[sid].fireship

    def can_explode(self, sid: str) -> bool:
        """Whether the ship is a fireship whose barrels are still aboard (C6: they explode once)."""
        ship = self.state.ships[sid]
        return ship.fireship and not ship.barrels_spent and sid not in self.exploded

    # --- recording ----------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def roll(self, sid: str, purpose: str, what: str) -> int:
        """Roll one d6 and log its DieRolled right here, before the outcome that uses it (D1)."""
        value = self.cup.roll(self.dice_phase, sid, purpose, f"{sid}, {what}, 1d6")
        self.events.extend(self.cup.take_events())
        return value

    def note(self, sid: str, rule: str) -> None:
        rules = self.extra_rules.setdefault(sid, [])
        if rule not in rules:
            rules.append(rule)

    def damage(
        self, step: int, sid: str, amount: int, cause: str, other: str | None, rules: Iterable[str]
    ) -> None:
        self.lost[sid] += amount
        self.emit(
            DamageTaken(
                turn=self.turn,
                round=ROUND,
                phase=self.phase,
                step=step,
                ship=sid,
                amount=float(amount),
                cause=cause,
                other=other,
                rules=tuple(rules),
            )
        )

    def place(self, sid: str, at: Square, facing: str) -> None:
        """Put a ship in play at ``at`` with ``facing``, extending its path if it changed square."""
        piece = self.pieces[sid]
        if at != piece.at:
            self.paths[sid].append(at)
        if at != piece.at or facing != piece.facing:
            self.pieces[sid] = Piece(sid, at, facing, piece.size)

    def after_step(self, result: StepResult, step_pieces: Mapping[str, Piece]) -> None:
        """Take the positions a step left and the facings the ships had during it."""
        for sid, piece in step_pieces.items():
            self.place(sid, result.positions[sid], piece.facing)

    # --- ships leaving play -------------------------------------------------------------------

    def _moved_event(self, sid: str, *, tried_counts: bool) -> ShipMoved | None:
        """The ship's ShipMoved, if it changed square or facing (or, ``tried_counts``, had a move)."""
        piece, start = self.pieces[sid], self.start[sid]
        path = tuple(self.paths[sid])
        tried = tried_counts and sid in self.move_rules
        if not tried and len(path) == 1 and piece.facing == start.facing:
            return None
        rules = (*self.lead_rules, *self.move_rules.get(sid, ()), *self.extra_rules.get(sid, ()))
        return ShipMoved(
            turn=self.turn,
            round=ROUND,
            phase=self.phase,
            ship=sid,
            path=path,
            at=piece.at,
            facing=piece.facing,
            rules=tuple(dict.fromkeys(rules)),
        )

    def sink(self, sid: str, how: str, rules: tuple[str, ...]) -> None:
        """The ship leaves play now (T2): its move so far, then its end; it neither moves nor blocks."""
        moved = self._moved_event(sid, tried_counts=False)
        if moved is not None:
            self.emit(moved)
        piece = self.pieces.pop(sid)
        self.emit(
            ShipSunk(
                turn=self.turn, round=ROUND, phase=self.phase, ship=sid, at=piece.at, how=how, rules=rules
            )
        )

    def sink_check(self, exploded: Iterable[str] = ()) -> None:
        """W3 at once: a ship at 0 structure or less sinks; so does an exploded fireship (C6)."""
        blown = set(exploded)
        for sid in sorted(self.pieces):
            rules = []
            if sid in blown:
                rules.append("C6")
            if self.structure(sid) <= 0:
                rules.append("W3")
            if rules:
                self.sink(sid, "sunk", tuple(rules))

    def report_moves(self) -> None:
        """One ShipMoved per ship still in play that moved, turned, tried to, or was pushed."""
        for sid in sorted(self.pieces):
            moved = self._moved_event(sid, tried_counts=True)
            if moved is not None:
                self.emit(moved)


# --- one step's collisions ------------------------------------------------------------------------


class BowSide(NamedTuple):
    """A bow-side contact of a step (C2): the side ship may capsize, the bow ship may cross."""

    step: int
    bow: str
    side: str


def settle_step(
    ledger: PhaseLedger,
    result: StepResult,
    claims: Mapping[str, Claim],
    step_pieces: Mapping[str, Piece],
) -> frozenset[str]:
    """Log a step's collisions and pushes, take their losses, capsizes and crossings (C, W3).

    Call it after :meth:`PhaseLedger.after_step`. Returns the ships that carried on
    into the square they claimed by crossing a wreck (a turner then makes its step 2).
    """
    in_play = frozenset(ledger.pieces)
    bow_sides: list[BowSide] = []
    exploded: set[str] = set()
    for collision in result.collisions:
        ledger.emit(_collision_event(ledger, collision))
        if collision.rock is None:
            found, blown = _price(ledger, collision)
            bow_sides += found
            exploded |= blown
    for push in result.pushes:
        ledger.note(push.pushed, push.rule)
        ledger.emit(
            ShipPushed(
                turn=ledger.turn,
                round=ROUND,
                phase=ledger.phase,
                step=push.step,
                pusher=push.pusher,
                ship=push.pushed,
                pushed_from=push.pushed_from,
                pushed_to=push.pushed_to,
                rules=(*ledger.lead_rules, push.rule),
            )
        )
    ledger.sink_check(exploded)
    for contact in bow_sides:
        # A side ship that already went down (losses, or an earlier capsize) rolls no more.
        if contact.side in ledger.pieces and capsizes(ledger.roll(contact.side, "capsize", "capsize roll")):
            ledger.sink(contact.side, "sunk", ("C2",))
    sunk_now = in_play - frozenset(ledger.pieces)
    crossing = [
        contact
        for contact in bow_sides
        if contact.side in sunk_now and contact.bow in ledger.pieces and contact.bow in claims
    ]
    entered = _cross(ledger, crossing, claims, step_pieces)
    ledger.sink_check()
    return frozenset(sid for sid in entered if sid in ledger.pieces)


def _collision_event(ledger: PhaseLedger, collision: Collision) -> CollisionOccurred:
    # C5: a rock or the edge only stops the ship; a ship-ship collision is priced by C1.
    priced_by = "C5" if collision.rock is not None else "C1"
    return CollisionOccurred(
        turn=ledger.turn,
        round=ROUND,
        phase=ledger.phase,
        step=collision.step,
        rule=collision.rule,
        ships=collision.ships,
        square=collision.square,
        rock=collision.rock,
        contacts=collision.contacts,
        rules=(*ledger.lead_rules, collision.rule, priced_by),
    )


def _collision_side(ledger: PhaseLedger, contact: Contact) -> CollisionSide:
    return CollisionSide(
        **shared_fields(ledger.stats[contact.ship], CollisionSide),
        part=contact_part(contact.facing, contact.heading),
        fireship=ledger.can_explode(contact.ship),
    )


def _price(ledger: PhaseLedger, collision: Collision) -> tuple[list[BowSide], set[str]]:
    """Losses of one ship-ship collision (C1-C4, C6); returns its bow-side contact and the
    fireships that exploded."""
    a, b = collision.ships
    sides = {contact.ship: _collision_side(ledger, contact) for contact in collision.contacts}
    dice: tuple[int, int] | None = None
    if sides[a].part == "side" and sides[b].part == "side":
        dice = (
            ledger.roll(a, "side-contact", "side-contact roll"),
            ledger.roll(b, "side-contact", "side-contact roll"),
        )
    losses = dict(zip((a, b), collision_losses(sides[a], sides[b], dice), strict=True))
    for sid, other in ((a, b), (b, a)):
        loss = losses[sid]
        rules = tuple(rule for rule in loss.rules if rule != "C6")
        amount = loss.total - loss.explosion
        ledger.damage(collision.step, sid, amount, "collision", other, (collision.rule, *rules))
    blown = _explode(ledger, collision, losses)
    found = [
        BowSide(collision.step, sid, other)
        for sid, other in ((a, b), (b, a))
        if losses[sid].crosses_if_other_sinks
    ]
    return found, blown


def _explode(ledger: PhaseLedger, collision: Collision, losses: Mapping[str, CollisionLoss]) -> set[str]:
    """C6: each fireship of the pair explodes against the other ship, which loses the blast.

    Returns the fireships the explosion sinks: every one in the 2026.1 edition, none from 2026.2,
    where a fireship sails on until sunk (W3) or off the board, its barrels spent.
    """
    a, b = collision.ships
    blown = {sid for sid in (a, b) if losses[sid].explodes_as_fireship}
    for fireship in sorted(blown):
        target = b if fireship == a else a
        ledger.emit(FireshipExplosion(turn=ledger.turn, fireship=fireship, ship=target, rules=("C6",)))
    for sid, other in ((a, b), (b, a)):
        if losses[sid].explosion:
            ledger.damage(collision.step, sid, losses[sid].explosion, "explosion", other, ("C6",))
    ledger.exploded |= blown
    return set() if ledger.fireship_survives_impact else blown


def _cross(
    ledger: PhaseLedger,
    crossing: list[BowSide],
    claims: Mapping[str, Claim],
    step_pieces: Mapping[str, Piece],
) -> set[str]:
    """C2: each bow ship carries on over its wreck into the square it was entering, if it can,
    and pays the crossing losses. Returns the ships that entered that square now."""
    target: dict[str, Square] = {}
    aiming: dict[Square, set[str]] = {}
    for contact in crossing:
        (x, y), (vx, vy) = step_pieces[contact.bow].at, claims[contact.bow].vector
        target[contact.bow] = (x + vx, y + vy)
        aiming.setdefault(target[contact.bow], set()).add(contact.bow)
    held = {piece.at for piece in ledger.pieces.values()}
    entered: set[str] = set()
    for contact in crossing:
        bow, square = contact.bow, target[contact.bow]
        can_enter = (
            bow not in entered
            and ledger.pieces[bow].at != square
            and not ledger.index.blocks(square)
            and square not in held
            and len(aiming[square]) == 1
        )
        if can_enter:
            ledger.place(bow, square, ledger.pieces[bow].facing)
            entered.add(bow)
        ledger.note(bow, "C2")
        ledger.emit(
            WreckCrossed(
                turn=ledger.turn,
                round=ROUND,
                phase=ledger.phase,
                step=contact.step,
                ship=bow,
                wreck=contact.side,
                entered=square if can_enter else None,
                rules=("C2",),
            )
        )
        die = ledger.roll(bow, "crossing", "crossing roll")
        more = None
        if crossing_damage_roll_needed(die):
            more = [
                ledger.roll(bow, "crossing-damage", f"crossing damage {i + 1} of {CROSSING_DAMAGE_DICE}")
                for i in range(CROSSING_DAMAGE_DICE)
            ]
        ledger.damage(contact.step, bow, crossing_extra(die, more), "crossing", contact.side, ("C2",))
    return entered
