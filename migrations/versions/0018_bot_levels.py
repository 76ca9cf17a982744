"""Computer players at three levels: a level per seat, and the bot turns the worker plays.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27

``seats.bot_level``: the level the computer plays the seat at (easy, normal, strong); every
existing seat is easy, as the computer played before. ``bot_turns``: one row per decision a
normal or strong computer seat owes, claimed atomically by a scheduler
(app/features/clock/botturns.py). The move log and its append-only triggers are untouched.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("bot_level", sa.String(length=10), server_default="easy",
                                   nullable=False))
    op.create_table(
        "bot_turns",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("decision_seq", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("level", sa.String(length=10), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_by", sa.String(length=100), nullable=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("result", sa.String(length=20), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_bot_turns_game_id_games"),
        sa.PrimaryKeyConstraint("id", name="pk_bot_turns"),
        sa.UniqueConstraint("game_id", "decision_seq", "seat", name="uq_bot_turns_game_id"),
    )
    op.create_index("ix_bot_turns_game_id", "bot_turns", ["game_id"], unique=False)
    op.create_index("ix_bot_turns_open", "bot_turns", ["created_at"], unique=False,
                    postgresql_where=sa.text("done_at IS NULL"),
                    sqlite_where=sa.text("done_at IS NULL"))


def downgrade() -> None:
    op.drop_index("ix_bot_turns_open", table_name="bot_turns")
    op.drop_index("ix_bot_turns_game_id", table_name="bot_turns")
    op.drop_table("bot_turns")
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("bot_level")
