"""An index of each game's open deadline rows.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25

Every move reads the open deadline rows of its game (to close the decision answered and to
open the next one). Through ``ix_deadlines_game_id`` that read walks every row the game ever
had, three or more per decision; this partial index holds only the open rows, by game and
decision.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_deadlines_open_game", "deadlines", ["game_id", "seq"], unique=False,
                    postgresql_where=sa.text("done_at IS NULL"),
                    sqlite_where=sa.text("done_at IS NULL"))


def downgrade() -> None:
    op.drop_index("ix_deadlines_open_game", table_name="deadlines")
