"""A rematch names the game it follows: ``games.rematch_of``, unique.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27

``games.rematch_of`` is the id of the finished game a game is the rematch of (NULL for any
other game). Its unique index is what keeps a finished game to one rematch: two seats asking at
the same moment both try to insert, and the database lets one of them in (both databases allow
any number of NULLs in a unique index).

On SQLite, batch mode copies ``games`` to add the foreign key; ``moves`` is not touched, so its
append-only triggers stay.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("rematch_of", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_games_rematch_of_games", "games", ["rematch_of"], ["id"])
        batch.create_index("ix_games_rematch_of", ["rematch_of"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_index("ix_games_rematch_of")
        batch.drop_constraint("fk_games_rematch_of_games", type_="foreignkey")
        batch.drop_column("rematch_of")
