"""Idempotency keys: the stored answers of unsafe requests sent with an Idempotency-Key.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25

A client that lost the answer to ``POST /api/games`` (or an invitation's accept, a start...)
sends the request again with the same ``Idempotency-Key`` header and gets the first answer
replayed instead of a second game. Each row holds a key's hash, the request's fingerprint and
the first answer (encrypted); rows live 24 hours (``created_at`` is indexed for the purge).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "idempotency_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("route", sa.String(length=200), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column("answer", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("locked_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_idempotency_keys"),
        sa.UniqueConstraint("key_hash", name="uq_idempotency_keys_key_hash"),
    )
    op.create_index("ix_idempotency_keys_created_at", "idempotency_keys", ["created_at"],
                    unique=False)


def downgrade() -> None:
    op.drop_index("ix_idempotency_keys_created_at", table_name="idempotency_keys")
    op.drop_table("idempotency_keys")
