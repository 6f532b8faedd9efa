"""uvicorn's access log without query strings: the ``serve`` command installs it in its process,
and each worker of ``serve --workers N`` in its own (:func:`hide_query_strings`). Only ``logging``
here, so the command can name it without loading the web framework."""

from __future__ import annotations

import logging


class NoQueryAccessLog(logging.Filter):
    """uvicorn's access log lines without their query strings (``?seq=`` is harmless, but a
    client that put a token in a URL must not find it in a log) and never a header."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and len(record.args) >= 3:
            args = list(record.args)
            args[2] = str(args[2]).split("?", 1)[0]
            record.args = tuple(args)
        return True


def hide_query_strings() -> None:
    """Have uvicorn's access log (if on) write paths without their query strings (once)."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(existing, NoQueryAccessLog) for existing in access.filters):
        access.addFilter(NoQueryAccessLog())
