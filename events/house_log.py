"""The house logger, structlog, imported only when something is logged.

Importing structlog costs a command more than its log work (it pulls asyncio, and rich when
installed: about 30 to 140 ms on this project's machines), and most commands log
nothing at the default level. Modules take a :class:`HouseLogger` instead of
``structlog.get_logger``: a call below the configured level returns at once while structlog has
not been imported; any other call imports and configures structlog (as the CLI's ``-v`` and
``--log-json`` asked, :func:`configure`) and hands the call on. Once structlog is imported, by
this module or anyone else (the web service, a test capturing logs), every call goes to it, so
its own configuration (``structlog.testing.capture_logs``) sees everything.
"""

from __future__ import annotations

import sys
from typing import Any

#: what :func:`configure` asked for: the lowest level shown, and JSON lines or a console renderer
_settings: dict[str, Any] = {"level": 30, "json": False, "configured": False}

#: the stdlib's numeric levels (``logging.INFO`` is 20...), spelt out: importing ``logging`` for
#: them would cost a command that logs nothing a few milliseconds more
_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}


def configure(level: int, json_lines: bool) -> None:
    """The CLI's logging: ``level`` and up on stderr, as JSON lines or console text. Applied to
    structlog now if it is imported already, else when it first is (:func:`structlog_module`)."""
    _settings.update(level=level, json=json_lines, configured=True)
    if "structlog" in sys.modules:
        _apply()


def structlog_module() -> Any:
    """structlog, imported (and configured as :func:`configure` asked) now if not yet."""
    already = "structlog" in sys.modules
    import structlog

    if not already and _settings["configured"]:
        _apply()
    return structlog


def _apply() -> None:
    import structlog

    renderer: Any = (
        structlog.processors.JSONRenderer()
        if _settings["json"]
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_settings["level"]),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


class HouseLogger:
    """``structlog.get_logger(name)``, fetched on the first call that may print."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name

    def _emit(self, method: str, event: str, fields: dict[str, Any]) -> None:
        if "structlog" not in sys.modules and _LEVELS[method] < _settings["level"]:
            return  # nothing would be printed: structlog need not be imported for it
        logger = structlog_module().get_logger(self.name) if self.name else structlog_module().get_logger()
        getattr(logger, method)(event, **fields)

    def debug(self, event: str, **fields: Any) -> None:
        self._emit("debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._emit("info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._emit("warning", event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._emit("error", event, fields)


def get_logger(name: str | None = None) -> HouseLogger:
    """The house logger ``name`` (structlog's, once something is logged)."""
    return HouseLogger(name)
