"""``export --html``: the whole game in one self-contained page.

No network and nothing external: the CSS and the script are inline, and the game
is embedded as JSON in a ``<script type="application/json">`` element. Every
frame's picture is the SVG that ``render`` draws
(:func:`mortecouille.replays.pictures.svg.render_turn_svg`), embedded as a
string, so the page and ``render --svg`` cannot disagree; the script only swaps
the pictures, fills the explanation and the ships table, and steps through the
frames.

Frames: turn 0 is the board before the first turn; every resolved turn has a
frame for the position before its resolution, then one after each phase of
its story (the phases ``explain`` prints), so stepping shows the turn unfold,
and last the turn's outcome, the very picture of ``render --turn N``.
Each frame names the seqs it covers, which lets the page highlight the
explanation lines of the phase.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import msgspec

from mortecouille.core.board.geometry import square_name
from mortecouille.core.errors import BadInput
from mortecouille.core.game import fold
from mortecouille.core.limits import unsafe
from mortecouille.core.narration import ExplainContext, ending_text
from mortecouille.core.phases import END, ORDERS, SET_UP
from mortecouille.core.state import GameState
from mortecouille.events.base import Event
from mortecouille.events.game import GameCreated, TurnStarted
from mortecouille.replays.pictures.svg import (
    NO_OWNER_COLOUR,
    board_layer,
    legend_layer,
    owner_colours,
    picture_defs,
    render_turn_svg,
    xml_text,
)
from mortecouille.replays.pictures.turns import TurnStories, TurnStory, opening_picture, outcome_picture
from mortecouille.replays.reading.explain import ExplainLine, narrate


def ship_rows(state: GameState, colours: dict[str, str]) -> list[list[Any]]:
    """Every placed ship, for the ships table:
    [id, square, facing, colour, status, damage, owner, wind, fire, countdown]."""
    rows: list[list[Any]] = []
    for ship in sorted(state.ships.values(), key=lambda s: s.id):
        if ship.at is None:
            continue
        status = "sunk" if ship.sunk else "abandoned" if ship.lost else "gone" if ship.gone else "afloat"
        rows.append(
            [
                ship.id, square_name(ship.at), ship.facing, colours.get(ship.owner or "", NO_OWNER_COLOUR),
                status, ship.damage, ship.owner or "", ship.wind, ship.fire, ship.countdown,
            ]
        )  # fmt: skip
    return rows


def frame(label: str, state: GameState, colours: dict[str, str], seqs: list[int], svg: str) -> dict[str, Any]:
    """One step of the page: its label, the seqs it covers, the ships table and the picture."""
    return {"label": label, "seqs": seqs, "ships": ship_rows(state, colours), "svg": svg}


#: Where a frame's picture had a layer every frame of a game shares (the board: water, grid,
#: rocks, winds; the legend; the arrowheads' definitions): the page keeps each layer once and puts
#: it back before showing a frame, so the page stays small and each picture shown is still, byte
#: for byte, the one ``render`` draws. User text is escaped in the pictures (``<`` as ``&lt;``),
#: so it can never spell a marker. A frame whose layer differs (a legend drawn while the players'
#: colours were others) simply keeps its own.
BOARD_MARKER = "<!--board-->"
LEGEND_MARKER = "<!--legend-->"
DEFS_MARKER = "<!--defs-->"


def shared_layers(final: GameState, colours: dict[str, str]) -> dict[str, str]:
    """Marker -> the layer it stands for, in the pictures of the game that ends in ``final``."""
    return {
        BOARD_MARKER: board_layer(final.board),
        LEGEND_MARKER: legend_layer(final.board, tuple(colours.items()))[0],
        DEFS_MARKER: picture_defs(),
    }


def frame_picture(data: dict[str, Any], shown: dict[str, Any]) -> str:
    """A frame's picture as the page shows it (what its script does): each shared layer put back."""
    svg: str = shown["svg"]
    for mark, layer in data["shared_layers"].items():
        svg = svg.replace(mark, layer, 1)
    return svg


