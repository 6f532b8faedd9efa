"""``render --svg``: the board, ships, paths, collisions and shots of a turn, as valid SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from mortecouille.core.state import GameState, ShipState
from mortecouille.events.board import Board
from mortecouille.events.combat import ShotFired
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.pictures.svg import render_turn_svg
from tests.cli_helpers import play_blockade_turn, run

SVG = "{http://www.w3.org/2000/svg}"


def parsed(path: Path) -> ET.Element:
    return ET.fromstring(path.read_text())


def by_class(root: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in root.iter() if e.get("class") == name]


def test_render_a_turn_draws_board_ships_paths_and_collisions(games: Path, tmp_path: Path) -> None:
    play_blockade_turn(games)
    out = tmp_path / "t1.svg"
    result = run(games, "render", "b", "--turn", "1", "--svg", str(out))
    assert result.exit_code == 0, result.output
    root = parsed(out)
    events = GameLog(games / "b.jsonl").read()
    moves = [e for e in events if type(e).__name__ == "ShipMoved" and len(e.path) > 1]  # type: ignore[attr-defined]
    collisions = [e for e in events if type(e).__name__ == "CollisionOccurred"]
    assert len(by_class(root, "path")) == len(moves) == 6
    assert len(by_class(root, "collision")) == len(collisions) == 2
    assert {s.get("data-ship") for s in by_class(root, "ship")} == {"Frig", "Sloopy"}
    assert len(by_class(root, "rock")) == 1 and len(by_class(root, "wind")) == 1
    assert len(by_class(root, "whirlpool")) == 1 and len(by_class(root, "ghost")) == 2
    labels = [t.text for t in root.iter(f"{SVG}text")]
    assert {"A", "H", "1", "8", "Frig", "Sloopy"} <= set(labels)
    assert "b: turn 1" in labels


def test_render_turn_zero_and_refusals(games: Path, tmp_path: Path) -> None:
    play_blockade_turn(games)
    out = tmp_path / "t0.svg"
    assert run(games, "render", "b", "--turn", "0", "--svg", str(out)).exit_code == 0
    assert by_class(parsed(out), "path") == [] and len(by_class(parsed(out), "ship")) == 2
    refused = run(games, "render", "b", "--turn", "7", "--svg", str(out), "--force")
    assert refused.exit_code == 2 and "--turn" in refused.output


def test_shots_are_lines_from_shooter_to_target_red_when_they_hit() -> None:
    board = Board(width=6, height=6)
    ships = {
        "A": ShipState(id="A", kind="red-small", owner="Anne", at=(0, 0), facing="N"),
        "B": ShipState(id="B", kind="red-big", owner="Bart", at=(0, 3), facing="E", sunk=True),
    }
    state = GameState(game="g", players=("Anne", "Bart"), board=board, ships=ships, created=True)
    shot = ShotFired(
        turn=1,
        ship="A",
        weapon="bow",
        target="B",
        distance=3,
        cannons=2,
        mode="normal",
        dice=(6, 6, 6),
        bonus=0,
        needed=12,
        hit=True,
        damage=3,
    )
    miss = ShotFired(
        turn=1,
        ship="B",
        weapon="port",
        target="A",
        distance=3,
        cannons=4,
        mode="normal",
        dice=(1, 1, 1),
        bonus=0,
        needed=6,
        hit=False,
        damage=0,
    )
    root = ET.fromstring(render_turn_svg(state, state, [shot, miss], "shots"))
    lines = by_class(root, "shot")
    assert len(lines) == 2 and lines[0].get("stroke") == "#d0021b" and lines[1].get("stroke-dasharray")
    # the shooter's centre is A1 (x 0, row 0 at the bottom), the target's A4, straight above it
    assert lines[0].get("x1") == lines[0].get("x2") and float(lines[0].get("y1", 0)) > float(
        lines[0].get("y2", 0)
    )
    sunk = next(s for s in by_class(root, "ship") if s.get("data-ship") == "B")
    assert sunk.get("opacity") == "0.45"
