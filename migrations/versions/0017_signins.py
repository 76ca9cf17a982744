"""Sign-in by mail: the single-use sign-in links and the account sessions they open.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27

``signins``: one row per sign-in link asked for (app/features/signin/signins.py). ``used_at`` is set
once, by a conditional UPDATE, which makes a link single use on both databases; ``revoked_at`` by
signing out. The address and the client's IP are kept only as keyed hashes. A new table: the move
log and its append-only triggers are untouched.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "signins",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_id", sa.String(length=32), nullable=False),
        sa.Column("email_digest", sa.String(length=64), nullable=False),
        sa.Column("client_digest", sa.String(length=64), nullable=False),
        sa.Column("seats_digest", sa.String(length=64), nullable=False),
        sa.Column("mailed", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("used_by", sa.String(length=10), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_signins"),
        sa.UniqueConstraint("token_id", name="uq_signins_token_id"),
    )
    op.create_index("ix_signins_email_digest", "signins", ["email_digest"], unique=False)
    op.create_index("ix_signins_client_digest", "signins", ["client_digest"], unique=False)
    op.create_index("ix_signins_requested_at", "signins", ["requested_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_signins_requested_at", table_name="signins")
    op.drop_index("ix_signins_client_digest", table_name="signins")
    op.drop_index("ix_signins_email_digest", table_name="signins")
    op.drop_table("signins")
