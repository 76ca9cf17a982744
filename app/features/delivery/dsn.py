"""Reading a bounce: which addresses failed, for good or for now, and why.

A proper delivery status notification (RFC 3464: ``multipart/report;
report-type=delivery-status``) has a ``message/delivery-status`` part with one block of fields
per recipient (Final-Recipient, Original-Recipient, Action, Status, Diagnostic-Code); the
standard library's parser splits it into those blocks, and they are read here. A failure is
*permanent* when its Action is ``failed`` or its Status a 5.x.x, *temporary* when its Action is
``delayed`` or its Status a 4.x.x; ``delivered``, ``relayed`` and ``expanded`` are no failure.

Many servers still send bounces of their own shape (plain text, an old Exim, qmail, a
Microsoft gateway without the report part): for those, flufl.bounce's detectors find the failed
addresses (:func:`flufl.bounce.all_failures`), and only what it calls permanent counts as
permanent.

An automatic reply ("I am on holiday") is no bounce, though it too comes back unasked and often
to the envelope sender: it is told by its headers (Auto-Submitted: auto-replied,
X-Autoreply ...) from a person's address rather than a mailer daemon's, and it never marks an
address (online-go.com #685: addresses silently suppressed after a vacation reply).

The tokens of this server's bounce addresses (:mod:`app.features.delivery.verp`) that a bounce
names anywhere, in its headers (Postfix writes the envelope sender into ``To``), its report
(``X-Postfix-Sender``) or the returned headers (``Return-Path``), are collected too: a token
is an HMAC nobody can make up, so it names the mail that bounced even when the bounce came to
another address than the envelope sender.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from email import message_from_bytes, policy
from email.message import Message
from email.utils import parseaddr
from typing import Final

from flufl.bounce import all_failures

from .verp import BOUNCE_PREFIX, TOKEN_LENGTH

log = logging.getLogger("titanpost.mail")

REPORT: Final = "report"
"""How: a standard delivery status notification (RFC 3464)."""
GUESSED: Final = "guessed"
"""How: a bounce of another shape, read by flufl.bounce."""
AUTO_REPLY: Final = "auto-reply"
"""How: an automatic reply (a vacation notice): no bounce."""
NOTHING: Final = "nothing"
"""How: no failure found in it."""

_FAILED_ACTIONS: Final = frozenset({"failed", "delayed"})
_DAEMONS: Final = ("mailer-daemon", "postmaster", "mail-daemon", "mailerdaemon")
_MAX_TOKENS: Final = 5
_CONTINUATION: Final = re.compile(r"\s\d{3}[- ]\d\.\d{1,3}\.\d{1,3}(?=\s)")
"""The code repeated on each line of a multi-line SMTP answer (``550-5.1.1``): said once."""


@dataclass(frozen=True)
class Failure:
    """One recipient a bounce says was not reached."""

    address: str
    permanent: bool
    reason: str
    """The status and the receiving server's words, short (or the bounce's subject)."""


@dataclass(frozen=True)
class Reading:
    """What a bounce says: how it was read, its failures and the tokens it names."""

    how: str
    failures: tuple[Failure, ...] = ()
    tokens: tuple[str, ...] = ()

    def for_address(self, address: str) -> Failure | None:
        """The failure of ``address``, else the first one (a forwarded address fails under
        its new name; the bounce of a one-recipient mail is about that recipient anyway)."""
        wanted = address.strip().lower()
        for failure in self.failures:
            if failure.address == wanted:
                return failure
        return self.failures[0] if self.failures else None


def read_bounce(raw: bytes, domain: str) -> Reading:
    """Read ``raw`` (a whole message) as a bounce to this server's ``domain``."""
    try:
        msg = message_from_bytes(raw, policy=policy.compat32)
    except Exception:  # the parser tolerates almost anything; be safe
        log.warning("a bounce could not be parsed at all")
        return Reading(NOTHING)
    tokens = tokens_in(raw, domain)
    failures = report_failures(msg)
    if failures is not None:
        return Reading(REPORT if failures else NOTHING, failures, tokens)
    if is_auto_reply(msg):
        return Reading(AUTO_REPLY, (), tokens)
    guessed = guessed_failures(msg)
    return Reading(GUESSED if guessed else NOTHING, guessed, tokens)


