"""Pages open on a game: the live connections that hold a watching player's mail and push.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-05

``page_watchers``: one row per serving process, game and seat while that seat has the game open
on a page (app/features/live/presence.py). Nothing else changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | Sequence[str] | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "page_watchers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("process", sa.String(length=80), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat_id", sa.Integer(), nullable=False),
        sa.Column("pages", sa.Integer(), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"],
                                name=op.f("fk_page_watchers_game_id_games")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_page_watchers")),
        sa.UniqueConstraint("process", "game_id", "seat_id",
                            name=op.f("uq_page_watchers_process")),
    )
    op.create_index(op.f("ix_page_watchers_game_id"), "page_watchers", ["game_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_page_watchers_game_id"), table_name="page_watchers")
    op.drop_table("page_watchers")
