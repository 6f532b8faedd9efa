"""Pictures of a turn as SVG, built as plain strings (no dependency).

The board is drawn north up like ``board_text`` (B1): a grid with column
letters and row numbers on every edge, rocks, wind tiles with their arrow,
whirlpools with a clockwise swirl. Ships are arrow-shaped hulls pointing their
facing, filled with their owner's colour and labelled with their name. A turn's
picture adds where the ships started (faint outlines), each movement path as a
polyline, a star on every collision square and a line for every shot.

``render --svg`` and every frame of ``export --html``
(:mod:`mortecouille.replays.pictures.html`) are drawn by :func:`render_turn_svg`:
one renderer, so the page and the command cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from html import escape
from typing import Final, NamedTuple

from mortecouille.core.board.geometry import FACINGS, column_name
from mortecouille.core.limits import shown
from mortecouille.core.mortecouille.maneuver import CATAPULT
from mortecouille.core.state import GameState, ShipState
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.combat import ShotFired
from mortecouille.events.movement import CollisionOccurred, ShipMoved

CELL: Final = 44
MARGIN: Final = 28
#: The hull pointing north, centred on its square; rotated by 45 degrees per facing step.
HULL_POINTS: Final = ((0, -18), (9, -8), (9, 13), (5, 17), (-5, 17), (-9, 13), (-9, -8))
OWNER_COLOURS: Final = ("#2f6fb0", "#c0392b", "#27865a", "#c9871a", "#7d3c98", "#17808c")
NO_OWNER_COLOUR: Final = "#6b6b6b"
WATER: Final = "#dcebf4"
GRID: Final = "#a8c3d6"
ROCK: Final = "#5d5a55"
WIND: Final = "#b9dcf2"
WHIRLPOOL: Final = "#8fc1e3"
INK: Final = "#1d2b36"


#: the two noncharacters XML 1.0 forbids that :func:`shown` leaves alone (it escapes every control)
_NOT_XML: Final = {0xFFFE: "\\ufffe", 0xFFFF: "\\uffff"}


def xml_text(text: str) -> str:
    """``text`` (a name or text from the log) for XML 1.0 text or a quoted attribute: controls,
    separators and bidi overrides shown escaped as on a terminal (most are not even allowed
    in XML, so one would make the SVG unreadable), then markup characters as entities."""
    return escape(shown(text).translate(_NOT_XML))


#: The most characters of a name drawn on the picture: a ship's beside its hull, a player's in the
#: legend; a longer one (names may have 64) is cut there with an ellipsis, whole in the hull's
#: tooltip and in the picture's title element, so no name runs past the picture.
LABEL_MAX_CHARS: Final = 18
LEGEND_NAME_MAX_CHARS: Final = 24
#: the title's width per character (font size 15, bold), to cut it to the picture's width
TITLE_CHAR: Final = 9.0


def clipped(text: str, limit: int) -> str:
    """``text`` as :func:`shown` writes it, cut to ``limit`` characters with an ellipsis:

    >>> clipped("Black Pearl", 18), clipped("Q" * 64, 8)
    ('Black Pearl', 'QQQQQQQ…')
    """
    text = shown(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Point(NamedTuple):
    x: float
    y: float


def centre(board: Board, square: Sequence[int]) -> Point:
    """Pixel centre of a square; row 0 is drawn at the bottom (north up, B1)."""
    return Point(MARGIN + (square[0] + 0.5) * CELL, MARGIN + (board.height - square[1] - 0.5) * CELL)


def size_of(board: Board) -> tuple[int, int]:
    return board.width * CELL + 2 * MARGIN, board.height * CELL + 2 * MARGIN


def angle_of(facing: str) -> int:
    return FACINGS.index(facing) * 45 if facing in FACINGS else 0


def owner_colours(state: GameState) -> dict[str, str]:
    """Each player's colour, in the order the game lists them (stable across turns)."""
    owners = list(state.players) + sorted({s.owner for s in state.ships.values() if s.owner})
    ordered = list(dict.fromkeys(owners))
    return {owner: OWNER_COLOURS[i % len(OWNER_COLOURS)] for i, owner in enumerate(ordered)}


