/* The list of games: each with its turn, whom it waits for, and a link to its table page. */
"use strict";

(function () {
  const MC = window.MC;
  let games = null;

  function draw() {
    MC.applyWords();
    const list = document.getElementById("games");
    if (!games) return;
    if (!games.length) {
      list.replaceChildren(MC.el("li", { class: "muted" }, MC.t("index.none")));
      return;
    }
    list.replaceChildren(...games.map((game) => {
      const waiting = Object.keys(game.waiting || {});
      const facts = [game.ruleset, game.position || MC.t("index.turn", { turn: game.turn }), game.status];
      if (waiting.length) facts.push(MC.t("index.waiting", { names: waiting.join(", ") }));
      return MC.el("li", { class: "seat" },
        MC.el("a", { href: "/table/" + encodeURIComponent(game.name) }, game.name),
        MC.el("span", { class: "muted" }, " — " + facts.filter(Boolean).join(" · ")));
    }));
  }

  MC.onLang(draw);
  MC.mountLangPicker();
  MC.applyWords();
  MC.getJson("/api/games").then((found) => {
    games = Array.isArray(found) ? found : (found && found.games) || [];
    draw();
  }).catch((error) => MC.showError(error));
})();
