"""The README's walkthroughs are run as written, so they stay true."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from mortecouille.cli.main import cli
from tests.helpers import ROOT

pytestmark = pytest.mark.slow

README = (ROOT / "README.md").read_text()


def walkthrough(heading: str) -> list[list[str]]:
    section = README.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, heading
    text = block.group(1).replace("\\\n", " ")
    commands = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            assert words[0] == "mortecouille", line
            commands.append(words[1:])
    return commands


@pytest.mark.parametrize(
    "heading",
    [
        "A referee's walkthrough (mortecouille)",
        "A referee's walkthrough (blockade)",
        "For the game designer: many games, one SQL engine",
    ],
)
def test_every_walkthrough_command_succeeds_and_shows_what_the_readme_promises(
    heading: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each command exits 0 and its output holds the key lines the README's comments promise
    (the exit codes alone would pass a board whose whirlpools broke the grid)."""
    monkeypatch.chdir(tmp_path)  # the commands write relative paths (sims/, archive/, gunnery.svg)
    commands = walkthrough(heading)
    checked = 0
    for words in commands:
        result = CliRunner().invoke(cli, ["--games-dir", "games", *words])
        assert result.exit_code == 0, (words, result.output)
        for pattern in KEY_LINES.get(" ".join(words), ()):
            assert re.search(pattern, result.output, re.M), (words, pattern, result.output)
            checked += 1
        if words[0] == "board":
            assert_grid_is_aligned(result.output)
    assert checked >= len(commands) // 2  # the table below follows the README's commands
    if heading.startswith("For the game designer"):
        assert Path("gunnery.svg").read_text().lstrip().startswith(("<svg", "<?xml"))


def assert_grid_is_aligned(board: str) -> None:
    """Every row of the board is its number, one 3-character cell per column, its number again."""
    lines = board.splitlines()
    header = lines[0]
    columns = header.split()
    assert columns and all(re.fullmatch(r"[A-Z]", column) for column in columns), header
    rows = lines[1 : lines.index(header, 1)]
    row = re.compile(rf" *\d+ (.{{3}}){{{len(columns)}}} \d+")
    assert rows and all(row.fullmatch(line) for line in rows), "\n".join([header, *rows])


#: The walkthrough command (as written in the README, quotes removed) -> patterns its output shows.
KEY_LINES: dict[str, tuple[str, ...]] = {
    # mortecouille
    "new duel --players Anne,Bart --budget 100000 --board 10x10 --rock E5 --wind C7:E": (
        r"^created duel \(mortecouille, seeded dice\)",
    ),
    "buy duel Anne Rouge small Hope --option Super boulet de canon": (
        r"Anne bought red-small 'Hope' with super-shot",
    ),
    "equip duel Anne fireship-fleet --fleet": (r"fleet option fireship-fleet .*; 0 left$",),
    "seal duel Anne": (r"sealed Anne's fleet; 0 forfeited",),  # "all 100,000 spent"
    "seal duel Bart --forfeit": (r"sealed Bart's fleet; 20000 forfeited",),  # "the 20,000 left are lost"
    "place duel Kraken E6 --facing S": (r"ship-placed +ship=Kraken at=E6 facing=S .*\[F3, B2\]",),
    "sheet duel Anne": (
        r"^Anne \(sealed",
        r"^  Black Pearl: ",
        r"fleet total 100000; money left 0 of 100000",
    ),
    "order duel Black Pearl attack port Kraken + maneuver 1/8 left": (
        r"order-given +turn=1 ship=Black Pearl actions=\{order=attack .*\{order=maneuver turn=1/8 side=left",
    ),
    "resolve duel": (
        r"turn-started +turn=1",
        r"die-rolled .* source=seeded",
        r"shot-fired .*ship=Black Pearl .*target=Kraken.*\[S\d",  # rule IDs cited
        r"turn-ended +turn=1",
    ),
    "board duel": (r"^after turn 1; turn 2 to order$", r"^  [A-Z] Black Pearl \(Anne\): blue-big at ", r"###"),
    "explain duel --turn 1": (r"^duel, turn 1$", r"Black Pearl"),
    # blockade
    "new harbour --ruleset blockade --players Anne,Bart --board 8x8 --rock E5 --wind C3:E --whirlpool F2": (
        r"^created harbour \(blockade, seeded dice\)",
    ),
    "tokens harbour Sloopy F F L -": (r"tokens-given +ship=Sloopy tokens=F,F,L,- +\[P1\]",),
    "resolve harbour": (
        r"turn-started +turn=1 rounds=4",
        r"collision .*rule=M",
        r"damage .*\[P2",
        r"turn-ended",
    ),
    "board harbour --turn 0": (
        r"^  [A-Z] Frig \(Bart\): war-frigate at C4 facing S; damage 0$",
        r"^ 2 .* @@@@@@ ",  # the whirlpool at F2 covers F2:G3
        r"~→~",
    ),
    "verify harbour": (r"^ok +chain ", r"^ok +rederive ", r"^harbour: verified$"),
    "end harbour --winner Anne": (r"^ended harbour; winner Anne; seed \S+",),
    # the game designer
    "simulate --games 20 --seed study --to sims": (r"^simulated 20 game\(s\) into sims",),
    "archive --games-dir sims --to archive": (r"^archived 20 game\(s\), \d+ events into archive",),
    # random fleets, so every kind has ships behind its rate
    "query archive SELECT kind, count(*) AS ships, count(DISTINCT game) AS games, "
    "round(avg(CAST(won AS INT)), 2) AS owner_won FROM ships GROUP BY kind ORDER BY kind": (
        r"^kind +ships +games +owner_won$",
        r"^yellow-big +[1-9]\d* +[1-9]\d* +[01](\.\d+)?$",
        r"^\(8 rows\)$",
    ),
    "query archive SELECT option, count(*) AS ships, round(avg(CAST(won AS INT)), 2) AS owner_won "
    "FROM (SELECT unnest(options) AS option, won FROM ships) GROUP BY option ORDER BY option": (
        r"^option +ships +owner_won$",
        r"^catapult +[1-9]",
    ),
    "report archive dice": (r"chi-square", r"^seeded +\(all\) +6 "),
    "report archive gunnery --svg gunnery.svg": (r"S3 normal, S4 burst", r"^burst +\d"),
}


def test_every_key_line_belongs_to_a_walkthrough_command() -> None:
    """A renamed command in the README cannot silently drop its output check."""
    written = {
        " ".join(words)
        for heading in ("A referee's walkthrough (mortecouille)", "A referee's walkthrough (blockade)",
                        "For the game designer: many games, one SQL engine")
        for words in walkthrough(heading)
    }  # fmt: skip
    assert set(KEY_LINES) - written == set()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """The README opens with two commands (demo, tests); CI runs the second one, word for word."""
    blocks = re.findall(r"```sh\n(.*?)\n```", README, re.S)
    demo, tests = blocks[0], blocks[1]
    assert "mortecouille demo" in demo and tests.endswith(".venv/bin/pytest")
    assert tests in (ROOT / ".ci" / "run").read_text().splitlines()
