"""Seats: who a request speaks for, by capability links (docs/service.md).

A game has one referee seat and one seat per player. Each seat is opened by a bearer token: 32
random bytes, URL-safe base64, handed out once as a link (``/player/GAME#token=T``). Only the
token's SHA-256 (hex) is kept, beside the log as one of the game's secrets (in a file store
``GAME.seats``, mode 0600; in PostgreSQL the store's ``secrets`` table), so reading the store never
gives anyone a seat. A token is recognised by comparing its hash with every stored hash in
constant time (:func:`identify`); a seat whose link is lost is given a new token (:func:`reissue`),
which ends the old one.

Tokens are secrets: nothing here logs them or puts them in an error message, and
:class:`IssuedSeats` hides them from ``repr`` so a stray log line or traceback cannot show them.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Literal
from urllib.parse import quote

import msgspec

from mortecouille.app.commands import secret_text
from mortecouille.app.games import SEATS_SUFFIX, load
from mortecouille.core.errors import BadInput, MortecouilleError
from mortecouille.events.house_log import get_logger
from mortecouille.events.storage.contract import SEATS, EventStore, secrets_of
from mortecouille.events.storage.errors import Conflict
from mortecouille.events.storage.file_log import GameLog

log = get_logger("mortecouille")

#: Bytes of randomness in a token: 256 bits, far beyond any search.
TOKEN_BYTES = 32

#: Where ``new`` and ``seats`` point the links when no ``--url`` is given (``serve``'s default).
DEFAULT_BASE_URL = "http://127.0.0.1:8000"

Role = Literal["referee", "player", "spectator"]


class Viewer(msgspec.Struct, frozen=True):
    """Who is looking: the referee, one player (``player`` names them) or a spectator.

    >>> Viewer.of_player("Anne")
    Viewer(role='player', player='Anne')
    >>> SPECTATOR.player is None and REFEREE.role == "referee"
    True
    """

    role: Role
    player: str | None = None

    @classmethod
    def of_player(cls, name: str) -> Viewer:
        """The viewer who holds ``name``'s seat."""
        return cls(role="player", player=name)

    def __post_init__(self) -> None:
        # a player viewer names its player, and only a player viewer does: a view is built from
        # this pair, so an inconsistent one must not exist
        if (self.role == "player") != (self.player is not None):
            raise ValueError(f"a {self.role} viewer {'needs' if self.role == 'player' else 'has no'} player")


SPECTATOR = Viewer(role="spectator")
REFEREE = Viewer(role="referee")


class UnknownToken(MortecouilleError):
    """A token that opens no seat of this game (HTTP 401). The message never quotes the token."""

    exit_code = 2

    def __init__(self, game: str) -> None:
        super().__init__("token: not a seat token of game {game!r}", field="token", game=game)


class IssuedSeats(msgspec.Struct, frozen=True, kw_only=True):
    """Tokens just issued, shown once: the referee's (None when not reissued) and each player's."""

    referee: str | None = None
    players: dict[str, str] = {}

    def __repr__(self) -> str:
        # tokens are bearer secrets: a repr that reaches a log or a traceback names seats only
        return f"IssuedSeats(referee={'<token>' if self.referee else None}, players={sorted(self.players)})"


class SeatLinks(msgspec.Struct, frozen=True, kw_only=True):
    """The links of a game's seats: the table's (no token), the referee's and each player's."""

    table: str
    referee: str | None = None
    players: dict[str, str] = {}


class SeatHashes(msgspec.Struct, frozen=True, kw_only=True):
    """What ``GAME.seats`` holds: the SHA-256 (hex) of each seat's token, never a token."""

    referee: str | None = None
    players: dict[str, str] = {}


# --- tokens and their hashes -------------------------------------------------------------------


def new_token() -> str:
    """A fresh token: 32 random bytes, URL-safe base64 (43 characters, no padding)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> str:
    """The SHA-256 (hex) kept on disk for ``token``. Unsalted on purpose: a token is 256 random
    bits, so no table or search applies, and identifying must not need to know the seat first."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


# --- the seats file ---------------------------------------------------------------------------


def seats_path(log_: GameLog) -> Path:
    """Where a file store keeps a game's seats
    (:class:`~mortecouille.events.storage.contract.FileSecrets`)."""
    return log_.sibling(SEATS_SUFFIX)


