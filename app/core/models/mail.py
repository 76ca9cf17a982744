"""The mail tables: the outbox of mails to send, written in the transaction that caused them, and
the queue of mails that arrived for a reply address."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, ForeignKey, Integer, LargeBinary, String
from sqlmodel import Field, SQLModel

from .base import utcnow


class OutboxMail(SQLModel, table=True):
    """A mail to send, written in the same transaction as the move that caused it."""

    __tablename__ = "outbox"

    id: int | None = Field(default=None, primary_key=True)
    game_id: int | None = Field(
        default=None, sa_column=Column(Integer, ForeignKey("games.id"), index=True)
    )
    seq: int | None = None
    kind: str = Field(max_length=40)
    recipient: str = Field(max_length=254)
    seat_id: int | None = None
    message_id: str = Field(sa_column=Column(String(200), nullable=False, unique=True))
    """Deterministic, so a retried or duplicated send is recognisable."""
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    attempts: int = 0
    next_attempt_at: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True), index=True)
    )
    sent_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    last_error: str | None = Field(default=None, max_length=2000)
    handed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    """When the sender was about to end the message's data: from then on the relay may have
    it, so the row is never sent again (see app/mail/send.py)."""
    bounce_token: str | None = Field(
        default=None, sa_column=Column(String(32), unique=True, nullable=True)
    )
    """The token of the row's envelope sender (``bounces+<token>@<mail domain>``), written at
    the hand-over: a delivery status notification sent back to it names this row (see
    app/features/delivery/verp.py)."""
    bounced_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    """When a delivery status notification said the mail could not be delivered."""
    bounce: str | None = Field(default=None, max_length=500)
    """What that notification said (its status code and diagnostic)."""
    relay: str | None = Field(default=None, max_length=20)
    """The relay that took the mail (``primary`` or ``fallback``)."""
    body_purged_at: datetime | None = Field(default=None,
                                            sa_column=Column(DateTime(timezone=True)))
    """When the mail's body (its ``payload``) was emptied after the retention time; the row
    stays for the audit (app/features/retention/)."""


class InboundMail(SQLModel, table=True):
    """A mail that arrived for a reply address (SMTP listener or IMAP poller), queued for the
    worker that applies it. A worker claims rows atomically (``claimed_by``/``claimed_at``);
    ``expected_seq`` and ``input`` are fixed before the move is submitted, so a row processed
    again after a crash is recognised as already applied; ``processed_at`` and ``result`` say
    what became of it."""

    __tablename__ = "inbound_mail"

    id: int | None = Field(default=None, primary_key=True)
    recipient: str = Field(max_length=254)
    game_uid: str = Field(max_length=32, index=True)
    seat: int
    sender: str = Field(default="", max_length=254)
    """The envelope sender (MAIL FROM), or the From header of a polled mail."""
    message_id: str | None = Field(default=None, max_length=250, index=True)
    source: str = Field(default="smtp", max_length=10)
    raw: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    received_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    claimed_by: str | None = Field(default=None, max_length=100)
    claimed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    attempts: int = 0
    """How many times a worker claimed it (a message that keeps failing is given up)."""
    expected_seq: int | None = None
    input: str | None = Field(default=None, max_length=500)
    processed_at: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True), index=True)
    )
    result: str | None = Field(default=None, max_length=40)
    """applied, duplicate, illegal, moved-on, not-yours, not-playing, unparseable, ignored,
    bounce (a bounce that came to the reply address, applied)..."""
    detail: str | None = Field(default=None, max_length=2000)


class MailAddress(SQLModel, table=True):
    """What the server knows about delivering to one address (lower-cased): when a relay last
    took a mail for it, its last bounce, whether it is undeliverable (a permanent failure: mail
    to it stops until its player changes it or asks for a test mail) and the relay it sticks
    to (see app/features/delivery/)."""

    __tablename__ = "mail_addresses"

    address: str = Field(primary_key=True, max_length=254)
    last_delivered_at: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True))
    )
    """When a relay last took a mail for the address."""
    last_bounce_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    bounce_reason: str | None = Field(default=None, max_length=500)
    """Why the last mail bounced (the status and the receiving server's words)."""
    bounces: int = 0
    undeliverable_since: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True), index=True)
    )
    """Set by a permanent failure, cleared by a new address or a test mail asked for."""
    relay: str | None = Field(default=None, max_length=20)
    """The relay the address sticks to (``primary`` or ``fallback``): the one that last took a
    mail for it, or the other once that one failed for it (see
    app/features/delivery/routing.py)."""
    relay_trouble_since: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True))
    )
    """Since when the address's relay keeps failing for it (None: it is not)."""
