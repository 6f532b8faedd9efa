"""``export --html``: the whole game in one self-contained page.

No network and nothing external: the CSS and the script are inline, the game is
embedded as JSON in a ``<script type="application/json">`` element, and the
board's fixed layer (grid, rocks, wind, whirlpools) is the same SVG that
``render`` draws (mortecouille.replays.pictures.svg). The script draws ships, paths,
collisions and shots for each *frame* from the embedded positions.

Frames: turn 0 is the board before the first turn; every resolved turn has a
frame for the position before its resolution, then one after each phase of
its story (the phases ``explain`` prints), so stepping shows the turn unfold.
Each frame names the seqs it covers, which lets the page highlight the
explanation lines of the phase on the board.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

import msgspec

from mortecouille.core.errors import BadInput
from mortecouille.core.game import fold
from mortecouille.core.phases import END, SET_UP
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.combat import ShotFired
from mortecouille.events.game import GameCreated
from mortecouille.events.movement import CollisionOccurred, ShipMoved
from mortecouille.replays.pictures.svg import (
    CELL,
    HULL_POINTS,
    INK,
    MARGIN,
    NO_OWNER_COLOUR,
    board_layer,
    owner_colours,
    size_of,
)
from mortecouille.replays.reading.explain import ExplainLine, explain_turn, story_span, turn_started_index
from mortecouille.replays.reading.replay import Replay, position_after_turn, resolved_turns


def ship_rows(state: GameState, colours: dict[str, str]) -> list[list[Any]]:
    """Every placed ship: [id, x, y, facing, colour, status, damage, owner, wind, fire, countdown]."""
    rows: list[list[Any]] = []
    for ship in sorted(state.ships.values(), key=lambda s: s.id):
        if ship.at is None:
            continue
        status = "sunk" if ship.sunk else "abandoned" if ship.lost else "gone" if ship.gone else "afloat"
        rows.append(
            [
                ship.id, ship.at[0], ship.at[1], ship.facing, colours.get(ship.owner or "", NO_OWNER_COLOUR),
                status, ship.damage, ship.owner or "", ship.wind, ship.fire, ship.countdown,
            ]
        )  # fmt: skip
    return rows


def position_in(state: GameState, ship_id: str) -> list[Any]:
    ship = state.ships.get(ship_id)
    return [ship.at[0], ship.at[1], ship.facing] if ship is not None and ship.at is not None else []


def overlays(events: Sequence[Event], shots_from: GameState) -> dict[str, list[Any]]:
    """What a frame draws over the ships: paths, collision squares and shots of its events."""
    paths = [
        [e.ship, [list(p) for p in e.path]] for e in events if isinstance(e, ShipMoved) and len(e.path) > 1
    ]
    collisions = [
        list(e.rock if e.rock is not None else e.square) for e in events if isinstance(e, CollisionOccurred)
    ]
    shots = []
    for e in events:
        if isinstance(e, ShotFired):
            shooter, target = shots_from.ships.get(e.ship), shots_from.ships.get(e.target)
            if shooter and target and shooter.at and target.at:
                shots.append([list(shooter.at), list(target.at), e.hit])
    return {"paths": paths, "collisions": collisions, "shots": shots}


def frame(
    label: str, state: GameState, colours: dict[str, str], seqs: list[int], **extra: Any
) -> dict[str, Any]:
    return {"label": label, "seqs": seqs, "ships": ship_rows(state, colours), **extra}


def game_data(events: Sequence[Event]) -> dict[str, Any]:
    """Everything the page shows, as plain JSON-able data."""
    # The final state (for the colours) by a plain fold, so the replay below only moves forward
    # and never falls back to a keyframe to reach a turn.
    final = fold(events)
    colours = owner_colours(final)
    replay = Replay(events)
    start = replay.seek(position_after_turn(events, 0))
    turns: list[dict[str, Any]] = [
        {
            "turn": 0,
            "frames": [frame("before turn 1", start, colours, [])],
            "explain": [
                {"seq": -1, "phase": SET_UP.name, "text": "the board before the first turn", "rules": []}
            ],
        }
    ]
    for turn in resolved_turns(events):
        first, last = story_span(events, turn)
        lines = explain_turn(events, turn, base=replay.seek(first), span=(first, last))
        started = turn_started_index(events, first, last)
        before = replay.seek(started + 1)
        frames = [
            frame(f"turn {turn}: before", before, colours, [e.seq for e in events[first : started + 1]])
        ]
        for phase, group in phase_groups(lines, events[started + 1 : last]):
            group_seqs = [e.seq for e in group]
            state = replay.seek(group[-1].seq + 1)
            frames.append(frame(phase, state, colours, group_seqs, **overlays(group, before)))
        # The frame a turn opens on: the outcome with every path, collision and shot of the turn.
        whole = events[started + 1 : last]
        after = replay.seek(last)
        moved = [row for row in ship_rows(before, colours) if row[1:4] != position_in(after, row[0])]
        frames.append(
            frame(
                f"turn {turn}: after",
                after,
                colours,
                [e.seq for e in whole],
                ghosts=moved,
                **overlays(whole, before),
            )  # fmt: skip
        )
        turns.append({"turn": turn, "frames": frames, "explain": [msgspec.to_builtins(x) for x in lines]})
    board = final.board
    width, height = size_of(board)
    return {
        "game": final.game,
        "ruleset": final.ruleset,
        "players": [[p, colours.get(p, NO_OWNER_COLOUR)] for p in final.players],
        "forked_from": final.forked_from,
        "board": {"width": board.width, "height": board.height, "pixels": [width, height]},
        "geometry": {"cell": CELL, "margin": MARGIN, "hull": HULL_POINTS, "ink": INK},
        "turns": turns,
    }


def phase_groups(lines: Sequence[ExplainLine], events: Sequence[Event]) -> list[tuple[str, list[Event]]]:
    """``events`` cut into runs of one phase, in order, named as ``explain`` names them."""
    phase_by_seq = {line.seq: line.phase for line in lines}
    groups: list[tuple[str, list[Event]]] = []
    for event in events:
        phase = phase_by_seq.get(event.seq, END.name)
        if groups and groups[-1][0] == phase:
            groups[-1][1].append(event)
        else:
            groups.append((phase, [event]))
    return groups


def embed_json(data: Any) -> str:
    """JSON safe inside a script element: no ``</`` can close it early."""
    return msgspec.json.encode(data).decode().replace("</", "<\\/").replace("<!--", "<\\!--")


def build_html(events: Sequence[Event]) -> str:
    """The page: the template with the title, the board layer and the game data filled in."""
    created = events[0]
    if not isinstance(created, GameCreated):
        raise BadInput("GAME", "the log does not start with game-created")
    data = game_data(events)
    return (
        TEMPLATE.replace("__TITLE__", escape(f"{data['game']} - Mortecouille replay"))
        .replace("__BOARD_LAYER__", board_layer(created.board))
        .replace("__GAME_DATA__", embed_json(data))
    )


# The page. Placeholders are replaced with str.replace (the CSS and script are full of braces).
TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
:root { --ink: #1d2b36; --paper: #fbf8f1; --line: #e3dccb; --accent: #2f6fb0; --muted: #6b7780; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--ink); background: #eef1f3; }
header { background: #17324d; color: #fff; padding: 12px 24px; display: flex; align-items: baseline;
  gap: 18px; flex-wrap: wrap; }
header h1 { font-size: 20px; margin: 0; letter-spacing: .3px; }
header .meta { color: #c9d8e6; font-size: 13px; }
.chip { display: inline-flex; align-items: center; gap: 6px; margin-right: 12px; }
.chip i { width: 12px; height: 12px; border-radius: 3px; display: inline-block; border: 1px solid #fff8; }
main { display: grid; grid-template-columns: minmax(0, 1.25fr) minmax(340px, 1fr); gap: 18px;
  padding: 18px 24px; }
.card { background: #fff; border-radius: 10px; box-shadow: 0 1px 3px #0002; padding: 14px 16px; }
#board svg { width: 100%; height: auto; max-height: 72vh; display: block; }
.controls { display: flex; align-items: center; gap: 10px; margin-top: 12px; flex-wrap: wrap; }
button { font: inherit; border: 1px solid #b8c4ce; background: #f5f8fa; border-radius: 7px;
  padding: 5px 12px; cursor: pointer; color: var(--ink); }
button:hover { background: #e6eef5; }
button.primary { background: var(--accent); color: #fff; border-color: var(--accent); min-width: 76px; }
input[type=range] { flex: 1; min-width: 160px; accent-color: var(--accent); }
.now { display: flex; align-items: baseline; gap: 10px; margin-top: 8px; }
.now .turn { font-size: 22px; font-weight: 700; }
.now .phase { color: var(--muted); }
.now .step { margin-left: auto; color: var(--muted); font-size: 13px; }
h2 { font-size: 16px; margin: 0 0 8px; }
#explain { max-height: 52vh; overflow-y: auto; padding-right: 6px; }
#explain h3 { font-size: 12px; text-transform: uppercase; letter-spacing: .8px; color: var(--muted);
  margin: 12px 0 4px; border-bottom: 1px solid var(--line); padding-bottom: 2px; }
#explain p { margin: 2px 0; padding: 3px 6px; border-radius: 5px; display: flex; gap: 8px; }
#explain p.current { background: #fff3c4; }
#explain .seq { color: var(--muted); font-variant-numeric: tabular-nums; min-width: 34px; text-align: right;
  font-size: 12px; padding-top: 2px; }
.rule { display: inline-block; font-size: 11px; font-weight: 600; background: #e4edf6; color: #24527f;
  border-radius: 9px; padding: 0 6px; margin-left: 4px; white-space: nowrap; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin-top: 6px; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid var(--line); }
th { color: var(--muted); font-weight: 600; }
td.out { color: #b01010; font-weight: 600; }
.side { display: flex; flex-direction: column; gap: 18px; }
footer { color: var(--muted); font-size: 12px; padding: 0 24px 18px; }
</style></head>
<body>
<header><h1 id="title"></h1><span class="meta" id="meta"></span><span id="players"></span></header>
<main>
  <section class="card">
    <div id="board"><svg xmlns="http://www.w3.org/2000/svg" id="board-svg">
      <defs><marker id="head" viewBox="0 0 10 10" refX="7" refY="5" markerWidth="5" markerHeight="5"
        orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#1d2b36"/></marker></defs>
      <g id="static">__BOARD_LAYER__</g><g id="dynamic"></g></svg></div>
    <div class="now"><span class="turn">Turn <span id="turn-number">0</span></span>
      <span class="phase" id="phase-label"></span><span class="step" id="step-label"></span></div>
    <div class="controls">
      <button id="prev" title="previous step (left arrow)">&#9664; step</button>
      <button id="play" class="primary">&#9654; play</button>
      <button id="next" title="next step (right arrow)">step &#9654;</button>
      <input type="range" id="turn-slider" min="0" value="0" aria-label="turn">
    </div>
  </section>
  <section class="side">
    <div class="card"><h2 id="explain-title">What happened</h2><div id="explain"></div></div>
    <div class="card"><h2>Ships</h2><table><thead><tr><th>ship</th><th>owner</th><th>square</th>
      <th>facing</th><th>condition</th><th>status</th></tr></thead><tbody id="ships"></tbody></table></div>
  </section>
</main>
<footer>Self-contained replay exported by mortecouille. Rule IDs refer to the rules digest.</footer>
<script type="application/json" id="game-data">__GAME_DATA__</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("game-data").textContent);
const G = DATA.geometry, B = DATA.board, NS = "http://www.w3.org/2000/svg";
const FACINGS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];
const steps = [];
DATA.turns.forEach((t, ti) => t.frames.forEach((f, fi) => steps.push([ti, fi])));
let current = 0, timer = null;
const $ = (id) => document.getElementById(id);

function columnName(x) {
  let s = "", n = x + 1;
  while (n) { const r = (n - 1) % 26; s = String.fromCharCode(65 + r) + s; n = Math.floor((n - 1) / 26); }
  return s;
}
function squareName(p) { return columnName(p[0]) + (p[1] + 1); }
function centre(p) { return [G.margin + (p[0] + 0.5) * G.cell, G.margin + (B.height - p[1] - 0.5) * G.cell]; }
function node(tag, attrs, parent, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  parent.appendChild(e); return e;
}
function star(p, parent) {
  // a collision with the edge (B4) is drawn on the board's frame
  const [px, py] = centre(p), pts = [];
  const cx = Math.min(Math.max(px, G.margin), G.margin + B.width * G.cell);
  const cy = Math.min(Math.max(py, G.margin), G.margin + B.height * G.cell);
  for (let i = 0; i < 16; i++) { const r = i % 2 ? 5 : 11, a = Math.PI * i / 8;
    pts.push((cx + r * Math.sin(a)).toFixed(1) + "," + (cy - r * Math.cos(a)).toFixed(1)); }
  node("polygon", {points: pts.join(" "), fill: "#ffcc00", stroke: "#c0392b", "stroke-width": 1.5}, parent);
}
function drawFrame(fr) {
  const layer = $("dynamic"); layer.replaceChildren();
  const colour = {}; fr.ships.forEach((s) => { colour[s[0]] = s[4]; });
  for (const [ship, path] of fr.paths || []) {
    node("polyline", {points: path.map((p) => centre(p).join(",")).join(" "), fill: "none",
      stroke: colour[ship] || "#555", "stroke-width": 3, "stroke-dasharray": "6 4", "stroke-linecap": "round",
      "marker-end": "url(#head)"}, layer);
  }
  for (const [from, to, hit] of fr.shots || []) {
    const [x1, y1] = centre(from), [x2, y2] = centre(to);
    node("line", {x1, y1, x2, y2, stroke: hit ? "#d0021b" : "#555", "stroke-width": hit ? 2.5 : 2,
      "stroke-dasharray": hit ? "" : "4 3"}, layer);
  }
  for (const p of fr.collisions || []) star(p, layer);  // under the ships, so names stay readable
  const hull = G.hull.map((p) => p.join(",")).join(" ");
  for (const s of fr.ghosts || []) {  // where the ships started the turn
    const [cx, cy] = centre([s[1], s[2]]);
    node("polygon", {points: hull, fill: "none", stroke: s[4], "stroke-width": 1.5, "stroke-dasharray": "3 2",
      opacity: 0.7, transform: `translate(${cx} ${cy}) rotate(${FACINGS.indexOf(s[3]) * 45})`}, layer);
  }
  for (const s of fr.ships) {
    const [cx, cy] = centre([s[1], s[2]]), out = s[5] !== "afloat";
    const g = node("g", {class: "ship", opacity: out ? 0.45 : 1}, layer);
    const body = node("g", {transform: `translate(${cx} ${cy}) rotate(${FACINGS.indexOf(s[3]) * 45})`}, g);
    node("polygon", {points: hull, fill: s[4], stroke: G.ink, "stroke-width": 1.5}, body);
    node("circle", {cx: 0, cy: -4, r: 2.5, fill: "#fff"}, body);
    const [l, r, t, b] = [cx - 12, cx + 12, cy - 12, cy + 12];
    const cross = `M ${l} ${t} L ${r} ${b} M ${r} ${t} L ${l} ${b}`;
    if (out) node("path", {d: cross, stroke: "#b01010", "stroke-width": 3}, g);
    node("text", {x: cx, y: cy + G.cell / 2 - 2, "font-family": "sans-serif", "font-size": 11,
      "font-weight": "bold", fill: G.ink, stroke: "#fff", "stroke-width": 3, "paint-order": "stroke",
      "text-anchor": "middle"}, g, s[0]);
  }
}
function fillExplain(turn, fr) {
  const box = $("explain"); box.replaceChildren();
  const seqs = new Set(fr.seqs); let phase = null, first = null;
  for (const line of turn.explain) {
    if (line.phase !== phase) { phase = line.phase; const h = document.createElement("h3");
      h.textContent = phase; box.appendChild(h); }
    const p = document.createElement("p");
    const seq = document.createElement("span"), text = document.createElement("span");
    seq.className = "seq"; seq.textContent = line.seq >= 0 ? line.seq : ""; text.textContent = line.text;
    for (const r of line.rules) { const tag = document.createElement("span"); tag.className = "rule";
      tag.textContent = r; text.appendChild(tag); }
    p.append(seq, text);
    if (seqs.has(line.seq) && fr.label.indexOf(": after") < 0) {
      p.className = "current"; first = first || p;
    }
    box.appendChild(p);
  }
  if (first) first.scrollIntoView({block: "nearest"});
}
function fillShips(fr) {
  const body = $("ships"); body.replaceChildren();
  for (const s of fr.ships) {
    const tr = document.createElement("tr");
    const extra = [s[8] ? "wind " + s[8] : "", s[9] ? "fire " + s[9] : "",
      s[10] !== null ? "countdown " + s[10] : ""].filter((x) => x);
    const damage = ["damage " + s[6], ...extra].join(", ");
    const cells = [s[0], s[7] || "-", squareName([s[1], s[2]]), s[3], damage, s[5]];
    cells.forEach((c, i) => { const td = document.createElement("td"); td.textContent = c;
      if (i === 5 && s[5] !== "afloat") td.className = "out"; tr.appendChild(td); });
    tr.firstChild.style.borderLeft = "5px solid " + s[4]; body.appendChild(tr);
  }
}
function show(index) {
  current = Math.max(0, Math.min(index, steps.length - 1));
  const [ti, fi] = steps[current], turn = DATA.turns[ti], fr = turn.frames[fi];
  drawFrame(fr); fillExplain(turn, fr); fillShips(fr);
  $("turn-number").textContent = turn.turn; $("phase-label").textContent = fr.label;
  $("step-label").textContent = `step ${current + 1} of ${steps.length}`;
  $("explain-title").textContent = turn.turn ? `What happened in turn ${turn.turn}` : "Before the first turn";
  $("turn-slider").value = ti; document.body.dataset.turn = turn.turn;
}
function showTurn(ti) { const frames = DATA.turns[ti].frames;
  show(steps.findIndex((s) => s[0] === ti && s[1] === frames.length - 1)); }
function play() {
  if (timer) { clearInterval(timer); timer = null; $("play").innerHTML = "&#9654; play"; return; }
  if (current >= steps.length - 1) show(0);
  $("play").innerHTML = "&#10074;&#10074; pause";
  timer = setInterval(() => { if (current >= steps.length - 1) play(); else show(current + 1); }, 1100);
}
const [W, H] = B.pixels;
$("board-svg").setAttribute("viewBox", `0 0 ${W} ${H}`);
$("board-svg").setAttribute("width", W); $("board-svg").setAttribute("height", H);
$("title").textContent = DATA.game;
$("meta").textContent = `${DATA.ruleset} - ${B.width}x${B.height} board - ${DATA.turns.length - 1} turn(s)` +
  (DATA.forked_from ? ` - forked from ${DATA.forked_from}` : "");
for (const [name, colour] of DATA.players) {
  const c = document.createElement("span"), i = document.createElement("i");
  c.className = "chip"; i.style.background = colour; c.append(i, name); $("players").appendChild(c);
}
$("turn-slider").max = DATA.turns.length - 1;
$("turn-slider").addEventListener("input", (e) => showTurn(Number(e.target.value)));
$("prev").addEventListener("click", () => show(current - 1));
$("next").addEventListener("click", () => show(current + 1));
$("play").addEventListener("click", play);
document.addEventListener("keydown", (e) => { if (e.key === "ArrowLeft") show(current - 1);
  if (e.key === "ArrowRight") show(current + 1); if (e.key === " ") { e.preventDefault(); play(); } });
const wanted = /turn=(\\d+)/.exec(location.hash);
const start = wanted ? DATA.turns.findIndex((t) => t.turn === Number(wanted[1]))
  : Math.min(1, DATA.turns.length - 1);
showTurn(start >= 0 ? start : 0);
</script>
</body></html>
"""
