"""A webhook's language.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26

``webhooks.language``: the language its posts are worded in (one of the languages with a
catalogue, or ``en``). Webhooks added before it speak English, as they did.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # (plain ALTER TABLE on both databases: SQLite adds a NOT NULL column with a default, and
    # drops one since 3.35, so the table, which the outbox refers to, is never copied)
    op.add_column("webhooks", sa.Column("language", sa.String(length=5), nullable=False,
                                        server_default="en"))


def downgrade() -> None:
    op.drop_column("webhooks", "language")
