"""Fair dealing: a secret per game, its commitment, and the seats' contributions.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26

``games.rng_scheme`` says how a game's chance is drawn. Every game created before this revision
was dealt by SplitMix64 from ``games.seed``, and keeps it (``splitmix64``), so its log replays to
the same states; new games draw a 256-bit ``dealing_secret`` whose SHA-256
(``dealing_commitment``) every seat sees from the start, mixed with each seat's
``contribution`` at the start (``hmac-sha256``). ``seed_chosen`` marks a game an admin dealt
from a chosen seed; ``seat_setups`` keeps what the seats asked for at the start, to check the
deal against once the secret is published.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # (plain ALTER TABLE on both databases, as in 0010: no table is copied)
    op.add_column("games", sa.Column("rng_scheme", sa.String(length=20), nullable=False,
                                     server_default="splitmix64"))
    op.add_column("games", sa.Column("dealing_secret", sa.String(length=64), nullable=True))
    op.add_column("games", sa.Column("dealing_commitment", sa.String(length=64), nullable=True))
    op.add_column("games", sa.Column("seed_chosen", sa.Boolean(), nullable=False,
                                     server_default=sa.false()))
    op.add_column("games", sa.Column("seat_setups", sa.JSON(), nullable=True))
    op.add_column("seats", sa.Column("contribution", sa.String(length=128), nullable=True))


def downgrade() -> None:
    op.drop_column("seats", "contribution")
    for column in ("seat_setups", "seed_chosen", "dealing_commitment", "dealing_secret",
                   "rng_scheme"):
        op.drop_column("games", column)
