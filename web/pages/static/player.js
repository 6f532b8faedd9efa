/* The player's page (a phone): their ships and sheets; buying, sealing and placing; an order
 * form that writes the order grammar (or blockade tokens); refusals with their rule; what was
 * submitted; whom the turn waits for. The token of the link is this player's seat: the server
 * shows this page public information and this player's own secrets, nothing else. */
"use strict";

(function () {
  const MC = window.MC;
  const VERBS = ["advance", "maneuver", "attack", "catapult", "idle", "fireship"];
  const TURNS = ["1/8", "1/4", "1/2"];
  const SIDES = ["left", "right"];
  const POSITIONS = ["port", "starboard", "bow", "stern"];
  const FACINGS8 = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];
  const FACINGS4 = ["N", "E", "S", "W"];
  const TOKENS = ["F", "L", "R", ""];
  const ROUNDS = 4; // P1: four rounds a blockade turn

  let view = null;
  let me = null;
  let catalogue = null;

  // --- reading the view ---------------------------------------------------------------------

  function myName(v) { return (v && v.viewer && v.viewer.player) || null; }

  function fleetOf(v, player) {
    const fleets = (v && v.fleets) || {};
    if (Array.isArray(fleets)) return fleets.find((fleet) => fleet.player === player) || null;
    return fleets[player] || null;
  }

  function shipId(ship) { return ship.id || ship.name; }
  function placed(ship) { return Boolean(ship.square || ship.at); }
  function afloat(ship) { return placed(ship) && !(ship.sunk || ship.lost || ship.gone); }
  function myShips(v) { return MC.shipsOf(v).filter((ship) => ship.owner === me); }
  function ended(v) { return v.status === "ended" || Boolean(v.ended); }

  /** The ships ``ship`` can fire at from ``position`` (a side, or "catapult"), with the chance
   * to hit, as the server measures them from what this player may know (view.targets); when the
   * server gives none for the ship, every other ship afloat (the rules then judge the shot). */
  function targetsFor(v, ship, position) {
    const given = v.targets && v.targets[ship];
    if (Array.isArray(given)) return given.filter((entry) => entry.position === position);
    return MC.shipsOf(v).filter((other) => other.owner !== me && afloat(other)).map((other) => ({ target: shipId(other) }));
  }

  function measured(v, ship) { return Boolean(v.targets && Array.isArray(v.targets[ship])); }

  /** This turn's visible events about my own ships (their orders or tokens, as text). */
  function givenThisTurn(v, types) {
    return (v.events || []).filter((event) => types.includes(event.type) && !event.sealed
      && event.player === me && (event.turn === undefined || event.turn === v.turn));
  }

  // --- orders ----------------------------------------------------------------------------------

  /** A word of the orders as written for the player to read: a name with spaces or quotes is quoted. */
  function word(name) {
    return /^[\w.\/-]+$/.test(name) ? name : "'" + String(name).replace(/'/g, "'\"'\"'") + "'";
  }

  function actionText(row) {
    const verb = row.querySelector(".verb").value;
    const value = (cls) => { const node = row.querySelector(cls); return node ? node.value : ""; };
    const checked = (cls) => { const node = row.querySelector(cls); return Boolean(node && node.checked); };
    if (verb === "maneuver") return ["maneuver", value(".turn"), value(".side"), checked(".sailing") ? "--sailing" : ""].filter(Boolean).join(" ");
    if (verb === "attack") return ["attack", value(".position"), word(value(".target")), checked(".burst") ? "--burst" : ""].filter(Boolean).join(" ");
    if (verb === "catapult") return "catapult " + word(value(".target"));
    return verb;
  }

  function ordersText() {
    return Array.from(document.querySelectorAll("#actions .action")).map(actionText).join(" + ");
  }

  /** An action as the service takes it: ``{"kind": "attack", "position": "port", "target": "Kraken", "burst": true}``. */
  function actionObject(row) {
    const verb = row.querySelector(".verb").value;
    const value = (cls) => { const node = row.querySelector(cls); return node ? node.value : ""; };
    const checked = (cls) => { const node = row.querySelector(cls); return Boolean(node && node.checked); };
    if (verb === "maneuver") return { kind: "maneuver", angle: value(".turn"), side: value(".side"), sailing: checked(".sailing") };
    if (verb === "attack") return { kind: "attack", position: value(".position"), target: value(".target"), burst: checked(".burst") };
    if (verb === "catapult") return { kind: "catapult", target: value(".target") };
    return { kind: verb };
  }

  function orderActions() {
    return Array.from(document.querySelectorAll("#actions .action")).map(actionObject);
  }

  function select(cls, id, labelKey, choices) {
    const field = MC.el("div", { class: "field" });
    const chooser = MC.el("select", { class: cls, id: id });
    for (const [value, label] of choices) chooser.append(MC.el("option", { value: value }, label));
    field.append(MC.el("label", { for: id }, MC.t(labelKey)), chooser);
    return field;
  }

  function checkbox(cls, id, labelKey) {
    return MC.el("div", { class: "field inline" }, MC.el("input", { type: "checkbox", class: cls, id: id }), MC.el("label", { for: id }, MC.t(labelKey)));
  }

  let rowCount = 0;

  /** What a ship can be ordered, from its sheet: the guns it has, and the actions its options
   * allow (a catapult shot needs the catapult, a fireship the fireship option). */
  function abilities(ship) {
    const fleet = fleetOf(view, me);
    const sheet = fleet && (fleet.ships || []).find((entry) => entry.name === ship);
    if (!sheet) return { verbs: VERBS, positions: POSITIONS };
    const owned = (sheet.options || []).concat(fleet.fleet_options || []).map((option) => option.id);
    const has = (family) => owned.some((id) => id === family || id === family + "-fleet");
    const verbs = VERBS.filter((verb) => (verb !== "catapult" || has("catapult")) && (verb !== "fireship" || has("fireship")));
    const armed = POSITIONS.filter((position) => !sheet.cannons || sheet.cannons[position] > 0);
    return { verbs: verbs, positions: armed.length ? armed : POSITIONS };
  }

  function verbChoices() {
    return abilities(document.getElementById("orders-ship").value).verbs.map((verb) => [verb, MC.t("verb." + verb)]);
  }

  /** The target choices of one action row: in range from its guns (or catapult), with odds. */
  function targetChoices(row) {
    const ship = document.getElementById("orders-ship").value;
    const verb = row.querySelector(".verb").value;
    const positionField = row.querySelector(".position");
    const position = verb === "catapult" ? "catapult" : positionField ? positionField.value : "";
    const burst = Boolean(row.querySelector(".burst") && row.querySelector(".burst").checked);
    const choices = targetsFor(view, ship, position).map((entry) => {
      const chance = burst && typeof entry.burst_odds === "number" ? entry.burst_odds : entry.odds;
      const odds = typeof chance === "number" ? " — " + MC.t("orders.odds", { percent: Math.round(chance * 100) }) : "";
      const far = typeof entry.distance === "number" ? " (" + MC.t("orders.distance", { distance: entry.distance }) + ")" : "";
      return [entry.target, entry.target + odds + far];
    });
    return choices.length ? choices : [["", MC.t("orders.notarget")]];
  }

  /** Guns the ship has, each saying whether anything is in range from it. */
  function positionChoices(ship) {
    return abilities(ship).positions.map((position) => {
      const none = measured(view, ship) && !targetsFor(view, ship, position).length;
      return [position, MC.t("pos." + position) + (none ? " — " + MC.t("orders.notarget") : "")];
    });
  }

  function refreshTargets(row) {
    const chooser = row.querySelector(".target");
    if (chooser) setChoices(chooser, targetChoices(row));
    preview();
  }

  /** The fields a verb needs (turn and side, guns and target, ...), after its verb chooser. */
  function fillAction(row) {
    const verb = row.querySelector(".verb").value;
    const id = row.dataset.id;
    const details = row.querySelector(".details");
    const parts = [];
    if (verb === "maneuver") {
      parts.push(select("turn", id + "-turn", "orders.turn", TURNS.map((turn) => [turn, turn])));
      parts.push(select("side", id + "-side", "orders.side", SIDES.map((side) => [side, MC.t("side." + side)])));
      parts.push(checkbox("sailing", id + "-sailing", "orders.sailing"));
    } else if (verb === "attack") {
      parts.push(select("position", id + "-position", "orders.position", positionChoices(document.getElementById("orders-ship").value)));
      parts.push(select("target", id + "-target", "orders.target", []));
      parts.push(checkbox("burst", id + "-burst", "orders.burst"));
    } else if (verb === "catapult") {
      parts.push(select("target", id + "-target", "orders.target", []));
    }
    details.replaceChildren(...parts);
    const position = details.querySelector(".position");
    if (position) position.addEventListener("change", () => refreshTargets(row));
    const burst = details.querySelector(".burst");
    if (burst) burst.addEventListener("change", () => refreshTargets(row));
    refreshTargets(row);
  }

  function addAction(focus) {
    rowCount += 1;
    const id = "action-" + rowCount;
    const row = MC.el("fieldset", { class: "action", "data-id": id });
    const legend = MC.el("legend", {});
    const verbField = select("verb", id + "-verb", "orders.verb", verbChoices());
    const remove = MC.el("button", { type: "button", class: "secondary remove" }, MC.t("orders.remove"));
    remove.addEventListener("click", () => {
      row.remove();
      numberActions();
      preview();
      document.getElementById("add-action").focus();
    });
    row.append(legend, verbField, MC.el("div", { class: "details" }), remove);
    row.querySelector(".verb").addEventListener("change", () => fillAction(row));
    document.getElementById("actions").append(row);
    numberActions();
    fillAction(row);
    if (focus) row.querySelector(".verb").focus();
  }

  function numberActions() {
    const rows = document.querySelectorAll("#actions .action");
    rows.forEach((row, index) => {
      row.querySelector("legend").textContent = MC.t("orders.action", { n: index + 1 });
      row.querySelector(".remove").hidden = rows.length === 1;
    });
  }

  function preview() {
    document.getElementById("orders-preview").textContent = MC.t("orders.preview", { actions: ordersText() });
  }

  /** Keep a select's choices up to date without losing what the player chose. */
  function setChoices(chooser, choices) {
    const before = chooser.value;
    const same = chooser.options.length === choices.length
      && choices.every(([value, label], i) => chooser.options[i].value === value && chooser.options[i].textContent === label);
    if (same) return;
    chooser.replaceChildren(...choices.map(([value, label]) => MC.el("option", { value: value }, label)));
    if (choices.some(([value]) => value === before)) chooser.value = before;
  }

  // --- drawing ------------------------------------------------------------------------------

  function optionName(line) {
    return MC.lang === "fr" ? line.french_name || line.english_name || line.id : line.english_name || line.id;
  }

  function drawFleet(v) {
    const fleet = fleetOf(v, me);
    const money = document.getElementById("fleet-money");
    const holder = document.getElementById("fleet");
    if (!fleet) {
      money.textContent = "";
      holder.replaceChildren(MC.shipsTable(myShips(v)));
      return;
    }
    // sealed, the money not spent is given up (F3): not a budget still to spend
    const given_up = fleet.sealed && fleet.money_left > 0;
    money.textContent = MC.t(given_up ? "fleet.forfeited" : "fleet.budget", { money: fleet.money_left }) + " — " + MC.t(fleet.sealed ? "fleet.sealed" : "fleet.open");
    const cards = (fleet.ships || []).map((sheet) => {
      const type = MC.lang === "fr" ? sheet.type_french : sheet.type_english;
      const cannons = sheet.cannons ? POSITIONS.map((p) => MC.t("pos." + p) + " " + sheet.cannons[p]).join(", ") : "";
      const rows = [
        [MC.t("ships.kind"), type || sheet.kind],
        [MC.t("sheet.structure"), sheet.structure_current + " / " + sheet.structure_max],
        [MC.t("sheet.speed"), sheet.speed],
        [MC.t("sheet.cannons"), cannons],
        [MC.t("sheet.damage"), sheet.normal_damage + " / " + sheet.burst_damage],
        [MC.t("ships.options"), (sheet.options || []).map(optionName).join(", ")],
        [MC.t("sheet.price"), sheet.price],
      ];
      const card = MC.el("div", { class: "seat" }, MC.el("h3", {}, sheet.name),
        MC.el("table", {}, MC.el("tbody", {}, rows.map(([k, value]) => MC.el("tr", {}, MC.el("th", { scope: "row" }, k), MC.el("td", {}, String(value)))))));
      if (!fleet.sealed && !ended(v)) {
        const unbuy = MC.el("button", { type: "button", class: "secondary" }, MC.t("unbuy.submit") + " — " + sheet.name);
        unbuy.addEventListener("click", () => submit(unbuy, "POST", "/unbuy", { ship: sheet.name }, MC.t("buy.done", { ship: "-" + sheet.name })));
        card.append(unbuy);
      }
      return card;
    });
    if (fleet.fleet_options && fleet.fleet_options.length) {
      cards.push(MC.el("p", {}, MC.t("equip.fleet") + ": " + fleet.fleet_options.map(optionName).join(", ")));
    }
    if (!cards.length) cards.push(MC.el("p", { class: "muted" }, MC.t("ships.none")));
    holder.replaceChildren(...cards);
  }

  /** The buying forms: kinds and options from the catalogue (names in the page's language);
   * any kind or option may also be typed, by id or by its French or English name. */
  function drawBuy(v, fleet) {
    const kinds = (catalogue && catalogue.ships) || [];
    const options = (catalogue && catalogue.options) || [];
    fillList(document.getElementById("buy-kinds"), kinds.map((kind) => [kind.id, MC.catalogueName(kind) + " — " + kind.price]));
    fillList(document.getElementById("option-names"), options.map((option) => [option.id, MC.catalogueName(option) + " — " + priceText(option)]));
    const typedKind = document.getElementById("buy-kind").value.trim().toLowerCase();
    const chosenKind = kinds.find((kind) => kind.id === typedKind || MC.catalogueName(kind).toLowerCase() === typedKind);
    const shipClass = chosenKind ? chosenKind.class || chosenKind.ship_class : null;
    const forShips = options.filter((option) => option.scope === "ship"
      && (!shipClass || !option.classes || option.classes.includes(shipClass)));
    const box = document.getElementById("buy-options");
    box.hidden = !forShips.length;
    const ticked = new Set(Array.from(box.querySelectorAll("input:checked"), (input) => input.value));
    const wanted = forShips.map((option) => option.id + ":" + MC.catalogueName(option)).join("|");
    if (box.dataset.shown !== wanted) {
      box.dataset.shown = wanted;
      const legend = MC.el("legend", {}, MC.t("buy.options"));
      box.replaceChildren(legend, ...forShips.map((option) => {
        const id = "buy-option-" + option.id;
        return MC.el("div", { class: "field inline" },
          MC.el("input", { type: "checkbox", id: id, value: option.id, checked: ticked.has(option.id) }),
          MC.el("label", { for: id }, MC.catalogueName(option) + " — " + priceText(option)));
      }));
    }
    const shipChoices = [["", MC.t("equip.fleet")]].concat(((fleet && fleet.ships) || []).map((sheet) => [sheet.name, sheet.name]));
    setChoices(document.getElementById("equip-ship"), shipChoices);
  }

  /** An option's price as F2 writes it: flat, or per cannon added (extra cannons). */
  function priceText(option) {
    return option.pricing === "per-added-cannon" ? MC.t("buy.percannon", { price: option.price }) : String(option.price);
  }

  function fillList(list, entries) {
    const wanted = entries.map(([value, label]) => value + "=" + label).join("|");
    if (list.dataset.shown === wanted) return;
    list.dataset.shown = wanted;
    list.replaceChildren(...entries.map(([value, label]) => MC.el("option", { value: value }, label)));
  }

  function drawPlace(v, fleet) {
    const blockade = v.ruleset === "blockade";
    document.getElementById("place-kind-field").hidden = !blockade;
    const onBoard = new Set(MC.shipsOf(v).filter(placed).map(shipId));
    const names = blockade ? myShips(v).map(shipId) : ((fleet && fleet.ships) || []).map((sheet) => sheet.name).filter((name) => !onBoard.has(name));
    document.getElementById("place-ships").replaceChildren(...names.map((name) => MC.el("option", { value: name })));
    const kinds = (catalogue && (catalogue.blockade_kinds || catalogue.blockade)) || [];
    document.getElementById("place-kinds").replaceChildren(...kinds.map((kind) => MC.el("option", { value: kind.id || kind }, MC.catalogueName(kind))));
    const facings = blockade ? FACINGS4 : FACINGS8;
    setChoices(document.getElementById("place-facing"), facings.map((facing) => [facing, facing + " — " + MC.t("facing." + facing)]));
    return names.length > 0;
  }

  function drawOrders(v) {
    const ships = myShips(v).filter(afloat).map(shipId);
    setChoices(document.getElementById("orders-ship"), ships.map((ship) => [ship, ship]));
    setChoices(document.getElementById("tokens-ship"), ships.map((ship) => [ship, ship]));
    if (!document.querySelector("#actions .action")) addAction(false);
    document.querySelectorAll("#actions .action").forEach((row) => {
      const verb = row.querySelector(".verb");
      const before = verb.value;
      setChoices(verb, verbChoices()); // the ship's options may have changed what it can do
      if (verb.value !== before) fillAction(row);
    });
    const ship = document.getElementById("orders-ship").value;
    document.querySelectorAll("#actions .action").forEach((row) => {
      const position = row.querySelector(".position");
      if (position) setChoices(position, positionChoices(ship));
      refreshTargets(row);
    });
    const orders = givenThisTurn(v, ["order-given", "order-withdrawn"]);
    const list = document.getElementById("orders-given");
    list.replaceChildren(...(orders.length ? orders.map((event) => MC.el("li", {}, event.text || event.type)) : [MC.el("li", { class: "muted" }, MC.t("orders.none"))]));
    const tokens = givenThisTurn(v, ["tokens-given"]);
    document.getElementById("tokens-given").replaceChildren(...(tokens.length ? tokens.map((event) => MC.el("li", {}, event.text || event.type)) : [MC.el("li", { class: "muted" }, MC.t("orders.none"))]));
    return ships.length > 0;
  }

  function drawTokenRounds() {
    const holder = document.getElementById("token-rounds");
    if (holder.children.length) return;
    for (let round = 1; round <= ROUNDS; round++) {
      holder.append(select("token", "token-" + round, "tokens.round", TOKENS.map((token) => [token, MC.t(token ? "tokens." + token : "tokens.none")])));
      holder.lastChild.querySelector("label").textContent = MC.t("tokens.round", { n: round });
    }
  }

  function render(v, how) {
    view = v;
    me = myName(v);
    document.getElementById("player-name").textContent = me || "";
    MC.showCommon(v, how);
    MC.putSvg(document.getElementById("board"), v.board_svg || v.svg, MC.t("board.title") + ": " + (v.position || ""));
    document.getElementById("ships").replaceChildren(MC.shipsTable(MC.shipsOf(v)));
    drawFleet(v);
    const fleet = fleetOf(v, me);
    const open = how.live && !ended(v) && me;
    const blockade = v.ruleset === "blockade";
    const buying = open && !blockade && fleet && !fleet.sealed;
    document.getElementById("buy-section").hidden = !buying;
    if (buying) drawBuy(v, fleet);
    // a blockade player places ships whenever they like; a mortecouille player the ships bought
    // once every fleet is sealed (F3: a placement before would be as secret as the purchases),
    // while any is off the board; with their own fleet sealed, the page says whom it waits for
    const unplaced = open && (blockade || (fleet && fleet.sealed)) && drawPlace(v, fleet);
    const unsealed = blockade ? [] : (v.players || []).filter((player) => !(v.sealed || []).includes(player));
    const waitForSeals = Boolean(unplaced) && unsealed.length > 0;
    document.getElementById("place-section").hidden = !(unplaced || (open && blockade));
    document.getElementById("place-form").hidden = waitForSeals;
    const wait = document.getElementById("place-wait");
    wait.hidden = !waitForSeals;
    wait.textContent = waitForSeals ? MC.t("place.wait", { names: unsealed.join(", ") }) : "";
    const canOrder = open && drawOrders(v);
    document.getElementById("orders-section").hidden = !(canOrder && !blockade);
    document.getElementById("tokens-section").hidden = !(canOrder && blockade);
    if (blockade) drawTokenRounds();
    drawReceipts();
    drawDiceStatus(MC.latest || v);
    revealIfLocked();
  }

  // --- receipts -----------------------------------------------------------------------------

  /* Each submission carries a fresh random salt (16 bytes, hex) and its answer a receipt: what
   * was submitted (its salted SHA-256) at which seq, and the log's head after it. The receipts are
   * kept in localStorage for this game and seat, and offered as one file for
   * `mortecouille verify GAME --receipts FILE`. They are the player's own: shown on this page,
   * never sent anywhere. */

  function receiptsKey() { return "mortecouille.receipts:" + MC.game + ":" + (me || ""); }

  function keptReceipts() {
    if (!me) return [];
    try {
      const list = JSON.parse(localStorage.getItem(receiptsKey()) || "[]");
      return Array.isArray(list) ? list : [];
    } catch (error) {
      return [];
    }
  }

  /** Keep ``receipt`` (once: a retried request answers the first receipt again). */
  function keepReceipt(receipt) {
    if (!receipt || typeof receipt !== "object" || !me) return;
    const receipts = keptReceipts();
    const same = (other) => other.seq === receipt.seq && other.commitment === receipt.commitment;
    if (!receipts.some(same)) receipts.push(receipt);
    try {
      localStorage.setItem(receiptsKey(), JSON.stringify(receipts));
    } catch (error) {
      /* storage full or refused: the receipt is still offered from memory below */
    }
    memoryReceipts = receipts;
    drawReceipts();
  }

  let memoryReceipts = null;
  let downloadUrl = null;
  let downloadShown = "";

  function drawReceipts() {
    const receipts = me ? (keptReceipts().length ? keptReceipts() : memoryReceipts || []) : [];
    document.getElementById("receipts-count").textContent = MC.t("receipts.count", { n: receipts.length });
    const last = receipts[receipts.length - 1];
    document.getElementById("receipts-last").textContent = last
      ? MC.t("receipts.last", { kind: last.kind, subject: last.subject, seq: last.seq, head: String(last.head).slice(0, 12) + "…" })
      : MC.t("receipts.none");
    const link = document.getElementById("receipts-download");
    link.hidden = !receipts.length;
    const text = JSON.stringify({ receipts: receipts }, null, 2) + "\n";
    if (receipts.length && text !== downloadShown) {
      // a Blob of the file, behind an ordinary link: the browser saves it, nothing is sent
      if (downloadUrl) URL.revokeObjectURL(downloadUrl);
      downloadUrl = URL.createObjectURL(new Blob([text], { type: "application/json" }));
      downloadShown = text;
      link.href = downloadUrl;
      link.setAttribute("download", safeFileName(MC.game + "-" + me + "-receipts.json"));
    }
    link.dataset.count = String(receipts.length);
  }

  function safeFileName(name) { return name.replace(/[\\/:*?"<>|\x00-\x1f]/g, "_"); }

  // --- dice contributions (D3) -------------------------------------------------------------

  /* In a game of contributed dice the turn's dice also hang on a random contribution of each
   * player, drawn here and kept on this phone (localStorage, by game, player and turn) until the
   * turn locks: only its SHA-256 (the commitment) is sent before, with the player's first order
   * of the turn, so nobody, the server included, can know the dice before every order is final.
   * When the turn locks (a pushed turn-locked, then the view's `locked`), the page reveals it. */

  function contributed(v) {
    return Boolean(v && v.dice_scheme === "contributed" && v.own_contribution && me && !ended(v));
  }

  function contributionsKey(turn) { return "mortecouille.contribution:" + MC.game + ":" + me + ":" + turn; }

  /** The contributions this phone drew for ``turn``, by their commitment (a refused commit may
   * leave an older one the server holds: each is kept until the turn is over). */
  function keptContributions(turn) {
    try {
      const kept = JSON.parse(localStorage.getItem(contributionsKey(turn)) || "{}");
      return kept && typeof kept === "object" ? kept : {};
    } catch (error) {
      return {};
    }
  }

  function keepContribution(turn, commitment, contribution) {
    const kept = keptContributions(turn);
    kept[commitment] = contribution;
    localStorage.setItem(contributionsKey(turn), JSON.stringify(kept));
  }

  /** Commit a contribution to the current turn unless the server already holds one this phone
   * can reveal. Called before the orders (tokens) are sent: commit first, then order, or the
   * player's last order could lock the turn before the commitment comes (docs/service.md). */
  async function ensureCommitted() {
    // the view as it is now: the one on screen may still be of the turn just resolved
    const v = await MC.getJson(MC.gamePath("/view"));
    if (!contributed(v) || v.locked) return;
    const own = v.own_contribution;
    if (own.commitment && keptContributions(own.turn)[own.commitment]) return;
    const contribution = MC.randomHex(16);
    const commitment = await MC.sha256Hex(contribution);
    keepContribution(own.turn, commitment, contribution); // kept before it is sent: an answer lost on the way still finds it
    const answer = await MC.command("POST", "/commit", { commitment: commitment, salt: MC.randomHex(16) });
    keepReceipt(answer && answer.receipt);
    committedNow = { turn: own.turn, commitment: commitment };
    drawDiceStatus(v);
  }

  let committedNow = null; // the commitment just sent, before the view catches up
  const revealsTried = new Set();

  /** Reveal the kept contribution once the turn is locked and the server awaits it. */
  async function revealIfLocked() {
    const v = MC.latest;
    if (!contributed(v) || !v.locked) return;
    const own = v.own_contribution;
    if (own.revealed || !own.commitment || !(v.awaiting_reveal || []).includes(me)) return;
    const contribution = keptContributions(own.turn)[own.commitment];
    const attempt = own.turn + ":" + own.commitment;
    if (!contribution || revealsTried.has(attempt)) return;
    revealsTried.add(attempt);
    try {
      const answer = await MC.command("POST", "/reveal", { contribution: contribution, salt: MC.randomHex(16) });
      keepReceipt(answer && answer.receipt); // the status line (#dice-status) says it is revealed
    } catch (error) {
      if (!(error instanceof MC.ApiError)) revealsTried.delete(attempt); // the network: try again at the next view
      MC.showError(Object.assign(new Error(MC.t("dice.refused", { message: error.message })), { plain: true }));
    }
  }

  function drawDiceStatus(v) {
    const line = document.getElementById("dice-status");
    if (!contributed(v)) {
      line.hidden = true;
      line.textContent = "";
      delete line.dataset.state;
      return;
    }
    const own = v.own_contribution;
    const turn = own.turn;
    const justSent = committedNow && committedNow.turn === turn ? committedNow.commitment : null;
    const commitment = own.commitment || justSent;
    const kept = commitment ? keptContributions(turn)[commitment] : null;
    let state;
    if (own.revealed) state = "revealed";
    else if (v.locked && !commitment) state = "none";
    else if (commitment && !kept) state = "lost";
    else if (v.locked) state = "revealing";
    else if (commitment) state = "committed";
    else state = "pending";
    line.hidden = false;
    line.dataset.state = state;
    line.dataset.turn = String(turn);
    line.textContent = MC.t("dice." + state, { turn: turn });
  }

  // --- sending ------------------------------------------------------------------------------

  /** Send a command with a fresh salt; keep its receipt; say what was done, or show the refusal
   * with its rule. ``commitFirst``: an order or tokens, preceded by this turn's dice commitment. */
  async function submit(button, method, path, body, done, commitFirst) {
    MC.clearError();
    MC.say("");
    button.disabled = true;
    try {
      if (commitFirst) await ensureCommitted();
      // one salt per request, drawn once: a retry of it (same Idempotency-Key) sends the same
      const answer = await MC.command(method, path, Object.assign({}, body || {}, { salt: MC.randomHex(16) }));
      keepReceipt(answer && answer.receipt);
      const text = typeof done === "function" ? done(answer) : done;
      MC.say(text + (answer && typeof answer.seq === "number" ? " (#" + answer.seq + ")" : ""));
      return answer;
    } catch (error) {
      MC.showError(error);
      return null;
    } finally {
      button.disabled = false;
    }
  }

  function hasOrders(ship) {
    const mine = givenThisTurn(view, ["order-given", "order-withdrawn"]).filter((event) => event.ship === ship);
    return mine.length > 0 && mine[mine.length - 1].type === "order-given";
  }

  function hasTokens(ship) {
    return givenThisTurn(view, ["tokens-given"]).some((event) => event.ship === ship);
  }

  document.getElementById("add-action").addEventListener("click", () => addAction(true));
  document.getElementById("orders-form").addEventListener("change", preview);
  document.getElementById("orders-ship").addEventListener("change", () => {
    document.querySelectorAll("#actions .action").forEach((row) => {
      setChoices(row.querySelector(".verb"), verbChoices());
      fillAction(row); // guns and targets are the new ship's
    });
    preview();
  });
  document.getElementById("orders-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const ship = document.getElementById("orders-ship").value;
    const body = { ship: ship, actions: orderActions() };
    if (hasOrders(ship)) body.replace = true;
    submit(document.getElementById("orders-submit"), "POST", "/orders", body, MC.t("orders.done", { ship: ship, actions: ordersText() }), true);
  });
  document.getElementById("orders-withdraw").addEventListener("click", () => {
    const ship = document.getElementById("orders-ship").value;
    submit(document.getElementById("orders-withdraw"), "DELETE", "/orders/" + encodeURIComponent(ship), undefined, MC.t("orders.withdrawn", { ship: ship }));
  });
  document.getElementById("tokens-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const ship = document.getElementById("tokens-ship").value;
    const tokens = Array.from(document.querySelectorAll("#token-rounds .token"), (chooser) => chooser.value || null);
    const body = { ship: ship, tokens: tokens };
    if (hasTokens(ship)) body.replace = true;
    const shown = tokens.map((token) => token || "-").join(" ");
    submit(document.getElementById("tokens-submit"), "POST", "/tokens", body, MC.t("tokens.done", { ship: ship, tokens: shown }), true);
  });
  document.getElementById("buy-kind").addEventListener("change", () => view && drawBuy(view, fleetOf(view, me)));
  document.getElementById("buy-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const ship = document.getElementById("buy-name").value.trim();
    const options = Array.from(document.querySelectorAll("#buy-options input:checked"), (input) => input.value)
      .concat(document.getElementById("buy-options-typed").value.split(",").map((name) => name.trim()).filter(Boolean));
    const body = { ship: ship, kind: document.getElementById("buy-kind").value.trim(), options: options };
    submit(document.getElementById("buy-submit"), "POST", "/buy", body, MC.t("buy.done", { ship: ship })).then((answer) => {
      if (answer) {
        document.getElementById("buy-name").value = "";
        document.getElementById("buy-options-typed").value = "";
        document.querySelectorAll("#buy-options input:checked").forEach((box) => { box.checked = false; });
      }
    });
  });
  document.getElementById("equip-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const ship = document.getElementById("equip-ship").value;
    const body = { option: document.getElementById("equip-option").value.trim() };
    if (ship) body.ship = ship;
    submit(document.getElementById("equip-submit"), "POST", "/equip", body, MC.t("buy.done", { ship: ship || MC.t("equip.fleet") }));
  });
  document.getElementById("seal-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { forfeit: document.getElementById("seal-forfeit").checked };
    submit(document.getElementById("seal-submit"), "POST", "/seal", body, MC.t("seal.done"));
  });
  document.getElementById("place-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const ship = document.getElementById("place-ship").value.trim();
    const square = document.getElementById("place-square").value.trim().toUpperCase();
    const body = { ship: ship, square: square, facing: document.getElementById("place-facing").value };
    const kind = document.getElementById("place-kind").value.trim();
    if (view && view.ruleset === "blockade") {
      if (kind) body.kind = kind;
      body.owner = me;
    }
    submit(document.getElementById("place-submit"), "POST", "/place", body, MC.t("place.done", { ship: ship, square: square })).then((answer) => {
      if (answer) { document.getElementById("place-ship").value = ""; document.getElementById("place-square").value = ""; }
    });
  });

  MC.onLang(() => {
    document.querySelectorAll("#actions .action").forEach((row) => {
      const verb = row.querySelector(".verb");
      const chosen = verb.value;
      setChoices(verb, verbChoices());
      verb.value = chosen;
      row.querySelector(".verb").closest(".field").querySelector("label").textContent = MC.t("orders.verb");
      row.querySelector(".remove").textContent = MC.t("orders.remove");
      fillAction(row);
    });
    numberActions();
    document.getElementById("token-rounds").replaceChildren();
  });

  /** The catalogue (ship kinds and options, French and English names) from the API. */
  async function loadCatalogue() {
    for (const path of ["/api/prices", "/api/catalogue"]) {
      try { return await MC.getJson(path); } catch (error) { /* try the next name */ }
    }
    return null;
  }

  loadCatalogue().then((found) => {
    catalogue = found;
    if (view) render(view, { live: view === MC.latest });
  });
  MC.start({ render: render, needsToken: true });
})();
