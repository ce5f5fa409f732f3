"""structlog set-up: console lines for a person at a terminal, JSON lines for everything else — and, for a
broker embedded in an application that configured nothing, the standard ``logging`` route.

An embedded library must not print its debug chatter (one line per offsets partition on every start) into
someone else's terminal: unless the application configured structlog itself, the broker's events become
records of stdlib loggers named ``groupcoord.*``, so they obey the application's ``logging`` levels and
handlers, and with none configured Python's last-resort handler shows WARNING and above only.
"""

from __future__ import annotations

import logging
import sys

import structlog

from ..config import LogFormat


def configure_logging(level: str = "info", fmt: LogFormat | str = LogFormat.AUTO, stream=None) -> None:
    stream = stream or sys.stderr
    fmt = LogFormat(fmt)
    if fmt is LogFormat.AUTO:
        fmt = LogFormat.CONSOLE if stream.isatty() else LogFormat.JSON
    renderer = (
        structlog.dev.ConsoleRenderer(colors=stream.isatty())
        if fmt is LogFormat.CONSOLE
        else structlog.processors.JSONRenderer()
    )
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info if fmt is LogFormat.JSON else structlog.dev.set_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )


def _render_event(_logger, _name, event_dict: dict) -> str:
    """``event key=value …``: the message a stdlib handler formats, with the structured fields after it."""
    event = event_dict.pop("event", "")
    fields = " ".join(f"{key}={value!r}" if isinstance(value, str) else f"{key}={value}"
                      for key, value in event_dict.items())
    return f"{event} {fields}" if fields else str(event)


def use_standard_logging_unless_configured() -> bool:
    """Route structlog through stdlib ``logging`` when the application has not configured structlog;
    returns whether it did. Levels are checked before anything is formatted (``filter_by_level``), so a
    debug line nobody asked for costs one ``isEnabledFor``."""
    if structlog.is_configured():
        return False
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            structlog.contextvars.merge_contextvars,
            structlog.processors.format_exc_info,
            _render_event,
        ],
        wrapper_class=structlog.stdlib.BoundLogger,
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )
    return True