def _arrow(cx: float, cy: float, facing: str, length: float, colour: str) -> str:
    half = length / 2
    return (
        f'<g transform="translate({cx:.1f} {cy:.1f}) rotate({angle_of(facing)})">'
        f'<line x1="0" y1="{half:.1f}" x2="0" y2="{-half + 5:.1f}" stroke="{colour}" stroke-width="2.5"/>'
        f'<polygon points="0,{-half:.1f} 5,{-half + 7:.1f} -5,{-half + 7:.1f}" fill="{colour}"/></g>'
    )


# A page draws the same board once per frame: cached, since a board never changes (frozen).
@lru_cache(maxsize=8)
def board_layer(board: Board) -> str:
    """Water, grid, coordinates on every edge, rocks, wind tiles and whirlpools."""
    width, height = size_of(board)
    inner_w, inner_h = board.width * CELL, board.height * CELL
    parts = [
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#f7f4ec"/>',
        f'<rect x="{MARGIN}" y="{MARGIN}" width="{inner_w}" height="{inner_h}" fill="{WATER}"/>',
    ]
    for wind in board.winds:
        c = centre(board, wind.at)
        parts.append(
            f'<rect class="wind" x="{c.x - CELL / 2:.1f}" y="{c.y - CELL / 2:.1f}" '
            f'width="{CELL}" height="{CELL}" fill="{WIND}"/>'
        )
        parts.append(_arrow(c.x, c.y, wind.dir, CELL * 0.6, "#3a7fb5"))
    for origin in board.whirlpools:
        corner = centre(board, origin)
        c = Point(corner.x + CELL / 2, corner.y - CELL / 2)  # the middle of the 2x2 block (B6)
        parts.append(
            f'<g class="whirlpool"><rect x="{c.x - CELL:.1f}" y="{c.y - CELL:.1f}" width="{2 * CELL}" '
            f'height="{2 * CELL}" fill="{WHIRLPOOL}" rx="{CELL / 2}"/>'
            f'<path d="M {c.x:.1f} {c.y - 26:.1f} A 26 26 0 1 1 {c.x - 26:.1f} {c.y:.1f} '
            f'A 16 16 0 1 1 {c.x:.1f} {c.y + 16:.1f} A 7 7 0 1 1 {c.x + 7:.1f} {c.y:.1f}" '
            f'fill="none" stroke="#3a7fb5" stroke-width="2.5"/>'
            f'<polygon points="{c.x:.1f},{c.y - 26:.1f} {c.x - 8:.1f},{c.y - 31:.1f} '
            f'{c.x - 8:.1f},{c.y - 21:.1f}" fill="#3a7fb5"/></g>'
        )
    for rock in board.rocks:
        c = centre(board, rock)
        parts.append(
            f'<rect class="rock" x="{c.x - CELL / 2 + 3:.1f}" y="{c.y - CELL / 2 + 3:.1f}" '
            f'width="{CELL - 6}" height="{CELL - 6}" rx="9" fill="{ROCK}"/>'
        )
    for x in range(board.width + 1):
        px = MARGIN + x * CELL
        parts.append(f'<line x1="{px}" y1="{MARGIN}" x2="{px}" y2="{MARGIN + inner_h}" stroke="{GRID}"/>')
    for y in range(board.height + 1):
        py = MARGIN + y * CELL
        parts.append(f'<line x1="{MARGIN}" y1="{py}" x2="{MARGIN + inner_w}" y2="{py}" stroke="{GRID}"/>')
    label = f'font-family="sans-serif" font-size="12" fill="{INK}" text-anchor="middle"'
    for x in range(board.width):
        column_x = MARGIN + (x + 0.5) * CELL
        for edge_y in (MARGIN - 9, height - MARGIN + 18):
            parts.append(f'<text x="{column_x:.1f}" y="{edge_y}" {label}>{column_name(x)}</text>')
    for y in range(board.height):
        row_y = MARGIN + (board.height - y - 0.5) * CELL + 4
        for edge_x in (MARGIN / 2, width - MARGIN / 2):
            parts.append(f'<text x="{edge_x:.1f}" y="{row_y:.1f}" {label}>{y + 1}</text>')
    return "".join(parts)


#: a ship's name is drawn at the first of these places (offsets from its square's centre) where it
#: overlaps no name drawn before it: under the hull, over it, then further out
LABEL_PLACES: Final = ((0, CELL / 2 - 2), (0, -CELL / 2 + 11), (0, CELL / 2 + 10), (0, -CELL / 2 - 1))
#: a name's box: its width per character and its height (font size 11, bold)
LABEL_CHAR: Final = 6.6
LABEL_HEIGHT: Final = 11


