"""Initial schema: games, seats, moves (append-only), snapshots, api_tokens, outbox, deadlines.

Revision ID: 0001
Revises: none
Create Date: 2026-11-21

Every constraint and index is named explicitly (the names app.core.models' naming convention gives),
so later migrations can refer to them on both databases. The move log is append-only: triggers
refuse UPDATE and DELETE on ``moves`` (and TRUNCATE on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY_MESSAGE = "the move log is append-only: moves cannot be changed or deleted"

# SQLite: RAISE(ABORT) fails the statement with SQLITE_CONSTRAINT (sqlite3.IntegrityError).
SQLITE_TRIGGERS = {
    "moves_no_update": "UPDATE",
    "moves_no_delete": "DELETE",
}

# PostgreSQL: one function serves the row-level UPDATE/DELETE trigger and the statement-level
# TRUNCATE trigger. SQLSTATE 23001 (restrict_violation) makes psycopg raise an IntegrityError
# subclass, so both databases report the refusal as sqlalchemy.exc.IntegrityError.
PG_FUNCTION = f"""
CREATE FUNCTION moves_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '{APPEND_ONLY_MESSAGE}'
        USING ERRCODE = 'restrict_violation', HINT = TG_OP || ' on moves refused';
END;
$$
"""
PG_TRIGGERS = {
    "moves_no_update_or_delete": "BEFORE UPDATE OR DELETE ON moves FOR EACH ROW",
    "moves_no_truncate": "BEFORE TRUNCATE ON moves FOR EACH STATEMENT",
}


def _timestamp() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uid", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("ruleset", sa.String(length=40), nullable=False),
        sa.Column("engine_version", sa.Integer(), nullable=False),
        sa.Column("variant", sa.String(length=40), nullable=False),
        sa.Column("circuits", sa.JSON(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("initial_state", sa.JSON(), nullable=True),
        sa.Column("creator_token_hash", sa.String(length=64), nullable=False),
        sa.Column("winner", sa.String(length=40), nullable=True),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("started_at", _timestamp(), nullable=True),
        sa.Column("finished_at", _timestamp(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_games"),
    )
    op.create_index("ix_games_status", "games", ["status"], unique=False)
    op.create_index("ix_games_uid", "games", ["uid"], unique=True)

    op.create_table(
        "seats",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("player_name", sa.String(length=100), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("titans", sa.JSON(), nullable=False),
        sa.Column("team", sa.Integer(), nullable=True),
        sa.Column("language", sa.String(length=5), nullable=False),
        sa.Column("notify", sa.JSON(), nullable=False),
        sa.Column("secret", sa.String(length=64), nullable=False),
        sa.Column("invite_token_hash", sa.String(length=64), nullable=True),
        sa.Column("accepted_at", _timestamp(), nullable=True),
        sa.Column("is_bot", sa.Boolean(), nullable=False),
        sa.Column("resigned_at", _timestamp(), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_seats_game_id_games"),
        sa.PrimaryKeyConstraint("id", name="pk_seats"),
        sa.UniqueConstraint("game_id", "position", name="uq_seats_game_id"),
    )
    op.create_index("ix_seats_email", "seats", ["email"], unique=False)
    op.create_index("ix_seats_game_id", "seats", ["game_id"], unique=False)
    op.create_index("ix_seats_invite_token_hash", "seats", ["invite_token_hash"], unique=False)

    op.create_table(
        "moves",
        sa.Column("game_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("input", sa.String(length=2000), nullable=False),
        sa.Column("outcomes", sa.JSON(), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_moves_game_id_games"),
        sa.PrimaryKeyConstraint("game_id", "seq", name="pk_moves"),
    )

    op.create_table(
        "snapshots",
        sa.Column("game_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_snapshots_game_id_games"),
        sa.PrimaryKeyConstraint("game_id", "seq", name="pk_snapshots"),
    )

    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("seat_id", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=100), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("revoked_at", _timestamp(), nullable=True),
        sa.ForeignKeyConstraint(["seat_id"], ["seats.id"], name="fk_api_tokens_seat_id_seats"),
        sa.PrimaryKeyConstraint("id", name="pk_api_tokens"),
        sa.UniqueConstraint("token_hash", name="uq_api_tokens_token_hash"),
    )
    op.create_index("ix_api_tokens_seat_id", "api_tokens", ["seat_id"], unique=False)

    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("recipient", sa.String(length=254), nullable=False),
        sa.Column("seat_id", sa.Integer(), nullable=True),
        sa.Column("message_id", sa.String(length=200), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _timestamp(), nullable=True),
        sa.Column("sent_at", _timestamp(), nullable=True),
        sa.Column("last_error", sa.String(length=2000), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_outbox_game_id_games"),
        sa.PrimaryKeyConstraint("id", name="pk_outbox"),
        sa.UniqueConstraint("message_id", name="uq_outbox_message_id"),
    )
    op.create_index("ix_outbox_game_id", "outbox", ["game_id"], unique=False)
    op.create_index("ix_outbox_next_attempt_at", "outbox", ["next_attempt_at"], unique=False)

    op.create_table(
        "deadlines",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("due_at", _timestamp(), nullable=False),
        sa.Column("claimed_by", sa.String(length=100), nullable=True),
        sa.Column("claimed_at", _timestamp(), nullable=True),
        sa.Column("done_at", _timestamp(), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_deadlines_game_id_games"),
        sa.PrimaryKeyConstraint("id", name="pk_deadlines"),
        sa.UniqueConstraint("game_id", "seq", "kind", name="uq_deadlines_game_id"),
    )
    op.create_index("ix_deadlines_due_at", "deadlines", ["due_at"], unique=False)
    op.create_index("ix_deadlines_game_id", "deadlines", ["game_id"], unique=False)

    _create_append_only_guard()


def downgrade() -> None:
    _drop_append_only_guard()

    op.drop_index("ix_deadlines_game_id", table_name="deadlines")
    op.drop_index("ix_deadlines_due_at", table_name="deadlines")
    op.drop_table("deadlines")

    op.drop_index("ix_outbox_next_attempt_at", table_name="outbox")
    op.drop_index("ix_outbox_game_id", table_name="outbox")
    op.drop_table("outbox")

    op.drop_index("ix_api_tokens_seat_id", table_name="api_tokens")
    op.drop_table("api_tokens")

    op.drop_table("snapshots")
    op.drop_table("moves")

    op.drop_index("ix_seats_invite_token_hash", table_name="seats")
    op.drop_index("ix_seats_game_id", table_name="seats")
    op.drop_index("ix_seats_email", table_name="seats")
    op.drop_table("seats")

    op.drop_index("ix_games_uid", table_name="games")
    op.drop_index("ix_games_status", table_name="games")
    op.drop_table("games")


def _create_append_only_guard() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        for name, event in SQLITE_TRIGGERS.items():
            op.execute(
                f"CREATE TRIGGER {name} BEFORE {event} ON moves "
                f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}'); END"
            )
    elif dialect == "postgresql":
        op.execute(PG_FUNCTION)
        for name, when in PG_TRIGGERS.items():
            op.execute(f"CREATE TRIGGER {name} {when} EXECUTE FUNCTION moves_append_only()")
    else:
        raise NotImplementedError(f"no append-only guard for moves on {dialect}")


def _drop_append_only_guard() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        for name in SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    elif dialect == "postgresql":
        for name in PG_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name} ON moves")
        op.execute("DROP FUNCTION IF EXISTS moves_append_only()")
