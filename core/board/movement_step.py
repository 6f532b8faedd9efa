"""One simultaneous movement step: claims, bumps, contests and convoys (rules M1-M6).

Every ship's claim for the step is gathered first and every square's contest is
decided from the full set of claims, so the outcome never depends on the order
the ships are listed in. Who then actually moves is a functional graph (each
contest winner waits for the occupant of its square, if that occupant is itself
moving) solved in one linear pass: chains take the fate of their head, closed
rings of three or more all move (M4).

Rule labels of the collisions, most specific first:

- ``M6`` rock or board edge (one ship, ``rock`` = claimed square);
- ``M1c``/``M2c`` head-on swap;
- ``M3`` (step 1) / ``M2b`` (step 2) a claimant meets a ship that does not move
  this step, whether one claimant bumps it or several claimants stop against it;
- ``M1d``/``M2d`` two claimants of one class contest a square, ``M1e``/``M2e``
  two claimants of different classes; ``M5`` a contest of three or more;
- ``M4`` a follower against a leader that failed to leave.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

import msgspec

from mortecouille.core.board.geometry import VECTOR_FACINGS, Square
from mortecouille.core.board.terrain import board_index
from mortecouille.core.errors import BadInput
from mortecouille.events.board import Board
from mortecouille.events.movement import Contact

_LABELS: Final[dict[int, dict[str, str]]] = {
    1: {"still": "M3", "head_on": "M1c", "same": "M1d", "larger": "M1e"},
    2: {"still": "M2b", "head_on": "M2c", "same": "M2d", "larger": "M2e"},
}


class Piece(msgspec.Struct, frozen=True, gc=False):
    """A ship as the movement rules see it; ``size`` is its class rank (M8)."""

    id: str
    at: tuple[int, int]
    facing: str
    size: int


class Claim(msgspec.Struct, frozen=True, gc=False):
    """A ship's claim for one step: a unit vector from its square (M1, M2).

    ``pushes`` is true for forward and wind moves (M3, M7); it is ignored in step 2,
    where class never matters and nobody pushes (M2b).
    """

    vector: tuple[int, int]
    pushes: bool = False


class Collision(msgspec.Struct, frozen=True, gc=False):
    """A collision of a pair of ships, or of one ship with a rock or the edge (``rock`` set)."""

    step: int
    rule: str
    ships: tuple[str, ...]
    square: tuple[int, int]
    rock: tuple[int, int] | None
    contacts: tuple[Contact, ...]


class Push(msgspec.Struct, frozen=True, gc=False):
    """A bump that moved a stationary ship one square (M3)."""

    step: int
    pusher: str
    pushed: str
    pushed_from: tuple[int, int]
    pushed_to: tuple[int, int]
    rule: str = "M3"


class StepResult(msgspec.Struct, frozen=True):
    """The outcome of one step.

    ``positions`` holds every piece after the step; ``moved`` the claimants that
    entered their claimed square, ``stopped`` those that did not (a pushed ship is
    in neither unless it claimed). Everything is sorted by ship id.
    """

    step: int
    positions: dict[str, tuple[int, int]]
    moved: tuple[str, ...]
    stopped: tuple[str, ...]
    pushes: tuple[Push, ...]
    collisions: tuple[Collision, ...]


def collision_sort_key(collision: Collision) -> tuple[int, tuple[str, ...], str, Square]:
    return (collision.step, collision.ships, collision.rule, collision.square)


class _Step:
    """Working state of one step; plain dicts and sets for speed."""

    __slots__ = ("pieces", "claims", "step", "position", "target", "collisions")

    def __init__(
        self,
        pieces: Mapping[str, Piece],
        claims: Mapping[str, Claim],
        step: int,
        position: dict[str, Square],
        target: dict[str, Square],
    ) -> None:
        self.pieces = pieces
        self.claims = claims
        self.step = step
        self.position = position
        self.target = target
        self.collisions: list[Collision] = []

    def contact(self, ship: str, other: str, over_claim: bool) -> Contact:
        """C1: the direction of motion over the claimed square, else toward the other ship."""
        piece = self.pieces[ship]
        if over_claim:
            heading = VECTOR_FACINGS[self.claims[ship].vector]
        else:
            (x, y), (ox, oy) = self.position[ship], self.position[other]
            heading = VECTOR_FACINGS[(ox - x, oy - y)]
        return Contact(ship, piece.at, piece.facing, heading)

    def pair(self, rule: str, square: Square, a: str, a_claims: bool, b: str, b_claims: bool) -> None:
        if b < a:
            a, b, a_claims, b_claims = b, a, b_claims, a_claims
        contacts = (self.contact(a, b, a_claims), self.contact(b, a, b_claims))
        self.collisions.append(Collision(self.step, rule, (a, b), square, None, contacts))

    def rock(self, ship: str, square: Square) -> None:
        contact = self.contact(ship, ship, True)
        self.collisions.append(Collision(self.step, "M6", (ship,), square, square, (contact,)))


def resolve_step(
    board: Board,
    pieces: Mapping[str, Piece],
    claims: Mapping[str, Claim],
    step: int,
    *,
    placed: bool = False,
    positions: dict[str, Square] | None = None,
) -> StepResult:
    """Resolve one step (1 or 2) of simultaneous movement (M1-M6).

    ``pieces`` are all ships on the board (positions at the start of the step, and
    the facing each has during the step); ``claims`` maps the ships that move in
    this step to their claim. Ships without a claim are stationary for this step.
    ``placed``: the pieces are known to stand on the board, off the rocks, one a square (a step's
    outcome, or ships a round checked: M1-M6 keep them so), so that check of every piece is not
    made again (the claims are checked all the same). ``positions``: where each piece stands, keyed
    as ``pieces`` (the last step's outcome, when the caller has it: a step's pieces stand where the
    step before left them), taken instead of read from every piece again; never changed.
    """
    if step not in _LABELS:
        raise BadInput("step", "must be 1 or 2, got {step!r}", step=step)
    labels = _LABELS[step]
    index = board_index(board)
    # B4: rocks and the edge block. Inlined from ``index.blocks`` (the bounds check of
    # ``BoardArea.on_board`` included), because this runs for every ship and every claim (this
    # is most of every turn's resolution, which ``verify`` runs again for every turn: issue 16).
    width, height, rocks = index.width, index.height, index.rocks
    position: dict[str, Square] = (
        {sid: piece.at for sid, piece in pieces.items()} if positions is None else positions
    )
    occupant: dict[Square, str] = {at: sid for sid, at in position.items()}
    if not placed:
        if len(occupant) != len(position):
            raise BadInput("pieces", "two ships share a square: {squares}", squares=_shared_squares(position))
        for sid, at in position.items():
            x, y = at
            if not (0 <= x < width and 0 <= y < height) or at in rocks:
                raise BadInput(f"pieces.{sid}.at", "{at} is a rock or off the board (B4)", at=at)

    target: dict[str, Square] = {}
    work = _Step(pieces, claims, step, position, target)
    # M6 first: a claim on a rock or off the board stops there and contests nothing.
    resolved: dict[str, bool] = {}  # final fate of every claimant whose fate is local
    sole: dict[Square, str] = {}  # square -> its first claimant (its only one unless in ``shared``)
    shared: dict[Square, list[str]] = {}  # square -> its claimants, when two or more claim it
    # (subscripts, not ``get``, in this loop over every claim of every step: a missing key is rare)
    for sid, claim in claims.items():
        try:
            start = position[sid]
        except KeyError:
            raise BadInput(f"claims.{sid}", "no such piece") from None
        vx, vy = claim.vector
        if (vx, vy) not in VECTOR_FACINGS:
            raise BadInput(f"claims.{sid}.vector", "{vector!r} is not a unit king step", vector=claim.vector)
        x, y = start
        x += vx
        y += vy
        square = (x, y)
        if not (0 <= x < width and 0 <= y < height) or square in rocks:
            target[sid] = square
            work.rock(sid, square)
            resolved[sid] = False  # nothing else looks at its claim: it stops there
            continue
        target[sid] = square
        first = sole.setdefault(square, sid)
        if first != sid:
            group = shared.get(square)
            if group is None:
                shared[square] = [first, sid]
            else:
                group.append(sid)

    if not shared and not resolved and occupant.keys().isdisjoint(sole):
        # Every claimant claims a square of its own that nobody holds (most steps of a battle whose
        # ships stand apart, and every step nobody claims in): each enters it, nothing else happens.
        # What the general settling below gives then, without its dozen empty walks (issue 16).
        return _all_enter(step, position, target)

    # A square that one claimant claims and nobody holds is entered (most claims of most steps);
    # every other claimed square is settled below. Each square's outcome is its own, whatever
    # order the squares are looked at in (pairs are sorted at the end).
    resolved.update(
        {sid: True for square, sid in sole.items() if square not in occupant and square not in shared}
    )
    contested: list[tuple[Square, list[str]]] = [
        (square, [sid]) for square, sid in sole.items() if square in occupant and square not in shared
    ]
    contested += shared.items()
    leader: dict[str, str] = {}  # contest winner -> moving occupant it must follow (M4)
    bumps: list[tuple[str, str, Square]] = []
    facing: list[str] = []  # the claimants whose square another claimant holds
    for square, group in contested:
        holder = occupant.get(square)
        if holder is not None:
            if holder not in claims:
                if len(group) == 1:
                    bumps.append((group[0], holder, square))
                else:
                    # M3 ruling: nobody pushes, each claimant stops against the stationary ship.
                    for sid in group:
                        resolved[sid] = False
                        work.pair(labels["still"], square, sid, True, holder, False)
                continue
            facing += group
        if len(group) == 1:
            winner: str | None = group[0]
        else:
            winner = _contest(work, group, square, labels)
            for sid in group:
                if sid != winner:
                    resolved[sid] = False
        if winner is not None:
            if holder is None:
                resolved[winner] = True
            else:
                leader[winner] = holder

    # M1c/M2c: a head-on swap stops both, whatever their contests said (M5: those claims counted).
    # Only a claimant whose square another claimant holds can swap (a few, most steps): each of a
    # swapping pair is one of them (a claim onto a rock or off the board is onto no ship's square).
    for sid in facing:
        square = target[sid]
        holder = occupant[square]
        if target[holder] == position[sid]:
            resolved[sid] = False
            leader.pop(sid, None)
            if sid < holder:
                work.pair(labels["head_on"], square, sid, True, holder, True)

    pushed_to: dict[str, tuple[str, Square]] = {}
    if bumps:
        pushed_to = _resolve_bumps(work, index.blocks, occupant, bumps, resolved, labels["still"])
    if len(resolved) + len(leader) != len(target):  # (never: every claimant has a fate by now)
        for sid in target:
            if sid not in resolved and sid not in leader:
                resolved[sid] = False
    if leader:
        _follow_leaders(leader, resolved)
        for follower, holder in leader.items():
            if not resolved[follower]:
                work.pair("M4", position[holder], follower, True, holder, False)

    new_position: dict[str, Square] = {}
    moved: list[str] = []
    stopped: list[str] = []
    get_fate = resolved.get
    if pushed_to:
        for sid in sorted(position):
            fate = get_fate(sid)
            if fate:
                moved.append(sid)
                new_position[sid] = target[sid]
                continue
            if fate is not None:
                stopped.append(sid)
            push = pushed_to.get(sid)
            new_position[sid] = position[sid] if push is None else push[1]
    else:
        for sid in sorted(position):
            fate = get_fate(sid)
            if fate:
                moved.append(sid)
                new_position[sid] = target[sid]
            else:
                if fate is not None:
                    stopped.append(sid)
                new_position[sid] = position[sid]
    pushes = tuple(
        Push(step, pusher, pushed, position[pushed], to)
        for pushed, (pusher, to) in sorted(pushed_to.items(), key=lambda item: item[1][0])
    )
    work.collisions.sort(key=collision_sort_key)
    return StepResult(step, new_position, tuple(moved), tuple(stopped), pushes, tuple(work.collisions))


def _all_enter(step: int, position: dict[str, Square], target: dict[str, Square]) -> StepResult:
    """The outcome of a step in which every claimant enters its claimed square: every ship in id
    order where it stood, each claimant where it claimed to go."""
    new_position = {sid: position[sid] for sid in sorted(position)}
    moved = sorted(target)
    for sid in moved:
        new_position[sid] = target[sid]
    return StepResult(step, new_position, tuple(moved), (), (), ())


def _shared_squares(position: dict[str, Square]) -> str:
    seen: dict[Square, str] = {}
    shared = []
    for sid in sorted(position):
        at = position[sid]
        if at in seen:
            shared.append(f"{seen[at]} and {sid} on {at}")
        seen[at] = sid
    return "; ".join(shared)


def _contest(work: _Step, group: list[str], square: Square, labels: dict[str, str]) -> str | None:
    """M1d/M1e/M5: strictly largest class wins and collides with each other claimant;
    a shared largest class means nobody wins and every pair collides."""
    pieces = work.pieces
    largest = max(pieces[sid].size for sid in group)
    top = [sid for sid in group if pieces[sid].size == largest]
    if len(group) > 2:
        rule = "M5"
    elif len(top) == 1:
        rule = labels["larger"]
    else:
        rule = labels["same"]
    if len(top) == 1:
        winner = top[0]
        for sid in group:
            if sid != winner:
                work.pair(rule, square, winner, True, sid, True)
        return winner
    ordered = sorted(group)
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            work.pair(rule, square, a, True, b, True)
    return None


def _resolve_bumps(
    work: _Step,
    blocks: Callable[[Square], bool],
    occupant: dict[Square, str],
    bumps: list[tuple[str, str, Square]],
    resolved: dict[str, bool],
    still_rule: str,
) -> dict[str, tuple[str, Square]]:
    """M3: settle every single-claimant bump; return pushed ship -> (pusher, new square).

    The push fails (nobody moves, still a collision) into a rock or off the board, into
    a square held at the start of the step or claimed in it, or - our ruling, so that no
    two ships ever end on one square - into a square two pushes aim at.
    """
    claimed = set(work.target.values())
    aims: dict[Square, list[tuple[str, str]]] = {}
    for pusher, pushed, square in bumps:
        work.pair(still_rule, square, pusher, True, pushed, False)
        resolved[pusher] = False
        claim = work.claims[pusher]
        if work.step != 1 or not claim.pushes:
            continue
        if work.pieces[pusher].size < work.pieces[pushed].size:
            continue
        dest = (square[0] + claim.vector[0], square[1] + claim.vector[1])
        if blocks(dest) or dest in occupant or dest in claimed:
            continue
        aims.setdefault(dest, []).append((pusher, pushed))
    pushed_to: dict[str, tuple[str, Square]] = {}
    for dest, group in aims.items():
        if len(group) != 1:
            continue
        pusher, pushed = group[0]
        pushed_to[pushed] = (pusher, dest)
        # A larger pusher takes the square it emptied; an equal one stays put.
        resolved[pusher] = work.pieces[pusher].size > work.pieces[pushed].size
    return pushed_to


def _follow_leaders(leader: dict[str, str], resolved: dict[str, bool]) -> None:
    """M4: a follower moves iff its leader leaves; a closed ring of 3+ all move.

    Every claimant outside ``leader`` already has its fate in ``resolved``; each
    leader is itself a claimant, so every chain ends in a resolved ship or a ring.
    """
    for start in leader:
        if start in resolved:
            continue
        chain: list[str] = []
        place_in_chain: dict[str, int] = {}
        current = start
        while current not in resolved:
            if current in place_in_chain:
                ring_start = place_in_chain[current]
                for member in chain[ring_start:]:
                    resolved[member] = True
                del chain[ring_start:]
                break
            place_in_chain[current] = len(chain)
            chain.append(current)
            current = leader[current]
        fate = resolved[current]
        for member in chain:
            resolved[member] = fate
