/* What the three pages share: words, the token, the API, the live stream, the scrubber.
 *
 * - The token comes in the link's fragment (#token=T), which no browser sends to a server or
 *   puts in a Referer. It is kept in sessionStorage (for this tab only) and taken off the visible
 *   URL, then sent as "Authorization: Bearer T" on every request, the stream's too (the stream is
 *   read with fetch, not EventSource, so the token never goes in a URL).
 * - The stream (server-sent events) is parsed here; after a drop it reconnects with
 *   Last-Event-ID, backing off exponentially, so the page gets exactly what it missed; a message
 *   whose seq was already seen is dropped. Every message makes the page fetch its view again
 *   (debounced): the server decides what this viewer may see, the page only shows it.
 * - #seq=N in the fragment opens the game as it was after event N; the scrubber moves through
 *   past turns and keeps #seq= up to date, so the address is a link to that point.
 * - Text from the server (names, messages) is always set as text (textContent), never as HTML.
 *   The only markup inserted is the board's SVG, drawn and escaped by the server's renderer.
 * - Every page witnesses the log: the heads it saw are kept on the device and each view is
 *   followed by a check that the log served still extends them (the last part of this file).
 */
"use strict";

(function () {
  const MC = (window.MC = {});
  const WORDS = window.MC_WORDS;
  const LANGS = Object.keys(WORDS);
  const LANG_KEY = "mortecouille.lang";

  // --- words --------------------------------------------------------------------------------

  function chooseLang() {
    let stored = null;
    try { stored = localStorage.getItem(LANG_KEY); } catch (e) { stored = null; }
    if (stored && LANGS.includes(stored)) return stored;
    const wanted = (navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || "en"]);
    for (const tag of wanted) {
      const base = String(tag).toLowerCase().split("-")[0];
      if (LANGS.includes(base)) return base;
    }
    return "en";
  }

  MC.lang = chooseLang();
  const langListeners = [];

  /** The text of ``key`` in the page's language, with {name} filled from ``params``. */
  MC.t = function (key, params) {
    const table = WORDS[MC.lang] || WORDS.en;
    let text = key in table ? table[key] : key in WORDS.en ? WORDS.en[key] : key;
    if (params) {
      text = text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
    }
    return text;
  };

  /** Fill every data-i18n element under ``root`` in the current language. */
  MC.applyWords = function (root) {
    const scope = root || document;
    document.documentElement.lang = MC.lang;
    scope.querySelectorAll("[data-i18n]").forEach((node) => { node.textContent = MC.t(node.dataset.i18n); });
    scope.querySelectorAll("[data-i18n-label]").forEach((node) => {
      node.setAttribute("aria-label", MC.t(node.dataset.i18nLabel));
    });
    scope.querySelectorAll("[data-i18n-placeholder]").forEach((node) => {
      node.setAttribute("placeholder", MC.t(node.dataset.i18nPlaceholder));
    });
  };

  MC.setLang = function (lang) {
    if (!LANGS.includes(lang)) return;
    MC.lang = lang;
    try { localStorage.setItem(LANG_KEY, lang); } catch (e) { /* private mode: this page only */ }
    MC.applyWords();
    const picker = document.getElementById("lang");
    if (picker) picker.value = lang;
    langListeners.forEach((listener) => listener(lang));
  };

  MC.onLang = function (listener) { langListeners.push(listener); };

  /** A ship kind's or option's name in the page's language, as the catalogue gives it. */
  MC.catalogueName = function (entry) {
    if (!entry) return "";
    if (MC.lang === "fr") return entry.french_name || (entry.french_names && entry.french_names[0]) || entry.english_name || entry.id;
    return entry.english_name || entry.id;
  };

  MC.mountLangPicker = mountLangPicker;
  function mountLangPicker() {
    const holder = document.getElementById("lang-switch");
    if (!holder) return;
    const label = MC.el("label", { for: "lang", "data-i18n": "lang.label" });
    const select = MC.el("select", { id: "lang" });
    for (const lang of LANGS) {
      const option = MC.el("option", { value: lang, lang: lang }, WORDS[lang]["lang.name"]);
      select.append(option);
    }
    select.value = MC.lang;
    select.addEventListener("change", () => MC.setLang(select.value));
    holder.replaceChildren(label, select);
  }

  // --- DOM helpers: text only ---------------------------------------------------------------

  /** An element with attributes and children; strings become text nodes (never HTML). */
  MC.el = function (tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "text") node.textContent = String(value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  };

  /** Put the server's SVG picture into ``holder``; parsed as SVG, with anything active dropped. */
  MC.putSvg = function (holder, markup, label) {
    if (!markup) {
      holder.replaceChildren(MC.el("p", { class: "muted" }, MC.t("board.none")));
      return;
    }
    const SVG_NS = "http://www.w3.org/2000/svg";
    let parsed = new DOMParser().parseFromString(markup, "image/svg+xml");
    if (parsed.documentElement && parsed.documentElement.namespaceURI !== SVG_NS && /^\s*<svg\b/.test(markup)) {
      // a bare <svg> (no xmlns, as a QR code library writes it inline) is still an SVG picture
      parsed = new DOMParser().parseFromString(markup.replace(/^\s*<svg\b/, '<svg xmlns="' + SVG_NS + '"'), "image/svg+xml");
    }
    const root = parsed.documentElement;
    if (!root || root.nodeName.toLowerCase() !== "svg" || parsed.querySelector("parsererror")) {
      holder.replaceChildren(MC.el("p", { class: "muted" }, MC.t("board.none")));
      return;
    }
    // The renderer draws no script; a picture never needs one, so none is kept.
    parsed.querySelectorAll("script, foreignObject, iframe").forEach((node) => node.remove());
    parsed.querySelectorAll("*").forEach((node) => {
      for (const attr of Array.from(node.attributes)) {
        if (/^on/i.test(attr.name) || /^\s*javascript:/i.test(attr.value)) node.removeAttribute(attr.name);
      }
    });
    const svg = document.importNode(root, true);
    svg.setAttribute("role", "img");
    if (label) svg.setAttribute("aria-label", label);
    const width = parseFloat(svg.getAttribute("width"));
    const height = parseFloat(svg.getAttribute("height"));
    if (!svg.hasAttribute("viewBox") && width > 0 && height > 0) svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.removeAttribute("width"); // the page's style sizes it
    svg.removeAttribute("height");
    holder.replaceChildren(svg);
  };

  // --- where we are: game, page, fragment, token -------------------------------------------

  MC.page = document.body.dataset.page || "";
  const pathParts = location.pathname.split("/").filter(Boolean);
  MC.game = pathParts.length >= 2 ? decodeURIComponent(pathParts[pathParts.length - 1]) : "";

  function fragment() { return new URLSearchParams(location.hash.replace(/^#/, "")); }

  function setFragment(params) {
    const text = params.toString();
    history.replaceState(null, "", location.pathname + location.search + (text ? "#" + text : ""));
  }

  const tokenKey = "mortecouille.token:" + MC.page + ":" + MC.game;

  function takeToken() {
    const params = fragment();
    const fromLink = params.get("token");
    if (fromLink) {
      try { sessionStorage.setItem(tokenKey, fromLink); } catch (e) { /* kept in memory below */ }
      params.delete("token");
      setFragment(params); // off the screen and out of the history
      return fromLink;
    }
    try { return sessionStorage.getItem(tokenKey); } catch (e) { return null; }
  }

  MC.token = takeToken();

  /** Go on with ``token``, a new link of this page's own seat (the old one stopped working). */
  MC.adoptToken = function (token) {
    MC.token = token;
    try { sessionStorage.setItem(tokenKey, token); } catch (e) { /* kept in memory */ }
  };

  /** The seq the fragment asks for (#seq=N), or null for "now". */
  MC.fragmentSeq = function () {
    const raw = fragment().get("seq");
    if (raw === null || !/^\d+$/.test(raw)) return null;
    return Number(raw);
  };

  // --- the API ------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, body) {
      const error = (body && body.error) || {};
      super(error.message || "HTTP " + status);
      this.status = status;
      this.code = error.code;
      this.rule = error.rule || null;
      this.field = error.field || null;
    }
  }
  MC.ApiError = ApiError;

  function headers(extra) {
    const sent = Object.assign({ Accept: "application/json" }, extra || {});
    if (MC.token) sent.Authorization = "Bearer " + MC.token;
    return sent;
  }

  /** ``size`` random bytes from the browser's cryptographic generator, as lowercase hex
   * (getRandomValues works on a plain-HTTP page too, which a phone on the table's network is). */
  MC.randomHex = function (size) {
    const bytes = new Uint8Array(size);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  };

  function newKey() { return MC.randomHex(16); }

  /** SHA-256 of ``text`` (UTF-8) as 64 lowercase hex digits. crypto.subtle only exists in a
   * secure context (https, or 127.0.0.1): a phone reaching the server by its address on the
   * table's network has none, so the digest is also computed here (FIPS 180-4). */
  MC.sha256Hex = async function (text) {
    const bytes = new TextEncoder().encode(text);
    if (window.crypto && crypto.subtle && window.isSecureContext) {
      const digest = await crypto.subtle.digest("SHA-256", bytes);
      return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    }
    return MC.sha256HexPlain(bytes);
  };

  const SHA256_K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);

  /** SHA-256 of ``bytes`` (a Uint8Array) without crypto.subtle, as 64 lowercase hex digits. */
  MC.sha256HexPlain = function (bytes) {
    const bitLength = bytes.length * 8;
    const padded = new Uint8Array(Math.ceil((bytes.length + 9) / 64) * 64);
    padded.set(bytes);
    padded[bytes.length] = 0x80;
    const tail = new DataView(padded.buffer);
    tail.setUint32(padded.length - 8, Math.floor(bitLength / 0x100000000));
    tail.setUint32(padded.length - 4, bitLength >>> 0);
    const hash = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
    const w = new Uint32Array(64);
    const rotr = (x, n) => (x >>> n) | (x << (32 - n));
    for (let block = 0; block < padded.length; block += 64) {
      for (let i = 0; i < 16; i++) w[i] = tail.getUint32(block + i * 4);
      for (let i = 16; i < 64; i++) {
        const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
        const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
        w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
      }
      let [a, b, c, d, e, f, g, h] = hash;
      for (let i = 0; i < 64; i++) {
        const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + SHA256_K[i] + w[i]) >>> 0;
        const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
        h = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
      }
      [a, b, c, d, e, f, g, h].forEach((value, i) => { hash[i] = (hash[i] + value) >>> 0; });
    }
    return Array.from(hash, (word) => word.toString(16).padStart(8, "0")).join("");
  };

  MC.gamePath = function (rest) {
    return "/api/games/" + encodeURIComponent(MC.game) + (rest || "");
  };

  /** GET a JSON document; an error answer raises ApiError. */
  MC.getJson = async function (path) {
    const answer = await fetch(path, { headers: headers(), cache: "no-store" });
    const body = await answer.json().catch(() => null);
    if (!answer.ok) throw new ApiError(answer.status, body);
    return body;
  };

  /** Send a command. One Idempotency-Key per command: a retry after a network failure cannot
   * append it twice (the server answers what it answered the first time). */
  MC.command = async function (method, rest, body) {
    const key = newKey();
    let lastError = null;
    for (let attempt = 0; attempt < 3; attempt++) {
      let answer;
      try {
        answer = await fetch(MC.gamePath(rest), {
          method: method,
          headers: headers(Object.assign({ "Idempotency-Key": key }, body === undefined ? {} : { "Content-Type": "application/json" })),
          body: body === undefined ? undefined : JSON.stringify(body),
          cache: "no-store",
        });
      } catch (error) {
        lastError = error; // the network: try again with the same key
        await sleep(400 * (attempt + 1));
        continue;
      }
      const parsed = await answer.json().catch(() => null);
      if (!answer.ok) throw new ApiError(answer.status, parsed);
      MC.refresh(0);
      return parsed;
    }
    throw lastError;
  };

  function sleep(ms) { return new Promise((done) => setTimeout(done, ms)); }

  // --- messages to the reader ---------------------------------------------------------------

  /** Show a refusal: its rule ID (or field) and the message, in the alert region. */
  MC.showError = function (error) {
    const box = document.getElementById("errors");
    if (!box) return;
    let text;
    if (error instanceof ApiError) {
      let where = error.rule ? "[" + error.rule + "] " : error.field ? error.field + ": " : "";
      if (where && error.message.startsWith(where.trim())) where = ""; // the message names it already
      text = MC.t("error.title") + " (" + error.status + "): " + where + error.message;
    } else if (error && error.plain) {
      text = error.message;
    } else {
      text = MC.t("error.network", { message: error && error.message ? error.message : String(error) });
    }
    const line = MC.el("p", { class: "error" }, text);
    if (error instanceof ApiError && error.rule) line.dataset.rule = error.rule;
    box.replaceChildren(line);
  };

  MC.clearError = function () {
    const box = document.getElementById("errors");
    if (box) box.replaceChildren();
  };

  /** Say something in the polite status region (screen readers read it out). */
  MC.say = function (text) {
    const box = document.getElementById("notice");
    if (box) box.textContent = text;
  };

  // --- the view -----------------------------------------------------------------------------

  MC.view = null; // what is shown (now, or the seq of the fragment)
  MC.latest = null; // the view of now
  MC.lastSeq = -1; // the last seq this page has seen (view or stream)
  let renderPage = () => {};
  let refreshTimer = null;
  let loading = null;

  function lastSeqOf(view) {
    if (!view) return -1;
    if (typeof view.seq === "number") return view.seq;
    if (typeof view.next_seq === "number") return view.next_seq - 1;
    return -1;
  }
  MC.lastSeqOf = lastSeqOf;

  /** Fetch the view again (debounced): after a pushed message, or a command of ours. */
  MC.refresh = function (delay) {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(loadView, delay === undefined ? 150 : delay);
  };

  async function loadView() {
    if (loading) { await loading.catch(() => null); }
    const wanted = MC.fragmentSeq();
    loading = (async () => {
      const latest = await MC.getJson(MC.gamePath("/view"));
      MC.latest = latest;
      MC.lastSeq = Math.max(MC.lastSeq, lastSeqOf(latest));
      const shown = wanted === null || wanted >= lastSeqOf(latest)
        ? latest
        : await MC.getJson(MC.gamePath("/view?seq=" + wanted));
      MC.view = shown;
      renderPage(shown, { live: shown === latest });
      updateScrubber();
      document.body.dataset.seq = String(lastSeqOf(shown));
      if (MC.witnessCheck) MC.witnessCheck(); // the log served still extends what this device saw
    })();
    try {
      await loading;
    } catch (error) {
      MC.showError(error);
    } finally {
      loading = null;
    }
  }

  // --- the stream ---------------------------------------------------------------------------

  /** What the stream brought, for anyone checking the page: seqs in order, and each message. */
  MC.live = { received: [], messages: [], connects: 0, connected: false };
  let streamAbort = null;
  let attempts = 0;
  let reconnectTimer = null;
  let watchdog = null;
  const SILENCE_MS = 45000; // the server sends a heartbeat every ~15 s: this long means a dead line

  function connectionStatus(connected) {
    const was = MC.live.connected;
    MC.live.connected = connected;
    document.body.dataset.connected = connected ? "yes" : "no";
    const box = document.getElementById("connection");
    if (box && was !== connected) box.textContent = MC.t(connected ? "status.connection.back" : "status.connection.lost");
  }

  function handleMessage(message) {
    if (message.event === "event" || message.event === "message") {
      let data;
      try { data = JSON.parse(message.data); } catch (e) { return; }
      const seq = typeof data.seq === "number" ? data.seq : Number(message.id);
      if (!Number.isFinite(seq) || seq <= MC.lastStreamSeq) return; // seen already: no duplicate
      MC.lastStreamSeq = seq;
      MC.lastSeq = Math.max(MC.lastSeq, seq);
      MC.live.received.push(seq);
      MC.live.messages.push(message.data);
      if (MC.onEvent) MC.onEvent(data);
    } else if (message.data) {
      MC.live.messages.push(message.data);
    }
    MC.refresh();
  }

  /** Parse the SSE text of one connection as it arrives (fields id, event, data; ":" comments). */
  function sseParser(onMessage) {
    let buffer = "";
    let current = { id: null, event: "message", data: [] };
    return function feed(chunk) {
      buffer += chunk;
      let cut;
      while ((cut = buffer.search(/\r\n|\r|\n/)) >= 0) {
        if (cut === buffer.length - 1 && buffer.endsWith("\r")) break; // "\r\n" cut between two chunks
        const line = buffer.slice(0, cut);
        const newline = buffer.slice(cut).startsWith("\r\n") ? 2 : 1;
        buffer = buffer.slice(cut + newline);
        if (line === "") {
          if (current.data.length || current.id !== null) {
            onMessage({ id: current.id, event: current.event, data: current.data.join("\n") });
          }
          current = { id: null, event: "message", data: [] };
          continue;
        }
        if (line.startsWith(":")) continue; // heartbeat
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") current.data.push(value);
        else if (field === "event") current.event = value;
        else if (field === "id") current.id = value;
      }
    };
  }

  function armWatchdog(controller) {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => controller.abort(), SILENCE_MS);
  }

  async function openStream() {
    clearTimeout(reconnectTimer);
    if (streamAbort) streamAbort.abort();
    const controller = new AbortController();
    streamAbort = controller;
    const sent = headers({ Accept: "text/event-stream" });
    if (MC.lastStreamSeq >= 0) sent["Last-Event-ID"] = String(MC.lastStreamSeq);
    try {
      const answer = await fetch(MC.gamePath("/stream"), { headers: sent, signal: controller.signal, cache: "no-store" });
      if (!answer.ok || !answer.body) throw new ApiError(answer.status, await answer.json().catch(() => null));
      MC.live.connects += 1;
      connectionStatus(true);
      attempts = 0;
      armWatchdog(controller);
      const reader = answer.body.getReader();
      const decoder = new TextDecoder();
      const feed = sseParser(handleMessage);
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        armWatchdog(controller);
        feed(decoder.decode(value, { stream: true }));
      }
    } catch (error) {
      if (error instanceof ApiError && error.status >= 400 && error.status < 500) {
        MC.showError(error); // a bad token does not get better by retrying
        connectionStatus(false);
        return;
      }
    } finally {
      clearTimeout(watchdog);
    }
    if (streamAbort !== controller) return; // replaced by a newer connection
    connectionStatus(false);
    scheduleReconnect();
  }

  function scheduleReconnect() {
    clearTimeout(reconnectTimer);
    if (navigator.onLine === false) return; // the "online" event reconnects
    const delay = Math.min(10000, 300 * 2 ** attempts) + Math.floor(Math.random() * 200);
    attempts += 1;
    reconnectTimer = setTimeout(openStream, delay);
  }

  window.addEventListener("offline", () => {
    connectionStatus(false);
    if (streamAbort) streamAbort.abort();
  });
  window.addEventListener("online", () => {
    attempts = 0;
    openStream();
    MC.refresh(0);
  });

  // --- the scrubber -------------------------------------------------------------------------

  /** The resolved turns' seq spans, [{turn, first, last}], whatever shape the view gives them. */
  MC.turnSpans = function (view) {
    const raw = view && view.turns;
    const spans = [];
    const add = (turn, span) => {
      if (!span) return;
      const first = Array.isArray(span) ? span[0] : span.first;
      const last = Array.isArray(span) ? span[1] : span.last;
      const number = Number(span.turn !== undefined ? span.turn : turn);
      if (typeof first === "number" && typeof last === "number") spans.push({ turn: number, first: first, last: last });
    };
    if (Array.isArray(raw)) raw.forEach((span, index) => add(index + 1, span));
    else if (raw && typeof raw === "object") Object.entries(raw).forEach(([turn, span]) => add(turn, span));
    return spans.sort((a, b) => a.first - b.first);
  };

  function goTo(seq) {
    const params = fragment();
    if (seq === null || seq >= MC.lastSeq) params.delete("seq");
    else params.set("seq", String(Math.max(0, seq)));
    setFragment(params);
    MC.refresh(0);
  }
  MC.goTo = goTo;

  function mountScrubber() {
    const holder = document.getElementById("scrubber");
    if (!holder) return;
    const range = MC.el("input", { type: "range", id: "scrub-range", min: "0", max: "0", step: "1", value: "0" });
    const label = MC.el("label", { for: "scrub-range", "data-i18n": "scrub.seq" });
    const where = MC.el("output", { id: "scrub-where", for: "scrub-range", "aria-live": "polite" });
    const prev = MC.el("button", { type: "button", id: "scrub-prev", "data-i18n": "scrub.prev" });
    const next = MC.el("button", { type: "button", id: "scrub-next", "data-i18n": "scrub.next" });
    const live = MC.el("button", { type: "button", id: "scrub-live", "data-i18n": "scrub.live" });
    let scrubTimer = null;
    range.addEventListener("input", () => {
      where.textContent = MC.t("scrub.at", { seq: range.value, last: MC.lastSeq });
      clearTimeout(scrubTimer);
      scrubTimer = setTimeout(() => goTo(Number(range.value)), 200);
    });
    prev.addEventListener("click", () => {
      const at = currentSeq();
      const ends = boundaries().filter((seq) => seq < at);
      goTo(ends.length ? ends[ends.length - 1] : 0);
    });
    next.addEventListener("click", () => {
      const at = currentSeq();
      const ends = boundaries().filter((seq) => seq > at);
      goTo(ends.length ? ends[0] : null);
    });
    live.addEventListener("click", () => goTo(null));
    holder.append(
      MC.el("h2", { id: "scrub-title", "data-i18n": "scrub.title" }),
      MC.el("div", { class: "scrub-row" }, prev, label, range, next, live),
      where,
    );
  }

  function currentSeq() {
    const wanted = MC.fragmentSeq();
    return wanted === null ? MC.lastSeq : wanted;
  }

  /** The positions the turn buttons stop at: before turn 1, and after each resolved turn. */
  function boundaries() {
    const spans = MC.turnSpans(MC.latest);
    const stops = spans.map((span) => span.last);
    if (spans.length) stops.unshift(spans[0].first - 1);
    return stops.filter((seq) => seq >= 0);
  }

  function updateScrubber() {
    const range = document.getElementById("scrub-range");
    if (!range) return;
    const at = currentSeq();
    range.max = String(Math.max(0, MC.lastSeq));
    range.value = String(at);
    range.setAttribute("aria-valuetext", MC.t("scrub.at", { seq: at, last: MC.lastSeq }));
    const where = document.getElementById("scrub-where");
    const past = MC.fragmentSeq() !== null && MC.fragmentSeq() < MC.lastSeq;
    if (where) where.textContent = past ? MC.t("scrub.at", { seq: at, last: MC.lastSeq }) : MC.t("scrub.live.now");
    document.body.dataset.past = past ? "yes" : "no";
  }

  // --- start --------------------------------------------------------------------------------

  /** Start a page: ``render(view, {live})`` draws it; ``onEvent(data)`` sees each pushed event. */
  MC.start = async function (options) {
    renderPage = options.render;
    MC.onEvent = options.onEvent || null;
    MC.lastStreamSeq = -1;
    mountLangPicker();
    mountScrubber();
    MC.applyWords();
    MC.onLang(() => {
      updateScrubber();
      if (MC.view) renderPage(MC.view, { live: MC.view === MC.latest });
    });
    window.addEventListener("hashchange", () => {
      if (fragment().has("token")) MC.token = takeToken();
      MC.refresh(0);
    });
    if (options.needsToken && !MC.token) {
      // the referee has nobody to ask: their page names the command that issues a new link
      const missing = MC.page === "referee" ? "error.notoken.referee" : "error.notoken";
      MC.showError(Object.assign(new Error(MC.t(missing)), { plain: true }));
    }
    await loadView();
    MC.lastStreamSeq = MC.latest ? lastSeqOf(MC.latest) : -1;
    if (options.stream !== false) openStream();
  };
})();

