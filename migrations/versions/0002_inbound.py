"""Inbound mail: replies to the per-seat reply addresses, queued for the worker that applies them.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21

Every index and constraint is named as app.core.models' naming convention names it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _timestamp() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "inbound_mail",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("recipient", sa.String(length=254), nullable=False),
        sa.Column("game_uid", sa.String(length=32), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("sender", sa.String(length=254), nullable=False),
        sa.Column("message_id", sa.String(length=250), nullable=True),
        sa.Column("source", sa.String(length=10), nullable=False),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("received_at", _timestamp(), nullable=False),
        sa.Column("claimed_by", sa.String(length=100), nullable=True),
        sa.Column("claimed_at", _timestamp(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("expected_seq", sa.Integer(), nullable=True),
        sa.Column("input", sa.String(length=500), nullable=True),
        sa.Column("processed_at", _timestamp(), nullable=True),
        sa.Column("result", sa.String(length=40), nullable=True),
        sa.Column("detail", sa.String(length=2000), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_inbound_mail"),
    )
    op.create_index("ix_inbound_mail_game_uid", "inbound_mail", ["game_uid"], unique=False)
    op.create_index("ix_inbound_mail_message_id", "inbound_mail", ["message_id"], unique=False)
    op.create_index(
        "ix_inbound_mail_processed_at", "inbound_mail", ["processed_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_inbound_mail_processed_at", table_name="inbound_mail")
    op.drop_index("ix_inbound_mail_message_id", table_name="inbound_mail")
    op.drop_index("ix_inbound_mail_game_uid", table_name="inbound_mail")
    op.drop_table("inbound_mail")
