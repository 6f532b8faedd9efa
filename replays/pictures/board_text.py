"""The board drawn in a terminal: north at the top, coordinates on every edge (B1).

Each square is three characters wide. A ship shows as its label letter and an
arrow for its facing; a sunk or abandoned ship stays on its last square, faded,
its letter followed by ``x`` (letters are given over every ship of the game, so
they never change). Rocks ``###``, wind tiles ``~`` plus the wind's arrow,
whirlpools ``@@@``. Under the grid a key (players in their colours, symbols),
then every ship listed. Colour is added with
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
#: after a sunk or abandoned ship's letter, in place of its facing
WRECK = "x"


def ship_labels(state: GameState) -> dict[str, str]:
    """Each ship's letter, over every ship the game has (afloat or not, in id order): a ship's
    letter never changes when another sinks, so the letters of a game stay the same turn to turn."""
    ordered = sorted(state.ships)
    return {ship: LABELS[i % len(LABELS)] for i, ship in enumerate(ordered)}


def state_after_turn(events: list[Event], turn: int) -> GameState:
    """The state as turn ``turn`` left it (0: before the first turn was resolved)."""
    return fold(events[: position_after_turn(events, turn)])


def render_board(state: GameState) -> str:
    board = state.board
    index = board_index(board)
    labels = ship_labels(state)
    afloat = [s for s in state.ships.values() if s.afloat]
    # sunk and abandoned ships stay on their last square, faded, unless a ship afloat is there
    out = [s for s in state.ships.values() if not s.afloat and s.at is not None and (s.sunk or s.lost)]
    owners = sorted({s.owner for s in state.ships.values() if s.owner})
    colour_of = {owner: OWNER_COLOURS[i % len(OWNER_COLOURS)] for i, owner in enumerate(owners)}
    at_square = {ship.at: ship for ship in out} | {ship.at: ship for ship in afloat}
    width_label = max(len(str(board.height)), 2)
    header = " " * (width_label + 1) + "".join(f"{column_name(x):^3}" for x in range(board.width))
    lines = [header]
    for y in range(board.height - 1, -1, -1):
        cells = []
        for x in range(board.width):
            square = (x, y)
            ship = at_square.get(square)
            if ship is not None and ship.afloat:
                text = f" {labels[ship.id]}{ARROWS.get(ship.facing, '?')}"
                cells.append(click.style(text, fg=colour_of.get(ship.owner or "", "white"), bold=True))
            elif ship is not None:
                cells.append(click.style(f" {labels[ship.id]}{WRECK}", fg="bright_black", dim=True))
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
    lines.append(terminal_legend(owners, colour_of))
    # below the grid, names and texts from the log: escaped (the grid's own styles are not)
    lines.append(shown(position_caption(state).render()))
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


def terminal_legend(owners: list[str], colour_of: dict[str, str]) -> str:
    """The key under the grid: each player in their colour, then the board's symbols."""
    players = "  ".join(click.style(shown(owner), fg=colour_of[owner], bold=True) for owner in owners)
    symbols = (
        f"A{ARROWS['N']} ship facing north   A{WRECK} sunk or abandoned   ### rock   "
        f"~{ARROWS['E']}~ wind blowing east   @@@ whirlpool"
    )
    return f"key: {players + '   ' if players else ''}{symbols}"