def read_seats(log_: EventStore) -> SeatHashes | None:
    """The stored hashes, or None for a game without seats (created before seats existed).

    Never read through a symbolic link: a link planted where the seats go is refused."""
    text = secret_text(log_, SEATS, "seats")
    if text is None:
        return None
    try:
        return msgspec.json.decode(text, type=SeatHashes)
    except msgspec.DecodeError as error:
        where = secrets_of(log_).where(SEATS)
        raise BadInput(
            "seats", "{where} is not a seats file: {error}", where=where, error=str(error)
        ) from None


def _encode(hashes: SeatHashes) -> bytes:
    return msgspec.json.encode(hashes) + b"\n"


def _replace_seats(log_: EventStore, hashes: SeatHashes) -> None:
    """Replace the seats atomically (a file: a temporary file written and fsync'd, then renamed
    over it), so a crash leaves the old seats or the new ones, never a mix. Called under the
    game's lock."""
    secrets_of(log_).replace(SEATS, _encode(hashes))


# --- issuing and recognising tokens -------------------------------------------------------------


def _players_of(log_: EventStore) -> tuple[str, ...]:
    return load(log_)[1].players


def refuse_leftover_seats(log_: EventStore) -> None:
    """Refuse (Conflict) to create a game whose seats file is already there, left by a game of the
    same name that was removed, or a link: checked before the game is created, so ``new`` then
    :func:`issue_seats` never leaves a game without seats over a stale file. (In PostgreSQL a
    secret cannot outlive its game: its row references the game's.)"""
    files = log_.as_files()
    if files is not None and secrets_of(log_).exists(SEATS):
        raise Conflict(
            f"{seats_path(files)} already exists (seats left without their game, or a link): remove it first"
        )


def issue_seats(log_: EventStore, players: Sequence[str] | None = None) -> IssuedSeats:
    """Issue the referee's token and one token per player (by default every player of the game;
    ``players`` must be some of them) for a game that has no seats yet, and keep their hashes in
    ``GAME.seats`` (created exclusively: a game's seats are issued once; later, :func:`reissue`)."""
    with log_.transaction():
        names = _players_of(log_)
        if players is not None:
            strangers = [name for name in players if name not in names]
            if strangers:
                raise BadInput(
                    "player", "{player!r} is not a player of {game!r}", player=strangers[0], game=log_.name
                )
            names = tuple(players)
        issued = IssuedSeats(referee=new_token(), players={name: new_token() for name in names})
        secrets_of(log_).create(SEATS, _encode(_hashes_of(issued)))
    log.info("seats issued", game=log_.name, players=len(names))
    return issued


def _hashes_of(issued: IssuedSeats) -> SeatHashes:
    return SeatHashes(
        referee=token_hash(issued.referee) if issued.referee is not None else None,
        players={name: token_hash(token) for name, token in issued.players.items()},
    )


def _seat_named(log_: EventStore, who: Viewer | str) -> Viewer:
    """The seat ``who`` names: a Viewer, or a player's exact name (``"referee"``, when no player
    is called so, is the referee's seat)."""
    players = _players_of(log_)
    if isinstance(who, str):
        if who in players:
            return Viewer.of_player(who)
        if who == "referee":
            return REFEREE
        raise BadInput(
            "player",
            "{who!r} is not a player of {game!r} (players: {players})",
            who=who,
            game=log_.name,
            players=", ".join(players),
        )
    if who.role == "spectator":
        raise BadInput("player", "a spectator has no seat: the table link needs no token")
    if who.player is not None and who.player not in players:
        raise BadInput("player", "{player!r} is not a player of {game!r}", player=who.player, game=log_.name)
    return who


def reissue(log_: EventStore, who: Viewer | str) -> str:
    """A new token for one seat (a player by exact name or Viewer, or :data:`REFEREE`); the old
    token stops working at once. A game without seats gets a seats file holding this one seat."""
    with log_.transaction():
        seat = _seat_named(log_, who)
        token = new_token()
        before = read_seats(log_) or SeatHashes()
        if seat.player is None:
            after = SeatHashes(referee=token_hash(token), players=before.players)
        else:
            players = {**before.players, seat.player: token_hash(token)}
            after = SeatHashes(referee=before.referee, players=players)
        _replace_seats(log_, after)
    log.info("seat reissued", game=log_.name, role=seat.role, player=seat.player)
    return token


