"""Structured logging with secret redaction: service keys, tokens and bearer tokens never reach a log.

Redaction is installed on the log record factory (`install_redaction`), so it covers every logger and every
handler of the process (uvicorn, Celery's own handlers, httpx, httpcore), whatever the argument types: a record's
message is formatted and redacted when it is created, and so is its traceback. Two rules apply:
* query-string style `name=value` pairs whose name says key, token, secret, password, auth or signature, and
  `Bearer <token>`;
* every literal secret value registered with `register_secret` (the executor registers each key it reads), also
  in its percent-encoded forms.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
import traceback
from typing import Any, TypeVar
from urllib.parse import quote, quote_plus

# `name=value` with the name starting after a non-name character: linear time on any input (no scan from inside a
# name, no nested quantifiers).
_PAIR = re.compile(r"(?<![\w.\-\[\]])([\w.\-\[\]]{1,80})=([^&\s\"'<>,;]*)")
_SECRET_NAME = re.compile(r"key|token|secret|passw|auth|signature|credential|sig$", re.IGNORECASE)
_BEARER = re.compile(r"(Bearer\s{1,10})[A-Za-z0-9._~+/=\-]+", re.IGNORECASE)
_MIN_SECRET = 6
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None
_lock = threading.Lock()
_installed = False
T = TypeVar("T")


def register_secret(value: str) -> None:
    """Remember a secret value so that it is scrubbed from every later log line (and by `scrub`)."""
    global _pattern
    if not value or len(value) < _MIN_SECRET:
        return
    forms = {value, quote(value, safe=""), quote_plus(value, safe=""), quote(value)}
    if forms <= _secrets:
        return
    with _lock:
        _secrets.update(forms)
        _pattern = re.compile("|".join(re.escape(f) for f in sorted(_secrets, key=len, reverse=True)))


def _literal(text: str, values: set[str] | None = None) -> str:
    if values:
        forms = {
            f for v in values if v and len(v) >= _MIN_SECRET for f in (v, quote(v, safe=""), quote_plus(v, safe=""))
        }
        for f in sorted(forms, key=len, reverse=True):
            text = text.replace(f, "***")
    pattern = _pattern
    return pattern.sub("***", text) if pattern is not None else text


def _pair(m: re.Match[str]) -> str:
    return f"{m.group(1)}=***" if _SECRET_NAME.search(m.group(1)) and m.group(2) else m.group(0)


def redact(text: str) -> str:
    return _BEARER.sub(r"\1***", _PAIR.sub(_pair, _literal(text)))


def scrub(obj: T, values: set[str]) -> T:
    """`obj` (str, or JSON-like lists/dicts of them) with every occurrence of the given secret values and every
    registered secret replaced by '***'."""
    if not values and _pattern is None:
        return obj
    if isinstance(obj, str):
        return _literal(obj, values)  # type: ignore[return-value]
    if isinstance(obj, list):
        return [scrub(v, values) for v in obj]  # type: ignore[return-value]
    if isinstance(obj, dict):
        return {scrub(k, values): scrub(v, values) for k, v in obj.items()}  # type: ignore[return-value]
    return obj


def _redact_record(record: logging.LogRecord) -> logging.LogRecord:
    try:
        message = record.getMessage()
    except Exception:  # a broken format string: keep the raw parts, redacted
        message = f"{record.msg} {record.args!r}"
    clean = redact(message)
    if clean != message:
        # Redact argument by argument first (formatters such as uvicorn's read record.args), else the whole line.
        done = False
        if isinstance(record.args, tuple):
            record.args = tuple(_arg(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: _arg(v) for k, v in record.args.items()}
        if record.args and isinstance(record.msg, str) and redact(record.msg) == record.msg:
            try:
                again = record.getMessage()
                done = redact(again) == again
            except Exception:
                done = False
        if not done:
            record.msg, record.args = clean, None
    if record.exc_info and not record.exc_text:
        record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    return record


def _arg(value: Any) -> Any:
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    text = str(value)
    clean = redact(text)
    return value if clean == text else clean


def install_redaction() -> None:
    """Redact every log record of this process at creation (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            return _redact_record(previous(*args, **kwargs))

        logging.setLogRecordFactory(factory)
        _installed = True


class RedactingFilter(logging.Filter):
    """For handlers outside this process' factory (kept for callers that attach it explicitly)."""

    def filter(self, record: logging.LogRecord) -> bool:
        _redact_record(record)
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key in ("event", "method", "path", "status", "duration_ms", "run_id", "link_id", "tool"):
            if hasattr(record, key):
                doc[key] = getattr(record, key)
        if record.exc_info or record.exc_text:
            doc["exc"] = record.exc_text or self.formatException(record.exc_info)  # type: ignore[arg-type]
        return redact(json.dumps(doc, ensure_ascii=False, default=str))


def setup_logging(level: str = "INFO", json_logs: bool = False) -> None:
    install_redaction()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter() if json_logs else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
