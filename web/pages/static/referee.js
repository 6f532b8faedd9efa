/* The referee's page: seats and their QR codes, who has submitted, resolving (seeded dice, or
 * the table's dice typed), rulings, the deadline, ending the game, forking a what-if. The referee sees what the
 * table sees (the orders are the players'), plus the seats. */
"use strict";

(function () {
  const MC = window.MC;
  let view = null;
  const issued = {}; // player -> {link, qr}: shown on this page only, never stored
  let refereeIssued = null; // the referee's own new {link, qr}, the same (a player may be called "referee")

  /** The referee's own seat: a new link ends the old one everywhere, this page takes the new one. */
  function refereeCard() {
    const button = MC.el("button", { type: "button", class: "secondary", "data-seat": "referee" }, MC.t("referee.seat.own"));
    button.addEventListener("click", () => reissueOwn(button));
    const card = MC.el("div", { class: "seat", "data-seat": "referee" }, button);
    if (refereeIssued) {
      const qr = MC.el("div", { class: "qr" });
      MC.putSvg(qr, refereeIssued.qr, MC.t("referee.seat.own.link"));
      card.append(
        MC.el("p", { class: "muted" }, MC.t("referee.seat.own.note")),
        qr,
        MC.el("a", { class: "link", href: refereeIssued.link, "aria-label": MC.t("referee.seat.own.link") }, refereeIssued.link),
      );
    }
    return card;
  }

  async function reissueOwn(button) {
    MC.clearError();
    if (!window.confirm(MC.t("referee.seat.own.confirm"))) return;
    button.disabled = true;
    try {
      const answer = await MC.command("POST", "/referee-seat", undefined);
      MC.adoptToken(answer.token); // the old token stopped working: this page goes on with the new one
      refereeIssued = { link: answer.link, qr: answer.qr_svg };
      drawSeats(view);
      const shown = document.querySelector('.seat[data-seat="referee"] a.link');
      if (shown) shown.focus();
    } catch (error) {
      MC.showError(error);
    } finally {
      button.disabled = false;
    }
  }

  function drawSeats(v) {
    const holder = document.getElementById("seats");
    const cards = (v.players || []).map((player) => {
      const button = MC.el("button", { type: "button", class: "secondary", "data-player": player }, MC.t("referee.seat.new", { player: player }));
      button.addEventListener("click", () => reissue(button, player));
      const card = MC.el("div", { class: "seat", "data-player": player }, button);
      const seat = issued[player];
      if (seat) {
        const qr = MC.el("div", { class: "qr" });
        MC.putSvg(qr, seat.qr, MC.t("referee.seat.link", { player: player }));
        card.append(
          MC.el("p", { class: "muted" }, MC.t("referee.seat.note", { player: player })),
          qr,
          MC.el("a", { class: "link", href: seat.link, "aria-label": MC.t("referee.seat.link", { player: player }) }, seat.link),
        );
      }
      return card;
    });
    holder.replaceChildren(refereeCard(), ...cards);
  }

  async function reissue(button, player) {
    MC.clearError();
    button.disabled = true;
    try {
      const answer = await MC.command("POST", "/seats/" + encodeURIComponent(player), undefined);
      const link = answer.link || (answer.links && answer.links[player]) || answer.url;
      const absolute = link && link.startsWith("/") ? location.origin + link : link;
      issued[player] = { link: absolute, qr: answer.qr_svg || answer.qr };
      drawSeats(view);
      const shown = document.querySelector('.seat[data-player="' + CSS.escape(player) + '"] a.link');
      if (shown) shown.focus();
    } catch (error) {
      MC.showError(error);
    } finally {
      button.disabled = false;
    }
  }

  function drawSubmitted(v) {
    const waiting = v.waiting || {};
    const items = (v.players || []).map((player) => {
      const ships = waiting[player];
      const done = !ships || (Array.isArray(ships) && ships.length === 0);
      return MC.el("li", { "data-player": player, "data-submitted": done ? "yes" : "no" },
        done ? MC.t("referee.submitted.yes", { player: player }) : MC.t("referee.submitted.no", { player: player, ships: [].concat(ships).join(", ") }));
    });
    document.getElementById("submitted").replaceChildren(...items);
  }

  function setChoices(chooser, choices) {
    const before = chooser.value;
    chooser.replaceChildren(...choices.map(([value, label]) => MC.el("option", { value: value }, label)));
    if (choices.some(([value]) => value === before)) chooser.value = before;
  }

  /** In a game of contributed dice (D3): who committed, who the locked turn still awaits a
   * reveal from, the lock button, and the reason asked to resolve without the missing reveals.
   * ``data-ready`` on the form says the resolve may go through now as far as the dice go. */
  function drawContributions(v, open) {
    const box = document.getElementById("dice-contributions");
    const form = document.getElementById("resolve-form");
    const resolveButton = document.getElementById("resolve-submit");
    const contributed = v.dice_scheme === "contributed" && v.status !== "ended";
    box.hidden = !contributed;
    const committed = v.committed || [];
    const awaited = v.locked ? v.awaiting_reveal || [] : [];
    const lock = document.getElementById("lock-submit");
    lock.hidden = !contributed || Boolean(v.locked) || v.status !== "playing";
    lock.disabled = !open;
    document.getElementById("absent-field").hidden = !contributed || !awaited.length;
    resolveButton.textContent = awaited.length ? MC.t("referee.resolve.without", { names: awaited.join(", ") }) : MC.t("referee.resolve.submit");
    let state;
    if (!contributed) state = "";
    else if (v.locked) state = awaited.length ? MC.t("referee.dice.awaiting", { names: awaited.join(", ") }) : MC.t("referee.dice.ready");
    else state = committed.length ? MC.t("referee.dice.committed", { names: committed.join(", ") }) : MC.t("referee.dice.nobody");
    document.getElementById("dice-state").textContent = state;
    // ready: nothing of the dice is pending (not contributed; nobody committed, the one-step
    // path; or locked and every reveal in)
    const ready = !contributed || (v.locked ? !awaited.length : !committed.length);
    form.dataset.ready = ready ? "yes" : "no";
    form.dataset.locked = v.locked ? "yes" : "no";
    form.dataset.awaiting = awaited.join(",");
  }

  function render(v, how) {
    view = v;
    MC.showCommon(v, how);
    MC.putSvg(document.getElementById("board"), v.board_svg || v.svg, MC.t("board.title") + ": " + (v.position || ""));
    document.getElementById("ships").replaceChildren(MC.shipsTable(MC.shipsOf(v)));
    document.getElementById("table-link").href = "/table/" + encodeURIComponent(MC.game);
    drawSeats(v);
    drawSubmitted(v);
    const table = v.dice_mode === "table";
    document.getElementById("dice-field").hidden = !table;
    document.getElementById("dice-seeded").hidden = table || v.ruleset === "blockade";
    document.getElementById("deadline-now").textContent = v.deadline ? MC.t("referee.deadline.now", { at: v.deadline }) : "";
    setChoices(document.getElementById("end-winner"), [["", MC.t("referee.end.nowinner")]].concat((v.players || []).map((p) => [p, p])));
    const open = how.live && !(v.status === "ended" || v.ended);
    document.querySelectorAll("form button[type=submit]").forEach((button) => { button.disabled = !open; });
    // a fork only reads this game: it may be made after the end, or while looking back
    document.getElementById("fork-submit").disabled = false;
    drawContributions(v, open);
    proposeForkPoint();
  }

  // --- fork (what-if) ----------------------------------------------------------------------

  let forkAtTyped = false; // once the referee typed a seq, the page stops proposing one

  /** Where a fork is proposed: the scrubber's position (#seq=) if set, else the last command
   * boundary of the game: its last event while it is open, before its last turn once it ended
   * (a victory belongs to its turn, and no fork goes past an end); never past ``fork_at_most``,
   * the latest seq the server lets a fork copy up to now (a fork copies nothing secret). */
  function forkPoint() {
    const latest = MC.latest || view;
    const limit = latest && typeof latest.fork_at_most === "number" ? latest.fork_at_most : null;
    const wanted = MC.fragmentSeq();
    let at = wanted;
    if (at === null && latest) {
      const last = MC.lastSeqOf(latest);
      const spans = MC.turnSpans(latest);
      at = !(latest.status === "ended" || latest.ended) ? last
        : Math.max(0, spans.length ? spans[spans.length - 1].first - 1 : last - 1);
    }
    return at !== null && limit !== null ? Math.min(at, limit) : at;
  }

  /** What the fork form says of its seq: the latest a fork may copy up to now, and why not later. */
  function drawForkLimit() {
    const latest = MC.latest || view;
    const limit = latest && typeof latest.fork_at_most === "number" ? latest.fork_at_most : null;
    const note = document.getElementById("fork-limit");
    note.textContent = limit === null ? "" : MC.t("referee.fork.limit", { seq: limit });
    note.hidden = limit === null;
  }

  function proposeForkPoint() {
    drawForkLimit();
    if (forkAtTyped) return;
    const at = forkPoint();
    if (at !== null && at >= 0) document.getElementById("fork-at").value = String(at);
  }

  /** A refusal of the fork, shown under its form too (the page's error box is far above it). */
  function showForkRefusal(error) {
    const box = document.getElementById("fork-error");
    box.textContent = error ? (error instanceof MC.ApiError ? error.message : String(error.message || error)) : "";
    box.hidden = !error;
  }

  /** A link the server gave, kept only if it is a web address (never ``javascript:``). */
  function safeLink(link) {
    if (typeof link !== "string") return null;
    if (link.startsWith("/")) return location.origin + link;
    return /^https?:\/\//i.test(link) ? link : null;
  }

  const forkFields = { name: "fork-name", at: "fork-at", dice: "fork-dice" };

  function markForkField(field) {
    Object.values(forkFields).forEach((id) => document.getElementById(id).removeAttribute("aria-invalid"));
    const id = forkFields[field];
    if (!id) return;
    const input = document.getElementById(id);
    input.setAttribute("aria-invalid", "true");
    input.focus();
  }

  function showFork(answer) {
    const box = document.getElementById("fork-result");
    const referee = safeLink(answer.referee && answer.referee.link);
    const table = safeLink(answer.table);
    document.getElementById("fork-done").textContent = MC.t("referee.fork.done", { game: answer.game, from: MC.game, seq: answer.forked_at_seq });
    const link = document.getElementById("fork-referee-link");
    link.textContent = referee || "";
    link.href = referee || "#";
    link.setAttribute("aria-label", MC.t("referee.fork.link", { game: answer.game }));
    document.getElementById("fork-open").dataset.link = referee || "";
    const tableLink = document.getElementById("fork-table-link");
    tableLink.href = table || "#";
    tableLink.hidden = !table;
    const players = Object.entries(answer.players || {}).map(([player, seat]) => {
      const playerLink = safeLink(seat && seat.link);
      return MC.el("li", { "data-player": player }, MC.t("referee.fork.player", { player: player }),
        playerLink ? MC.el("a", { class: "link", href: playerLink, target: "_blank", rel: "noopener noreferrer" }, playerLink) : "");
    });
    document.getElementById("fork-players").replaceChildren(...players);
    box.hidden = false;
    link.focus();
  }

  async function submit(button, path, body, done) {
    MC.clearError();
    MC.say("");
    button.disabled = true;
    try {
      const answer = await MC.command("POST", path, body);
      MC.say(typeof done === "function" ? done(answer) : done);
      return answer;
    } catch (error) {
      MC.showError(error);
      return null;
    } finally {
      button.disabled = false;
    }
  }

  document.getElementById("resolve-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const body = {
      partial: document.getElementById("resolve-partial").checked,
      idle_turn: document.getElementById("resolve-idle").checked,
    };
    const awaited = view && view.dice_scheme === "contributed" && view.locked ? view.awaiting_reveal || [] : [];
    if (awaited.length) {
      // resolving without a withheld reveal is logged with its reason, for each player missing
      const reason = document.getElementById("resolve-absent").value.trim();
      if (!reason) {
        MC.showError(Object.assign(new Error(MC.t("referee.absent.needed", { names: awaited.join(", ") })), { plain: true }));
        document.getElementById("resolve-absent").focus();
        return;
      }
      body.absent_reason = reason;
    }
    const typed = document.getElementById("resolve-dice").value.trim();
    if (view && view.dice_mode === "table" && typed) {
      body.dice = typed.split(/[\s,]+/).filter(Boolean).map(Number);
    }
    submit(document.getElementById("resolve-submit"), "/resolve", body, (answer) => {
      const done = MC.t("referee.resolved", { seq: answer && typeof answer.seq === "number" ? answer.seq : "?" });
      const head = answer && answer.head_code;
      document.getElementById("resolve-absent").value = "";
      return head ? done + " " + MC.t("headcode.after", { turn: head.turn }) + " " + head.code : done;
    });
  });
  document.getElementById("lock-submit").addEventListener("click", () => {
    submit(document.getElementById("lock-submit"), "/lock", undefined, MC.t("referee.lock.done"));
  });
  /** One line of the adjustments box as the service takes it; a change it cannot read is sent as
   * written, for the service to refuse naming it. */
  function adjustment(line) {
    const cut = line.lastIndexOf(" ");
    const made = { ship: cut < 0 ? line : line.slice(0, cut).trim() };
    const changes = cut < 0 ? [] : line.slice(cut + 1).split(",").map((change) => change.trim()).filter(Boolean);
    for (const change of changes) {
      const sign = change.indexOf("=");
      const name = (sign < 0 ? change : change.slice(0, sign)).trim().toLowerCase();
      const value = sign < 0 ? "" : change.slice(sign + 1).trim();
      const number = /^[+-]?\d+$/.test(value) ? Number(value) : value;
      made[name] = name === "sunk" && /^(true|false)$/i.test(value) ? value.toLowerCase() === "true" : number;
    }
    return made;
  }

  document.getElementById("ruling-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { rule: document.getElementById("ruling-rule").value.trim(), text: document.getElementById("ruling-text").value };
    // One adjustment a line: the ship's name, then its changes ("Black Pearl damage=+2,position=C5"),
    // sent as the service takes them: { ship: "Black Pearl", damage: 2, position: "C5" }.
    const adjust = document.getElementById("ruling-adjust").value.split("\n").map((line) => line.trim()).filter(Boolean)
      .map(adjustment);
    if (adjust.length) body.adjust = adjust;
    submit(document.getElementById("ruling-submit"), "/rulings", body, MC.t("referee.ruling.done"));
  });
  document.getElementById("deadline-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const seconds = Number(document.getElementById("deadline-seconds").value);
    submit(document.getElementById("deadline-submit"), "/deadline", { seconds: seconds }, MC.t("referee.deadline.done"));
  });
  document.getElementById("end-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!window.confirm(MC.t("referee.end.confirm"))) return;
    const body = {};
    const winner = document.getElementById("end-winner").value;
    const reason = document.getElementById("end-reason").value.trim();
    if (winner) body.winner = winner;
    if (reason) body.reason = reason;
    submit(document.getElementById("end-submit"), "/end", body, MC.t("referee.end.done"));
  });

  document.getElementById("fork-at").addEventListener("input", () => { forkAtTyped = true; });
  document.getElementById("fork-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    MC.clearError();
    MC.say("");
    const name = document.getElementById("fork-name").value.trim();
    const typedAt = document.getElementById("fork-at").value.trim();
    showForkRefusal(null);
    if (!name || !/^\d+$/.test(typedAt)) {
      const missing = Object.assign(new Error(MC.t("referee.fork.missing")), { plain: true });
      MC.showError(missing);
      showForkRefusal(missing);
      markForkField(!name ? "name" : "at");
      return;
    }
    const body = { name: name, at: Number(typedAt) };
    const dice = document.getElementById("fork-dice").value;
    if (dice) body.dice = dice;
    const button = document.getElementById("fork-submit");
    button.disabled = true;
    try {
      const answer = await MC.command("POST", "/fork", body);
      markForkField(null);
      forkAtTyped = false;
      showFork(answer);
      MC.say(MC.t("referee.fork.done", { game: answer.game, from: MC.game, seq: answer.forked_at_seq }));
    } catch (error) {
      MC.showError(error);
      showForkRefusal(error);
      if (error instanceof MC.ApiError) markForkField(error.field);
    } finally {
      button.disabled = false;
    }
  });
  document.getElementById("fork-open").addEventListener("click", (event) => {
    const link = event.currentTarget.dataset.link;
    if (link) window.open(link, "_blank", "noopener,noreferrer");
  });

  MC.start({ render: render, needsToken: true });
})();