def reissue_all(log_: EventStore) -> IssuedSeats:
    """New tokens for every seat, the referee's and each player's; every old token stops working.
    Also how a game created before seats existed gets its seats."""
    with log_.transaction():
        players = _players_of(log_)
        issued = IssuedSeats(referee=new_token(), players={name: new_token() for name in players})
        _replace_seats(log_, _hashes_of(issued))
    log.info("seats reissued", game=log_.name, players=len(players))
    return issued


def identify(log_: EventStore, token: str) -> Viewer:
    """The viewer whose seat ``token`` opens, or :class:`UnknownToken`.

    The token's hash is compared with every stored hash, each in constant time and without
    stopping at a match, so the time taken says nothing about which seat (if any) matched. A game
    without seats has no valid token.

    >>> import tempfile; from pathlib import Path
    >>> from mortecouille.app.commands import new_game
    >>> from mortecouille.events.board import Board
    >>> game = GameLog(Path(tempfile.mkdtemp()) / "harbour.jsonl")
    >>> _ = new_game(game, players=["Anne", "Bart"], ruleset="blockade", budget=0,
    ...              board=Board(width=8, height=8), dice_mode="table", seed=None)
    >>> issued = issue_seats(game)
    >>> identify(game, issued.players["Bart"])
    Viewer(role='player', player='Bart')
    >>> identify(game, issued.referee or "")
    Viewer(role='referee', player=None)
    >>> identify(game, "guess")
    Traceback (most recent call last):
    ...
    mortecouille.app.seats.UnknownToken: token: not a seat token of game 'harbour'
    """
    found = seat_of(read_seats(log_), token_hash(token))
    if found is None or not token:
        raise UnknownToken(log_.name)
    return found


def seat_of(hashes: SeatHashes | None, presented: str) -> Viewer | None:
    """The seat whose stored hash is ``presented`` (a token's :func:`token_hash`), or None; what
    :func:`identify` decides, and what a stream opened with a token checks again later (a new link
    ends the old one). Every stored hash is compared, each in constant time, without stopping at
    a match. A game without seats (``hashes`` None) has none."""
    if hashes is None:
        return None
    digest = presented.encode()
    candidates: list[tuple[Viewer, str | None]] = [(REFEREE, hashes.referee)]
    candidates += [(Viewer.of_player(name), stored) for name, stored in hashes.players.items()]
    found: Viewer | None = None
    for viewer, stored in candidates:
        # the referee's hash may be absent (a seats file made by one reissue): compared anyway,
        # against a value no hash equals, so every seat costs one comparison
        if hmac.compare_digest(digest, (stored or "-" * 64).encode()) and found is None:
            found = viewer
    return found


# --- links and QR codes ------------------------------------------------------------------------


def seat_links(base_url: str, game: str, issued: IssuedSeats) -> SeatLinks:
    """The links of ``issued``: ``/referee/GAME#token=T``, ``/player/GAME#token=T``, and the
    table's ``/table/GAME``. The token goes in the fragment, which browsers never send to a
    server nor put in a Referer header; never in a query string.

    >>> issued = IssuedSeats(referee="R", players={"Anne": "A"})
    >>> links = seat_links("http://127.0.0.1:8000/", "le port", issued)
    >>> links.table, links.referee, links.players["Anne"]
    ('http://127.0.0.1:8000/table/le%20port', 'http://127.0.0.1:8000/referee/le%20port#token=R', \
'http://127.0.0.1:8000/player/le%20port#token=A')
    """
    base = base_url.rstrip("/")
    name = quote(game, safe="")
    return SeatLinks(
        table=f"{base}/table/{name}",
        referee=f"{base}/referee/{name}#token={issued.referee}" if issued.referee is not None else None,
        players={player: f"{base}/player/{name}#token={token}" for player, token in issued.players.items()},
    )


def qr_svg(link: str) -> str:
    """``link`` as a QR code, an SVG element safe to inline in HTML (no XML declaration; the link
    is not repeated as text, since a seat link is a secret)."""
    import segno  # only the pages and the console draw codes

    svg: str = segno.make(link, error="m").svg_inline(scale=4, dark="#000", light="#fff")
    return svg


def qr_text(link: str) -> str:
    """``link`` as a QR code drawn with terminal characters (two rows of modules per line)."""
    import io

    import segno

    out = io.StringIO()
    segno.make(link, error="m").terminal(out=out, compact=True)
    return out.getvalue()
