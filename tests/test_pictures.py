"""Issue 13.9: the pictures a referee reads at the table (terminal board, SVG, HTML replay)."""

from __future__ import annotations

from pathlib import Path

import click

from mortecouille.events.base import Event
from mortecouille.events.store import GameLog
from mortecouille.replays.pictures.board_text import render_board, state_after_turn

GOLDEN = Path(__file__).parent / "golden"


def golden_events(name: str) -> list[Event]:
    return GameLog(GOLDEN / f"{name}.jsonl").read()


def ship_lines(board: str) -> dict[str, str]:
    """ship id -> its letter, from the list under the terminal board."""
    found = {}
    for line in click.unstyle(board).splitlines():
        if line.startswith("  ") and "): " in line:
            letter, ship = line.split()[:2]
            found[ship] = letter
    return found


def test_terminal_board_keeps_each_ships_letter_when_others_sink() -> None:
    events = golden_events("mortecouille")
    first = ship_lines(render_board(state_after_turn(events, 0)))
    last = ship_lines(render_board(state_after_turn(events, 5)))
    assert first == last and len(set(last.values())) == len(last) == 6


def test_terminal_board_shows_sunk_and_abandoned_ships_faded_on_their_square() -> None:
    events = golden_events("mortecouille")
    board = render_board(state_after_turn(events, 5))
    plain = click.unstyle(board)
    letters = ship_lines(board)
    for ship in ("Torch", "Skiff", "Kraken", "Minnow"):  # sunk or abandoned by the end
        assert f" {letters[ship]}x" in plain, ship
    assert "\x1b[2m" in board  # dim: faded, not like a ship afloat


def test_terminal_board_has_a_legend_with_players_and_symbols() -> None:
    events = golden_events("mortecouille")
    plain = click.unstyle(render_board(state_after_turn(events, 1)))
    key = next(line for line in plain.splitlines() if line.startswith("key:"))
    for word in ("Anne", "Bart", "rock", "wind", "whirlpool", "sunk or abandoned"):
        assert word in key
