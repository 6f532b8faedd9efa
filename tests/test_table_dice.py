"""Table dice are shown, each named, and confirmed before a resolve writes them (D1)."""

from __future__ import annotations

from pathlib import Path

from tests.cli_helpers import run, tree_digest
from tests.forgery import log_bodies
from tests.test_mortecouille_cli import set_up


def ready(games: Path) -> Path:
    set_up(games, dice="table")
    for ship in ("Hope", "Black Pearl", "Kraken"):
        assert run(games, "order", "g", ship, "idle").exit_code == 0
    return games


def rolls(games: Path) -> list[object]:
    return [e["value"] for e in log_bodies(games / "g.jsonl") if e["type"] == "die-rolled"]


def test_table_dice_are_shown_named_and_a_no_writes_nothing(games: Path) -> None:
    ready(games)
    before = tree_digest(games)
    refused = run(games, "resolve", "g", "--dice", "3,4,5", "--no-prompt", input="n\n")
    assert refused.exit_code == 1, refused.output
    for named in ("Black Pearl, wind, 1d6: 3", "Hope, wind, 1d6: 4", "Kraken, wind, 1d6: 5"):
        assert named in refused.output
    assert "nothing written" in refused.output and "Traceback" not in refused.output
    assert tree_digest(games) == before


def test_table_dice_typed_at_the_prompt_are_confirmed_before_writing(games: Path) -> None:
    ready(games)
    before = tree_digest(games)
    refused = run(games, "resolve", "g", "--prompt", input="2\n6\n1\nn\n")
    assert refused.exit_code == 1 and "Kraken, wind, 1d6: 1" in refused.output
    assert tree_digest(games) == before
    done = run(games, "resolve", "g", "--prompt", input="2\n6\n1\ny\n")
    assert done.exit_code == 0, done.output
    assert rolls(games) == [2, 6, 1]


def test_interrupting_the_table_dice_confirmation_writes_nothing(games: Path) -> None:
    ready(games)
    before = tree_digest(games)
    # end of input at the question stands for Ctrl-C: click aborts the same way (exit 1)
    stopped = run(games, "resolve", "g", "--dice", "3,4,5", "--no-prompt", input="")
    assert stopped.exit_code == 1 and "Traceback" not in stopped.output
    assert tree_digest(games) == before


def test_yes_writes_table_dice_without_asking(games: Path) -> None:
    ready(games)
    done = run(games, "resolve", "g", "--dice", "3,4,5", "--no-prompt", "--yes")
    assert done.exit_code == 0, done.output
    assert "write these dice?" not in done.output
    assert rolls(games) == [3, 4, 5]
    assert run(games, "verify", "g").exit_code == 0


def test_seeded_games_are_not_asked_to_confirm(games: Path) -> None:
    set_up(games)
    for ship in ("Hope", "Black Pearl", "Kraken"):
        assert run(games, "order", "g", ship, "idle").exit_code == 0
    done = run(games, "resolve", "g", input="")
    assert done.exit_code == 0 and "write these dice?" not in done.output
