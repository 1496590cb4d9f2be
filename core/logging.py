"""Structured logging with secret redaction: service keys, confirm keys and bearer tokens never reach a log."""

from __future__ import annotations

import json
import logging
import re
import sys
from typing import Any

_SECRET_QS = re.compile(r"((?:service|Service|confm|auth|api)Key=)[^&\s\"']+")
_BEARER = re.compile(r"(Bearer\s+)[A-Za-z0-9._~+/=-]+")


def redact(text: str) -> str:
    return _BEARER.sub(r"\1***", _SECRET_QS.sub(r"\1***", text))


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(str(record.msg))
        if record.args:
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args) if isinstance(
                record.args, tuple) else record.args
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {"ts": self.formatTime(record), "level": record.levelname, "logger": record.name,
                               "msg": record.getMessage()}
        for key in ("event", "method", "path", "status", "duration_ms", "run_id", "link_id", "tool"):
            if hasattr(record, key):
                doc[key] = getattr(record, key)
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return redact(json.dumps(doc, ensure_ascii=False))


def setup_logging(level: str = "INFO", json_logs: bool = False) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if json_logs else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
