"""Database engines and sessions for SQLite (embedded default) and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlmodel import Session

WRITE = "titanpost_write"
"""Execution option marking a session that will write (SQLite takes the write lock at once)."""


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine tuned for the database kind.

    SQLite runs in WAL mode with a busy timeout so several threads or processes can share the
    file: readers never wait, and a writing transaction takes the write lock when it begins
    (``BEGIN IMMEDIATE``) so two writers queue instead of failing on the lock upgrade.
    PostgreSQL uses a connection pool per process.
    """
    if url.startswith("sqlite"):
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=8,
            max_overflow=16,
            **kwargs,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    pool = {"pool_size": 10, "max_overflow": 20} | kwargs
    return create_engine(url, pool_recycle=300, **pool)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy manage transactions; WAL lets readers work beside one writer.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")  # first: switching to WAL may have to wait
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    if connection.get_execution_options().get(WRITE):
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        connection.exec_driver_sql("BEGIN")


def session(engine: Engine, *, write: bool = False) -> Session:
    """A session; a read-only one on PostgreSQL runs in autocommit (no BEGIN/ROLLBACK trips)."""
    return Session(_binds(engine)[write], expire_on_commit=False)


_BINDS = "_titanpost_binds"
"""The attribute of an engine holding its binds for reading and for writing, made once (an
engine with options of its own costs more to make than a request's session). An attribute of
the engine, not a mapping keyed by it: each bind refers to its engine, which would then never
be freed."""


def _binds(engine: Engine) -> tuple[Engine, Engine]:
    """The engine a session binds to for reading, and for writing."""
    binds: tuple[Engine, Engine] | None = getattr(engine, _BINDS, None)
    if binds is None:
        read = (engine.execution_options(isolation_level="AUTOCOMMIT")
                if engine.dialect.name == "postgresql" else engine)
        binds = (read, engine.execution_options(**{WRITE: True}))
        setattr(engine, _BINDS, binds)
    return binds
