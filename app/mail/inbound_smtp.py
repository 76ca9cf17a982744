"""The inbound SMTP listener (aiosmtpd): replies to reply addresses are queued, bounces to
bounce addresses applied, others refused.

A recipient that is not a genuine reply address of this server (wrong form, wrong domain, forged
signature) is refused at RCPT with 550, so the sending server bounces it at once and nothing is
stored. A reply address named again (in any spelling) is taken once. DATA queues the raw
message once in ``inbound_mail``, for one of the reply addresses it was sent to (its author's
seat: :func:`app.mail.inbound_queue.queue_reply`), and answers 250; the worker
(:func:`app.mail.inbound.process_inbound`) applies it later and answers it at most once. A
database failure answers 451, so the sending server tries again. A message larger than
``TITANPOST_MAX_MAIL_BYTES`` is refused with 552 and never stored.

A bounce address (``bounces+<token>@<domain>``, the envelope sender of each mail sent:
:mod:`app.features.delivery.verp`) is taken when it is well formed, without looking its token
up: a bounce comes with a null sender, so refusing it would only make the reporting server
write a double bounce to its postmaster, and a token no mail has is logged and dropped when the
bounce is applied. DATA applies the bounce at once, in a thread
(:func:`app.features.delivery.bounces.apply_bounce`: a short read and an UPDATE or two, no
queue needed), and answers 250; a database failure answers 451, so the reporting server tries
again (applying a bounce twice changes nothing more).

Run it behind the domain's MX (``titanpost mail listen``), or let the MTA relay the reply domain
to it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from aiosmtpd.controller import Controller
from sqlalchemy import Engine

from app.core.config import Settings
from app.features.delivery.bounces import apply_bounce
from app.features.delivery.verp import parse_bounce_address

from .addresses import parse_reply_address
from .inbound_queue import NotAReplyAddress, queue_reply

log = logging.getLogger(__name__)

MAX_RECIPIENTS = 20
REFUSED = (
    "550 5.1.1 No such reply address here: reply to a game mail (the address it came from)"
)


class ReplyHandler:
    """aiosmtpd handler: checks each RCPT against the reply and bounce addresses; DATA queues
    a reply, applies a bounce."""

    def __init__(
        self,
        engine: Engine,
        settings: Settings,
        *,
        on_queued: Callable[[list[int]], None] | None = None,
    ) -> None:
        self.engine = engine
        self.settings = settings
        self.on_queued = on_queued

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: list[str]
    ) -> str:
        key = self._key(address)
        if key is None:
            log.info("refused RCPT %s from %s", address, getattr(session, "peer", "?"))
            return REFUSED
        if key in [self._key(given) for given in envelope.rcpt_tos]:
            return "250 OK"  # the same reply address again: the message is taken once
        if len(envelope.rcpt_tos) >= MAX_RECIPIENTS:
            return "452 4.5.3 Too many recipients"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    def _key(self, address: str) -> tuple[str, int] | str | None:
        """What a recipient names: a seat (a reply address), a token (a bounce address), or
        None (refused). The same one named again is taken once."""
        settings = self.settings
        seat = parse_reply_address(settings.secret_key, settings.mail_domain, address)
        if seat is not None:
            return seat
        return parse_bounce_address(settings.mail_domain, address)

    async def handle_DATA(
        self, server: Any, session: Any, envelope: Any
    ) -> str:
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8", errors="surrogateescape")
        sender = envelope.mail_from or ""
        tokens = [key for key in map(self._key, envelope.rcpt_tos) if isinstance(key, str)]
        replies = [given for given in envelope.rcpt_tos if not isinstance(self._key(given), str)]
        try:
            if tokens:
                await asyncio.to_thread(apply_bounce, self.engine, self.settings.mail_domain,
                                        raw, tokens=tokens)
            ids = await asyncio.to_thread(self._queue, replies, raw, sender) if replies else []
        except Exception:
            log.exception("could not take a message for %s", envelope.rcpt_tos)
            return "451 4.3.0 Temporary failure: please try again later"
        if self.on_queued is not None and ids:
            self.on_queued(ids)
        return "250 2.0.0 Reply queued" if replies else "250 2.0.0 Report taken"

    def _queue(self, recipients: list[str], raw: bytes, sender: str) -> list[int]:
        try:
            row = queue_reply(self.engine, self.settings, recipients, raw, sender=sender)
        except NotAReplyAddress:  # checked at RCPT; kept for safety
            return []
        return [row] if row is not None else []


def make_controller(
    engine: Engine,
    settings: Settings,
    host: str = "127.0.0.1",
    port: int = 8025,
    *,
    on_queued: Callable[[list[int]], None] | None = None,
    max_message_bytes: int | None = None,
) -> Controller:
    """An aiosmtpd Controller for the reply handler (``start()`` runs it in a thread).

    A message over ``max_message_bytes`` (default ``TITANPOST_MAX_MAIL_BYTES``) is refused with
    552 by aiosmtpd: at MAIL FROM when the client announces its SIZE (the listener offers the
    SIZE extension with the limit), else at the end of DATA; nothing of it is stored."""
    handler = ReplyHandler(engine, settings, on_queued=on_queued)
    controller: Controller = Controller(
        handler,
        hostname=host,
        port=port,
        server_hostname=settings.mail_domain,
        ident="Titan Post",
        data_size_limit=max_message_bytes or settings.max_mail_bytes,
        decode_data=False,
    )
    return controller