class PageFrames:
    """The frames of a page whose game ends in a state known before the first frame is made.

    What every frame shares comes from that final state: the players' colours in the ships
    tables, and the layers the page keeps once. So each frame is made in its final form at once:
    its ship rows in the final colours, and in its picture each shared layer (its first
    occurrence, in the order of ``layers``) replaced by its marker. A picture drawn while the
    players or their colours were others holds its own legend, not the shared one: nothing is
    replaced there and it keeps its own, as :func:`frame_picture` expects. (The page this makes is
    byte for byte the one made when every frame was kept until the final state was known.)"""

    def __init__(self, colours: dict[str, str], layers: dict[str, str]) -> None:
        self.colours = colours
        self.layers = layers

    def add(self, label: str, state: GameState, seqs: list[int], svg: str) -> dict[str, Any]:
        """The frame of ``state`` (the state its picture ``svg`` draws on the board)."""
        for mark, layer in self.layers.items():
            svg = svg.replace(layer, mark, 1)
        return frame(label, state, self.colours, seqs, svg)


def final_state(events: Iterable[Event]) -> tuple[GameState, int]:
    """The state ``events`` lead to, and how many they are: the first pass of :func:`page_parts`,
    a fold (no picture, no story) that holds nothing but the state. Refuses (BadInput, ``GAME``)
    a log that does not start with the game's creation."""
    counted = 0

    def counting() -> Iterator[Event]:
        nonlocal counted
        for event in checked_start(events):
            counted += 1
            yield event

    final = fold(counting())
    return final, counted


def page_data(final: GameState, colours: dict[str, str], layers: dict[str, str]) -> dict[str, Any]:
    """Everything the page shows but its turns (``"turns"`` left empty), as plain JSON-able data:
    all of it known from the final state alone."""
    board = final.board
    return {
        "game": final.game,
        "ruleset": final.ruleset,
        "players": [[p, colours.get(p, NO_OWNER_COLOUR)] for p in final.players],
        "forked_from": final.forked_from,
        "board": {"width": board.width, "height": board.height},
        "shared_layers": layers,
        "turns": [],
        "game_over": game_over(final),
    }


def opening_turn(start: GameState, frames: PageFrames) -> dict[str, Any]:
    """Turn 0: the board before the first turn. Its picture (like every turn's "after") is the
    one ``render --turn N --svg`` writes, byte for byte."""
    return {
        "turn": 0,
        "frames": [frames.add("before turn 1", start, [], opening_picture(start))],
        "explain": [
            {"seq": -1, "phase": SET_UP.name, "text": "the board before the first turn", "rules": []}
        ],
    }


def turn_data(story: TurnStory, frames: PageFrames) -> dict[str, Any]:
    """One resolved turn: the position before its resolution, one frame per phase of its story,
    its outcome; and the story told as ``explain`` tells it."""
    turn, events, started = story.turn, story.events, story.started
    lines = story_lines(story)
    before = story.states[started]
    name = before.game
    shown = [
        frames.add(
            f"turn {turn}: before",
            before,
            [e.seq for e in events[: started + 1]],
            render_turn_svg(before, before, [], f"{name}: turn {turn}, before"),
        )
    ]
    index = started + 1
    for phase, group in phase_groups(lines, events[started + 1 :]):
        index += len(group)
        state = story.states[index - 1]
        picture = render_turn_svg(before, state, group, f"{name}: turn {turn}, {phase}")
        shown.append(frames.add(phase, state, [e.seq for e in group], picture))
    # The frame a turn opens on: the outcome with every path, collision and shot of the turn.
    after = story.states[-1]
    picture = outcome_picture(before, after, events[started:], turn)
    shown.append(frames.add(f"turn {turn}: after", after, [e.seq for e in events[started + 1 :]], picture))
    # the lines as structs: msgspec encodes a struct as the object to_builtins would give
    return {"turn": turn, "frames": shown, "explain": lines}


