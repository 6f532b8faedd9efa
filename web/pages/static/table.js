/* The table page (a big screen or projector): the live board, who the turn waits for, the
 * last turn told phase by phase beside the board (replayed on its own when a turn resolves),
 * and the game-over banner. It shows public information only: it sends no token. */
"use strict";

(function () {
  const MC = window.MC;
  const STEP_MS = 2500; // how long each phase stays on screen when a resolved turn is replayed

  let phases = []; // [{phase, lines, last}] of the turn explained
  let shownPhase = -1; // -1: the whole turn, as it ended
  let playing = false;
  let stepTimer = null;
  let knownTurns = null;
  let lastView = null;

  /** The explanation's lines grouped by phase, in order; each group ends at its last seq. */
  function phasesOf(view) {
    const groups = [];
    for (const line of view.explanation || []) {
      const text = typeof line === "string" ? line : line.text;
      const phase = (line && line.phase) || "";
      const seq = line && typeof line.seq === "number" ? line.seq : null;
      let group = groups[groups.length - 1];
      if (!group || group.phase !== phase) {
        group = { phase: phase, lines: [], last: null };
        groups.push(group);
      }
      group.lines.push({ text: text, rules: (line && line.rules) || [] });
      if (seq !== null) group.last = group.last === null ? seq : Math.max(group.last, seq);
    }
    return groups;
  }

  function drawExplain() {
    const list = document.getElementById("explain");
    const items = [];
    phases.forEach((group, index) => {
      const state = shownPhase < 0 || index === shownPhase ? (index === shownPhase ? "current" : "") : index > shownPhase ? "later" : "";
      for (const line of group.lines) {
        items.push(MC.el("li", { class: state || null, "data-phase": group.phase }, line.text));
      }
    });
    if (!items.length) items.push(MC.el("li", { class: "muted" }, MC.t("turn.none")));
    list.replaceChildren(...items);
    const label = document.getElementById("phase");
    const spans = MC.turnSpans(lastView);
    const told = spans.length ? MC.t("turn.number", { turn: spans[spans.length - 1].turn }) : "";
    label.textContent = shownPhase >= 0 && phases[shownPhase]
      ? MC.t("turn.phase", { n: shownPhase + 1, total: phases.length, phase: phases[shownPhase].phase })
      : told;
    const current = list.querySelector("li.current");
    if (current && current.scrollIntoView) current.scrollIntoView({ block: "nearest" });
    document.getElementById("phase-prev").disabled = !phases.length || shownPhase === 0;
    document.getElementById("phase-next").disabled = !phases.length || shownPhase < 0;
    document.getElementById("phase-play").disabled = !phases.length;
  }

  function drawBoard(view) {
    MC.putSvg(document.getElementById("board"), view.board_svg || view.svg, MC.t("board.title") + ": " + (view.position || ""));
  }

  /** Show phase ``index`` of the explained turn: the board as it was after that phase. */
  async function showPhase(index) {
    shownPhase = index;
    drawExplain();
    const group = phases[index];
    if (group && group.last !== null) {
      try {
        const then = await MC.getJson(MC.gamePath("/view?seq=" + group.last));
        if (shownPhase === index) drawBoard(then);
      } catch (error) {
        MC.showError(error);
      }
    }
  }

  function stop() {
    playing = false;
    clearTimeout(stepTimer);
    document.body.dataset.replaying = "no";
  }

  function showWholeTurn() {
    stop();
    shownPhase = -1;
    drawExplain();
    if (lastView) drawBoard(lastView);
  }

  /** Replay the explained turn phase by phase, then come back to the board as it is. */
  function play() {
    stop();
    if (!phases.length) return;
    playing = true;
    document.body.dataset.replaying = "yes";
    let index = 0;
    const step = () => {
      if (!playing) return;
      if (index >= phases.length) { showWholeTurn(); return; }
      showPhase(index);
      index += 1;
      stepTimer = setTimeout(step, STEP_MS);
    };
    step();
  }

  function render(view, how) {
    lastView = view;
    MC.showCommon(view, how);
    document.getElementById("ships").replaceChildren(MC.shipsTable(MC.shipsOf(view)));
    const turns = MC.turnSpans(view).length;
    const resolvedNow = how.live && knownTurns !== null && turns > knownTurns;
    if (how.live) knownTurns = turns;
    if (resolvedNow) {
      phases = phasesOf(view);
      play(); // a turn just resolved: everyone watches it unfold
      return;
    }
    if (playing) return; // the replay comes back to this view when it ends
    phases = phasesOf(view);
    shownPhase = -1;
    drawExplain();
    drawBoard(view);
  }

  document.getElementById("phase-prev").addEventListener("click", () => {
    stop();
    showPhase(shownPhase < 0 ? phases.length - 1 : Math.max(0, shownPhase - 1));
  });
  document.getElementById("phase-next").addEventListener("click", () => {
    stop();
    if (shownPhase < 0) return;
    if (shownPhase + 1 >= phases.length) showWholeTurn();
    else showPhase(shownPhase + 1);
  });
  document.getElementById("phase-play").addEventListener("click", play);

  MC.start({ render: render });
})();