class Box(NamedTuple):
    left: float
    top: float
    right: float
    bottom: float

    def meets(self, other: Box) -> bool:
        apart_x = self.right <= other.left or other.right <= self.left
        return not (apart_x or self.bottom <= other.top or other.bottom <= self.top)


def label_places(board: Board, ships: Sequence[ShipState]) -> dict[str, Point]:
    """Where each placed ship's name goes (the baseline's middle), so no two names cover each
    other where it can be helped: ships are taken in order, each at its first free place."""
    placed = _Boxes()
    places: dict[str, Point] = {}
    for ship in ships:
        if ship.at is None:
            continue
        c = centre(board, ship.at)
        half = len(clipped(ship.id, LABEL_MAX_CHARS)) * LABEL_CHAR / 2
        chosen = None
        for dx, dy in LABEL_PLACES:
            x, y = c.x + dx, c.y + dy
            box = Box(x - half, y - LABEL_HEIGHT, x + half, y + 2)
            if not placed.meets(box):
                chosen = (Point(x, y), box)
                break
        if chosen is None:  # crowded all round: under the hull, as ever
            x, y = c.x + LABEL_PLACES[0][0], c.y + LABEL_PLACES[0][1]
            chosen = (Point(x, y), Box(x - half, y - LABEL_HEIGHT, x + half, y + 2))
        places[ship.id] = chosen[0]
        placed.add(chosen[1])
    return places


class _Boxes:
    """The names placed so far, filed by the board squares (CELL by CELL) they cover, so a new
    name is checked against those near it only: a picture of n ships costs n, not n squared.
    Two boxes that overlap share a point inside both, and so a square both are filed under."""

    def __init__(self) -> None:
        self._by_square: dict[tuple[int, int], list[Box]] = {}

    @staticmethod
    def _squares(box: Box) -> Iterator[tuple[int, int]]:
        for column in range(math.floor(box.left / CELL), math.floor(box.right / CELL) + 1):
            for row in range(math.floor(box.top / CELL), math.floor(box.bottom / CELL) + 1):
                yield column, row

    def meets(self, box: Box) -> bool:
        return any(
            box.meets(other) for square in self._squares(box) for other in self._by_square.get(square, ())
        )

    def add(self, box: Box) -> None:
        for square in self._squares(box):
            self._by_square.setdefault(square, []).append(box)


def hull(ship: ShipState, board: Board, colour: str, ghost: bool = False, label: Point | None = None) -> str:
    """One ship: an arrow-shaped hull pointing its facing, its name at ``label`` (under it unless
    told)."""
    if ship.at is None:
        return ""
    c = centre(board, ship.at)
    points = " ".join(f"{x},{y}" for x, y in HULL_POINTS)
    if ghost:
        return (
            f'<g class="ghost" transform="translate({c.x:.1f} {c.y:.1f}) rotate({angle_of(ship.facing)})">'
            f'<polygon points="{points}" fill="none" stroke="{colour}" stroke-width="1.5" '
            f'stroke-dasharray="3 2" opacity="0.7"/></g>'
        )
    out = not ship.afloat
    faded = ' opacity="0.45"' if out else ""
    parts = [
        f'<g class="ship" data-ship="{xml_text(ship.id)}"{faded}>',
        f'<g transform="translate({c.x:.1f} {c.y:.1f}) rotate({angle_of(ship.facing)})">',
        f'<polygon points="{points}" fill="{colour}" stroke="{INK}" stroke-width="1.5"/>',
        '<circle cx="0" cy="-4" r="2.5" fill="#fff"/></g>',
    ]
    if out:
        parts.append(
            f'<path d="M {c.x - 12:.1f} {c.y - 12:.1f} L {c.x + 12:.1f} {c.y + 12:.1f} '
            f'M {c.x + 12:.1f} {c.y - 12:.1f} L {c.x - 12:.1f} {c.y + 12:.1f}" '
            'stroke="#b01010" stroke-width="3"/>'
        )
    at = label or Point(c.x + LABEL_PLACES[0][0], c.y + LABEL_PLACES[0][1])
    name = clipped(ship.id, LABEL_MAX_CHARS)
    if name != shown(ship.id):  # cut on the board: whole in the hull's tooltip
        parts.append(f"<title>{xml_text(ship.id)}</title>")
    parts.append(
        f'<text x="{at.x:.1f}" y="{at.y:.1f}" font-family="sans-serif" font-size="11" '
        f'font-weight="bold" fill="{INK}" stroke="#fff" stroke-width="3" paint-order="stroke" '
        f'text-anchor="middle">{xml_text(name)}</text></g>'
    )
    return "".join(parts)


