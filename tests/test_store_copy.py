"""Whole games between stores: ``store copy`` both ways and ``export-log``
keep every byte and hash, the head, the secret seed and the seat hashes; a game already at the
target, or a corrupt one, is refused by name with nothing written for it. Every golden log, of
every generation, goes to PostgreSQL and back byte for byte, and verifies on both sides.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mortecouille.app.games import game_log, open_games
from mortecouille.cli.main import cli
from mortecouille.events.storage.contract import SEATS, SEED, secrets_of
from tests.cli_helpers import tree_digest
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.postgres

GOLDEN = Path(__file__).parent / "golden"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def postgres(request: pytest.FixtureRequest) -> str:
    """A fresh schema of the session's cluster, as a store URL."""
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return f"{server.url}?schema=copy_{uuid.uuid4().hex[:12]}"


def golden_folder(tmp_path: Path, generation: str = "") -> Path:
    """A copy of the golden logs of one generation (their logs and head anchors)."""
    folder = tmp_path / f"golden{generation.replace('/', '_')}"
    folder.mkdir()
    for path in (GOLDEN / generation).glob("*.jsonl"):
        shutil.copy(path, folder / path.name)
        shutil.copy(path.with_suffix(".head"), folder / path.with_suffix(".head").name)
    return folder


@pytest.mark.parametrize("generation", ["", "before-salt"])
def test_every_golden_log_goes_to_postgres_and_back_byte_for_byte(
    tmp_path: Path, postgres: str, generation: str
) -> None:
    source = golden_folder(tmp_path, generation)
    names = sorted(path.stem for path in source.glob("*.jsonl"))
    there = run("store", "copy", "--from", f"file:{source}", "--to", postgres)
    assert there.exit_code == 0, there.output
    back = tmp_path / "back"
    again = run("store", "copy", "--from", postgres, "--to", f"file:{back}")
    assert again.exit_code == 0, again.output
    for name in names:
        original = (GOLDEN / generation / f"{name}.jsonl").read_bytes()
        exported = run("--store", postgres, "export-log", name)
        assert exported.exit_code == 0, exported.output
        assert exported.stdout_bytes == original, name
        assert (back / f"{name}.jsonl").read_bytes() == original, name
        for store in (f"file:{source}", postgres, f"file:{back}"):
            verified = run("--store", store, "verify", name)
            assert verified.exit_code == 0, (store, name, verified.output)
        # the copy back is anchored: a removed tail would be caught there too
        anchor = run("--store", f"file:{back}", "verify", name)
        assert "head anchor at seq" in anchor.output


def test_a_copy_carries_the_secret_seed_and_the_seats(tmp_path: Path, postgres: str) -> None:
    games = tmp_path / "games"
    made = run("--games-dir", str(games), "new", "g", "--players", "Anne,Bart", "--seed", "a-long-enough-seed")
    assert made.exit_code == 0, made.output
    token = made.output.split("/player/g#token=")[1].split()[0]  # Anne's link comes first
    assert run("store", "copy", "--from", str(games), "--to", postgres, "g").exit_code == 0
    store = open_games(postgres)
    try:
        kept = secrets_of(game_log(store, "g"))
        assert kept.read(SEED) == b"a-long-enough-seed\n"
        assert kept.read(SEATS) == (games / "g.seats").read_bytes()
    finally:
        store.close()
    # the seat works on the copy: its token is recognised, and the game ends revealing its seed
    from mortecouille.app.seats import identify

    store = open_games(postgres)
    try:
        assert identify(game_log(store, "g"), token).player == "Anne"
    finally:
        store.close()
    ended = run("--store", postgres, "end", "g")
    assert ended.exit_code == 0, ended.output
    assert "seed a-long-enough-seed" in ended.output
    back = tmp_path / "back"
    assert run("store", "copy", "--from", postgres, "--to", f"file:{back}").exit_code == 0
    assert (back / "g.seed").read_bytes() == (games / "g.seed").read_bytes()
    assert (back / "g.seed").stat().st_mode & 0o777 == 0o600
    assert (back / "g.seats").read_bytes() == (games / "g.seats").read_bytes()
    assert run("--games-dir", str(back), "verify", "g").exit_code == 0


def test_a_game_at_the_target_is_refused_by_name_and_nothing_is_written(tmp_path: Path, postgres: str) -> None:
    source = golden_folder(tmp_path)
    assert run("store", "copy", "--from", str(source), "--to", postgres, "blockade").exit_code == 0
    before = run("--store", postgres, "export-log", "blockade").stdout_bytes
    result = run("store", "copy", "--from", str(source), "--to", postgres)
    assert result.exit_code == 3
    assert "refused blockade: game 'blockade' already exists" in result.output
    assert run("--store", postgres, "export-log", "blockade").stdout_bytes == before
    # the others were copied
    listed = run("--store", postgres, "games").output
    assert "mortecouille_seeded" in listed
    # and to files: the game's files stay as they were
    (tmp_path / "target").mkdir()
    target = golden_folder(tmp_path / "target")
    digest = tree_digest(target)
    refused = run("store", "copy", "--from", postgres, "--to", f"file:{target}", "blockade")
    assert refused.exit_code == 3
    assert "blockade" in refused.output
    assert tree_digest(target) == digest


def test_a_tampered_log_is_not_copied(tmp_path: Path, postgres: str) -> None:
    source = golden_folder(tmp_path)
    path = source / "blockade.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b'"prev":"', b'"prev":"0', 1)  # an edited line: its chain breaks
    path.write_bytes(b"".join(lines))
    result = run("store", "copy", "--from", str(source), "--to", postgres, "blockade", "mortecouille")
    assert result.exit_code == 4
    assert "refused blockade: corrupt or tampered log" in result.output
    assert "copied mortecouille" in result.output
    missing = run("--store", postgres, "state", "blockade")
    assert missing.exit_code == 2


def test_export_log_writes_a_file_and_refuses_the_stores_own(tmp_path: Path, postgres: str) -> None:
    source = golden_folder(tmp_path)
    out = tmp_path / "out.jsonl"
    written = run("--games-dir", str(source), "export-log", "blockade", "-o", str(out))
    assert written.exit_code == 0, written.output
    assert out.read_bytes() == (GOLDEN / "blockade.jsonl").read_bytes()
    again = run("--games-dir", str(source), "export-log", "blockade", "-o", str(out))
    assert again.exit_code == 2 and "--force" in again.output
    onto_the_log = run("--games-dir", str(source), "export-log", "mortecouille", "-o", str(source / "x.jsonl"))
    assert onto_the_log.exit_code == 2
    assert not (source / "x.jsonl").exists()
