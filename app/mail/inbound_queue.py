"""The inbound queue: the replies that reach a reply address, and a worker's claim of them.

The SMTP listener (:mod:`app.mail.inbound_smtp`) and the IMAP poller
(:mod:`app.mail.inbound_imap`) queue each reply they receive as an
:class:`~app.core.models.InboundMail` row (:func:`queue_reply`, :func:`queue_inbound`); the
worker (:mod:`app.mail.inbound`) claims unprocessed rows with :func:`claim_inbound` and applies
them. One message is queued once, however many reply addresses its recipients name and however
often (for its author's seat among them, else the first; a copy seen again by its Message-ID is
not queued).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import timedelta
from email.message import EmailMessage
from email.utils import getaddresses

from sqlalchemy import Engine, and_, or_, update
from sqlmodel import col, select

from app.core.config import Settings
from app.core.db import session as open_session
from app.core.models import Game, InboundMail, Seat, utcnow
from app.features.delivery.verp import parse_bounce_address

from .addresses import parse_reply_address
from .inbound_headers import message_id_of, parse_message, sole_author

STALE_CLAIM = timedelta(minutes=10)


class NotAReplyAddress(ValueError):
    """The recipient is not a genuine reply address of this server."""


def queue_inbound(
    engine: Engine,
    settings: Settings,
    recipient: str,
    raw: bytes,
    *,
    sender: str = "",
    source: str = "smtp",
) -> int | None:
    """Queue ``raw`` (a whole message) for the reply address ``recipient``; the row's id, or None
    when the same message (its Message-ID) is already queued, for this reply address or any
    other: one message is handled once and answered at most once, however many of its
    copies arrive. Raises NotAReplyAddress."""
    found = parse_reply_address(settings.secret_key, settings.mail_domain, recipient)
    if found is None:
        raise NotAReplyAddress(f"{recipient} is not a reply address of this server")
    game_uid, seat = found
    recipient = recipient.strip().strip("<>").lower()
    message_id = message_id_of(raw)
    with open_session(engine, write=True) as s:
        if message_id is not None:
            seen = s.exec(
                select(InboundMail.id).where(InboundMail.message_id == message_id)
            ).first()
            if seen is not None:
                return None
        row = InboundMail(
            recipient=recipient,
            game_uid=game_uid,
            seat=seat,
            sender=sender.strip()[:254],
            message_id=message_id,
            source=source,
            raw=raw,
        )
        s.add(row)
        s.commit()
        return row.id


def queue_reply(
    engine: Engine,
    settings: Settings,
    recipients: Sequence[str],
    raw: bytes,
    *,
    sender: str = "",
    source: str = "smtp",
) -> int | None:
    """Queue one message once, whichever reply addresses ``recipients`` name and however
    often: for the seat among them that its author plays (the one it can move for), else the
    first. The row's id, or None when the message is already queued. Raises
    NotAReplyAddress when no recipient is a reply address of this server."""
    seats: dict[tuple[str, int], str] = {}
    for recipient in recipients:
        seat = parse_reply_address(settings.secret_key, settings.mail_domain, recipient)
        if seat is not None:
            seats.setdefault(seat, recipient)
    if not seats:
        raise NotAReplyAddress("no recipient is a reply address of this server")
    chosen = next(iter(seats.values()))
    author = sole_author(parse_message(raw, headers_only=True)) if len(seats) > 1 else None
    if author is not None:
        with open_session(engine) as s:
            for (game_uid, position), recipient in seats.items():
                email = s.exec(select(Seat.email).join(Game).where(
                    Game.uid == game_uid, Seat.position == position)).first()
                if email is not None and email.strip().lower() == author:
                    chosen = recipient
                    break
    return queue_inbound(engine, settings, chosen, raw, sender=sender, source=source)


def _recipient_headers(msg: EmailMessage) -> list[tuple[str, str]]:
    """The addresses a message's recipient headers name (an IMAP mailbox has no envelope:
    Delivered-To and X-Original-To are the MTA's record of it, and come first)."""
    values: list[str] = []
    for name in ("Delivered-To", "X-Original-To", "Envelope-To", "X-Envelope-To", "To", "Cc"):
        try:
            values.extend(str(v) for v in msg.get_all(name, []))
        except (ValueError, TypeError, IndexError):
            continue
    return getaddresses(values)


def bounce_tokens(msg: EmailMessage, settings: Settings) -> list[str]:
    """The tokens of the bounce addresses among a message's recipient headers, each once."""
    found: list[str] = []
    for _, address in _recipient_headers(msg):
        token = parse_bounce_address(settings.mail_domain, address)
        if token is not None and token not in found:
            found.append(token)
    return found


def reply_recipients(msg: EmailMessage, settings: Settings) -> list[str]:
    """The genuine reply addresses among a message's recipient headers, each seat once."""
    found: list[str] = []
    seats: set[tuple[str, int]] = set()
    for _, address in _recipient_headers(msg):
        address = address.strip().lower()
        seat = parse_reply_address(settings.secret_key, settings.mail_domain, address)
        if seat is not None and seat not in seats:
            seats.add(seat)
            found.append(address)
    return found


def claim_inbound(
    engine: Engine, worker: str, limit: int, *, stale_after: timedelta = STALE_CLAIM
) -> tuple[str, list[int]]:
    """Claim up to ``limit`` unprocessed rows for ``worker``: ``(claim token, row ids)``.

    One UPDATE takes the rows; its WHERE repeats the availability test, so on PostgreSQL a row
    taken by a concurrent claim is re-checked and skipped (and ``FOR UPDATE SKIP LOCKED`` keeps
    claims from waiting on each other); on SQLite the write transaction (``BEGIN IMMEDIATE``)
    serialises claims.
    """
    token = f"{worker[:60]}:{uuid.uuid4().hex[:16]}"
    now = utcnow()
    available = and_(
        col(InboundMail.processed_at).is_(None),
        or_(
            col(InboundMail.claimed_at).is_(None),
            col(InboundMail.claimed_at) < now - stale_after,
        ),
    )
    with open_session(engine, write=True) as s:
        pick = select(InboundMail.id).where(available).order_by(col(InboundMail.id)).limit(limit)
        if engine.dialect.name == "postgresql":
            pick = pick.with_for_update(skip_locked=True)
        s.execute(
            update(InboundMail)
            .where(col(InboundMail.id).in_(pick.scalar_subquery()), available)
            .values(claimed_by=token, claimed_at=now, attempts=col(InboundMail.attempts) + 1)
            .execution_options(synchronize_session=False)
        )
        ids = s.exec(
            select(InboundMail.id)
            .where(InboundMail.claimed_by == token, col(InboundMail.processed_at).is_(None))
            .order_by(col(InboundMail.id))
        ).all()
        s.commit()
    return token, [i for i in ids if i is not None]