def on_the_edge(board: Board, point: Point) -> Point:
    """A point clamped to the board's frame: a collision with the edge (B4) is drawn on it."""
    right, bottom = MARGIN + board.width * CELL, MARGIN + board.height * CELL
    return Point(min(max(point.x, MARGIN), right), min(max(point.y, MARGIN), bottom))


def star(point: Point, radius: float = 11) -> str:
    """A collision mark: an eight-pointed star."""
    corners = []
    for i in range(16):
        r = radius if i % 2 == 0 else radius * 0.45
        angle = math.pi * i / 8
        corners.append(f"{point.x + r * math.sin(angle):.1f},{point.y - r * math.cos(angle):.1f}")
    return (
        f'<polygon class="collision" points="{" ".join(corners)}" fill="#ffcc00" '
        'stroke="#c0392b" stroke-width="1.5"/>'
    )


def path_line(board: Board, squares: Iterable[Sequence[int]], colour: str) -> str:
    points = " ".join(f"{p.x:.1f},{p.y:.1f}" for p in (centre(board, s) for s in squares))
    return (
        f'<polyline class="path" points="{points}" fill="none" stroke="{colour}" stroke-width="3" '
        'stroke-dasharray="6 4" stroke-linecap="round" stroke-linejoin="round" marker-end="url(#head)"/>'
    )


#: how each kind of shot is drawn: its colour and dashes; its marker (arrowhead) is ``shot-KIND``
SHOT_STYLES: Final = {
    "hit": ("#d0021b", ""),
    "miss": ("#555555", "4 3"),
    "catapult": ("#d35400", "1 3"),
}
#: how far apart (pixels) two shots along one line are drawn, and how far short of the target's
#: centre a shot stops, so its arrowhead is not hidden under the target's hull
SHOT_GAP: Final = 7
SHOT_SHORT: Final = 15


def shot_kind(shot: ShotFired) -> str:
    if shot.weapon == CATAPULT:
        return "catapult"
    return "hit" if shot.hit else "miss"


def line_key(a: Sequence[int], b: Sequence[int]) -> tuple[int, int, int]:
    """The board line through squares ``a`` and ``b`` (whichever way a shot goes along it):
    its reduced direction, sign-normalised, and where it crosses."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    step = math.gcd(dx, dy) or 1
    dx, dy = dx // step, dy // step
    if dx < 0 or (dx == 0 and dy < 0):
        dx, dy = -dx, -dy
    return dx, dy, a[0] * dy - a[1] * dx


def shot_offsets(segments: Sequence[tuple[Sequence[int], Sequence[int]]]) -> list[float]:
    """For each shot (shooter square, target square), how far to the right of its own direction
    it is drawn: 0 for a shot alone on its line; shots sharing a line (both ways, or the same
    way twice) each move aside, one gap more per earlier shot going the same way, so all stay
    visible (two ships firing at each other are drawn on either side of the line)."""
    keys = [line_key(a, b) for a, b in segments]
    offsets: list[float] = []
    seen: dict[tuple[tuple[int, int, int], bool], int] = {}
    for (a, b), key in zip(segments, keys, strict=True):
        if keys.count(key) < 2 or tuple(a) == tuple(b):
            offsets.append(0)
            continue
        forward = (b[0] - a[0], b[1] - a[1]) > (0, 0)
        earlier = seen.get((key, forward), 0)
        seen[(key, forward)] = earlier + 1
        offsets.append(SHOT_GAP * (0.5 + earlier))
    return offsets


def shot_line(
    board: Board, shooter: Sequence[int], target: Sequence[int], kind: str, offset: float = 0
) -> str:
    """One shot: an arrow from the shooter to just short of the target, ``offset`` pixels to the
    right of its direction; a catapult's shot is lobbed (a curve)."""
    a, b = centre(board, shooter), centre(board, target)
    length = math.hypot(b.x - a.x, b.y - a.y) or 1.0
    ux, uy = (b.x - a.x) / length, (b.y - a.y) / length
    # right of the direction on screen (y grows downwards)
    rx, ry = -uy * offset, ux * offset
    short = min(SHOT_SHORT, length / 2)
    x1, y1 = a.x + rx, a.y + ry
    x2, y2 = b.x - ux * short + rx, b.y - uy * short + ry
    colour, dashes = SHOT_STYLES[kind]
    style = (
        f'stroke="{colour}" stroke-width="{2.5 if kind == "hit" else 2}"'
        + (f' stroke-dasharray="{dashes}"' if dashes else "")
        + f' marker-end="url(#shot-{kind})"'
    )
    if kind == "catapult":
        lift = max(length / 4, CELL / 2)
        mx, my = (x1 + x2) / 2 + uy * lift, (y1 + y2) / 2 - ux * lift  # bowed to the left
        return (
            f'<path class="shot" data-kind="{kind}" d="M {x1:.1f} {y1:.1f} Q {mx:.1f} {my:.1f} '
            f'{x2:.1f} {y2:.1f}" fill="none" {style}/>'
        )
    return (
        f'<line class="shot" data-kind="{kind}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
        f"{style}/>"
    )


