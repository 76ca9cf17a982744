"""Takebacks: a player's request to take back their own last move, agreed by the others.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27

One row per request; a partial unique index keeps at most one pending per game. The move log
itself is untouched (still append-only): an agreed takeback is written there as a ``rollback``
entry.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "takebacks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("move_seq", sa.Integer(), nullable=False),
        sa.Column("head_seq", sa.Integer(), nullable=False),
        sa.Column("voters", sa.JSON(), nullable=False),
        sa.Column("answers", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("rollback_seq", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_takebacks_game_id_games"),
        sa.PrimaryKeyConstraint("id", name="pk_takebacks"),
    )
    op.create_index("ix_takebacks_game_id", "takebacks", ["game_id"], unique=False)
    op.create_index("ix_takebacks_one_pending", "takebacks", ["game_id"], unique=True,
                    postgresql_where=sa.text("status = 'pending'"),
                    sqlite_where=sa.text("status = 'pending'"))


def downgrade() -> None:
    op.drop_index("ix_takebacks_one_pending", table_name="takebacks")
    op.drop_index("ix_takebacks_game_id", table_name="takebacks")
    op.drop_table("takebacks")
