"""Seats: capability tokens, kept as hashes only, compared in constant time,
replaced by reissuing; and the links ``new`` and ``seats`` print."""

from __future__ import annotations

import base64
import contextlib
import doctest
import hmac
import logging
import os
import re
import stat
from pathlib import Path

import pytest
import structlog.testing

from mortecouille.app import seats as seats_module
from mortecouille.app.commands import new_game
from mortecouille.app.seats import (
    REFEREE,
    SPECTATOR,
    IssuedSeats,
    UnknownToken,
    Viewer,
    identify,
    issue_seats,
    qr_svg,
    read_seats,
    reissue,
    reissue_all,
    seat_links,
    seats_path,
)
from mortecouille.core.errors import BadInput
from mortecouille.events.board import Board
from mortecouille.events.storage.errors import Conflict
from mortecouille.events.storage.file_log import GameLog
from tests.cli_helpers import ok, run


def a_game(directory: Path, name: str = "harbour", players: tuple[str, ...] = ("Anne", "Bart")) -> GameLog:
    log_ = GameLog(directory / f"{name}.jsonl")
    new_game(
        log_, players=players, ruleset="blockade", budget=0, board=Board(width=8, height=8),
        dice_mode="table", seed=None,
    )  # fmt: skip
    return log_


def test_a_token_is_256_random_bits_in_url_safe_base64(tmp_path: Path) -> None:
    issued = issue_seats(a_game(tmp_path))
    tokens = [issued.referee, *issued.players.values()]
    for token in tokens:
        assert token is not None and re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
        assert len(base64.urlsafe_b64decode(token + "=")) == 32
    assert len(set(tokens)) == 3


def test_the_seats_file_holds_hashes_only_owner_readable(tmp_path: Path) -> None:
    log_ = a_game(tmp_path)
    issued = issue_seats(log_)
    data = seats_path(log_).read_text()
    assert stat.S_IMODE(os.stat(seats_path(log_)).st_mode) == 0o600
    for token in [issued.referee, *issued.players.values()]:
        assert token is not None and token not in data
    assert set(re.findall(r"[0-9a-f]{64}", data)) and len(re.findall(r"[0-9a-f]{64}", data)) == 3


def test_each_token_opens_its_own_seat(tmp_path: Path) -> None:
    log_ = a_game(tmp_path)
    issued = issue_seats(log_)
    assert identify(log_, issued.referee or "") == REFEREE
    assert identify(log_, issued.players["Anne"]) == Viewer.of_player("Anne")
    assert identify(log_, issued.players["Bart"]) == Viewer(role="player", player="Bart")


@pytest.mark.parametrize("token", ["", "guess", "A" * 43, "x" * 10_000])
def test_an_unknown_or_empty_token_opens_nothing_and_is_never_quoted(tmp_path: Path, token: str) -> None:
    log_ = a_game(tmp_path)
    issue_seats(log_)
    with pytest.raises(UnknownToken) as refused:
        identify(log_, token)
    assert token not in str(refused.value) or token == ""
    assert "harbour" in str(refused.value)


def test_another_games_token_opens_nothing(tmp_path: Path) -> None:
    mine, theirs = a_game(tmp_path, "mine"), a_game(tmp_path, "theirs")
    issue_seats(mine)
    other = issue_seats(theirs)
    for token in [other.referee, *other.players.values()]:
        with pytest.raises(UnknownToken):
            identify(mine, token or "")


def test_a_game_without_seats_takes_no_token(tmp_path: Path) -> None:
    log_ = a_game(tmp_path)
    assert read_seats(log_) is None
    with pytest.raises(UnknownToken):
        identify(log_, "anything")