def marker(name: str, colour: str) -> str:
    return (
        f'<marker id="{name}" viewBox="0 0 10 10" refX="7" refY="5" markerWidth="5" markerHeight="5" '
        f'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{colour}"/></marker>'
    )


#: the legend under the board: rows this tall, items this far apart, text this wide per character
LEGEND_ROW: Final = 20
LEGEND_GAP: Final = 16
LEGEND_CHAR: Final = 6.6


def legend_symbol(kind: str, x: float, y: float) -> str:
    """The small drawing in front of a legend entry, its left edge at ``x``, centred on ``y``."""
    if kind in SHOT_STYLES:
        colour, dashes = SHOT_STYLES[kind]
        dash = f' stroke-dasharray="{dashes}"' if dashes else ""
        return (
            f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x + 20:.1f}" y2="{y:.1f}" stroke="{colour}" '
            f'stroke-width="2"{dash} marker-end="url(#shot-{kind})"/>'
        )
    if kind == "collision":
        return star(Point(x + 10, y), radius=8).replace('class="collision" ', "")
    if kind == "rock":
        return f'<rect x="{x + 2:.1f}" y="{y - 8:.1f}" width="16" height="16" rx="4" fill="{ROCK}"/>'
    if kind == "wind":
        return f'<rect x="{x + 2:.1f}" y="{y - 8:.1f}" width="16" height="16" fill="{WIND}"/>' + _arrow(
            x + 10, y, "E", 14, "#3a7fb5"
        )
    if kind == "whirlpool":
        return (
            f'<circle cx="{x + 10:.1f}" cy="{y:.1f}" r="8" fill="{WHIRLPOOL}" stroke="#3a7fb5" '
            'stroke-width="1.5"/>'
        )
    if kind == "out":
        return (
            f'<path d="M {x + 4:.1f} {y - 6:.1f} L {x + 16:.1f} {y + 6:.1f} M {x + 16:.1f} {y - 6:.1f} '
            f'L {x + 4:.1f} {y + 6:.1f}" stroke="#b01010" stroke-width="2.5"/>'
        )
    # a player: a swatch in their colour (kind is the colour)
    return (
        f'<rect x="{x + 3:.1f}" y="{y - 7:.1f}" width="14" height="14" rx="3" fill="{kind}" stroke="{INK}"/>'
    )


#: the symbols every legend explains, after the players: (symbol, text)
LEGEND_SYMBOLS: Final = (
    ("hit", "shot, hit"),
    ("miss", "shot, missed"),
    ("catapult", "catapult"),
    ("collision", "collision"),
    ("out", "sunk or abandoned"),
    ("rock", "rock"),
    ("wind", "wind"),
    ("whirlpool", "whirlpool"),
)


