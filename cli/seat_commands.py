"""``seats``: a game's seat links, issued anew (docs/service.md, "Roles").

A seat link is a bearer secret shown once: only its hash is kept, so a lost link is never shown
again but replaced (``--reissue``), which ends the old one. ``new`` prints the links of a new
game with :func:`seat_link_lines` too.
"""

from __future__ import annotations

import click

from mortecouille.app.games import game_log, load
from mortecouille.app.seats import (
    DEFAULT_BASE_URL,
    REFEREE,
    IssuedSeats,
    SeatLinks,
    Viewer,
    qr_text,
    read_seats,
    reissue,
    reissue_all,
    seat_links,
)
from mortecouille.cli.shared import Context, echo_lines, pass_context, reports_errors
from mortecouille.core.life_cycle import player_typed
from mortecouille.core.limits import name_key, names_matching, shown

URL_HELP = f"The service's address the links start with (default {DEFAULT_BASE_URL})."


def seat_link_lines(links: SeatLinks, game: str) -> list[str]:
    """The links as the referee reads them: a warning that they are secrets shown once, the
    referee's, one per player, and the table's (no token)."""
    width = max((len(shown(p)) for p in links.players), default=0)
    width = max(width, len("referee"))
    lines = [
        "seat links: secrets, shown once (anyone holding one plays that seat); "
        f"a lost one is replaced with `mortecouille seats {shown(game)} --reissue PLAYER`"
    ]
    if links.referee is not None:
        lines.append(f"  {'referee':<{width}}  {links.referee}")
    lines += [f"  {shown(player):<{width}}  {link}" for player, link in links.players.items()]
    lines.append(f"  {'table':<{width}}  {links.table}  (no token: anyone may watch)")
    return lines


def qr_lines(links: SeatLinks) -> list[str]:
    """Each seat link as a terminal QR code under the seat's name, for phones to scan."""
    lines: list[str] = []
    seats = [("referee", links.referee)] if links.referee is not None else []
    seats += list(links.players.items())
    for name, link in seats:
        assert link is not None
        lines += [shown(name), *qr_text(link).rstrip("\n").splitlines()]
    return lines


@click.command()
@click.argument("game")
@click.option(
    "--reissue",
    "who",
    metavar="PLAYER|referee|all",
    default=None,
    help="Issue a new link for a player's seat (case aside), the referee's, or every seat; the old "
    "one stops working. Also gives seats to a game created before seats existed (all). "
    "'referee' and 'all' as written name those seats even when a player has that name; such a "
    "player is named in another case ('Referee').",
)
@click.option("--url", "base_url", default=DEFAULT_BASE_URL, show_default=True, help=URL_HELP)
@click.option("--qr", is_flag=True, help="Also draw each new link as a QR code in the terminal.")
@pass_context
@reports_errors
def seats(ctx: Context, game: str, who: str | None, base_url: str, qr: bool) -> None:
    """GAME's seats: without --reissue, which seats have a link (a link is shown only when issued)."""
    log_ = game_log(ctx.store, game)
    if who is None:
        players = load(log_)[1].players
        stored = read_seats(log_)
        links = seat_links(base_url, game, IssuedSeats())
        if stored is None:
            lines = [f"{shown(game)} has no seats yet: `mortecouille seats {shown(game)} --reissue all`"]
        else:
            lines = ["referee: " + ("has a link" if stored.referee else "no link")]
            lines += [f"{shown(p)}: " + ("has a link" if p in stored.players else "no link") for p in players]
        echo_lines([*lines, f"table: {links.table}"])
        return
    seat = _seat_typed(load(log_)[1].players, who)
    if isinstance(seat, Viewer) and seat.player is not None:
        issued = IssuedSeats(players={seat.player: reissue(log_, seat)})
    elif isinstance(seat, Viewer):
        issued = IssuedSeats(referee=reissue(log_, REFEREE))
    elif seat == "all":
        issued = reissue_all(log_)
    else:  # nobody's name: refused by reissue, naming PLAYER
        issued = IssuedSeats(players={seat: reissue(log_, seat)})
    links = seat_links(base_url, game, issued)
    lines = seat_link_lines(links, game)
    echo_lines([*lines, *qr_lines(links)] if qr else lines)


def _seat_typed(players: tuple[str, ...], who: str) -> Viewer | str:
    """The seat ``--reissue`` names, as the other commands read a player's name: ``all``, or the
    referee's seat (:data:`REFEREE`) for ``referee``, as written (whatever the players are called);
    a player's seat for their exact name, else for the one player it names case and spacing aside
    (a player called ``referee`` is ``Referee``); else ``all`` or the referee's in any case;
    anything else as typed, for :func:`reissue` to refuse naming PLAYER."""
    if who == "all":
        return who
    if who == "referee":
        return REFEREE
    named = player_typed(players, who)
    if named in players:
        return Viewer.of_player(named)
    if names_matching(who, players):
        return who  # a name matching several players: refused by reissue
    folded = name_key(who)
    if folded == "all":
        return folded
    return REFEREE if folded == "referee" else who


COMMANDS: tuple[click.Command, ...] = (seats,)
