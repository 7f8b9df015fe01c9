"""Log lines through structlog: JSON objects (one a line, for collectors) or plain text for a
terminal."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from trilha.settings import Settings


def log_format(settings: Settings) -> str:
    """The format asked, else JSON when the output is not a terminal (a service, a container)."""
    if settings.log_format is not None:
        return settings.log_format
    return "console" if sys.stderr.isatty() else "json"


def configure_logging(settings: Settings) -> None:
    shared: list[Any] = [
        structlog.stdlib.add_logger_name,
        structlog.stdlib.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="time"),
    ]
    if log_format(settings) == "json":
        rendering: list[Any] = [
            structlog.processors.format_exc_info,
            structlog.processors.EventRenamer("message"),
            structlog.processors.JSONRenderer(ensure_ascii=False),
        ]
    else:
        rendering = [structlog.dev.ConsoleRenderer(colors=False)]
    handler = logging.StreamHandler()
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *rendering],
        )
    )
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    logger = logging.getLogger("trilha")
    logger.handlers[:] = [handler]
    logger.setLevel(settings.log_level.upper())
    logger.propagate = False
    # aiosqlite's debug lines quote every statement with its parameters (tokens, e-mails).
    logging.getLogger("aiosqlite").setLevel(logging.INFO)
    # httpx's info lines quote every URL the worker sends to: a tracker's postback URL filled
    # with sub-ids, which may hold a buyer's e-mail.
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)