def story_lines(story: TurnStory) -> list[ExplainLine]:
    """The turn's story told event by event, as :func:`explain_turn` tells it."""
    opened = story.events[story.started]
    rounds = opened.rounds if isinstance(opened, TurnStarted) else 1
    lines: list[ExplainLine] = []
    phase = ORDERS.name
    for index, event in enumerate(story.events):
        context = ExplainContext(story.state_before(index), story.states[index], rounds)
        line = narrate(event, context, context.before.ruleset, phase)
        phase = line.phase
        lines.append(line)
    return lines


def game_over(state: GameState) -> dict[str, str] | None:
    """What the banner the replay ends on says, once the game has ended: who won (or that no one
    did) and how it ended, in the words ``board`` and ``explain`` use."""
    if not state.ended:
        return None
    return {
        "headline": f"Game over: {state.winner} wins" if state.winner else "Game over: no winner",
        "detail": ending_text(state.end_reason, state.winner).render(),
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


def checked_start(events: Iterable[Event]) -> Iterator[Event]:
    """``events``, refused (BadInput) unless the first is the game's creation."""
    stream = iter(events)
    first = next(stream, None)
    if not isinstance(first, GameCreated):
        raise BadInput("game", "the log does not start with game-created")
    yield first
    yield from stream


def embed_json(data: Any) -> str:
    """JSON safe inside a script element: no ``</`` can close it early and no ``<!--`` can change
    how the browser reads it, and no control or bidi character stays raw; every replacement is a
    JSON escape, so ``JSON.parse`` reads the same strings."""
    return embed_text(msgspec.json.encode(data).decode())


def embed_text(json_text: str) -> str:
    """JSON text made safe inside a script element as :func:`embed_json` says.

    ``</`` and ``<!--`` cannot overlap (their second characters differ) and neither replacement
    spells either again, so two plain replacements do what one scan would; the characters outside
    printable ASCII (none at all in most pages: JSON escapes the controls below space) are looked
    at one by one only when there are some."""
    text = json_text.replace("</", "<\\/").replace("<!--", "\\u003c!--")
    if text.isascii() and "\x7f" not in text:
        return text
    return _OUTSIDE_PRINTABLE.sub(_script_escape, text)


#: a candidate for a JSON escape: any character outside printable ASCII (``_script_escape`` keeps
#: it unless :func:`unsafe` refuses it)
_OUTSIDE_PRINTABLE = re.compile("[^\x20-\x7e]")


def _script_escape(found: re.Match[str]) -> str:
    text = found.group(0)
    # C1 controls, DEL, separators and bidi overrides from a forged log: JSON escapes, never raw
    return f"\\u{ord(text):04x}" if unsafe(text) else text


def build_html(events: Iterable[Event]) -> str:
    """The page of ``events`` (read once: a stream will do, but it is held whole, as the page is;
    the ``export`` command writes :func:`page_parts` instead)."""
    held = list(events)
    return "".join(page_parts(lambda: held))


def page_parts(read: Callable[[], Iterable[Event]]) -> Iterator[str]:
    """The page in consecutive parts, so that a writer never holds it whole, nor the decoded log.

    ``read()`` gives the log's events from its start, as a stream; it is called twice. The first
    pass folds the final state, on which everything every frame shares depends (the players'
    colours, the shared layers, the data before the turns); the second tells and draws the turns,
    each turn's part made, encoded and given as soon as its story has been read. The second pass
    reads only as many events as the first (lines appended meanwhile are not the page's) and must
    reach the same state: a log changed otherwise between the passes is refused (BadInput,
    ``GAME``) rather than drawn half from each."""
    final, count = final_state(read())
    colours = owner_colours(final)
    layers = shared_layers(final, colours)
    head, tail = TEMPLATE.split("__GAME_DATA__")
    title = xml_text(f"{final.game} - Mortecouille replay")
    # one pass: a placeholder's name inside the title (a game called __GAME_DATA__) stays text
    yield PLACEHOLDERS.sub(lambda _: title, head)
    # The data with no turns, cut where they go: a JSON key's quotes are never inside a string
    # (they would be escaped), so the first ``"turns":[]`` is the key's. Each part is escaped
    # alone: a part ends with ``[``, ``,`` or ``}``, so no ``</`` or ``<!--`` straddles two.
    around = msgspec.json.encode(page_data(final, colours, layers)).decode()
    cut = around.index('"turns":[]') + len('"turns":[')
    yield embed_text(around[:cut])
    frames = PageFrames(colours, layers)
    stories = TurnStories(itertools.islice(read(), count))
    separator = ""
    for story in stories:
        if not separator:  # the opening is known once the first turn's story has been read
            yield embed_json(opening_turn(stories.opening, frames))
            separator = ","
        yield separator + embed_json(turn_data(story, frames))
    if not separator:  # no turn resolved: the opening is the current state
        yield embed_json(opening_turn(stories.opening, frames))
    if stories.count != count or stories.final != final:
        raise BadInput("game", "the log changed while the page was written: export it again")
    yield embed_text(around[cut:])
    yield tail


# The page. Its title is filled by PLACEHOLDERS, its data where ``__GAME_DATA__`` stands (the CSS and
# script are full of braces).
PLACEHOLDERS = re.compile("__TITLE__")
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
.now { display: flex; align-items: baseline; gap: 0 10px; margin-top: 8px; flex-wrap: wrap; }
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
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid var(--line); }
th { color: var(--muted); font-weight: 600; }
td.out { color: #b01010; font-weight: 600; }
.side { display: flex; flex-direction: column; gap: 18px; }
#game-over { margin-top: 10px; padding: 10px 14px; border-radius: 8px; background: #17324d; color: #fff;
  display: flex; align-items: baseline; gap: 12px; flex-wrap: wrap; }
