"""Commitments of version 2, and a game's dealing fixed once its commitment is shown.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28

``games.commitment_version``: how ``dealing_commitment`` was made
(app/features/fairness/dealing.py): 2 for the games created from now on (SHA-256 of the secret with
the game's id, ruleset, variant, dealing scheme and whether the seed was chosen), 1 for the games
created with a commitment before (its SHA-256 of the secret alone), None for the games created
before fair dealing: set here from each commitment itself, so that a database taken down past this
revision and up again gets its version 2 games back. ``games.committed_uid``: the game id inside a
version 2 commitment (an imported game's is the id of the game it was exported from; one taken down
past this revision and up again loses it, and its record no longer checks out).

The trigger ``games_dealing_fixed`` refuses an UPDATE that changes, on a game that has a
commitment, its commitment, secret, scheme, seed, chosen-seed flag, commitment version, committed
id, ruleset or variant, or, once it has started, its rules version: what the players were
shown cannot be turned into another dealing afterwards (for instance a game that showed a
commitment into one "created before fair dealing"). On SQLite a ``RAISE(ABORT, ...)`` trigger;
on PostgreSQL the function ``games_dealing_fixed()`` raising SQLSTATE 23001
(``restrict_violation``). The application sees ``IntegrityError`` on both. The move log and its
triggers are untouched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MESSAGE = ("a game's dealing is fixed once its commitment is shown: its commitment, secret, "
           "scheme, seed and the facts they cover cannot be changed")
FIXED = ("dealing_commitment", "dealing_secret", "rng_scheme", "seed", "seed_chosen",
         "commitment_version", "committed_uid", "ruleset", "variant")
"""The columns a shown commitment fixes (and ``engine_version`` once the game started)."""
TRIGGER = "games_dealing_fixed"


def _sqlite_trigger() -> str:
    changed = " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in FIXED)
    return (f"CREATE TRIGGER {TRIGGER} BEFORE UPDATE ON games "
            f"WHEN OLD.dealing_commitment IS NOT NULL AND ({changed} OR "
            "(OLD.started_at IS NOT NULL AND NEW.engine_version IS NOT OLD.engine_version)) "
            f"BEGIN SELECT RAISE(ABORT, '{MESSAGE.replace(chr(39), chr(39) * 2)}'); END")


def _pg_function() -> str:
    changed = " OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in FIXED)
    return f"""
CREATE FUNCTION {TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.dealing_commitment IS NOT NULL AND ({changed} OR
            (OLD.started_at IS NOT NULL AND NEW.engine_version IS DISTINCT FROM
             OLD.engine_version)) THEN
        RAISE EXCEPTION '{MESSAGE.replace(chr(39), chr(39) * 2)}'
            USING ERRCODE = 'restrict_violation', HINT = 'UPDATE on games refused';
    END IF;
    RETURN NEW;
END;
$$
"""


def _versions_of_commitments() -> None:
    """Each commitment's version, read from the commitment itself: SHA-256 of the secret alone
    is version 1 (a game created before version 2), anything else version 2, whose id is the
    game's own (a database taken down past this revision and up again gets them back so)."""
    conn = op.get_bind()
    rows = conn.execute(sa.text("SELECT id, uid, dealing_secret, dealing_commitment FROM games "
                                "WHERE dealing_commitment IS NOT NULL")).all()
    for game_id, uid, secret, shown in rows:
        first = secret is not None and hashlib.sha256(bytes.fromhex(secret)).hexdigest() == shown
        conn.execute(sa.text("UPDATE games SET commitment_version = :version, "
                             "committed_uid = :uid WHERE id = :id"),
                     {"version": 1 if first else 2, "uid": None if first else uid,
                      "id": game_id})


def upgrade() -> None:
    # (plain ALTER TABLE on both databases, as in 0012: no table is copied)
    op.add_column("games", sa.Column("commitment_version", sa.Integer(), nullable=True))
    op.add_column("games", sa.Column("committed_uid", sa.String(length=32), nullable=True))
    _versions_of_commitments()
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        op.execute(_sqlite_trigger())
    elif dialect == "postgresql":
        op.execute(_pg_function())
        op.execute(f"CREATE TRIGGER {TRIGGER} BEFORE UPDATE ON games FOR EACH ROW "
                   f"EXECUTE FUNCTION {TRIGGER}()")
    else:
        raise NotImplementedError(f"no guard of a game's dealing on {dialect}")


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        op.execute(f"DROP TRIGGER IF EXISTS {TRIGGER}")
    elif dialect == "postgresql":
        op.execute(f"DROP TRIGGER IF EXISTS {TRIGGER} ON games")
        op.execute(f"DROP FUNCTION IF EXISTS {TRIGGER}()")
    op.drop_column("games", "committed_uid")
    op.drop_column("games", "commitment_version")
