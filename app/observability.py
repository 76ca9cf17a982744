"""Logs a person or a log collector can follow: one line per request with a request id, JSON
lines in production, and no secrets in them.

Every request gets an id (the caller's ``X-Request-ID`` when it is a sane token, else a new
one), sent back in the ``X-Request-ID`` header and carried by every log record made while the
request is handled. Paths that carry a secret (signed links, invitations, game links) are logged
with the secret cut off.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from flask import Flask, Response, g, has_request_context, request

REQUEST_ID_HEADER = "X-Request-ID"
_SANE_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")
_SECRET_PATHS = re.compile(r"^/(l|g|join)/[^/]+")
"""Path prefixes whose next segment is a secret token."""

access_log = logging.getLogger("titanpost.access")


def redact_path(path: str) -> str:
    """``path`` with any secret token it carries replaced by ``…``."""
    return _SECRET_PATHS.sub(lambda m: f"/{m.group(1)}/…", path)


def current_request_id() -> str | None:
    if has_request_context():
        return getattr(g, "request_id", None)
    return None


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` to every record (None outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current_request_id()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id and any extras."""

    RESERVED = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message",
                                                                           "request_id"}

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None)
        if request_id:
            entry["request_id"] = request_id
        for key, value in vars(record).items():
            if key not in self.RESERVED and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def configure_logging(fmt: str, level: int = logging.INFO) -> None:
    """Set up the root logger once: ``json`` lines or readable ``text``, each with the request
    id. Repeated calls (several apps in one process, as in tests) change nothing."""
    root = logging.getLogger()
    if any(getattr(h, "_titanpost", False) for h in root.handlers):
        return
    handler = logging.StreamHandler()
    handler._titanpost = True  # type: ignore[attr-defined]
    handler.addFilter(RequestIdFilter())
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter(
            "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"))
    root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # our access log replaces it


def install_request_logging(app: Flask) -> None:
    """Give every request an id and log one line for it when it is answered."""

    @app.before_request
    def _start() -> None:
        given = request.headers.get(REQUEST_ID_HEADER, "")
        g.request_id = given if _SANE_ID.match(given) else uuid.uuid4().hex
        g.started = time.perf_counter()

    @app.after_request
    def _finish(response: Response) -> Response:
        request_id = getattr(g, "request_id", None)
        if request_id:
            response.headers[REQUEST_ID_HEADER] = request_id
        started = getattr(g, "started", None)
        elapsed = (time.perf_counter() - started) * 1000 if started is not None else None
        access_log.info(
            "%s %s %s", request.method, redact_path(request.path), response.status_code,
            extra={"method": request.method, "path": redact_path(request.path),
                   "status": response.status_code,
                   "ms": round(elapsed, 2) if elapsed is not None else None,
                   "remote": request.remote_addr},
        )
        return response
