"""Sealed orders: secret answers to a simultaneous decision, kept until all are in.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24

*The Great Race* has every crew plan at once, behind a screen. A plan is sealed in
``sealed_orders`` and the move log receives one entry, the reveal, when the last plan is in.
Sealed rows are append-only like the log (the same kind of triggers): a plan once given cannot
be changed, and the reveal is rebuilt from what was sealed.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MESSAGE = "sealed orders are append-only: a sealed answer cannot be changed or deleted"
SQLITE_TRIGGERS = {"sealed_orders_no_update": "UPDATE", "sealed_orders_no_delete": "DELETE"}
PG_FUNCTION = f"""
CREATE FUNCTION sealed_orders_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '{MESSAGE}'
        USING ERRCODE = 'restrict_violation', HINT = TG_OP || ' on sealed_orders refused';
END;
$$
"""
PG_TRIGGERS = {
    "sealed_orders_no_update_or_delete": "BEFORE UPDATE OR DELETE ON sealed_orders FOR EACH ROW",
    "sealed_orders_no_truncate": "BEFORE TRUNCATE ON sealed_orders FOR EACH STATEMENT",
}


def upgrade() -> None:
    op.create_table(
        "sealed_orders",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("decision_seq", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("input", sa.String(length=2000), nullable=False),
        sa.Column("actor", sa.String(length=20), server_default="player", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"],
                                name="fk_sealed_orders_game_id_games"),
        sa.PrimaryKeyConstraint("game_id", "decision_seq", "seat", name="pk_sealed_orders"),
    )
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        for name, event in SQLITE_TRIGGERS.items():
            op.execute(
                f"CREATE TRIGGER {name} BEFORE {event} ON sealed_orders "
                f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
            )
    elif dialect == "postgresql":
        op.execute(PG_FUNCTION)
        for name, when in PG_TRIGGERS.items():
            op.execute(
                f"CREATE TRIGGER {name} {when} EXECUTE FUNCTION sealed_orders_append_only()"
            )
    else:
        raise NotImplementedError(f"no append-only guard for sealed_orders on {dialect}")


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "postgresql":
        for name in PG_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name} ON sealed_orders")
        op.execute("DROP FUNCTION IF EXISTS sealed_orders_append_only()")
    op.drop_table("sealed_orders")
