"""``ruling``: a referee's decision as an event, folded purely, never an edit of the past."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mortecouille.cli.replay_commands import SHOWN_RULINGS
from mortecouille.core.rulings import RULE_IDS
from tests.cli_helpers import play_blockade_turn, run
from tests.forgery import log_bodies
from tests.helpers import ROOT

#: The repository's own rules: the test runs (never skips) wherever the repository is checked out.
RULES_MD = ROOT / "RULES.md"


def test_rule_ids_are_exactly_the_ids_rules_md_defines() -> None:
    text = RULES_MD.read_text()
    defined: set[str] = set(re.findall(r"^## ([A-Z])\.", text, re.M))
    for bold in re.findall(r"\*\*([^*]+)\*\*", text):
        # "**M2c, M2d, M2e**" or "**B1 Grid.**": the IDs lead the bold span
        head = bold.split(".")[0] if re.match(r"[A-Z]\d", bold) else bold
        defined.update(re.findall(r"\b([A-Z]\d+[a-z]?)\b", head))
    assert defined - RULE_IDS == set(), "RULES.md defines IDs a ruling cannot cite"
    assert RULE_IDS - defined == set(), "rulings accept IDs RULES.md does not define"
    assert {"M2d", "M2e", "C2", "X1", "K", "N"} <= RULE_IDS


def test_a_ruling_needs_a_known_rule_and_writes_nothing_otherwise(games: Path) -> None:
    path = play_blockade_turn(games)
    before = path.read_bytes()
    refused = run(games, "ruling", "b", "--rule", "Q7", "--text", "made up")
    assert refused.exit_code == 2 and "--rule" in refused.output
    for change in ("damage=3", "colour=red", "position=E5", "position=B2", "damage=-9", "facing=NE"):
        bad = run(games, "ruling", "b", "--rule", "M3", "--text", "x", "--adjust", "Sloopy", change)
        assert bad.exit_code == 2, (change, bad.output)
    unknown = run(games, "ruling", "b", "--rule", "M3", "--text", "x", "--adjust", "Ghost", "wind=1")
    assert unknown.exit_code == 2 and "Ghost" in unknown.output
    assert path.read_bytes() == before


def test_a_ruling_adjusts_the_state_and_shows_in_explain_replay_and_board(games: Path) -> None:
    path = play_blockade_turn(games)
    past = path.read_bytes()
    result = run(
        games,
        "ruling",
        "b",
        "--rule",
        "M3",
        "--text",
        "the bump in round 2 was not a push",
        "--adjust",
        "Sloopy",
        "damage=-3",
        "--adjust",
        "Frig",
        "position=D6,facing=E",
    )
    assert result.exit_code == 0, result.output
    assert path.read_bytes().startswith(past)  # appended, nothing before it changed
    ruling = log_bodies(path)[-1]
    assert ruling["type"] == "ruling" and ruling["rule"] == "M3" and ruling["turn"] == 2
    assert ruling["adjustments"] == [
        {"ship": "Sloopy", "damage": -3.0},
        {"ship": "Frig", "at": [3, 5]},
        {"ship": "Frig", "facing": "E"},
    ]
    state = json.loads(run(games, "state", "b", "--json").output)
    assert state["ships"]["Sloopy"]["damage"] == 3 and state["ships"]["Frig"]["at"] == [3, 5]
    assert "Frig (Bart): war-frigate at D6 facing E" in run(games, "board", "b", "--no-color").output
    replayed = run(games, "replay", "b").output
    assert "ruling seq 26 [M3]: the bump in round 2 was not a push -> Sloopy damage -3" in replayed
    assert run(games, "tokens", "b", "Frig", "F").exit_code == 0
    assert run(games, "resolve", "b", "--partial").exit_code == 0
    told = run(games, "explain", "b", "--turn", "2").output
    assert "-- ruling" in told and "referee's ruling under M3: the bump in round 2 was not a push" in told
    assert "Frig moved to D6; Frig now faces E" in told and "Frig moves D6-E6" in told


def test_rederivation_passes_after_a_ruling_between_turns(games: Path) -> None:
    play_blockade_turn(games)
    assert (
        run(
            games,
            "ruling",
            "b",
            "--rule",
            "P3",
            "--text",
            "the sloop was repaired in port",
            "--adjust",
            "Sloopy",
            "damage=-6",
            "--adjust",
            "Sloopy",
            "position=B6,facing=N",
        ).exit_code
        == 0
    )
    assert run(games, "tokens", "b", "Sloopy", "F", "F").exit_code == 0
    assert run(games, "tokens", "b", "Frig", "-").exit_code == 0
    assert run(games, "resolve", "b").exit_code == 0
    report = json.loads(run(games, "verify", "b", "--json").output)
    assert report["ok"], report
    assert any(f["check"] == "rederive" and "2 turns re-derived" in f["detail"] for f in report["findings"])
    moved = [
        e
        for e in log_bodies(games / "b.jsonl")
        if e["type"] == "ship-moved" and e["ship"] == "Sloopy" and e["turn"] == 2
    ]
    assert moved[0]["path"] == [[1, 5], [1, 6]]  # turn 2 started from where the ruling put it


def test_sunk_false_puts_a_ship_back_afloat(games: Path) -> None:
    play_blockade_turn(games)
    assert run(games, "place", "b", "Tiny", "A1", "--kind", "sloop").exit_code == 0
    assert run(games, "place", "b", "Wall", "A2", "--kind", "war-frigate", "--facing", "E").exit_code == 0
    assert run(games, "tokens", "b", "Tiny", "F", "F", "F", "F").exit_code == 0
    assert run(games, "resolve", "b", "--partial").exit_code == 0
    assert json.loads(run(games, "state", "b", "--json").output)["ships"]["Tiny"]["sunk"] is True
    back = run(
        games,
        "ruling",
        "b",
        "--rule",
        "P3",
        "--text",
        "sinking miscounted",
        "--adjust",
        "Tiny",
        "sunk=false,damage=-4",
    )
    assert back.exit_code == 0, back.output
    tiny = json.loads(run(games, "state", "b", "--json").output)["ships"]["Tiny"]
    assert tiny["sunk"] is False and tiny["damage"] == 8
    assert run(games, "verify", "b").exit_code == 0


def test_a_position_shows_its_latest_rulings_and_counts_the_earlier_ones(games: Path) -> None:
    play_blockade_turn(games)
    made = SHOWN_RULINGS + 3
    for number in range(made):
        ruled = run(
            games, "ruling", "b", "--rule", "M3", "--text", f"ruling {number}", "--adjust", "Sloopy", "wind=1"
        )
        assert ruled.exit_code == 0, ruled.output
    replayed = run(games, "replay", "b").output
    assert "3 earlier ruling(s) not shown" in replayed
    assert "ruling 2 ->" not in replayed and "ruling 3 ->" in replayed and f"ruling {made - 1} ->" in replayed
    as_json = json.loads(run(games, "replay", "b", "--json").output)
    assert [r["text"] for r in as_json["rulings"]] == [f"ruling {n}" for n in range(made)]
