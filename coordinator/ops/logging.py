"""structlog set-up: console lines for a person at a terminal, JSON lines for everything else."""

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
