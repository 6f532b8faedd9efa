"""The board drawn in a terminal: north at the top, coordinates on every edge (B1).

Each square is three characters wide. A ship shows as its label letter and an
arrow for its facing; a legend below names every ship. Rocks ``###``, wind
tiles ``~`` plus the wind's arrow, whirlpools ``@@@``. Colour is added with
click styles, which click strips when the output is not a terminal.
"""

from __future__ import annotations

import string

import click

from mortecouille.core.board.geometry import column_name, square_name
from mortecouille.core.board.terrain import board_index
from mortecouille.core.game import fold
from mortecouille.core.limits import shown
from mortecouille.core.narration import position_caption
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.replays.reading.replay import position_after_turn

ARROWS = {"N": "↑", "NE": "↗", "E": "→", "SE": "↘", "S": "↓", "SW": "↙", "W": "←", "NW": "↖"}
LABELS = string.ascii_uppercase + string.ascii_lowercase + string.digits
OWNER_COLOURS = ("cyan", "magenta", "yellow", "green", "blue", "red")


def state_after_turn(events: list[Event], turn: int) -> GameState:
    """The state as turn ``turn`` left it (0: before the first turn was resolved)."""
    return fold(events[: position_after_turn(events, turn)])


def render_board(state: GameState) -> str:
    board = state.board
    index = board_index(board)
    afloat = sorted((s for s in state.ships.values() if s.afloat), key=lambda s: s.id)
    labels = {ship.id: LABELS[i % len(LABELS)] for i, ship in enumerate(afloat)}
    owners = sorted({s.owner for s in state.ships.values() if s.owner})
    colour_of = {owner: OWNER_COLOURS[i % len(OWNER_COLOURS)] for i, owner in enumerate(owners)}
    at_square = {ship.at: ship for ship in afloat}
    width_label = max(len(str(board.height)), 2)
    header = " " * (width_label + 1) + "".join(f"{column_name(x):^3}" for x in range(board.width))
    lines = [header]
    for y in range(board.height - 1, -1, -1):
        cells = []
        for x in range(board.width):
            square = (x, y)
            ship = at_square.get(square)
            if ship is not None:
                text = f" {labels[ship.id]}{ARROWS.get(ship.facing, '?')}"
                cells.append(click.style(text, fg=colour_of.get(ship.owner or "", "white"), bold=True))
            elif square in index.rocks:
                cells.append(click.style("###", fg="bright_black"))
            elif square in index.winds:
                cells.append(click.style(f"~{ARROWS[index.winds[square]]}~", fg="blue"))
            elif square in index.whirlpool_paths:
                cells.append(click.style("@@@", fg="blue"))
            else:
                cells.append(" · ")
        lines.append(f"{y + 1:>{width_label}} " + "".join(cells) + f" {y + 1}")
    lines.append(header)
    # below the grid, names and texts from the log: escaped (the grid's own styles are not)
    lines.append(shown(position_caption(state)))
    for ship in sorted(state.ships.values(), key=lambda s: s.id):
        label = labels.get(ship.id, " ")
        where = square_name(ship.at) if ship.at is not None else "-"
        status = "sunk" if ship.sunk else "abandoned" if ship.lost else "gone" if ship.gone else ""
        damage = f"{ship.damage:g}"
        owner = f" ({ship.owner})" if ship.owner else ""
        extra = []
        if ship.wind:
            extra.append(f"wind {ship.wind}")
        if ship.fire:
            extra.append(f"fire {ship.fire}")
        if ship.countdown is not None:
            extra.append(f"countdown {ship.countdown}")
        details = ", ".join([f"damage {damage}", *extra, *([status] if status else [])])
        where = f"{ship.kind} at {where} facing {ship.facing}"
        lines.append(shown(f"  {label} {ship.id}{owner}: {where}; {details}"))
    return "\n".join(lines)
