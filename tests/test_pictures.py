"""The pictures a referee reads at the table (terminal board, SVG, HTML replay)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import click

from mortecouille.core.limits import NAME_MAX
from mortecouille.core.state import GameState, ShipState
from mortecouille.events.base import Event
from mortecouille.events.board import Board
from mortecouille.events.combat import ShotFired
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.pictures.board_text import render_board, state_after_turn
from mortecouille.replays.pictures.svg import (
    LABEL_MAX_CHARS,
    LEGEND_NAME_MAX_CHARS,
    TITLE_CHAR,
    clipped,
    render_turn_svg,
)

GOLDEN = Path(__file__).parent / "golden"
SVG = "{http://www.w3.org/2000/svg}"


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


def shot(shooter: str, target: str, hit: bool = True, weapon: str = "bow") -> ShotFired:
    return ShotFired(
        turn=1, ship=shooter, weapon=weapon, target=target, distance=3, cannons=2, mode="normal",
        dice=(6, 6, 6), bonus=0, needed=12, hit=hit, damage=3 if hit else 0,
    )  # fmt: skip


def three_ships() -> GameState:
    board = Board(width=8, height=8)
    ships = {
        "A": ShipState(id="A", kind="red-small", owner="Anne", at=(0, 0), facing="N"),
        "B": ShipState(id="B", kind="red-big", owner="Bart", at=(0, 3), facing="E"),
        "C": ShipState(id="C", kind="red-big", owner="Bart", at=(0, 6), facing="E"),
    }
    return GameState(game="g", players=("Anne", "Bart"), board=board, ships=ships, created=True)


def shot_segments(svg: str) -> list[tuple[float, float, float, float]]:
    root = ET.fromstring(svg)
    lines = [e for e in root.iter(f"{SVG}line") if e.get("class") == "shot"]
    return [tuple(float(e.get(k, "nan")) for k in ("x1", "y1", "x2", "y2")) for e in lines]  # type: ignore[misc]


def test_shots_have_arrowheads_that_exist_in_the_svg() -> None:
    state = three_ships()
    svg = render_turn_svg(state, state, [shot("A", "B"), shot("B", "A", hit=False)], "shots")
    root = ET.fromstring(svg)
    markers = {m.get("id") for m in root.iter(f"{SVG}marker")}
    shots = [e for e in root.iter() if e.get("class") == "shot"]
    assert len(shots) == 2
    for drawn in shots:
        head = drawn.get("marker-end", "")
        assert head.startswith("url(#") and head[5:-1] in markers


def test_two_ships_firing_at_each_other_are_drawn_apart() -> None:
    state = three_ships()
    svg = render_turn_svg(state, state, [shot("A", "B"), shot("B", "A", hit=False)], "shots")
    (ax1, _, ax2, _), (bx1, _, bx2, _) = shot_segments(svg)
    assert ax1 == ax2 and bx1 == bx2  # still vertical, as the ships stand
    assert abs(ax1 - bx1) >= 5  # side by side, not one over the other


def test_shots_along_one_line_stay_visible() -> None:
    state = three_ships()
    # the same segment twice (two positions of A firing at B), and C firing down the same column
    svg = render_turn_svg(state, state, [shot("A", "B"), shot("A", "B", hit=False), shot("C", "A")], "shots")
    xs = [x1 for x1, _, _, _ in shot_segments(svg)]
    assert len(set(xs)) == 3


def test_a_catapult_shot_is_drawn_unlike_a_cannon_shot() -> None:
    state = three_ships()
    svg = render_turn_svg(state, state, [shot("A", "B", weapon="catapult")], "catapult")
    drawn = [e for e in ET.fromstring(svg).iter() if e.get("class") == "shot"]
    assert len(drawn) == 1 and drawn[0].get("marker-end") == "url(#shot-catapult)"


def test_the_svg_has_a_legend_with_players_and_every_symbol() -> None:
    state = three_ships()
    root = ET.fromstring(render_turn_svg(state, state, [], "legend"))
    legend = next(e for e in root.iter() if e.get("class") == "legend")
    texts = {t.text for t in legend.iter(f"{SVG}text")}
    assert {"Anne", "Bart", "shot, hit", "shot, missed", "catapult", "collision"} <= texts
    assert {"rock", "wind", "whirlpool", "sunk or abandoned"} <= texts
    # the legend is inside the picture: the height covers it
    view = [float(v) for v in root.get("viewBox", "").split()]
    assert max(float(t.get("y", 0)) for t in legend.iter(f"{SVG}text")) < view[1] + view[3]


def test_ship_names_side_by_side_do_not_cover_each_other() -> None:
    board = Board(width=6, height=6)
    names = [("Marguerite", (1, 2)), ("Bernadette", (2, 2)), ("Clementine", (3, 2)), ("Dorothea", (2, 3))]
    ships = {n: ShipState(id=n, kind="red-small", owner="Anne", at=at, facing="N") for n, at in names}
    state = GameState(game="g", players=("Anne",), board=board, ships=ships, created=True)
    root = ET.fromstring(render_turn_svg(state, state, [], "crowd"))
    boxes = []
    for ship in (e for e in root.iter() if e.get("class") == "ship"):
        text = next(ship.iter(f"{SVG}text"))
        x, y, half = float(text.get("x", 0)), float(text.get("y", 0)), len(text.text or "") * 6.6 / 2
        boxes.append((x - half, y - 11, x + half, y + 2))
    assert len(boxes) == 4
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)


def test_a_hostile_player_name_stays_text_in_the_legend() -> None:
    board = Board(width=6, height=6)
    name = "</text><script>alert(1)</script>"
    ships = {"A": ShipState(id="A", kind="red-small", owner=name, at=(0, 0), facing="N")}
    state = GameState(game="g", players=(name,), board=board, ships=ships, created=True)
    svg = render_turn_svg(state, state, [], "hostile")
    root = ET.fromstring(svg)  # still one well-formed picture
    assert not list(root.iter(f"{SVG}script"))
    legend = next(e for e in root.iter() if e.get("class") == "legend")
    assert clipped(name, LEGEND_NAME_MAX_CHARS) in {t.text for t in legend.iter(f"{SVG}text")}
    plain = click.unstyle(render_board(state))
    assert name in next(line for line in plain.splitlines() if line.startswith("key:"))


def test_a_name_of_the_longest_length_is_cut_on_the_picture_and_whole_in_its_tooltip() -> None:
    board = Board(width=6, height=6)
    ship, player, game = "S" * NAME_MAX, "P" * NAME_MAX, "G" * NAME_MAX
    ships = {ship: ShipState(id=ship, kind="red-small", owner=player, at=(0, 0), facing="N")}
    state = GameState(game=game, players=(player,), board=board, ships=ships, created=True)
    root = ET.fromstring(render_turn_svg(state, state, [], f"{game} - turn 1"))
    width = float(root.get("width") or 0)
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert "S" * (LABEL_MAX_CHARS - 1) + "…" in texts and ship not in texts
    assert "P" * (LEGEND_NAME_MAX_CHARS - 1) + "…" in texts and player not in texts
    title_drawn = next(t for t in texts if t.startswith("GGG"))
    assert title_drawn.endswith("…") and len(title_drawn) * TITLE_CHAR <= width
    tooltips = {t.text for t in root.iter(f"{SVG}title")}
    assert ship in tooltips and f"{game} - turn 1" in tooltips  # whole where a pointer asks for it
    short = {"Hope": ShipState(id="Hope", kind="red-small", owner="Anne", at=(0, 0), facing="N")}
    plain = render_turn_svg(*[GameState(game="g", players=("Anne",), board=board, ships=short, created=True)] * 2,
                            [], "g")  # fmt: skip
    assert "Hope" in plain and plain.count("<title>") == 1  # a name that fits: no tooltip, bytes as before
