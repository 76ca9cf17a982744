"""Alembic environment for Titan Post.

Run it through ``app.core.migrate`` (or ``titanpost db ...``), which sets ``sqlalchemy.url`` on the
Alembic config programmatically; there is no alembic.ini. A caller that already holds a
connection can pass it in ``config.attributes["connection"]``: the migrations then run on it and
the caller owns its transaction (commit afterwards).
"""

from __future__ import annotations

from typing import Any, Literal

import sqlalchemy as sa
from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel
from sqlmodel.sql.sqltypes import AutoString

import app.core.models  # noqa: F401  (registers every table on SQLModel.metadata)
from app.core.db import WRITE, make_engine

config = context.config
target_metadata = SQLModel.metadata

# PostgreSQL advisory lock held for the migration transaction, so that processes upgrading at
# once (several workers starting) queue up instead of creating the same tables twice. SQLite
# needs none: a write connection from make_engine begins with BEGIN IMMEDIATE, which
# serialises them.
MIGRATION_LOCK_KEY = 0x7469_7461_6E70  # "titanp"


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError(
            "no database URL: run the migrations through app.core.migrate or 'titanpost db', "
            "which set sqlalchemy.url on the Alembic config"
        )
    return url


def _render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Autogenerate writes SQLModel's AutoString as a plain sa.String, so revision files need
    nothing from sqlmodel."""
    if type_ == "type" and isinstance(obj, AutoString):
        return f"sa.String(length={obj.length!r})" if obj.length else "sa.String()"
    return False


def _configure(**kwargs: Any) -> None:
    context.configure(
        target_metadata=target_metadata,
        compare_type=True,
        render_item=_render_item,
        **kwargs,
    )


def run_migrations_offline() -> None:
    """Print the SQL instead of running it (``alembic upgrade --sql``)."""
    url = _url()
    _configure(
        url=url,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=url.startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()


def _run_on(connection: Connection, *, ours: bool) -> None:
    sqlite = connection.dialect.name == "sqlite"
    options: dict[str, Any] = {"render_as_batch": sqlite}
    if sqlite and ours:
        # make_engine's SQLite connections issue an explicit BEGIN, which makes SQLite DDL
        # transactional: run the whole upgrade in one transaction, checked before commit.
        options["transactional_ddl"] = True
    _configure(connection=connection, **options)
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Taken before Alembic reads the version table, so a process that waited sees the
            # revision the previous one committed and has nothing left to do.
            connection.execute(
                sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
            )
        context.run_migrations()
        if sqlite and ours:
            _check_foreign_keys(connection)


def _check_foreign_keys(connection: Connection) -> None:
    """Batch mode rebuilds SQLite tables with foreign-key enforcement off; refuse to commit a
    migration that left dangling references."""
    problems = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if problems:
        raise RuntimeError(f"migration left rows violating foreign keys: {problems[:10]}")


def run_migrations_online() -> None:
    given = config.attributes.get("connection")
    if given is not None:
        _run_on(given, ours=False)
        return
    engine = make_engine(_url()).execution_options(**{WRITE: True})
    try:
        with engine.connect() as connection:
            if connection.dialect.name != "sqlite":
                _run_on(connection, ours=True)
                return
            # SQLite ignores this PRAGMA inside a transaction, so set it on the driver's
            # connection before SQLAlchemy begins one: with enforcement on, batch mode's
            # copy-and-drop of a table that others reference would fail.
            raw = connection.connection.driver_connection
            assert raw is not None
            raw.execute("PRAGMA foreign_keys=OFF")
            try:
                _run_on(connection, ours=True)
            finally:
                raw.execute("PRAGMA foreign_keys=ON")
    finally:
        engine.dispose()


def _main() -> None:
    if context.is_offline_mode():
        run_migrations_offline()
    else:
        run_migrations_online()


_main()
