"""Database engines and sessions for SQLite (embedded default) and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.pool import NullPool
from sqlmodel import Session


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine tuned for the database kind.

    SQLite runs in WAL mode with a busy timeout so several threads or processes can share the
    file; PostgreSQL uses a small connection pool per process.
    """
    if url.startswith("sqlite"):
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            poolclass=NullPool if ":memory:" not in url else None,
            **kwargs,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin_immediate)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20, **kwargs)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy manage transactions; WAL lets readers work beside one writer.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _sqlite_begin_immediate(connection: Any) -> None:
    """Take the write lock when a transaction starts, so two writers queue instead of failing
    later with 'database is locked' on the upgrade from a read lock."""
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def session(engine: Engine) -> Session:
    return Session(engine, expire_on_commit=False)
