"""The clock: who made each log entry and which entries are notes, deadlines that can be
recomputed, time banks and missed deadlines per seat, pauses, players' away dates, and the
scheduler's last tick.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21

``moves`` gets its new columns by plain ADD COLUMN with server defaults, never by a table copy:
a copy would drop its append-only triggers (and ADD COLUMN rewrites no row, so the triggers
do not fire). ``deadlines`` is recreated in batch mode on SQLite to change its unique key.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _timestamp() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("moves", sa.Column("kind", sa.String(length=20), nullable=False,
                                     server_default="move"))
    op.add_column("moves", sa.Column("actor", sa.String(length=20), nullable=False,
                                     server_default="player"))
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("owner_email", sa.String(length=254), nullable=True))
        batch.add_column(sa.Column("paused_at", _timestamp(), nullable=True))
        batch.add_column(sa.Column("pause_reason", sa.String(length=200), nullable=True))
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("bank_seconds", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("missed_deadlines", sa.Integer(), nullable=False,
                                   server_default="0"))
    op.drop_index("ix_deadlines_due_at", table_name="deadlines")
    with op.batch_alter_table("deadlines") as batch:
        batch.drop_constraint("uq_deadlines_game_id", type_="unique")
        batch.create_unique_constraint("uq_deadlines_game_id", ["game_id", "seq", "seat", "kind"])
        batch.add_column(sa.Column("opened_at", _timestamp(), nullable=True))
        batch.add_column(sa.Column("allowance_seconds", sa.Integer(), nullable=False,
                                   server_default="0"))
        batch.add_column(sa.Column("extra_seconds", sa.Integer(), nullable=False,
                                   server_default="0"))
        batch.add_column(sa.Column("result", sa.String(length=40), nullable=True))
    op.create_index("ix_deadlines_open_due", "deadlines", ["due_at"], unique=False,
                    postgresql_where=sa.text("done_at IS NULL"),
                    sqlite_where=sa.text("done_at IS NULL"))
    op.create_table(
        "absences",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("starts_at", _timestamp(), nullable=False),
        sa.Column("ends_at", _timestamp(), nullable=False),
        sa.Column("mode", sa.String(length=20), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("cancelled_at", _timestamp(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_absences"),
    )
    op.create_index("ix_absences_email", "absences", ["email"], unique=False)
    op.create_table(
        "clock_ticks",
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("last_tick_at", _timestamp(), nullable=False),
        sa.Column("worker", sa.String(length=100), nullable=False),
        sa.Column("processed", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_clock_ticks"),
    )


def downgrade() -> None:
    op.drop_table("clock_ticks")
    op.drop_index("ix_absences_email", table_name="absences")
    op.drop_table("absences")
    op.drop_index("ix_deadlines_open_due", table_name="deadlines")
    with op.batch_alter_table("deadlines") as batch:
        batch.drop_column("result")
        batch.drop_column("extra_seconds")
        batch.drop_column("allowance_seconds")
        batch.drop_column("opened_at")
        batch.drop_constraint("uq_deadlines_game_id", type_="unique")
        batch.create_unique_constraint("uq_deadlines_game_id", ["game_id", "seq", "kind"])
    op.create_index("ix_deadlines_due_at", "deadlines", ["due_at"], unique=False)
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("missed_deadlines")
        batch.drop_column("bank_seconds")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("pause_reason")
        batch.drop_column("paused_at")
        batch.drop_column("owner_email")
    # ALTER TABLE ... DROP COLUMN (SQLite 3.35+) keeps the table and its triggers
    op.drop_column("moves", "actor")
    op.drop_column("moves", "kind")
