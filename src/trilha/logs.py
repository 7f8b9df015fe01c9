"""Log lines as JSON (one object per line, for collectors) or as plain text for a terminal."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from trilha.settings import Settings


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure_logging(settings: Settings) -> None:
    handler = logging.StreamHandler()
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
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
