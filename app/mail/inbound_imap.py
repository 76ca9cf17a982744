"""The IMAP poller: unseen messages of a mailbox that reached reply addresses are queued.

For a server that cannot receive SMTP itself: the reply domain's mail is delivered to a mailbox
(``TITANPOST_IMAP_URL``, e.g. ``imaps://user:pass@imap.example.org/INBOX``) and
``titanpost mail poll`` fetches its UNSEEN messages. A message whose Delivered-To, X-Original-To,
To or Cc names a genuine reply address is queued like an SMTP reply (once per address); every
fetched message is then flagged ``\\Seen`` (after its rows are committed, so a crash leaves it
unseen to be fetched again; the queue ignores a Message-ID it already holds). Messages are read
with ``BODY.PEEK[]``, which does not set ``\\Seen`` by itself. A message larger than
``TITANPOST_MAX_MAIL_BYTES`` is flagged seen and left alone: never parsed, never queued.
"""

from __future__ import annotations

import imaplib
import logging
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from email.utils import parseaddr
from urllib.parse import unquote, urlsplit

from sqlalchemy import Engine

from app.config import Settings

from .inbound import _header, _parse, queue_inbound, reply_recipients

log = logging.getLogger(__name__)


class ImapUrlError(ValueError):
    """TITANPOST_IMAP_URL is not a usable imap:// or imaps:// URL."""


@dataclass(frozen=True)
class ImapUrl:
    secure: bool
    host: str
    port: int
    user: str
    password: str
    mailbox: str

    def __repr__(self) -> str:  # never show the password
        scheme = "imaps" if self.secure else "imap"
        return f"ImapUrl({scheme}://{self.user}@{self.host}:{self.port}/{self.mailbox})"


def parse_imap_url(url: str) -> ImapUrl:
    """``imap[s]://user:password@host[:port][/mailbox]`` (percent-encoding allowed in each
    part; the mailbox defaults to INBOX)."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("imap", "imaps"):
        raise ImapUrlError("the IMAP URL must start with imap:// or imaps://")
    if not parts.hostname:
        raise ImapUrlError("the IMAP URL names no host")
    if parts.username is None or parts.password is None:
        raise ImapUrlError("the IMAP URL needs a user and a password: imaps://user:pass@host/")
    secure = parts.scheme == "imaps"
    try:
        port = parts.port or (993 if secure else 143)
    except ValueError:
        raise ImapUrlError("the IMAP URL's port is not a number") from None
    mailbox = unquote(parts.path.lstrip("/")) or "INBOX"
    return ImapUrl(
        secure, parts.hostname, port, unquote(parts.username), unquote(parts.password), mailbox
    )


@dataclass
class PollReport:
    fetched: int = 0
    queued: list[int] = field(default_factory=list)
    ignored: int = 0
    """Fetched messages addressed to no reply address (flagged seen, not queued)."""
    too_large: int = 0
    """Fetched messages over TITANPOST_MAX_MAIL_BYTES (flagged seen, not read, not queued)."""


def _quoted(word: str) -> str:
    """An IMAP astring: as it is when it is an atom, else a quoted string (imaplib quotes only
    the password itself)."""
    if word and not any(c in word for c in ' "\\(){%*]') and word.isprintable():
        return word
    escaped = word.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _check(typ: str, data: Sequence[object], what: str) -> None:
    if typ != "OK":
        raise imaplib.IMAP4.error(f"{what} failed: {data!r}")


def poll_imap(
    engine: Engine,
    settings: Settings,
    url: str | ImapUrl,
    *,
    limit: int = 100,
    timeout: float = 30.0,
    ssl_context: ssl.SSLContext | None = None,
) -> PollReport:
    """Fetch up to ``limit`` unseen messages, queue the replies among them, flag all seen."""
    where = parse_imap_url(url) if isinstance(url, str) else url
    imap: imaplib.IMAP4
    if where.secure:
        context = ssl_context or ssl.create_default_context()
        imap = imaplib.IMAP4_SSL(where.host, where.port, ssl_context=context, timeout=timeout)
    else:
        imap = imaplib.IMAP4(where.host, where.port, timeout=timeout)
    report = PollReport()
    with imap:
        login = imap.login(_quoted(where.user), where.password)  # imaplib quotes the password
        _check(login[0], login[1], "LOGIN")
        selected = imap.select(_quoted(where.mailbox))
        _check(selected[0], selected[1], f"SELECT {where.mailbox}")
        typ, data = imap.uid("SEARCH", "UNSEEN")
        _check(typ, data, "SEARCH UNSEEN")
        first = data[0] if data else b""
        uids = first.split() if isinstance(first, bytes) else []
        for uid in uids[:limit]:
            raw = _fetch(imap, uid.decode())
            if raw is None:
                continue
            report.fetched += 1
            if len(raw) > settings.max_mail_bytes:
                log.warning("IMAP message %s is %d bytes, over the limit of %d: not read",
                            uid.decode(), len(raw), settings.max_mail_bytes)
                report.too_large += 1
            else:
                _queue_fetched(engine, settings, raw, report)
            typ, data = imap.uid("STORE", uid.decode(), "+FLAGS", "(\\Seen)")
            _check(typ, data, "STORE +FLAGS \\Seen")
    return report


def _queue_fetched(engine: Engine, settings: Settings, raw: bytes, report: PollReport) -> None:
    """Queue a fetched message once per reply address it reached (or count it ignored)."""
    msg = _parse(raw, headers_only=True)
    recipients = reply_recipients(msg, settings)
    sender = _header(msg, "Return-Path") or parseaddr(_header(msg, "From"))[1]
    for recipient in recipients:
        row = queue_inbound(engine, settings, recipient, raw, sender=sender, source="imap")
        if row is not None:
            report.queued.append(row)
    if not recipients:
        report.ignored += 1


def _fetch(imap: imaplib.IMAP4, uid: str) -> bytes | None:
    typ, data = imap.uid("FETCH", uid, "(BODY.PEEK[])")
    _check(typ, data, f"FETCH {uid}")
    for item in data:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], bytes):
            return item[1]
    return None