@lru_cache(maxsize=8)
def legend_layer(board: Board, players: tuple[tuple[str, str], ...]) -> tuple[str, int]:
    """The legend drawn under the board (each player in their colour, then every symbol),
    wrapped to the picture's width, and its height. ``players`` are (name, colour) pairs."""
    width, height = size_of(board)
    names = [(colour, clipped(name, LEGEND_NAME_MAX_CHARS)) for name, colour in players]
    entries = [(colour, xml_text(name), len(name)) for colour, name in names]
    entries += [(kind, text, len(text)) for kind, text in LEGEND_SYMBOLS]
    parts = ['<g class="legend" font-family="sans-serif" font-size="12">']
    background = len(parts)
    x, row = float(MARGIN), 0
    for symbol, text, length in entries:
        entry = 24 + length * LEGEND_CHAR
        if x > MARGIN and x + entry > width - MARGIN / 2:
            x, row = float(MARGIN), row + 1
        y = height + 8 + row * LEGEND_ROW
        parts.append(legend_symbol(symbol, x, y))
        parts.append(f'<text x="{x + 24:.1f}" y="{y + 4:.1f}" fill="{INK}">{text}</text>')
        x += entry + LEGEND_GAP
    parts.append("</g>")
    bottom = (row + 1) * LEGEND_ROW + 8
    parts.insert(background, f'<rect x="0" y="{height}" width="{width}" height="{bottom}" fill="#f7f4ec"/>')
    return "".join(parts), bottom


def picture_defs() -> str:
    """The arrowheads every picture defines (one per kind of shot, one for paths)."""
    shot_markers = "".join(marker(f"shot-{kind}", colour) for kind, (colour, _) in SHOT_STYLES.items())
    return f"<defs>{marker('head', INK)}{shot_markers}</defs>"


def svg_document(board: Board, body: str, title: str, players: tuple[tuple[str, str], ...] = ()) -> str:
    """The picture: the title above, ``body`` (the board and what is on it), the legend under it
    (``players``: each player's name and colour)."""
    width, height = size_of(board)
    top = 26
    legend, bottom = legend_layer(board, players)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + top + bottom}" '
        f'viewBox="0 -{top} {width} {height + top + bottom}">'
        f"{picture_defs()}"
        f"<title>{xml_text(title)}</title>"
        f'<text x="{MARGIN}" y="-8" font-family="sans-serif" font-size="15" font-weight="bold" '
        f'fill="{INK}">{xml_text(clipped(title, int((width - MARGIN) / TITLE_CHAR)))}</text>'
        f"{body}{legend}</svg>\n"
    )


def render_turn_svg(before: GameState, after: GameState, turn_events: Sequence[Event], title: str) -> str:
    """The turn's picture: ``after`` on the board, with where ships started, their paths,
    collisions and shots taken from ``turn_events``."""
    board = after.board
    colours = owner_colours(after)

    def colour(ship_id: str) -> str:
        ship = after.ships.get(ship_id)
        return colours.get(ship.owner or "", NO_OWNER_COLOUR) if ship else NO_OWNER_COLOUR

    parts = [board_layer(board)]
    for ship in sorted(before.ships.values(), key=lambda s: s.id):
        moved = after.ships.get(ship.id)
        if ship.afloat and moved is not None and (moved.at, moved.facing) != (ship.at, ship.facing):
            parts.append(hull(ship, board, colour(ship.id), ghost=True))
    for event in turn_events:
        if isinstance(event, ShipMoved) and len(event.path) > 1:
            parts.append(path_line(board, event.path, colour(event.ship)))
    shots = []
    for event in turn_events:
        if isinstance(event, ShotFired):
            shooter, target = before.ships.get(event.ship), before.ships.get(event.target)
            if shooter is not None and target is not None and shooter.at and target.at:
                shots.append((shooter.at, target.at, shot_kind(event)))
    offsets = shot_offsets([(a, b) for a, b, _ in shots])
    for (a, b, kind), offset in zip(shots, offsets, strict=True):
        parts.append(shot_line(board, a, b, kind, offset))
    for event in turn_events:  # under the ships, so names stay readable
        if isinstance(event, CollisionOccurred):
            square = event.rock if event.rock is not None else event.square
            parts.append(star(on_the_edge(board, centre(board, square))))
    drawn = sorted(after.ships.values(), key=lambda s: (s.afloat, s.id))
    # names of ships afloat are placed first, so theirs get the best places
    labels = label_places(board, sorted(drawn, key=lambda s: (not s.afloat, s.id)))
    for ship in drawn:
        parts.append(hull(ship, board, colour(ship.id), label=labels.get(ship.id)))
    return svg_document(board, "".join(parts), title, tuple(colours.items()))
