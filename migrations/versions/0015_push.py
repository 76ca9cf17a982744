"""Web Push: the server's VAPID key, the browsers' subscriptions per seat and their outbox.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27

``push_keys``: the one VAPID key pair (made on first need by app.features.push.notifications).
``push_subscriptions``: a browser's subscription (endpoint and keys) for a seat. ``push_outbox``:
one "your turn" notification per decision and subscription, written in the move's transaction and
sent by the worker (claimed with a lease, retried with backoff, like the mail outbox). ``moves`` is
not touched, so its append-only triggers stay.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "push_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("private_key", sa.String(length=400), nullable=False),
        sa.Column("public_key", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_push_keys"),
    )
    op.create_table(
        "push_subscriptions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("seat_id", sa.Integer(), nullable=False),
        sa.Column("endpoint", sa.String(length=1000), nullable=False),
        sa.Column("p256dh", sa.String(length=200), nullable=False),
        sa.Column("auth", sa.String(length=100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["seat_id"], ["seats.id"],
                                name="fk_push_subscriptions_seat_id_seats"),
        sa.PrimaryKeyConstraint("id", name="pk_push_subscriptions"),
        sa.UniqueConstraint("seat_id", "endpoint", name="uq_push_subscriptions_seat_id"),
    )
    op.create_index("ix_push_subscriptions_seat_id", "push_subscriptions", ["seat_id"],
                    unique=False)
    op.create_table(
        "push_outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("subscription_id", sa.Integer(), nullable=False),
        sa.Column("event_key", sa.String(length=200), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.String(length=2000), nullable=True),
        sa.ForeignKeyConstraint(["subscription_id"], ["push_subscriptions.id"],
                                name="fk_push_outbox_subscription_id_push_subscriptions"),
        sa.PrimaryKeyConstraint("id", name="pk_push_outbox"),
        sa.UniqueConstraint("event_key", name="uq_push_outbox_event_key"),
    )
    op.create_index("ix_push_outbox_subscription_id", "push_outbox", ["subscription_id"],
                    unique=False)
    op.create_index("ix_push_outbox_next_attempt_at", "push_outbox", ["next_attempt_at"],
                    unique=False)


def downgrade() -> None:
    op.drop_index("ix_push_outbox_next_attempt_at", table_name="push_outbox")
    op.drop_index("ix_push_outbox_subscription_id", table_name="push_outbox")
    op.drop_table("push_outbox")
    op.drop_index("ix_push_subscriptions_seat_id", table_name="push_subscriptions")
    op.drop_table("push_subscriptions")
    op.drop_table("push_keys")