def tokens_in(raw: bytes, domain: str) -> tuple[str, ...]:
    """The distinct tokens of this server's bounce addresses that ``raw`` names, in order."""
    pattern = re.compile(
        re.escape(BOUNCE_PREFIX) + r"\+([a-z2-7]{" + str(TOKEN_LENGTH) + r"})@"
        + re.escape(domain) + r"(?![a-z0-9.-])", re.IGNORECASE)
    found: list[str] = []
    for match in pattern.finditer(raw.decode("latin-1")):
        token = match[1].lower()
        if token not in found:
            found.append(token)
        if len(found) >= _MAX_TOKENS:
            break
    return tuple(found)


# ------------------------------------------------------------------ RFC 3464 reports


def report_failures(msg: Message) -> tuple[Failure, ...] | None:
    """The failures of a delivery status notification, or None when ``msg`` has no
    ``message/delivery-status`` part (it is no such report)."""
    status_part = _status_part(msg)
    if status_part is None:
        return None
    blocks = status_part.get_payload()
    if not isinstance(blocks, list):
        return ()
    failures = []
    for block in blocks[1:]:  # (the first block is about the whole message)
        failure = _recipient_failure(block) if isinstance(block, Message) else None
        if failure is not None:
            failures.append(failure)
    return tuple(failures)


def _status_part(msg: Message) -> Message | None:
    if msg.get_content_maintype() != "multipart":
        return None
    for part in msg.walk():
        if part.get_content_type() == "message/delivery-status":
            return part
    return None


def _recipient_failure(block: Message) -> Failure | None:
    """The failure one per-recipient block reports, if it reports one."""
    action = _field(block, "Action").lower()
    status = _field(block, "Status").split(" ")[0]
    if action not in _FAILED_ACTIONS and not status.startswith(("4.", "5.")):
        return None
    address = _typed_address(_field(block, "Original-Recipient")) or _typed_address(
        _field(block, "Final-Recipient"))
    if not address:
        return None
    permanent = status.startswith("5.") or (action == "failed" and not status.startswith("4."))
    diagnostic = _CONTINUATION.sub("", _typed_value(_field(block, "Diagnostic-Code")))
    reason = " ".join(part for part in (status or action, diagnostic) if part)
    return Failure(address, permanent, reason)


def _field(block: Message, name: str) -> str:
    value = block.get(name)
    return " ".join(str(value).split()) if value is not None else ""


def _typed_value(value: str) -> str:
    """``smtp; 550 5.1.1 ...`` -> ``550 5.1.1 ...`` (the type before the ``;`` said nothing)."""
    kind, semicolon, rest = value.partition(";")
    return rest.strip() if semicolon and " " not in kind.strip() else value.strip()


def _typed_address(value: str) -> str:
    """The address of a ``rfc822; bob@example.org`` field, lower-cased ("" for none)."""
    address = parseaddr(_typed_value(value))[1].strip().lower()
    return address if "@" in address else ""


# ------------------------------------------------------------------ other shapes


def is_auto_reply(msg: Message) -> bool:
    """Whether ``msg`` is a person's automatic reply (a vacation notice), not a bounce: marked
    as automatic by its headers and sent from an address that is no mailer daemon's."""
    sender = parseaddr(str(msg.get("From", "")))[1].lower()
    if sender.split("@")[0] in _DAEMONS:
        return False
    auto = str(msg.get("Auto-Submitted", "")).strip().lower()
    precedence = str(msg.get("Precedence", "")).strip().lower()
    marked = (auto.startswith("auto-replied") or precedence == "auto_reply"
              or any(msg.get(name) for name in ("X-Autoreply", "X-Autorespond")))
    subject = str(msg.get("Subject", "")).lower()
    return marked or subject.startswith(("out of office", "auto:", "automatic reply",
                                         "autoreply", "vacation"))


def guessed_failures(msg: Message) -> tuple[Failure, ...]:
    """flufl.bounce's reading of a bounce of another shape: its temporary and permanent
    failures (the reason is the bounce's subject: there is no status to quote)."""
    try:
        temporary, permanent = all_failures(msg)
    except Exception:  # a detector tripped over a malformed message: nothing found
        log.warning("flufl.bounce could not read a bounce", exc_info=True)
        return ()
    subject = " ".join(str(msg.get("Subject", "")).split())[:200]
    reason = f"bounce: {subject}" if subject else "bounce"
    found = [Failure(_text(address), True, reason) for address in sorted(permanent)]
    found += [Failure(_text(address), False, reason) for address in sorted(temporary - permanent)]
    return tuple(failure for failure in found if "@" in failure.address)


def _text(address: bytes | str) -> str:
    text = address.decode("utf-8", "replace") if isinstance(address, bytes) else address
    return text.strip().strip("<>").lower()