def test_identify_compares_with_every_stored_hash_in_constant_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whichever token comes, matching the first seat, the last or none, each stored hash is
    compared once, with hmac.compare_digest: no early exit tells which seat matched."""
    log_ = a_game(tmp_path, players=("Anne", "Bart", "Carl"))
    issued = issue_seats(log_)
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", counting)
    for token in [issued.referee or "", issued.players["Carl"], "unknown"]:
        calls.clear()
        with contextlib.suppress(UnknownToken):
            identify(log_, token)
        assert len(calls) == 4  # the referee and three players
        assert len({b for _, b in calls}) == 4


def test_reissuing_a_seat_ends_its_old_token_only(tmp_path: Path) -> None:
    log_ = a_game(tmp_path)
    issued = issue_seats(log_)
    new_anne = reissue(log_, "Anne")
    with pytest.raises(UnknownToken):
        identify(log_, issued.players["Anne"])
    assert identify(log_, new_anne) == Viewer.of_player("Anne")
    assert identify(log_, issued.players["Bart"]) == Viewer.of_player("Bart")
    assert identify(log_, issued.referee or "") == REFEREE
    new_referee = reissue(log_, REFEREE)
    with pytest.raises(UnknownToken):
        identify(log_, issued.referee or "")
    assert identify(log_, new_referee) == REFEREE
    assert stat.S_IMODE(os.stat(seats_path(log_)).st_mode) == 0o600
    assert not log_.sibling(".seats-new").exists()


def test_reissuing_every_seat_also_seats_a_game_created_before_seats(tmp_path: Path) -> None:
    log_ = a_game(tmp_path)
    issued = reissue_all(log_)
    assert identify(log_, issued.players["Bart"]) == Viewer.of_player("Bart")
    again = reissue_all(log_)
    for token in [issued.referee, *issued.players.values()]:
        with pytest.raises(UnknownToken):
            identify(log_, token or "")
    assert identify(log_, again.referee or "") == REFEREE


def test_seats_are_issued_once_and_for_players_only(tmp_path: Path) -> None:
    log_ = a_game(tmp_path)
    issue_seats(log_)
    before = seats_path(log_).read_bytes()
    with pytest.raises(Conflict):
        issue_seats(log_)
    with pytest.raises(BadInput, match="player: 'Zed'"):
        reissue(log_, "Zed")
    with pytest.raises(BadInput, match="^player: "):
        reissue(log_, SPECTATOR)
    assert seats_path(log_).read_bytes() == before


def test_player_names_match_exactly(tmp_path: Path) -> None:
    log_ = a_game(tmp_path)
    with pytest.raises(BadInput, match="'anne'"):
        issue_seats(log_, ["Anne", "anne"])
    with pytest.raises(BadInput, match="'anne'"):
        reissue(log_, "anne")
    assert read_seats(log_) is None


def test_a_link_planted_where_the_seats_go_is_never_followed(tmp_path: Path) -> None:
    log_ = a_game(tmp_path)
    target = tmp_path / "elsewhere"
    target.write_text("untouched")
    seats_path(log_).symlink_to(target)
    with pytest.raises(Conflict):
        issue_seats(log_)
    with pytest.raises(BadInput, match="symbolic link"):
        identify(log_, "anything")
    assert target.read_text() == "untouched"


def test_tokens_stay_out_of_reprs_and_log_lines(tmp_path: Path) -> None:
    log_ = a_game(tmp_path)
    config = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    try:
        with structlog.testing.capture_logs() as logged:
            issued = issue_seats(log_)
            token = reissue(log_, "Anne")
            reissue_all(log_)
    finally:
        structlog.configure(**config)
    secrets = [issued.referee or "", *issued.players.values(), token]
    assert logged and not any(secret in repr(logged) for secret in secrets)
    assert not any(secret in repr(issued) for secret in secrets)


def test_links_carry_the_token_in_the_fragment_and_quote_the_game() -> None:
    links = seat_links("http://table:8000/", "a b#c", IssuedSeats(referee="R1", players={"Anne": "T1"}))
    assert links.table == "http://table:8000/table/a%20b%23c"
    assert links.referee == "http://table:8000/referee/a%20b%23c#token=R1"
    assert links.players == {"Anne": "http://table:8000/player/a%20b%23c#token=T1"}
    assert all("?" not in link for link in [links.referee, *links.players.values()])


def test_a_qr_code_is_an_inline_svg_without_the_link_as_text() -> None:
    link = "http://127.0.0.1:8000/player/g#token=" + "x" * 43
    svg = qr_svg(link)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "<?xml" not in svg and "token" not in svg


def test_the_examples_of_seats_run() -> None:
    with structlog.testing.capture_logs():
        result = doctest.testmod(seats_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# --- the command line ------------------------------------------------------------------------


def test_new_prints_the_seat_links_once_as_secrets(games: Path) -> None:
    output = ok(games, "new", "duel", "--players", "Anne,Bart", "--budget", "100000", "--url", "http://t:9/")
    assert re.search(r"^created duel \(mortecouille, seeded dice\)", output, re.M)
    assert "secrets, shown once" in output
    referee = re.search(r"^  referee +(http://t:9/referee/duel#token=(\S+))$", output, re.M)
    anne = re.search(r"^  Anne +http://t:9/player/duel#token=(\S+)$", output, re.M)
    bart = re.search(r"^  Bart +http://t:9/player/duel#token=(\S+)$", output, re.M)
    assert referee and anne and bart and "http://t:9/table/duel" in output
    log_ = GameLog(games / "duel.jsonl")
    assert identify(log_, referee.group(2)) == REFEREE
    assert identify(log_, anne.group(1)) == Viewer.of_player("Anne")
    assert identify(log_, bart.group(1)) == Viewer.of_player("Bart")


def test_new_refuses_leftover_seats_before_creating_anything(games: Path) -> None:
    games.mkdir()
    (games / "duel.seats").write_text("{}")
    result = run(games, "new", "duel", "--players", "Anne,Bart")
    assert result.exit_code == 3 and "duel.seats" in result.output
    assert not (games / "duel.jsonl").exists()


def test_seats_reissue_prints_new_links_that_end_the_old_ones(games: Path) -> None:
    first = ok(games, "new", "duel", "--players", "Anne,Bart", "--ruleset", "blockade")
    old_anne = re.search(r"player/duel#token=(\S+)", first)
    assert old_anne
    output = ok(games, "seats", "duel", "--reissue", "Anne")
    new_anne = re.search(r"^  Anne +http://127.0.0.1:8000/player/duel#token=(\S+)$", output, re.M)
    assert new_anne and "referee" not in output.split("\n", 1)[1].split("table")[0]
    log_ = GameLog(games / "duel.jsonl")
    assert identify(log_, new_anne.group(1)) == Viewer.of_player("Anne")
    with pytest.raises(UnknownToken):
        identify(log_, old_anne.group(1))
    everyone = ok(games, "seats", "duel", "--reissue", "all", "--qr")
    assert everyone.count("#token=") == 3 and "█" in everyone
    listing = ok(games, "seats", "duel")
    assert "Anne: has a link" in listing and "#token=" not in listing


def test_seats_reissue_all_seats_an_old_game(games: Path) -> None:
    a_game(games, "old")
    assert "no seats yet" in ok(games, "seats", "old")
    output = ok(games, "seats", "old", "--reissue", "all")
    assert output.count("#token=") == 3


def test_a_refused_reissue_changes_no_file(games: Path) -> None:
    ok(games, "new", "duel", "--players", "Anne,Bart", "--ruleset", "blockade")
    before = (games / "duel.seats").read_bytes()
    result = run(games, "seats", "duel", "--reissue", "Zed")
    assert result.exit_code == 2 and "PLAYER: 'Zed'" in result.output
    assert (games / "duel.seats").read_bytes() == before