/* Shared readings of a view, for every page. */
(function () {
  const MC = window.MC;

  /** The players a view says the turn waits for (names), from view.waiting {player: [ships]}. */
  MC.waitingFor = function (view) {
    const waiting = (view && view.waiting) || {};
    return Object.keys(waiting).filter((player) => {
      const ships = waiting[player];
      return !Array.isArray(ships) || ships.length > 0;
    });
  };

  /** One sentence: where the game stands for this viewer ("Waiting for: Bart"). */
  MC.statusText = function (view) {
    if (!view) return MC.t("status.loading");
    if (view.status === "ended" || view.ended) return MC.t("status.ended");
    if (view.status === "buying") {
      const sealed = view.sealed || [];
      const open = (view.players || []).filter((player) => !sealed.includes(player));
      if (open.length) return MC.t("status.buying", { names: open.join(", ") });
    }
    const names = MC.waitingFor(view);
    if (names.length) return MC.t("status.waiting", { names: names.join(", ") });
    if (view.dice_scheme === "contributed" && view.locked) {
      const awaited = view.awaiting_reveal || [];
      if (awaited.length) return MC.t("status.reveals", { names: awaited.join(", ") });
      return MC.t("status.revealed");
    }
    if (view.status === "placing") return MC.t("status.placing");
    return MC.t("status.nobody");
  };

  /** The game-over banner's text, or null while the game goes on. */
  MC.gameOverText = function (view) {
    if (!view || !(view.status === "ended" || view.ended)) return null;
    const who = view.winner ? MC.t("banner.winner", { winner: view.winner }) : MC.t("banner.nowinner");
    const why = view.ended_reason || view.reason || view.position || "";
    return MC.t("banner.over") + ": " + who + (why ? " — " + why : "");
  };

  /** Fill the common regions: status line, banner, past-position note. */
  MC.showCommon = function (view, how) {
    const status = document.getElementById("status");
    if (status) {
      const past = how && !how.live ? MC.t("status.past", { seq: MC.lastSeqOf(view) }) : "";
      const deadline = how && how.live && view.deadline && !(view.status === "ended")
        ? " " + MC.t("status.deadline", { at: new Date(view.deadline).toLocaleTimeString(MC.lang) })
        : "";
      status.textContent = past + MC.statusText(view) + deadline;
    }
    const banner = document.getElementById("banner");
    if (banner) {
      const over = MC.gameOverText(view);
      banner.hidden = !over;
      banner.textContent = over || "";
    }
    showHeadCode(view);
    showWithheld(view);
    const position = document.getElementById("position");
    if (position) position.textContent = view.position || "";
    const name = document.getElementById("game-name");
    if (name) name.textContent = view.game || MC.game;
    document.title = (view.game || MC.game) + " — " + MC.t("page." + MC.page);
  };

  /** The head code after the last turn resolved (view.head_code {turn, seq, code}), in the
   * page's #head-code: every page shows the same twelve digits in three groups of four
   * ("4831 9277 0015"), so a phone can check what the table reads aloud, and anyone who notes it
   * can later run verify --head-code SEQ:CODE. */
  function showHeadCode(view) {
    const box = document.getElementById("head-code");
    if (!box) return;
    const head = view && view.head_code;
    box.hidden = !head;
    if (!head) {
      box.replaceChildren();
      delete box.dataset.code;
      return;
    }
    box.dataset.code = head.code;
    box.dataset.seq = String(head.seq);
    box.dataset.turn = String(head.turn);
    // each group of four kept on one line; a narrow screen breaks between groups only
    const groups = String(head.code).split(" ");
    const code = MC.el("strong", { class: "code" },
      groups.flatMap((group, index) => [index ? " " : null, MC.el("span", { class: "group" }, group)]));
    const aloud = MC.page === "table" ? " — " + MC.t("headcode.aloud") : "";
    box.replaceChildren(MC.t("headcode.after", { turn: head.turn }) + " ", code, aloud,
      MC.el("span", { class: "muted seq" }, " (" + MC.t("headcode.seq", { seq: head.seq }) + ")"));
  }
  MC.showHeadCode = showHeadCode;

  /** Every turn resolved without a player's committed dice contribution (view.withheld, D3),
   * shown loudly in #withheld: the last resolved turn's, with the referee's reason, then the
   * count per player over the game. Whoever withholds a reveal, told the dice by the seed's
   * holder, may choose between two outcomes of the turn: the table should see each one. */
  function showWithheld(view) {
    const box = document.getElementById("withheld");
    if (!box) return;
    const withheld = (view && view.withheld) || [];
    box.hidden = !withheld.length;
    if (!withheld.length) {
      box.replaceChildren();
      return;
    }
    const lastTurn = view.head_code ? view.head_code.turn : null; // the last turn resolved by the view's seq
    const latest = withheld.filter((entry) => entry.turn === lastTurn);
    const parts = [];
    if (latest.length) {
      const who = latest.map((entry) => MC.t("withheld.one", { player: entry.player, reason: entry.reason })).join("; ");
      parts.push(MC.el("strong", {}, MC.t("withheld.turn", { turn: lastTurn, who: who })));
    }
    const turns = {};
    for (const entry of withheld) (turns[entry.player] = turns[entry.player] || []).push(entry.turn);
    const tally = Object.keys(turns).sort().map((player) => MC.t("withheld.count", { player: player, count: turns[player].length, turns: turns[player].join(", ") })).join("; ");
    parts.push(MC.el("span", { class: "tally" }, MC.t("withheld.tally", { tally: tally })));
    box.dataset.players = Object.keys(turns).sort().join(",");
    box.replaceChildren(...parts.flatMap((part, index) => (index ? [" ", part] : [part])));
  }

  /** A table of ships: name, owner, square, facing, damage, state. */
  MC.shipsTable = function (ships, columns) {
    const shown = columns || ["name", "owner", "square", "facing", "damage", "state"];
    const head = MC.el("tr", {}, shown.map((column) => MC.el("th", { scope: "col" }, MC.t("ships." + column))));
    const rows = (ships || []).map((ship) => MC.el("tr", {}, shown.map((column) => MC.el("td", {}, shipCell(ship, column)))));
    return MC.el("div", { class: "table-wrap" }, MC.el("table", {}, MC.el("thead", {}, head), MC.el("tbody", {}, rows)));
  };

  function shipCell(ship, column) {
    if (column === "name") return ship.name || ship.id || "";
    if (column === "state") {
      if (ship.sunk || ship.lost || ship.gone) return MC.t("ships.sunk");
      if (!ship.square && !ship.at) return MC.t("ships.unplaced");
      return MC.t("ships.afloat");
    }
    if (column === "square") return ship.square || (Array.isArray(ship.at) ? String(ship.at) : ship.at) || "";
    if (column === "options") return (ship.options || []).join(", ");
    const value = ship[column];
    return value === null || value === undefined ? "" : String(value);
  }

  /** Ships of the view as a list, whatever shape it gives them in (list, or map by name). */
  MC.shipsOf = function (view) {
    const raw = (view && view.ships) || [];
    if (Array.isArray(raw)) return raw;
    return Object.entries(raw).map(([name, ship]) => Object.assign({ name: name }, ship));
  };
})();

