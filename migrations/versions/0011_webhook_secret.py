"""A webhook's signing secret.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26

``webhooks.secret``: the secret (``whsec_`` and base64, Standard Webhooks) a ``json`` webhook's
posts are signed with, drawn when the webhook is added and shown once, in that answer. A webhook
of another format has none (chat services do not check signatures), and so has every webhook
added before this revision: nobody was ever shown a secret drawn here, so no receiver could
check the signature made with it. Such a webhook posts unsigned, as it did; its owner removes
it and adds it again to have its posts signed.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # (a nullable column: plain ALTER TABLE on both databases, the table is never copied)
    op.add_column("webhooks", sa.Column("secret", sa.String(length=60), nullable=True))


def downgrade() -> None:
    op.drop_column("webhooks", "secret")
