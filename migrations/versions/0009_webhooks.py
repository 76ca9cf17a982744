"""Per-game webhooks and their outbox.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25

``webhooks``: the addresses a game's owner registered (url, format). ``webhook_outbox``: one
row per event and webhook, written in the move's transaction and sent by the worker (claimed
with a lease, retried with backoff, like the mail outbox).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("format", sa.String(length=20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_webhooks_game_id_games"),
        sa.PrimaryKeyConstraint("id", name="pk_webhooks"),
    )
    op.create_index("ix_webhooks_game_id", "webhooks", ["game_id"], unique=False)
    op.create_table(
        "webhook_outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("webhook_id", sa.Integer(), nullable=False),
        sa.Column("event_key", sa.String(length=200), nullable=False),
        sa.Column("event", sa.String(length=20), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.String(length=2000), nullable=True),
        sa.ForeignKeyConstraint(["webhook_id"], ["webhooks.id"],
                                name="fk_webhook_outbox_webhook_id_webhooks"),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_outbox"),
        sa.UniqueConstraint("event_key", name="uq_webhook_outbox_event_key"),
    )
    op.create_index("ix_webhook_outbox_webhook_id", "webhook_outbox", ["webhook_id"],
                    unique=False)
    op.create_index("ix_webhook_outbox_next_attempt_at", "webhook_outbox",
                    ["next_attempt_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_webhook_outbox_next_attempt_at", table_name="webhook_outbox")
    op.drop_index("ix_webhook_outbox_webhook_id", table_name="webhook_outbox")
    op.drop_table("webhook_outbox")
    op.drop_index("ix_webhooks_game_id", table_name="webhooks")
    op.drop_table("webhooks")
