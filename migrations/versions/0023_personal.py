"""What slow players ask for: private notes, their own data and leaving, retention, standings.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06

``game_notes`` holds a seat's private notes (app/features/notes/); ``player_groups`` and
``player_group_members`` the named groups of the standings (app/features/standings/).
``seats`` gains ``invited_at`` (when its pending invitation was made: purged after the
retention time) and ``forgotten_at`` (its player asked to be forgotten); ``outbox`` gains
``body_purged_at`` (its body emptied after the retention time, the row kept).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | Sequence[str] | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "game_notes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat_id", sa.Integer(), nullable=False),
        sa.Column("author", sa.String(length=254), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"],
                                name=op.f("fk_game_notes_game_id_games")),
        sa.ForeignKeyConstraint(["seat_id"], ["seats.id"],
                                name=op.f("fk_game_notes_seat_id_seats")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_game_notes")),
    )
    op.create_index(op.f("ix_game_notes_game_id"), "game_notes", ["game_id"])
    op.create_index(op.f("ix_game_notes_author"), "game_notes", ["author"])
    op.create_index("ix_game_notes_seat_id_id", "game_notes", ["seat_id", "id"])
    op.create_table(
        "player_groups",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uid", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("owner_email", sa.String(length=254), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_player_groups")),
        sa.UniqueConstraint("uid", name=op.f("uq_player_groups_uid")),
    )
    op.create_index(op.f("ix_player_groups_owner_email"), "player_groups", ["owner_email"])
    op.create_table(
        "player_group_members",
        sa.Column("group_id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["group_id"], ["player_groups.id"],
                                name=op.f("fk_player_group_members_group_id_player_groups")),
        sa.PrimaryKeyConstraint("group_id", "email", name=op.f("pk_player_group_members")),
    )
    op.create_index(op.f("ix_player_group_members_email"), "player_group_members", ["email"])
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("invited_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("forgotten_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("body_purged_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("body_purged_at")
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("forgotten_at")
        batch.drop_column("invited_at")
    op.drop_index(op.f("ix_player_group_members_email"), table_name="player_group_members")
    op.drop_table("player_group_members")
    op.drop_index(op.f("ix_player_groups_owner_email"), table_name="player_groups")
    op.drop_table("player_groups")
    op.drop_index("ix_game_notes_seat_id_id", table_name="game_notes")
    op.drop_index(op.f("ix_game_notes_author"), table_name="game_notes")
    op.drop_index(op.f("ix_game_notes_game_id"), table_name="game_notes")
    op.drop_table("game_notes")
