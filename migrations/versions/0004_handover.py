"""Outbox rows record when their message was handed to the SMTP relay.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21

``handed_at`` is committed just before the sender writes the end of a message's data. A row
with it set and no ``sent_at`` belongs to a sender that stopped while the relay may already
have accepted the message: it is settled as sent (unconfirmed) instead of being sent again.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("handed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("handed_at")
