"""The tables of where a game's news goes besides mail: the webhooks a game's owner added and
their deliveries, and Web Push (the server's key pair, browsers' subscriptions, deliveries)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, ForeignKey, Integer, String, UniqueConstraint
from sqlmodel import Field, SQLModel

from .base import utcnow


class Webhook(SQLModel, table=True):
    """An address a game's owner asked to be told of its turns and its end
    (app.features.webhooks.hooks)."""

    __tablename__ = "webhooks"

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    url: str = Field(max_length=2000)
    format: str = Field(max_length=20)
    """How the body is shaped: discord, slack, matrix, ntfy or json."""
    language: str = Field(
        default="en", sa_column=Column(String(5), nullable=False, server_default="en")
    )
    """The language its posts are worded in (one of app.core.i18n.LANGUAGES)."""
    secret: str | None = Field(default=None, max_length=60)
    """What its posts are signed with (``whsec_...``, Standard Webhooks): a ``json`` webhook's,
    drawn when it was added; None for other formats and for webhooks added before signing."""
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )


class WebhookDelivery(SQLModel, table=True):
    """One event to post to one webhook, written in the transaction of the move that caused it and
    sent by the worker with the outbox's claim, lease and backoff (app.features.webhooks.hooks)."""

    __tablename__ = "webhook_outbox"

    id: int | None = Field(default=None, primary_key=True)
    webhook_id: int = Field(
        sa_column=Column(Integer, ForeignKey("webhooks.id"), nullable=False, index=True)
    )
    event_key: str = Field(sa_column=Column(String(200), nullable=False, unique=True))
    """``{webhook}.{seq}.{event}``: one decision or end posts once per webhook."""
    event: str = Field(max_length=20)
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


class PushKey(SQLModel, table=True):
    """The server's VAPID key pair for Web Push (app.features.push.notifications): made on first
    need, one row, kept in the database so that every process signs with the same key (a new key
    would orphan every browser's subscription)."""

    __tablename__ = "push_keys"

    id: int | None = Field(default=None, primary_key=True)
    private_key: str = Field(max_length=400)
    """The P-256 private key, PEM (PKCS#8)."""
    public_key: str = Field(max_length=200)
    """The uncompressed public point, base64url without padding (the browser's
    ``applicationServerKey``)."""
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )


class PushSubscription(SQLModel, table=True):
    """One browser's Web Push subscription for one seat (app.features.push.notifications)."""

    __tablename__ = "push_subscriptions"
    __table_args__ = (UniqueConstraint("seat_id", "endpoint"),)

    id: int | None = Field(default=None, primary_key=True)
    seat_id: int = Field(
        sa_column=Column(Integer, ForeignKey("seats.id"), nullable=False, index=True)
    )
    endpoint: str = Field(max_length=1000)
    p256dh: str = Field(max_length=200)
    auth: str = Field(max_length=100)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )


class PushDelivery(SQLModel, table=True):
    """One "your turn" notification to one subscription, written in the move's transaction
    and sent by the worker with a claim, lease and backoff, like the mail outbox."""

    __tablename__ = "push_outbox"

    id: int | None = Field(default=None, primary_key=True)
    subscription_id: int = Field(
        sa_column=Column(Integer, ForeignKey("push_subscriptions.id"), nullable=False,
                         index=True)
    )
    event_key: str = Field(sa_column=Column(String(200), nullable=False, unique=True))
    """``{subscription}.{seq}``: one decision is pushed once per subscription."""
    seq: int
    """The log length when the decision opened (skipped if answered before it is sent)."""
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


class PageWatcher(SQLModel, table=True):
    """A seat's game open on a page somewhere: the live connection of that page
    (app.features.live) keeps the row while it lasts, so that mail and push are held for a
    player who is looking at the game. One row per serving process, game and seat, counting
    that process's open pages; ``seen_at`` is renewed while they stay open, and a row not renewed
    for a while (its process is gone) no longer counts."""

    __tablename__ = "page_watchers"
    __table_args__ = (UniqueConstraint("process", "game_id", "seat_id"),)

    id: int | None = Field(default=None, primary_key=True)
    process: str = Field(max_length=80)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    seat_id: int = Field(sa_column=Column(Integer, nullable=False))
    pages: int = Field(default=1)
    seen_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
