"""Game chat: the messages the seats of a game write to each other.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25

Append-only rows (game, seat or null for the system, text, created_at), read per game in the
order of their id: the index on (game_id, id) serves both the page's newest messages and the
mails' "chat since your last mail".
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chat_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("text", sa.String(length=2000), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"],
                                name="fk_chat_messages_game_id_games"),
        sa.PrimaryKeyConstraint("id", name="pk_chat_messages"),
    )
    op.create_index("ix_chat_messages_game_id_id", "chat_messages", ["game_id", "id"],
                    unique=False)


def downgrade() -> None:
    op.drop_index("ix_chat_messages_game_id_id", table_name="chat_messages")
    op.drop_table("chat_messages")
