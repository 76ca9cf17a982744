"""The IMAP poller: unseen messages of a mailbox that reached reply addresses are queued.

For a server that cannot receive SMTP itself: the reply domain's mail is delivered to a mailbox
(``TITANPOST_IMAP_URL``, e.g. ``imaps://user:pass@imap.example.org/INBOX``) and
``titanpost mail poll`` fetches its UNSEEN messages. A message whose Delivered-To, X-Original-To,
To or Cc names a genuine reply address is queued like an SMTP reply, once, whatever the reply
addresses it names (:func:`~app.mail.inbound_queue.queue_reply`; a copy of it delivered again for
another address is known by its Message-ID and not queued twice); every
fetched message is then flagged ``\\Seen`` (after its rows are committed, so a crash leaves it
unseen to be fetched again; the queue ignores a Message-ID it already holds). Messages are read
with ``BODY.PEEK[]``, which does not set ``\\Seen`` by itself.

The sizes come first: one ``UID FETCH <uids> (RFC822.SIZE)`` asks the server how large each
unseen message is, and a message over ``TITANPOST_MAX_MAIL_BYTES`` (the limit the SMTP listener
refuses with 552) is never downloaded: it is flagged ``\\Seen`` and ``\\Flagged`` (so that a
person looking at the mailbox finds it), counted and logged, never parsed, never queued. A
message whose size the server does not tell is downloaded and measured instead.
"""

from __future__ import annotations

import imaplib
import logging
import re
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import parseaddr
from urllib.parse import unquote, urlsplit

from sqlalchemy import Engine

from app.core.config import Settings
from app.features.delivery.bounces import apply_bounce

from .inbound_headers import automatic_reason, header_text, parse_message
from .inbound_queue import bounce_tokens, queue_reply, reply_recipients

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
    bounces: int = 0
    """Fetched bounces to a bounce address of this server, applied at once (not queued)."""
    too_large: int = 0
    """Unseen messages over TITANPOST_MAX_MAIL_BYTES: flagged seen and flagged, never
    downloaded (or, where the server told no size, downloaded and dropped), never queued."""


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
        uids = _unseen(imap)[:limit]
        sizes = _sizes(imap, uids)
        for uid in uids:
            _poll_one(imap, engine, settings, uid, sizes.get(uid), report)
    return report


def _poll_one(
    imap: imaplib.IMAP4,
    engine: Engine,
    settings: Settings,
    uid: str,
    size: int | None,
    report: PollReport,
) -> None:
    """Download and queue one unseen message, unless it is too large; then flag it seen."""
    limit = settings.max_mail_bytes
    if size is not None and size > limit:
        _skip_too_large(imap, uid, size, limit, report)
        return
    raw = _fetch(imap, uid)
    if raw is None:  # expunged meanwhile
        return
    report.fetched += 1
    if len(raw) > limit:  # the server told no size, or a wrong one
        _skip_too_large(imap, uid, len(raw), limit, report)
        return
    _queue_fetched(engine, settings, raw, report)
    typ, data = imap.uid("STORE", uid, "+FLAGS", "(\\Seen)")
    _check(typ, data, "STORE +FLAGS \\Seen")


def _skip_too_large(
    imap: imaplib.IMAP4, uid: str, size: int, limit: int, report: PollReport
) -> None:
    log.warning("IMAP message %s is %d bytes, over the limit of %d: not read, flagged",
                uid, size, limit)
    report.too_large += 1
    typ, data = imap.uid("STORE", uid, "+FLAGS", "(\\Seen \\Flagged)")
    _check(typ, data, "STORE +FLAGS \\Seen \\Flagged")


def _unseen(imap: imaplib.IMAP4) -> list[str]:
    """The UIDs of the mailbox's unseen messages, oldest first."""
    typ, data = imap.uid("SEARCH", "UNSEEN")
    _check(typ, data, "SEARCH UNSEEN")
    first = data[0] if data else b""
    return [uid.decode() for uid in first.split()] if isinstance(first, bytes) else []


_FETCHED_UID = re.compile(rb"\bUID (\d+)")
_FETCHED_SIZE = re.compile(rb"\bRFC822\.SIZE (\d+)")


def _sizes(imap: imaplib.IMAP4, uids: list[str]) -> dict[str, int]:
    """Each message's size in bytes as the server tells it (``RFC822.SIZE``), by UID; nothing
    of the messages themselves is downloaded. A UID the server leaves out is not in it."""
    if not uids:
        return {}
    typ, data = imap.uid("FETCH", ",".join(uids), "(RFC822.SIZE)")
    _check(typ, data, "FETCH RFC822.SIZE")
    sizes: dict[str, int] = {}
    for item in data:
        line = item[0] if isinstance(item, tuple) else item
        if not isinstance(line, bytes):
            continue
        uid, size = _FETCHED_UID.search(line), _FETCHED_SIZE.search(line)
        if uid is not None and size is not None:
            sizes[uid[1].decode()] = int(size[1])
    return sizes


def _queue_fetched(engine: Engine, settings: Settings, raw: bytes, report: PollReport) -> None:
    """Queue a fetched message once (or count it ignored: it reached no reply address)."""
    msg = parse_message(raw, headers_only=True)
    recipients = reply_recipients(msg, settings)
    sender = header_text(msg, "Return-Path") or parseaddr(header_text(msg, "From"))[1]
    if not recipients:
        _apply_fetched_bounce(engine, settings, raw, msg, sender, report)
        return
    row = queue_reply(engine, settings, recipients, raw, sender=sender, source="imap")
    if row is not None:
        report.queued.append(row)


def _apply_fetched_bounce(engine: Engine, settings: Settings, raw: bytes, msg: EmailMessage,
                          sender: str, report: PollReport) -> None:
    """Apply a fetched message to no reply address as a bounce, when it is one that names a
    token of ours (in its recipient headers, or, for a robot's mail, its own text); else
    count it ignored. Without a token nothing is believed: anyone can write to a mailbox."""
    tokens = bounce_tokens(msg, settings)
    if not tokens and not automatic_reason(msg, sender, settings):
        report.ignored += 1
        return
    applied = apply_bounce(engine, settings.mail_domain, raw, tokens=tokens)
    if tokens or applied.marked:
        report.bounces += 1
    else:
        report.ignored += 1


def _fetch(imap: imaplib.IMAP4, uid: str) -> bytes | None:
    typ, data = imap.uid("FETCH", uid, "(BODY.PEEK[])")
    _check(typ, data, f"FETCH {uid}")
    for item in data:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], bytes):
            return item[1]
    return None
