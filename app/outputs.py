"""Writing a file at a path the user named (``render --svg``, ``export --html``, ``report --svg``).

One helper for every output command, so that none of them can be pointed at what it must not touch:

* a name whose suffix is not the format's (``render --svg x.png``) is refused: the file would hold
  something else than its name says, and a viewer would fail on it;
* an existing file is refused unless ``force`` (a typo must not destroy a file);
* the games directory's logs, head anchors, seeds and lock files are refused even with ``force``:
  an output that lands on ``GAME.jsonl`` would destroy the game;
* a symlink is refused: writing through it would reach a file the path does not name;
* the bytes go to a temporary file in the same directory, which is then renamed onto the path, so
  a reader never sees half a file and a hard link to the old file keeps the old bytes. Without
  ``force`` the rename is a ``link``, which fails if something appeared at the path meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from mortecouille.core.errors import BadInput
from mortecouille.core.limits import GAME_FILE_SUFFIXES

#: The suffixes an SVG picture's name may end with (compared case-insensitively).
SVG_SUFFIXES = (".svg",)

#: The suffixes an HTML page's name may end with (compared case-insensitively).
HTML_SUFFIXES = (".html", ".htm")

#: Permissions of an output file (mkstemp's 0600 would hide a picture from its readers).
OUTPUT_MODE = 0o644


def _real(path: Path) -> Path:
    """``path`` with its directory resolved (symlinked folders followed) but not its last part."""
    return path.parent.resolve() / path.name


def check_output(path: Path, option: str, games: Path | None, force: bool, suffixes: tuple[str, ...]) -> None:
    """Refuse ``path`` as an output (BadInput naming ``option``) unless it may be written.

    ``suffixes`` are the names the format allows (:data:`SVG_SUFFIXES`, :data:`HTML_SUFFIXES`)."""
    target = _real(path)
    if games is not None and target.suffix in GAME_FILE_SUFFIXES and target.parent == games.resolve():
        raise BadInput(
            option,
            "{path} is a file of the games directory {games}: choose another path",
            path=path,
            games=games,
        )
    if path.is_symlink():
        raise BadInput(
            option, "{path} is a symbolic link: outputs are never written through links", path=path
        )
    if path.is_dir():
        raise BadInput(option, "{path} is a directory", path=path)
    if path.exists() and not force:
        raise BadInput(option, "{path} already exists: pass --force to replace it", path=path)
    if path.suffix.lower() not in suffixes:
        wanted, kind = " or ".join(suffixes), suffixes[0][1:].upper()
        raise BadInput(
            option,
            "{path} does not end with {wanted}: this option writes {kind} only",
            path=path,
            wanted=wanted,
            kind=kind,
        )


def write_output(
    path: Path,
    data: str | bytes | Iterable[str],
    option: str,
    games: Path | None,
    force: bool,
    suffixes: tuple[str, ...],
) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` after :func:`check_output`, atomically.
    ``data`` may come in consecutive text parts (a big page need not be held whole)."""
    check_output(path, option, games, force, suffixes)
    parts = (data,) if isinstance(data, str | bytes) else data
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise BadInput(
            option, "cannot write {path}: {strerror}", path=path, strerror=error.strerror
        ) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            for part in parts:
                handle.write(part.encode("utf-8") if isinstance(part, str) else part)
            handle.flush()
            os.fchmod(handle.fileno(), OUTPUT_MODE)
            os.fsync(handle.fileno())
        if force:
            os.replace(temporary, path)  # replaces a file or a link itself, never what it points to
        else:
            os.link(temporary, path)  # atomic and never replaces: fails if the path exists by now
    except FileExistsError:
        raise BadInput(option, "{path} already exists: pass --force to replace it", path=path) from None
    except OSError as error:
        raise BadInput(
            option, "cannot write {path}: {strerror}", path=path, strerror=error.strerror
        ) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
