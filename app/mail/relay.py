"""The connection to the SMTP relay that the sender (:mod:`app.mail.send`) delivers through.

Transport: ``TITANPOST_SMTP_URL``: ``smtp://[user:password@]host[:port][?starttls=1]`` (port 25,
or 587 with STARTTLS) or ``smtps://...`` (TLS from the start, port 465); further query options
``timeout=<seconds>`` and ``verify=0`` (accept any TLS certificate: tests only), read by
:func:`parse_smtp_url`; :func:`connect` opens the connection (TLS, login).

The connection calls a hook after a message's data is written and before the ``.`` line that
ends it (:class:`HandoverMixin`): the sender commits the message's hand-over there. It has
TCP_NODELAY set (see :func:`no_delay`): the ``.`` line written after the hand-over goes out at
once instead of waiting for the relay to acknowledge the data.
"""

from __future__ import annotations

import functools
import re
import smtplib
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class SmtpUrlError(ValueError):
    """A TITANPOST_SMTP_URL that cannot be used."""


class HandoverMixin:
    """Calls ``before_end_of_data`` after a message's data is written and before the ``.``
    line that ends it: the last moment at which the relay cannot yet have accepted the
    message. The hook may raise to abandon the message (the connection must then be closed:
    the relay discards what it got)."""

    before_end_of_data: Callable[[], None] | None = None

    def data(self, msg: ReadableBuffer | str) -> tuple[int, bytes]:
        smtp: Any = self
        smtp.putcmd("data")
        code, reply = smtp.getreply()
        if code != 354:
            raise smtplib.SMTPDataError(code, reply)
        if isinstance(msg, str):  # (send_message passes bytes; sendmail may pass text)
            data = re.sub(r"\r\n|\r|\n", "\r\n", msg).encode("ascii")
        else:
            data = bytes(msg)
        body = re.sub(rb"(?m)^\.", b"..", data)
        if not body.endswith(b"\r\n"):
            body += b"\r\n"
        smtp.send(body)
        hook = self.before_end_of_data
        if hook is not None:
            hook()
        smtp.send(b".\r\n")
        code, reply = smtp.getreply()
        return code, reply


class HandoverSMTP(HandoverMixin, smtplib.SMTP):
    """smtplib.SMTP with the end-of-data hook."""


class HandoverSMTPSSL(HandoverMixin, smtplib.SMTP_SSL):
    """smtplib.SMTP_SSL with the end-of-data hook."""


@dataclass(frozen=True)
class SmtpTarget:
    ssl: bool
    host: str
    port: int
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    starttls: bool = False
    timeout: float = 30.0
    verify: bool = True

    def describe(self) -> str:
        scheme = "smtps" if self.ssl else "smtp"
        who = f"{self.username}@" if self.username else ""
        tls = "+starttls" if self.starttls else ""
        return f"{scheme}{tls}://{who}{self.host}:{self.port}"


def _flag(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


def parse_smtp_url(url: str) -> SmtpTarget:
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps"):
        raise SmtpUrlError("the SMTP URL must start with smtp:// or smtps://")
    if not parts.hostname:
        raise SmtpUrlError("the SMTP URL names no host")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = sorted(set(query) - {"starttls", "timeout", "verify"})
    if unknown:
        raise SmtpUrlError(f"unknown SMTP URL option {', '.join(unknown)} "
                           "(known: starttls, timeout, verify)")
    secure = parts.scheme == "smtps"
    starttls = _flag(query.get("starttls", "0"))
    if secure and starttls:
        raise SmtpUrlError("smtps:// is TLS from the start: starttls=1 applies to smtp:// only")
    try:
        port = parts.port or (465 if secure else 587 if starttls else 25)
        timeout = float(query.get("timeout", "30"))
    except ValueError as exc:
        raise SmtpUrlError(f"the SMTP URL has a bad number: {exc}") from None
    return SmtpTarget(
        ssl=secure,
        host=parts.hostname,
        port=port,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password is not None else None,
        starttls=starttls,
        timeout=timeout,
        verify=_flag(query.get("verify", "1")),
    )


def connect(target: SmtpTarget) -> smtplib.SMTP:
    """An open, authenticated SMTP connection to ``target``."""
    context = _tls_context(target) if target.ssl or target.starttls else None
    local = _local_name()
    smtp: smtplib.SMTP
    if target.ssl:
        smtp = HandoverSMTPSSL(target.host, target.port, local_hostname=local,
                               timeout=target.timeout, context=context)
    else:
        smtp = HandoverSMTP(target.host, target.port, local_hostname=local,
                            timeout=target.timeout)
    try:
        no_delay(smtp)
        smtp.ehlo()
        if target.starttls:
            smtp.starttls(context=context or _tls_context(target))
            smtp.ehlo()
        if target.username:
            smtp.login(target.username, target.password or "")
    except BaseException:
        smtp.close()
        raise
    return smtp


def _tls_context(target: SmtpTarget) -> ssl.SSLContext:
    """(Made only for a TLS connection: loading the system's certificates takes ~20 ms.)"""
    context = ssl.create_default_context()
    if not target.verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


@functools.cache
def _local_name() -> str:
    """This host's name for EHLO (looked up once: a lookup may take a DNS round trip)."""
    return socket.getfqdn()


def no_delay(smtp: smtplib.SMTP) -> None:
    """Turn Nagle's algorithm off on the connection (TCP_NODELAY; STARTTLS keeps the socket).

    The end-of-data hook splits each message into two writes: the data, then, after the
    hand-over is committed, the short ``.`` line. With Nagle on, that line waits for the
    relay's acknowledgement of the data, which a relay delaying its ACKs sends only after about
    40 ms, so every message stalled that long."""
    sock = smtp.sock
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def quit_or_close(smtp: smtplib.SMTP) -> None:
    """End the connection politely (QUIT), else just close it."""
    try:
        smtp.quit()
    except (OSError, smtplib.SMTPException):
        smtp.close()


def describe_error(exc: BaseException) -> str:
    """An SMTP error as its code and text; another error as its type and text."""
    if isinstance(exc, smtplib.SMTPResponseException):
        message = exc.smtp_error
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
        return f"{exc.smtp_code} {text}"
    return f"{type(exc).__name__}: {exc}"