/* Phones as witnesses (docs/service.md, "Phones as witnesses"). Each page keeps, on its device
 * (localStorage, per game), the heads of the log it has seen: an event's seq and the full hash of
 * the line there, which covers every line before it. After each view it asks the server for the
 * events after its last head (/chain?since=), each with what of its place in the chain this viewer
 * may be sent, and checks that they extend what it saw: the hash it holds for a seq served again
 * the same, each prev equal to the hash before it (sealed lines are checked so, by their linkage),
 * each readable line hashing to its hash (SHA-256 of the line without its "hash" member, as
 * events/codec.spliced_line_hash computes it), a sealed line it saw checked by its bytes once the
 * log reveals it, and the log not shorter than what it saw. A mismatch is kept and shown loudly on
 * the page, and no later head is taken from a server that showed another history; the heads and
 * mismatches are exported as GAME-witness.json, which `mortecouille verify GAME --witness FILE`
 * checks against the log. */
(function () {
  const MC = window.MC;
  const KEY = "mortecouille.witness:" + MC.game;
  const KEEP_HEADS = 1000; // the last head covers every one before it: older ones are a margin
  const KEEP_UNREAD = 500;
  const PAGES = 200; // of the chain endpoint's answers, per check (1,000 events each)

  function fresh() { return { version: 1, game: MC.game, heads: [], mismatches: [], unread: [] }; }

  function load() {
    try {
      const kept = JSON.parse(localStorage.getItem(KEY) || "null");
      if (kept && kept.version === 1 && kept.game === MC.game && Array.isArray(kept.heads) && Array.isArray(kept.mismatches)) {
        if (!Array.isArray(kept.unread)) kept.unread = [];
        return kept;
      }
    } catch (e) { /* storage off or spoilt: start afresh */ }
    return fresh();
  }

  let state = load();
  let checking = null;
  let exportUrl = null;
  let exportShown = null;

  function save() {
    try { localStorage.setItem(KEY, JSON.stringify(state)); } catch (e) { /* full or private mode: this page's memory only */ }
  }

  function tip() { return state.heads.length ? state.heads[state.heads.length - 1] : null; }

  /** ``line`` without its top-level "hash" member and the comma beside it (the bytes its hash
   * covers), or null when the member is not there exactly once. */
  function withoutHash(line, hash) {
    const member = '"hash":"' + hash + '"';
    const at = line.indexOf(member);
    if (at < 0 || line.indexOf(member, at + 1) >= 0) return null;
    let start = at;
    let end = at + member.length;
    if (line[end] === ",") end += 1;
    else if (line[start - 1] === ",") start -= 1;
    return line.slice(0, start) + line.slice(end);
  }

  /** Whether a served line is the line of its event: its own seq, type, prev and hash, and its
   * bytes hashing to that hash. */
  async function lineHolds(event) {
    let parsed;
    try { parsed = JSON.parse(event.line); } catch (e) { return false; }
    if (!parsed || parsed.seq !== event.seq || parsed.type !== event.type || parsed.hash !== event.hash) return false;
    if (event.prev && parsed.prev !== event.prev) return false;
    const body = withoutHash(event.line, event.hash);
    return body !== null && (await MC.sha256Hex(body)) === event.hash;
  }

  function note(mismatch) {
    const same = state.mismatches.some((m) => m.seq === mismatch.seq && m.kind === mismatch.kind && m.served === mismatch.served);
    if (!same) {
      state.mismatches.push(Object.assign(mismatch, { at: new Date().toISOString() }));
      save();
    }
    show();
  }

  let again = false;

  /** Check the served log against what this device saw: one check at a time, and one more after
   * it when asked meanwhile (the log may have grown since it began). */
  MC.witnessCheck = function () {
    if (checking) {
      again = true;
      return checking;
    }
    checking = run().catch(() => null).finally(() => {
      checking = null;
      if (again) {
        again = false;
        MC.witnessCheck();
      }
    });
    return checking;
  };

  async function run() {
    const last = tip();
    const known = new Map(state.heads.map((head) => [head.seq, head.hash]));
    const unread = new Map(state.unread.map((entry) => [entry.seq, entry.hash]));
    unread.forEach((hash, seq) => known.set(seq, hash));
    const firstUnread = state.unread.length ? Math.min(...state.unread.map((entry) => entry.seq)) : null;
    const from = last ? (firstUnread !== null ? Math.min(firstUnread, last.seq) : last.seq) : Math.max(0, MC.lastSeq);
    let since = from - 1;
    let newest = last;
    for (let page = 0; page < PAGES; page++) {
      const answer = await MC.getJson(MC.gamePath("/chain?since=" + since));
      const servedLast = answer.next_seq - 1;
      if (last && servedLast < last.seq) {
        note({ kind: "shorter", seq: last.seq, seen: last.hash, served: null, last: servedLast });
        return;
      }
      for (const event of answer.events) {
        const seen = known.get(event.seq);
        const seenBefore = known.get(event.seq - 1);
        if (event.hash && seen && event.hash !== seen) {
          note({ kind: "rewritten", seq: event.seq, seen: seen, served: event.hash });
          return;
        }
        if (event.prev && seenBefore && event.prev !== seenBefore) {
          note({ kind: "rewritten", seq: event.seq - 1, seen: seenBefore, served: event.prev });
          return;
        }
        if (event.line && !(await lineHolds(event))) {
          note({ kind: "forged-line", seq: event.seq, seen: seen || null, served: event.hash || null });
          return;
        }
        const linked = event.hash && (seen === event.hash || (seenBefore && event.prev === seenBefore) || !newest);
        if (!linked) continue;
        known.set(event.seq, event.hash);
        if (event.line) unread.delete(event.seq); // read at last: its bytes hash to what was linked
        else if (event.sealed && (!last || event.seq > last.seq)) unread.set(event.seq, event.hash);
        if (!newest || event.seq > newest.seq) newest = { seq: event.seq, hash: event.hash };
      }
      const listed = answer.events.length ? answer.events[answer.events.length - 1].seq : servedLast;
      if (listed >= servedLast) break;
      since = listed;
    }
    if (state.mismatches.length) { show(); return; } // another history was shown: no head from it
    if (newest && (!last || newest.seq > last.seq)) state.heads.push(newest);
    if (state.heads.length > KEEP_HEADS) state.heads = state.heads.slice(-KEEP_HEADS);
    state.unread = Array.from(unread, ([seq, hash]) => ({ seq: seq, hash: hash })).sort((a, b) => a.seq - b.seq).slice(-KEEP_UNREAD);
    save();
    show();
  }

  /** The file a page exports: what `verify --witness` reads. */
  function exported() {
    return { version: 1, game: MC.game, heads: state.heads, mismatches: state.mismatches };
  }

  function fileName() { return (MC.game + "-witness.json").replace(/[\\/:*?"<>|\x00-\x1f]/g, "_"); }

  function short(hash) { return hash ? String(hash).slice(0, 16) + "…" : "—"; }

  function alarmText(mismatch) {
    if (mismatch.kind === "shorter") return MC.t("witness.alarm.shorter", { seq: mismatch.seq, last: mismatch.last });
    if (mismatch.kind === "forged-line") return MC.t("witness.alarm.forged", { seq: mismatch.seq, served: short(mismatch.served) });
    return MC.t("witness.alarm.rewritten", { seq: mismatch.seq, seen: short(mismatch.seen), served: short(mismatch.served) });
  }

  /** A command to type, each word kept whole (a narrow screen breaks between words only). */
  function command(words) {
    return MC.el("code", { class: "command" }, words.flatMap((word, index) => [index ? " " : null, MC.el("span", {}, word)]));
  }

  /** The page's witness section and, after a mismatch, its alarm. */
  function show() {
    const alarm = document.getElementById("witness-alarm");
    if (alarm) {
      alarm.hidden = !state.mismatches.length;
      if (state.mismatches.length) {
        const first = state.mismatches[0];
        alarm.dataset.seq = String(first.seq);
        alarm.dataset.kind = first.kind;
        alarm.replaceChildren(
          MC.el("strong", {}, MC.t("witness.alarm.title")),
          MC.el("p", {}, alarmText(first)),
          MC.el("p", {}, MC.t("witness.alarm.todo")),
          command(["mortecouille", "verify", MC.game, "--witness", fileName()]),
        );
      } else {
        alarm.replaceChildren();
      }
    }
    const how = document.getElementById("witness-command");
    if (how && !how.firstChild) how.append(command(["mortecouille", "verify", MC.game, "--witness", fileName()]));
    const status = document.getElementById("witness-status");
    const last = tip();
    if (status) {
      status.textContent = last ? MC.t("witness.count", { n: state.heads.length, seq: last.seq }) : MC.t("witness.none");
      status.dataset.heads = String(state.heads.length);
    }
    const link = document.getElementById("witness-export");
    if (link) {
      link.hidden = !state.heads.length && !state.mismatches.length;
      const text = JSON.stringify(exported(), null, 2) + "\n";
      if (text !== exportShown) {
        // a Blob of the file behind an ordinary link: the browser saves it, nothing is sent
        if (exportUrl) URL.revokeObjectURL(exportUrl);
        exportUrl = URL.createObjectURL(new Blob([text], { type: "application/json" }));
        exportShown = text;
        link.href = exportUrl;
        link.setAttribute("download", fileName());
      }
    }
  }

  MC.witness = { state: () => state, show: show, exported: exported };
  MC.onLang(show);
  document.addEventListener("DOMContentLoaded", show);
})();
