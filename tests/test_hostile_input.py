"""What a hostile player or a careless referee types.

Names and texts with terminal escapes, newlines or bidirectional overrides are refused at input
(one rule, :mod:`mortecouille.core.limits`), by every command and by ``scenario`` and ``fork``;
logs that already hold them (older or forged) are escaped on the way to a terminal and encoded
for the exact context in SVG and HTML. Boards, ship counts, names and ruling adjustments are
capped. (The CLI's one-row-per-refusal table is in tests/test_cli_sweep.py.)
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import SeededDice, seed_commitment
from mortecouille.core.errors import BadInput
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import CreateGame
from mortecouille.core.limits import SHIPS_MAX, check_name, check_text, shown, unsafe
from mortecouille.core.state import EMPTY
from mortecouille.events.board import Board
from mortecouille.replays.analytics.query import QueryResult, format_table
from mortecouille.replays.analytics.reports import Bar, Chart, render_svg
from mortecouille.replays.pictures.html import frame_picture
from mortecouille.replays.pictures.svg import xml_text
from tests.cli_helpers import play_blockade_turn, run, set_up_harbour
from tests.forgery import forge, forge_with_turn_hashes, log_bodies

pytestmark = pytest.mark.slow

SCENARIO: dict[str, Any] = {
    "ruleset": "blockade",
    "board": {"width": 8, "height": 8},
    "ships": [{"id": "A", "kind": "sloop", "at": [1, 1], "facing": "N"}],
}

HOSTILE = [
    "\x1b[2J",  # ESC: clears the screen
    "a\nb",  # a newline forges an output line
    "a\rb",
    "\x07",  # BEL
    "\x7f",  # DEL
    "\x9b31m",  # C1 CSI
    "\u202eevil",  # right-to-left override
    "\u2066x\u2069",  # bidi isolate
    "a\u2028b",  # line separator
]


@pytest.mark.parametrize("text", HOSTILE, ids=[repr(t) for t in HOSTILE])
def test_one_rule_refuses_control_characters_naming_the_field_and_shows_them_escaped(text: str) -> None:
    with pytest.raises(BadInput) as refused:
        check_name("--players", f"Anne{text}")
    assert refused.value.field == "--players"
    assert all(c.isprintable() for c in str(refused.value)), "the refusal itself must be safe to print"
    assert shown(text).isprintable()


def test_names_and_texts_are_capped_and_ordinary_unicode_passes() -> None:
    check_name("NAME", "Hélène-Ω 船 ⚓")
    check_text("--text", "x" * 2000)
    with pytest.raises(BadInput, match="at most 64"):
        check_name("NAME", "x" * 65)
    with pytest.raises(BadInput, match="at most 2000"):
        check_text("--text", "x" * 2001)


def run_scenario_file(tmp_path: Path, data: dict[str, Any], *extra: str) -> tuple[int, str]:
    path = tmp_path / "turn.json"
    path.write_text(json.dumps(data))
    result = run(tmp_path / "games", "scenario", str(path), *extra)
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("ships", "names"),
    [
        ([{"id": "A\x1b[2J", "kind": "sloop", "at": [1, 1], "facing": "N"}], "ships[0].id"),
        (
            [{"id": "A", "kind": "sloop", "at": [1, 1], "facing": "N", "owner": "Anne\u202e"}],
            "ships[0].owner",
        ),
        ([{"id": "A" * 65, "kind": "sloop", "at": [1, 1], "facing": "N"}], "ships[0].id"),
        (
            [
                {"id": f"S{i}", "kind": "sloop", "at": [i % 8, i // 8], "facing": "N"}
                for i in range(SHIPS_MAX + 1)
            ],
            "ships",
        ),
    ],
    ids=["escape-in-id", "bidi-in-owner", "long-id", "too-many-ships"],
)
def test_scenario_refuses_hostile_names_and_too_many_ships(
    tmp_path: Path, ships: list[dict[str, Any]], names: str
) -> None:
    code, output = run_scenario_file(
        tmp_path, {**SCENARIO, "ships": ships}, "--log", str(tmp_path / "kept.jsonl")
    )
    assert code == 2, output
    assert names in output, output
    assert "Traceback" not in output
    assert not (tmp_path / "kept.jsonl").exists()


def test_mortecouille_scenario_refuses_an_escape_in_a_ship_id(tmp_path: Path) -> None:
    data = {
        "ruleset": "mortecouille",
        "board": {"width": 8, "height": 8},
        "ships": [{"id": "H\x1b]0;x\x07", "kind": "red-small", "at": [1, 1], "facing": "E", "owner": "Anne"}],
    }
    code, output = run_scenario_file(tmp_path, data)
    assert code == 2, output
    assert "ships[0].id" in output, output


def test_a_blockade_game_holds_at_most_ships_max_ships() -> None:
    create = CreateGame(
        game="g", ruleset="blockade", players=("A", "B"), budget=0, board=Board(width=100, height=100),
        seed_sha256=seed_commitment("s"),
    )  # fmt: skip
    dice = SeededDice("s")
    state = fold(decide(EMPTY, create, dice))
    for i in range(SHIPS_MAX):
        state = fold(
            decide(state, PlaceShip(ship=f"S{i}", at=(i % 100, i // 100), facing="N", kind="sloop"), dice),
            state,
        )
    with pytest.raises(BadInput, match=f"at most {SHIPS_MAX}"):
        decide(state, PlaceShip(ship="one-more", at=(50, 50), facing="N", kind="sloop"), dice)


# --- terminal output: logs written before the rule, or forged, are escaped -------------------

EVIL_SHIP = "Slo\x1b[2Jopy\u202e"
EVIL_PLAYER = "An\x9b31mne"
FORGED_LINE = "    99  game-ended         winner=Bart"
EVIL_TEXT = f"ok\n{FORGED_LINE}\x1b]0;pwned\x07"


def in_json(text: str) -> str:
    return json.dumps(text)[1:-1]


def forged_hostile_game(games: Path) -> None:
    """The README's harbour with a ruling and turn 1 resolved, then forged so that a ship, a player
    and the ruling's text hold terminal escapes, a bidi override and a newline (turn hashes,
    chain and head anchor recomputed, as a careful forger would)."""
    set_up_harbour(games)
    for args in (
        ("ruling", "b", "--rule", "M3", "--text", "ok", "--adjust", "Sloopy", "wind=1"),
        ("tokens", "b", "Sloopy", "F", "F", "L", "-"),
        ("tokens", "b", "Frig", "F", "-", "R", "F"),
        ("resolve", "b"),
    ):
        assert run(games, *args).exit_code == 0

    def edit(bodies: list[dict[str, Any]]) -> None:
        for i, body in enumerate(bodies):
            if body["type"] == "ruling-recorded":
                body["text"] = EVIL_TEXT
            text = (
                json.dumps(body).replace("Sloopy", in_json(EVIL_SHIP)).replace("Anne", in_json(EVIL_PLAYER))
            )
            bodies[i] = json.loads(text)

    forge_with_turn_hashes(games / "b.jsonl", edit)


@pytest.mark.parametrize(
    "command",
    [
        ["log", "b"],
        ["board", "b"],
        ["board", "b", "--turn", "0"],
        ["state", "b"],
        ["explain", "b", "--turn", "1"],
        ["replay", "b", "--turn", "1"],
        ["verify", "b"],
    ],
    ids=lambda c: "-".join(c),
)
def test_names_and_texts_from_a_forged_log_reach_the_terminal_escaped(
    tmp_path: Path, command: list[str]
) -> None:
    games = tmp_path / "games"
    forged_hostile_game(games)
    result = run(games, *command)
    assert "Traceback" not in result.output
    unsafe_shown = sorted({repr(c) for c in result.output if c != "\n" and unsafe(c)})
    assert unsafe_shown == [], f"{command}: {unsafe_shown}\n{result.output}"
    assert not any(line.startswith(FORGED_LINE) for line in result.output.splitlines()), result.output


def test_query_tables_show_log_text_escaped() -> None:
    table = format_table(QueryResult(["text"], [(EVIL_TEXT,)]))
    assert not any(c != "\n" and unsafe(c) for c in table)
    assert len(table.splitlines()) == 4  # header, rule, one row, count: the newline did not add one


# --- pictures: SVG stays well-formed XML, the page's data stays JSON -------------------------


def test_svg_of_a_forged_log_with_control_characters_is_well_formed_xml(tmp_path: Path) -> None:
    games = tmp_path / "games"
    forged_hostile_game(games)
    out = tmp_path / "turn.svg"
    result = run(games, "render", "b", "--turn", "1", "--svg", str(out))
    assert result.exit_code == 0, result.output
    drawn = ET.fromstring(out.read_text())  # a raw ESC or U+FFFF would be "not well-formed"
    # drawn whole, or cut on the board and whole in the hull's tooltip (a long name)
    names = {e.text for e in drawn.iter() if e.tag.endswith(("}text", "}title"))}
    assert shown(EVIL_SHIP) in names


def test_every_picture_of_the_page_of_a_forged_log_is_well_formed_xml(tmp_path: Path) -> None:
    games = tmp_path / "games"
    forged_hostile_game(games)
    out = tmp_path / "page.html"
    assert run(games, "export", "b", "--html", str(out)).exit_code == 0
    page = out.read_text()
    embedded = page.partition('<script type="application/json" id="game-data">')[2].partition("</script>")[0]
    data = json.loads(embedded)
    frames = [frame for turn in data["turns"] for frame in turn["frames"]]
    assert frames
    for frame in frames:
        ET.fromstring(frame_picture(data, frame))
    assert not any(unsafe(c) for c in page if c != "\n"), "the page holds a raw control character"


def test_xml_text_encodes_markup_controls_and_noncharacters_in_one_place() -> None:
    hostile = "<!--a&b\"c'd\x1b\x00\ufffe\uffff\u202e</svg>"
    wrapped = f'<svg xmlns="http://www.w3.org/2000/svg"><text a="{xml_text(hostile)}">{xml_text(hostile)}</text></svg>'
    text = ET.fromstring(wrapped).find("{http://www.w3.org/2000/svg}text")
    assert text is not None
    assert text.text == text.get("a") == "<!--a&b\"c'd\\x1b\\x00\\ufffe\\uffff\\u202e</svg>"


# --- exit codes: no traceback, and exit 1 only as documented --------------


@pytest.mark.parametrize(
    "command",
    [["log", "b"], ["state", "b"], ["board", "b"], ["verify", "b"], ["explain", "b", "--turn", "1"],
     ["replay", "b", "--turn", "1"], ["render", "b", "--turn", "1", "--svg", "out.svg"],
     ["tokens", "b", "Sloopy", "F"]],
    ids=lambda c: c[0],
)  # fmt: skip
def test_a_forged_move_of_a_ship_the_game_never_had_is_a_corrupt_log_not_a_crash(
    tmp_path: Path, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    log = play_blockade_turn(tmp_path / "games")
    moved = next(body["seq"] for body in log_bodies(log) if body["type"] == "ship-moved")
    forge(log, {moved: {"ship": "Ghost"}})
    before = log.read_bytes()
    result = run(tmp_path / "games", *command)
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 4, result.output
    assert f"seq {moved}" in result.output and "Ghost" in result.output, result.output
    assert log.read_bytes() == before


SWEEP: list[tuple[str, ...]] = [
    ("log", "x" * 300),
    ("state", "x" * 300),
    ("board", "x" * 300),
    ("verify", "x" * 300),
    ("explain", "x" * 300, "--turn", "1"),
    ("replay", "x" * 300, "--turn", "1"),
    ("new", "x" * 300, "--players", "A,B"),
    ("place", "x" * 300, "S", "C2", "--kind", "sloop"),
    ("ruling", "b", "--rule", "M3", "--text", "t", "--adjust", "Sloopy", "damage=+9" * 40),
    ("new", "n", "--players", "A,B", "--board", "1" * 400 + "x10"),
    ("place", "b", "S" * 5000, "C7", "--kind", "sloop"),
]


@pytest.mark.parametrize("args", SWEEP, ids=lambda a: f"{a[0]}-{len(' '.join(a))}")
def test_bad_input_never_shows_a_traceback_and_exits_with_a_documented_code(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    games = tmp_path / "games"
    set_up_harbour(games)
    result = run(games, *args)
    assert isinstance(result.exception, SystemExit), f"{args[:2]}: uncaught {result.exception!r}"
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_an_unexpected_error_is_one_line_and_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    games = tmp_path / "games"
    set_up_harbour(games)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the fold broke")

    monkeypatch.setattr("mortecouille.cli.game_commands.describe_state", broken)
    result = run(games, "state", "b")
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 1
    assert result.output.strip() == (
        "error: unexpected RuntimeError: the fold broke (a bug: please report it with the command)"
    )


def test_a_file_the_system_refuses_is_named_in_one_line_with_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = tmp_path / "games"
    set_up_harbour(games)

    def refused(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(games / "b.jsonl"))

    monkeypatch.setattr("mortecouille.cli.game_commands.describe_state", refused)
    result = run(games, "state", "b")
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 1
    assert result.output.strip() == f"error: the system refused: Permission denied: {games / 'b.jsonl'}"


def test_report_charts_encode_labels_from_the_logs_as_xml() -> None:
    chart = Chart("Rulings per rule", "rulings", [Bar("M3\x1b<\ufffe&", 1.0)])
    drawn = ET.fromstring(render_svg(chart))
    assert "M3\\x1b<\\ufffe&" in {e.text for e in drawn.iter("{http://www.w3.org/2000/svg}text")}
