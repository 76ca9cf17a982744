"""What an incoming mail's headers say: its Message-ID, its author, a robot's mail, where to answer.

The message parsed (:func:`parse_message`), a header's text (missing or too malformed to read:
empty, :func:`header_text`), the Message-ID, the one author its From names
(:func:`sole_author`), whether a robot sent it (:func:`automatic_reason`: such a mail is never
answered) and the address an answer to it goes to (:func:`answer_address`). The queue
(:mod:`app.mail.inbound_queue`), the IMAP poller (:mod:`app.mail.inbound_imap`) and the worker
(:mod:`app.mail.inbound`) read a mail through these.
"""

from __future__ import annotations

import re
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, parseaddr

from app.core.config import Settings
from app.service import EMAIL

from .addresses import parse_reply_address


def parse_message(raw: bytes, *, headers_only: bool = False) -> EmailMessage:
    parser = BytesParser(_class=EmailMessage, policy=policy.default)
    msg = parser.parsebytes(raw, headersonly=headers_only)
    assert isinstance(msg, EmailMessage)
    return msg


def header_text(msg: EmailMessage, name: str) -> str:
    """A header's text, or "" when it is missing or too malformed to read."""
    try:
        value = msg.get(name)
    except (ValueError, TypeError, IndexError):
        return ""
    return str(value).strip() if value is not None else ""


def message_id_of(raw: bytes) -> str | None:
    value = header_text(parse_message(raw, headers_only=True), "Message-ID")
    return value[:250] or None


def sole_author(msg: EmailMessage) -> str | None:
    """The address of the message's author (lower case) when its From names exactly one,
    else None.

    A move counts only from its seat's player, told by the From address; a From that names
    two (``From: ann@example.org, evil@example.net``), none, or one that Python's two address
    parsers read differently, names nobody in particular, and a second From header is the
    same trick. Such a mail is refused whole
    (:data:`app.mail.inbound.NOT_ONE_AUTHOR`).
    """
    try:
        raw = [str(value) for name, value in msg.raw_items() if name.lower() == "from"]
        if len(raw) != 1:
            return None
        unfolded = re.sub(r"\r?\n(?=[ \t])", "", raw[0])
        listed = [address for _, address in getaddresses([unfolded]) if address]
        parsed = [a.addr_spec for a in getattr(msg["From"], "addresses", ())]
    except (ValueError, TypeError, IndexError, AttributeError):
        return None
    if len(listed) != 1 or [a.lower() for a in parsed] != [listed[0].lower()]:
        return None
    author = listed[0].strip().lower()
    return author if EMAIL.match(author) else None


def automatic_reason(msg: EmailMessage, sender: str, settings: Settings) -> str:
    """Why ``msg`` is a robot's mail that must not be answered, or "" for a person's reply."""
    auto = header_text(msg, "Auto-Submitted").lower()
    if auto and auto != "no":
        return f"Auto-Submitted: {auto}"
    precedence = header_text(msg, "Precedence").lower()
    if precedence in ("bulk", "junk", "list", "auto_reply"):
        return f"Precedence: {precedence}"
    for name in ("X-Autoreply", "X-Autorespond", "X-Auto-Response", "List-Id"):
        if header_text(msg, name):
            return f"{name} header"
    if msg.get_content_type() == "multipart/report":
        return "a delivery report"
    _, author = parseaddr(header_text(msg, "From"))
    local = author.split("@")[0].lower()
    if local in ("mailer-daemon", "postmaster") or local.startswith(("noreply", "no-reply")):
        return f"sent by {author}"
    if sender.strip() in ("", "<>"):
        return "null sender (a bounce or an automatic reply)"
    _, ours = parseaddr(settings.mail_from)
    if author and (
        author.lower() == ours.lower()
        or parse_reply_address(settings.secret_key, settings.mail_domain, author) is not None
    ):
        return "sent by this server"
    return ""


def answer_address(msg: EmailMessage | None, sender: str, settings: Settings) -> str | None:
    """Where an answer goes: Reply-To, else From, else the envelope sender (without ``msg``:
    the envelope sender alone)."""
    found = (header_text(msg, "Reply-To"), header_text(msg, "From")) if msg is not None else ()
    for value in (*found, sender):
        _, address = parseaddr(value)
        address = address.strip().lower()
        if (
            EMAIL.match(address)
            and parse_reply_address(settings.secret_key, settings.mail_domain, address) is None
        ):
            return address
    return None
