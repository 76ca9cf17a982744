"""Mail that arrives: bounces traced to their mail, the state of each address, relays.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06

``outbox`` gains ``bounce_token`` (the envelope sender's token, unique), ``bounced_at``,
``bounce`` and ``relay``; ``mail_addresses`` keeps, per address, the last delivery, the last
bounce, whether it is undeliverable and the relay it sticks to (app/features/delivery/).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | Sequence[str] | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("bounce_token", sa.String(length=32), nullable=True))
        batch.add_column(sa.Column("bounced_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("bounce", sa.String(length=500), nullable=True))
        batch.add_column(sa.Column("relay", sa.String(length=20), nullable=True))
        batch.create_unique_constraint(op.f("uq_outbox_bounce_token"), ["bounce_token"])
    op.create_table(
        "mail_addresses",
        sa.Column("address", sa.String(length=254), nullable=False),
        sa.Column("last_delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_bounce_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("bounce_reason", sa.String(length=500), nullable=True),
        sa.Column("bounces", sa.Integer(), nullable=False),
        sa.Column("undeliverable_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("relay", sa.String(length=20), nullable=True),
        sa.Column("relay_trouble_since", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("address", name=op.f("pk_mail_addresses")),
    )
    op.create_index(op.f("ix_mail_addresses_undeliverable_since"), "mail_addresses",
                    ["undeliverable_since"])


def downgrade() -> None:
    op.drop_index(op.f("ix_mail_addresses_undeliverable_since"), table_name="mail_addresses")
    op.drop_table("mail_addresses")
    with op.batch_alter_table("outbox") as batch:
        batch.drop_constraint(op.f("uq_outbox_bounce_token"), type_="unique")
        batch.drop_column("relay")
        batch.drop_column("bounce")
        batch.drop_column("bounced_at")
        batch.drop_column("bounce_token")