#game-over[hidden] { display: none; }
#game-over strong { font-size: 20px; }
#game-over span { color: #c9d8e6; }
footer { color: var(--muted); font-size: 12px; padding: 0 24px 18px; }
/* A name may be one word of 64 letters: it breaks anywhere rather than widen the page. */
header h1, .chip, #explain, #game-over { overflow-wrap: anywhere; }
/* The ships table in a card too narrow for its six columns (a phone, either way up): each ship
   on its own lines (its name, then owner, square, facing, condition, status), never wider than the
   card. A browser without container queries scrolls the table in its card, never the page. */
.ship-list { overflow-x: auto; margin-top: 6px; container-type: inline-size; }
@container (max-width: 460px) {
  .ship-list thead { display: none; }
  .ship-list table, .ship-list tbody, #ships tr { display: block; }
  #ships tr { padding: 5px 0 5px 11px; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
  #ships td { display: inline; padding: 0; border: 0; }
  #ships td:first-child { display: block; font-weight: 600; margin-left: -11px; padding-left: 6px; }
  #ships td:nth-child(3)::before { content: " \\00b7  at "; }
  #ships td:nth-child(4)::before { content: " facing "; }
  #ships td:nth-child(n+5)::before { content: " \\00b7  "; }
}
/* A phone held upright (and any narrow window): one column, the board first at the full width,
   then the controls under it, the explanation and the ships; buttons a finger can hit. */
@media (max-width: 760px) {
  main { grid-template-columns: minmax(0, 1fr); gap: 12px; padding: 12px; }
  header { padding: 10px 12px; gap: 2px 12px; }
  footer { padding: 0 12px 12px; }
  .card { padding: 12px; }
  .side { gap: 12px; }
  button { padding: 9px 14px; }
}
/* A phone held sideways (a short window): the board leaves room for the turn and the controls under
   it, so a step can be taken while the board is in sight (svh: the height with the browser's bars
   shown, where known). */
