"""Every command writing a path the user gave (``render --svg``, ``export --html``, ``report --svg``)
refuses to overwrite an existing file without ``--force``, never writes a game's own files (even with
``--force``), never writes through a symlink, and replaces a file by renaming a complete temporary one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mortecouille.app.outputs import HTML_SUFFIXES, SVG_SUFFIXES, write_output
from mortecouille.core.errors import BadInput
from mortecouille.events.game import DieRolled
from mortecouille.replays.analytics.archive import archive_games
from tests.cli_helpers import play_blockade_turn, run, tree_digest
from tests.helpers import write_game

pytestmark = pytest.mark.slow

#: (the command's arguments before the output option, the option): each writes one file.
COMMANDS = {
    "render": (("render", "b", "--turn", "1"), "--svg"),
    "export": (("export", "b"), "--html"),
    "report": (("report", "ARCHIVE", "dice"), "--svg"),
}

#: The suffix each command's output must carry.
SUFFIX = {"render": ".svg", "export": ".html", "report": ".svg"}


@pytest.fixture
def played(games: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Game ``b`` with one turn played in ``games``, and an archive of one finished game."""
    play_blockade_turn(games)
    finished = tmp_path / "finished"
    rolls = [
        DieRolled(
            turn=1, phase="wind", ship=None, purpose="wind", index=i, sides=6, value=1 + i % 6, source="table"
        )
        for i in range(60)
    ]
    write_game(finished, "done", rolls, winner="Anne")
    archive = tmp_path / "archive"
    assert archive_games(sorted(finished.glob("*.jsonl")), archive, "2026-03").exit_code == 0
    return games, archive


def output(command: str, games: Path, archive: Path, path: Path, *extra: str) -> tuple[int, str]:
    arguments, option = COMMANDS[command]
    arguments = tuple(str(archive) if a == "ARCHIVE" else a for a in arguments)
    result = run(games, *arguments, option, str(path), *extra)
    assert "Traceback" not in result.output
    return result.exit_code, result.output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_existing_file_is_refused_without_force_and_replaced_with_it(
    command: str, played: tuple[Path, Path], tmp_path: Path
) -> None:
    games, archive = played
    target = tmp_path / f"out{SUFFIX[command]}"
    target.write_text("keep me")
    code, text = output(command, games, archive, target)
    assert code == 2 and "already exists" in text and "--force" in text
    assert target.read_text() == "keep me"
    code, text = output(command, games, archive, target, "--force")
    assert code == 0, text
    assert target.read_text().lstrip().startswith("<")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("suffix", [".jsonl", ".head", ".seed"])
def test_the_games_own_files_are_never_written_even_with_force(
    command: str, suffix: str, played: tuple[Path, Path]
) -> None:
    games, archive = played
    before = tree_digest(games)
    for target in (games / f"b{suffix}", games / f"new{suffix}"):
        code, text = output(command, games, archive, target, "--force")
        assert code == 2 and "games directory" in text, text
    assert tree_digest(games) == before
    assert not (games / "new.jsonl").exists()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_symlink_is_never_written_through(command: str, played: tuple[Path, Path], tmp_path: Path) -> None:
    games, archive = played
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "link.svg"
    link.symlink_to(victim)
    dangling = tmp_path / "dangling.svg"
    dangling.symlink_to(tmp_path / "created-through-the-link")
    for path in (link, dangling):
        code, text = output(command, games, archive, path, "--force")
        assert code == 2 and "symbolic link" in text, text
    assert victim.read_text() == "precious" and link.is_symlink()
    assert not (tmp_path / "created-through-the-link").exists()


def test_a_game_log_reached_through_a_symlinked_folder_is_refused(
    played: tuple[Path, Path], tmp_path: Path
) -> None:
    games, archive = played
    alias = tmp_path / "alias"
    alias.symlink_to(games)
    before = tree_digest(games)
    code, text = output("export", games, archive, alias / "b.jsonl", "--force")
    assert code == 2 and "games directory" in text
    assert tree_digest(games) == before


def test_a_replaced_output_is_a_new_file_so_a_hard_link_keeps_the_old_bytes(tmp_path: Path) -> None:
    target = tmp_path / "picture.svg"
    target.write_text("old")
    other = tmp_path / "hard-link"
    os.link(target, other)
    write_output(target, "<svg/>", "--svg", None, True, SVG_SUFFIXES)
    assert target.read_text() == "<svg/>" and other.read_text() == "old"


def test_an_unwritable_folder_is_a_bad_input_naming_the_option(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="--html: cannot write"):
        write_output(tmp_path / "missing" / "page.html", "<html/>", "--html", None, False, HTML_SUFFIXES)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("name", ["x.png", "x", "x.svg.txt", "page.pdf"])
def test_a_name_that_is_not_the_formats_is_refused_naming_the_option(
    command: str, name: str, played: tuple[Path, Path], tmp_path: Path
) -> None:
    games, archive = played
    before = tree_digest(games)
    target = tmp_path / name
    code, text = output(command, games, archive, target)
    option = COMMANDS[command][1]
    assert code == 2 and option in text and f"does not end with {SUFFIX[command]}" in text, text
    assert not target.exists() and tree_digest(games) == before


@pytest.mark.parametrize("name", ["page.htm", "PAGE.HTML"])
def test_export_accepts_both_html_suffixes_in_any_case(
    name: str, played: tuple[Path, Path], tmp_path: Path
) -> None:
    games, archive = played
    code, text = output("export", games, archive, tmp_path / name)
    assert code == 0, text
