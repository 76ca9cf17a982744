"""A rematch's seat remembers that its player said no: ``seats.declined_at``.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29

A rematch seats the same players in the same seats and starts by itself once every person has
said yes (app/features/rematch/rematches.py). A player may say no instead: ``declined_at`` is
when they did (NULL for every other seat), so that the rematch shows who declined and the
others may play with the computer in that seat, or cancel it. A plain ALTER TABLE on both
databases: no table is copied, and ``moves`` and its append-only triggers are not touched.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | Sequence[str] | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("seats", sa.Column("declined_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("declined_at")
