"""Logs a person or a log collector can follow: one line per request with a request id, JSON
lines in production, and no secrets in them.

Every request gets an id (the caller's ``X-Request-ID`` when it is a sane token, else a new
one), sent back in the ``X-Request-ID`` header and carried by every log record made while the
request is handled. Paths that carry a secret (signed links, invitations, game links) are logged
with the secret cut off.

Every line our handler writes, whatever logger made it (Flask's "Exception on /l/<token>",
aiosmtpd's recipients, a library's error message, a traceback), also goes through
:func:`redact_text`: link and invitation tokens in paths, the signatures of reply addresses,
bearer tokens, passwords in URLs and the server's own secrets (the secret key, the admin token,
the relays' and the mailbox's passwords: :func:`log_secrets`) are cut out.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import time
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from flask import Flask, Response, g, has_request_context, request

if TYPE_CHECKING:
    from app.core.config import Settings

REQUEST_ID_HEADER = "X-Request-ID"
_SANE_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")
_SECRET_PATHS = re.compile(r"^/(l|g|u|join|board|signin)/[^/]+")
"""Path prefixes whose next segment is a secret token."""

access_log = logging.getLogger("titanpost.access")
CUT = "…"
_SECRETS_IN_TEXT = (
    # link, invitation, unsubscribe, board picture and sign-in tokens
    (re.compile(r"/(l|g|u|join|board|signin)/[^/\s\"'<>?#]+"), rf"/\1/{CUT}"),
    (re.compile(r"(play\+[0-9a-fA-F]{32}\.[0-9]+)\.[0-9a-fA-F]{16}"), rf"\1.{CUT}"),  # replies
    (re.compile(r"(Bearer\s+)[^\s\"',;]+", re.IGNORECASE), rf"\1{CUT}"),
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/@\s:\"']*:)[^@\s/\"']+@", re.IGNORECASE),
     rf"\1{CUT}@"),  # the password of a URL
)
_MAY_HOLD_A_SECRET = re.compile(r"/(?:l|g|u|join|board|signin)/|play\+|bearer|://", re.IGNORECASE)
"""What each of :data:`_SECRETS_IN_TEXT` needs to find: a line without any of these (nearly
every request's) is not searched four times over."""
MIN_SECRET_LENGTH = 8
"""Shorter values are not cut out word by word (a test's password "pw" would garble every
line); in URLs they are cut out anyway."""
_known_secrets: set[str] = set()
_known_pattern: re.Pattern[str] | None = None
"""The known secrets, and their JSON-escaped forms, as one pattern (longest first)."""


def redact_path(path: str) -> str:
    """``path`` with any secret token it carries replaced by ``…``."""
    return _SECRET_PATHS.sub(lambda m: f"/{m.group(1)}/{CUT}", path)


def log_secrets(settings: Settings, *urls: str | None) -> list[str]:
    """The server's own secrets, none of which may appear in a log line (``urls``: more URLs
    whose passwords are secret, such as the IMAP mailbox's)."""
    found = [settings.secret_key, settings.admin_token or ""]
    for url in (settings.smtp_url, settings.smtp_fallback_url, settings.database_url, *urls):
        password = urlsplit(url).password if url else None
        if password:
            found += [password, unquote(password)]
    return [value for value in found if len(value) >= MIN_SECRET_LENGTH]


def remember_secrets(values: Iterable[str]) -> None:
    """Cut ``values`` out of every line written from now on (by this process)."""
    global _known_pattern
    _known_secrets.update(v for v in values if len(v) >= MIN_SECRET_LENGTH)
    forms = {form for value in _known_secrets for form in (value, json.dumps(value)[1:-1])}
    _known_pattern = (re.compile("|".join(re.escape(form) for form in
                                          sorted(forms, key=len, reverse=True)))
                      if forms else None)


def redact_text(text: str) -> str:
    """``text`` without the secrets a log line must never hold (see the module's docstring)."""
    if _MAY_HOLD_A_SECRET.search(text):
        for pattern, replacement in _SECRETS_IN_TEXT:
            text = pattern.sub(replacement, text)
    if _known_pattern is not None:
        text = _known_pattern.sub(CUT, text)
    return text


def current_request_id() -> str | None:
    if has_request_context():
        return getattr(g, "request_id", None)
    return None


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` to every record (None outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current_request_id()
        return True


class RedactFilter(logging.Filter):
    """Cuts the secrets out of each record of a logger whose lines do not pass through our
    formatters (gunicorn's own log names every request's path at debug level)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact_text(record.getMessage())
        record.args = None
        return True


class RedactingFormatter(logging.Formatter):
    """Readable text lines, with :func:`redact_text` applied to each (traceback included)."""

    def format(self, record: logging.LogRecord) -> str:
        return redact_text(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id and any extras
    (the whole line passed through :func:`redact_text`)."""

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
        return redact_text(json.dumps(entry, default=str, ensure_ascii=False))


def configure_logging(fmt: str, level: int | str = logging.INFO, *,
                      secrets: Iterable[str] = ()) -> None:
    """Set up the root logger once: ``json`` lines or readable ``text``, each with the request
    id, none with a secret (``secrets``: the server's own, see :func:`log_secrets`). Repeated
    calls (several apps in one process, as in tests) only add their secrets."""
    remember_secrets(secrets)
    root = logging.getLogger()
    if any(getattr(h, "_titanpost", False) for h in root.handlers):
        return
    handler = logging.StreamHandler()
    handler._titanpost = True  # type: ignore[attr-defined]
    handler.addFilter(RequestIdFilter())
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(RedactingFormatter(
            "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"))
    root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # our access log replaces it


_ID_PREFIX = uuid.uuid4().hex[:16]
_ID_COUNTER = itertools.count(1)


def _new_request_id() -> str:
    """A request id no other request of any process shares: this process's random prefix and
    a count (32 hex digits, as a UUID's; the kernel's random source is not asked each time)."""
    return f"{_ID_PREFIX}{next(_ID_COUNTER):016x}"


def install_request_logging(app: Flask) -> None:
    """Give every request an id and log one line for it when it is answered."""

    @app.before_request
    def _start() -> None:
        given = request.headers.get(REQUEST_ID_HEADER, "")
        g.request_id = given if _SANE_ID.match(given) else _new_request_id()
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
