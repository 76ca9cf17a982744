"""A rendered mail (:class:`Rendered`) made into the complete :class:`email.message.EmailMessage`:
its headers (deterministic Message-ID, threading, Reply-To, List-Unsubscribe) and its
multipart body."""

from __future__ import annotations

import email.policy
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.headerregistry import BaseHeader, HeaderRegistry
from email.message import EmailMessage
from email.policy import EmailPolicy, Policy
from email.utils import format_datetime as mail_date
from email.utils import getaddresses
from functools import lru_cache
from typing import Any, Final

from app.core.config import Settings
from app.core.models import OutboxMail, utcnow
from app.mail.addresses import reply_address
from app.mail.notify import REPLY_KINDS, root_message_id


@dataclass
class Rendered:
    """A mail ready to be wrapped in headers: subject, text, HTML and inline images."""

    kind: str
    lang: str
    subject: str
    text: str
    html: str
    images: dict[str, bytes] = field(default_factory=dict)
    """Content-ID (without <>) -> PNG bytes."""
    game_uid: str | None = None
    position: int | None = None
    skip: str | None = None
    """Why this mail should not go out any more (None: send it)."""
    unsubscribe_url: str | None = None
    """The seat's one-click unsubscribe address (List-Unsubscribe), for a mail of a seat."""


class _FoldedOnce(BaseHeader):
    """A header that keeps its folded lines, per the shape of line a policy asks for (its
    ending, longest length and whether UTF-8 may be written as is: all that folding reads of
    a policy). The headers the factory keeps (the From, the fixed ones, the parts'
    Content-Type...) are written into every message: folded once instead of each time."""

    def fold(self, *, policy: Policy) -> str:
        shape = (policy.linesep, policy.max_line_length, getattr(policy, "utf8", False))
        folds: dict[tuple[Any, ...], str] = self.__dict__.setdefault("_titanpost_folds", {})
        found = folds.get(shape)
        if found is None:
            found = folds[shape] = super().fold(policy=policy)
        return found


class HeaderFactory(HeaderRegistry):
    """The standard header registry, quicker: :class:`HeaderRegistry` makes a new class for
    every header it parses (about 50 µs each, a dozen and more a mail), this one once per
    header name; and a header whose value was seen lately (the From, the fixed headers, the
    parts' Content-Type) is not parsed again, nor folded again (:class:`_FoldedOnce`). A
    parsed header is an immutable string with its parse tree, the same for the same name and
    value, so sharing it between messages changes nothing in them."""

    def __init__(self) -> None:
        super().__init__()
        self._classes: dict[str, type[BaseHeader]] = {}
        self._parsed = lru_cache(maxsize=256)(super().__call__)

    def __getitem__(self, name: str) -> type[BaseHeader]:
        key = name.lower()
        found = self._classes.get(key)
        if found is None:
            made = super().__getitem__(name)
            found = self._classes[key] = type(made.__name__, (_FoldedOnce, made), {})
        return found

    def __call__(self, name: str, value: str) -> BaseHeader:
        if not isinstance(value, str):  # (not hashable: parsed every time)
            return super().__call__(name, value)
        header: BaseHeader = self._parsed(name, value)
        return header


MAIL_POLICY: Final = email.policy.default.clone(max_line_length=998,
                                                header_factory=HeaderFactory())
"""Headers are not folded below the RFC 5322 limit: a folded Message-ID or References comes
back from some parsers with the folding whitespace in front (the ids are long)."""


def build_message(settings: Settings, row: OutboxMail, mail: Rendered, *,
                  policy: EmailPolicy[EmailMessage] = MAIL_POLICY) -> EmailMessage:
    """The complete mail: headers (deterministic Message-ID, threading, Reply-To) and a
    multipart/alternative body (text, and HTML with its inline board picture)."""
    msg = EmailMessage(policy=policy)
    msg["From"] = settings.mail_from
    msg["To"] = row.recipient
    msg["Subject"] = mail.subject
    msg["Date"] = mail_date(_aware(row.created_at))
    msg["Message-ID"] = row.message_id
    if mail.game_uid is not None:
        root = root_message_id(mail.game_uid, settings.mail_domain)
        answered = (row.payload or {}).get("in_reply_to") if row.kind in REPLY_KINDS else None
        msg["In-Reply-To"] = answered or root
        msg["References"] = f"{root} {answered}" if answered else root
        if mail.position is not None:
            msg["Reply-To"] = reply_address(settings.secret_key, settings.mail_domain,
                                            mail.game_uid, mail.position)
    if mail.unsubscribe_url is not None:  # RFC 2369 and RFC 8058 (one-click, by POST)
        msg["List-Unsubscribe"] = f"<{mail.unsubscribe_url}>"
        msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    msg["Auto-Submitted"] = "auto-generated"
    msg["X-Auto-Response-Suppress"] = "All"
    msg["X-Titan-Post-Kind"] = mail.kind
    msg.set_content(mail.text, subtype="plain", charset="utf-8")
    msg.add_alternative(mail.html, subtype="html", charset="utf-8")
    if mail.images:
        html_part = next(p for p in msg.iter_parts() if p.get_content_type() == "text/html")
        for cid, png in mail.images.items():
            html_part.add_related(png, maintype="image", subtype="png", cid=f"<{cid}>",
                                  filename="board.png", disposition="inline")
    msg["Content-Language"] = mail.lang  # after the body: setting content clears Content-*
    return msg


def _aware(moment: datetime | None) -> datetime:
    if moment is None:
        return utcnow()
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def envelope_sender(settings: Settings) -> str:
    """The bare address of ``mail_from`` (for MAIL FROM)."""
    addresses = getaddresses([settings.mail_from])
    return addresses[0][1] if addresses and addresses[0][1] else settings.mail_from
