"""The pages (HTML) and their static files, served as they are."""

from __future__ import annotations

from pathlib import Path

from litestar import Controller, get
from litestar.params import FromPath
from litestar.response import File

from mortecouille.events.storage.errors import GameNotFound

#: Where the pages are (another part of the project writes them; the service only serves them).
PAGES = Path(__file__).parent.parent / "pages"
#: The kinds of file the pages' static folder serves, each with the type a browser must be told.
STATIC_MEDIA_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}


def page(name: str) -> File:
    """The page ``name``, or 404 when the pages are not installed."""
    path = PAGES / name
    if not path.is_file():
        raise GameNotFound(f"no page {name!r}: the pages are not installed")
    return File(path, content_disposition_type="inline", media_type="text/html")


class PagesController(Controller):
    path = "/"
    tags = ["pages"]

    @get("/", sync_to_thread=False, media_type="text/html")
    def index_page(self) -> File:
        """The games list."""
        return page("index.html")

    @get("/table/{game:str}", sync_to_thread=False, media_type="text/html")
    def table_page(self, game: FromPath[str]) -> File:
        """The table's page: the board everyone sees."""
        return page("table.html")

    @get("/player/{game:str}", sync_to_thread=False, media_type="text/html")
    def player_page(self, game: FromPath[str]) -> File:
        """A player's page (its token in the link's fragment)."""
        return page("player.html")

    @get("/referee/{game:str}", sync_to_thread=False, media_type="text/html")
    def referee_page(self, game: FromPath[str]) -> File:
        """The referee's page (its token in the link's fragment)."""
        return page("referee.html")

    @get("/static/{path:path}", sync_to_thread=False)
    def static(self, path: FromPath[str]) -> File:
        """A script, style sheet or picture of the pages."""
        root = (PAGES / "static").resolve()
        try:
            target = (root / path.lstrip("/")).resolve()
            found = root in target.parents and target.is_file()
        except (ValueError, OSError):  # a NUL byte, a name too long for the file system: no such file
            found = False
        if not found or (media_type := STATIC_MEDIA_TYPES.get(target.suffix)) is None:
            raise GameNotFound(f"no file {path!r}")
        # named explicitly: with nosniff, a script sent as octet-stream is refused by the browser
        return File(target, content_disposition_type="inline", media_type=media_type)