@media (max-height: 500px) {
  #board svg { max-height: calc(100vh - 120px); max-height: calc(100svh - 120px); }
  input[type=range] { min-width: 110px; }
}
</style></head>
<body>
<header><h1 id="title"></h1><span class="meta" id="meta"></span><span id="players"></span></header>
<main>
  <section class="card">
    <div id="board"></div>
    <div id="game-over" role="status" hidden><strong id="game-over-headline"></strong>
      <span id="game-over-detail"></span></div>
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
    <div class="card"><h2>Ships</h2><div class="ship-list"><table><thead><tr><th>ship</th><th>owner</th>
      <th>square</th><th>facing</th><th>condition</th><th>status</th></tr></thead><tbody id="ships"></tbody>
      </table></div></div>
  </section>
</main>
<footer>Self-contained replay exported by mortecouille. Rule IDs refer to the rules digest.</footer>
<script type="application/json" id="game-data">__GAME_DATA__</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("game-data").textContent);
const B = DATA.board;
const steps = [];
DATA.turns.forEach((t, ti) => t.frames.forEach((f, fi) => steps.push([ti, fi])));
let current = 0, timer = null;
const $ = (id) => document.getElementById(id);

// The picture is render's SVG, built and escaped in Python: the script only swaps it in.
// a frame's picture is render's SVG with the layers every frame shares taken out (frame_picture)
function picture(fr) {
  let svg = fr.svg;
  for (const [mark, layer] of Object.entries(DATA.shared_layers)) svg = svg.replace(mark, () => layer);
  return svg;
}
function drawFrame(fr) { $("board").innerHTML = picture(fr); }
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
  if (first) scrollWithin(box, first);
}
// The box alone scrolls to the line: on a phone the explanation is under the board, and scrolling
// the page to it would take the board and the step buttons off the screen at every step.
function scrollWithin(box, line) {
  const outer = box.getBoundingClientRect(), inner = line.getBoundingClientRect();
  if (inner.top < outer.top) box.scrollTop -= outer.top - inner.top;
  else if (inner.bottom > outer.bottom) {
    box.scrollTop += Math.min(inner.bottom - outer.bottom, inner.top - outer.top);
  }
}
function fillShips(fr) {
  const body = $("ships"); body.replaceChildren();
  for (const s of fr.ships) {
    const tr = document.createElement("tr");
    const extra = [s[7] ? "wind " + s[7] : "", s[8] ? "fire " + s[8] : "",
      s[9] !== null ? "countdown " + s[9] : ""].filter((x) => x);
    const damage = ["damage " + s[5], ...extra].join(", ");
    const cells = [s[0], s[6] || "-", s[1], s[2], damage, s[4]];
    cells.forEach((c, i) => { const td = document.createElement("td"); td.textContent = c;
      if (i === 5 && s[4] !== "afloat") td.className = "out"; tr.appendChild(td); });
    tr.firstChild.style.borderLeft = "5px solid " + s[3]; body.appendChild(tr);
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
  // the replay ends on the game-over banner (text only: names are set as textContent)
  $("game-over").hidden = !(DATA.game_over && current === steps.length - 1);
}
function showTurn(ti) { const frames = DATA.turns[ti].frames;
  show(steps.findIndex((s) => s[0] === ti && s[1] === frames.length - 1)); }
function play() {
  if (timer) { clearInterval(timer); timer = null; $("play").innerHTML = "&#9654; play"; return; }
  if (current >= steps.length - 1) show(0);
  $("play").innerHTML = "&#10074;&#10074; pause";
  timer = setInterval(() => { if (current >= steps.length - 1) play(); else show(current + 1); }, 1100);
}
$("title").textContent = DATA.game;
$("meta").textContent = `${DATA.ruleset} - ${B.width}x${B.height} board - ${DATA.turns.length - 1} turn(s)` +
  (DATA.forked_from ? ` - forked from ${DATA.forked_from}` : "");
for (const [name, colour] of DATA.players) {
  const c = document.createElement("span"), i = document.createElement("i");
  c.className = "chip"; i.style.background = colour; c.append(i, name); $("players").appendChild(c);
}
if (DATA.game_over) { $("game-over-headline").textContent = DATA.game_over.headline;
  $("game-over-detail").textContent = DATA.game_over.detail; }
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
