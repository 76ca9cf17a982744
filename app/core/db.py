"""Database engines and sessions for SQLite (embedded default) and PostgreSQL."""

from __future__ import annotations

import threading
from contextlib import suppress
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, make_url, text
from sqlalchemy.orm.session import SessionTransactionState
from sqlmodel import Session

from app.core.statements import Prepared

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
        event.listen(engine, "commit", _sqlite_end)
        event.listen(engine, "rollback", _sqlite_end)
        # (a connection closed or dropped in the middle of a write must not keep the turn)
        event.listen(engine.pool, "checkin", _sqlite_checkin)
        event.listen(engine.pool, "invalidate", _sqlite_checkin)
        return engine
    pool = {"pool_size": 10, "max_overflow": 20} | kwargs
    if make_url(url).get_driver_name() == "psycopg":
        # Every statement a server-side prepared one from its first run on a connection:
        # psycopg's default waits for a statement's fifth run on each pooled connection,
        # and the few statements of a move (the same every time) then go parsed and planned
        # anew on most connections. Measured: POST-only moves 255-267/s against 314-315/s.
        pool["connect_args"] = {"prepare_threshold": 0} | dict(pool.get("connect_args", {}))
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


_BEGIN, _BEGIN_IMMEDIATE = Prepared(text("BEGIN")), Prepared(text("BEGIN IMMEDIATE"))
"""(Run on the driver's cursor: through SQLAlchemy's execution, a BEGIN cost more than the
statement.)"""
_WRITER = "titanpost_writer_lock"
"""The connection-info key of the writer lock a connection holds while it writes."""

_WRITER_WAIT = 30.0
"""How long a writer waits for another thread's write to end before asking SQLite anyway
(which then waits out its own busy timeout and fails with "database is locked")."""


def _writer_lock(pool: Any) -> threading.RLock:
    """The lock this process's writers queue on: the pool's, which every engine made from
    this one shares (their execution options differ, their connections do not)."""
    lock: threading.RLock | None = getattr(pool, _WRITER, None)
    if lock is None:
        lock = pool.__dict__.setdefault(_WRITER, threading.RLock())
    return lock


def _sqlite_begin(connection: Any) -> None:
    """``BEGIN IMMEDIATE`` for a writer, after waiting its turn among this process's writers.

    SQLite has one writer at a time. Left to SQLite, a second thread's ``BEGIN IMMEDIATE``
    finds the lock taken and sleeps in its busy handler (1, 2, 5, 10 ... 100 ms, whatever
    happens to the lock meanwhile), so under load the process sits idle while the lock is
    free. Writers of this process queue on a lock of the engine's instead and start the
    moment the previous one ends; other processes still meet SQLite's busy timeout.
    """
    if connection.get_execution_options().get(WRITE):
        lock = _writer_lock(connection.engine.pool)
        held = lock.acquire(timeout=_WRITER_WAIT)
        if held:
            connection.info[_WRITER] = lock
        try:
            _BEGIN_IMMEDIATE.execute(connection, {})
        except BaseException:
            _sqlite_end(connection)
            raise
    else:
        _BEGIN.execute(connection, {})


def _sqlite_end(connection: Any) -> None:
    """The write ended (committed or rolled back): the next writer of this process may begin.
    (A connection dropped in the middle let go of the turn then: see :func:`_sqlite_checkin`.)"""
    if not connection.invalidated:
        _release(connection.info)


def _sqlite_checkin(_dbapi_connection: Any, record: Any, *_exception: Any) -> None:
    if record is not None:
        _release(record.info)


def _release(info: dict[Any, Any]) -> None:
    lock = info.pop(_WRITER, None)
    if lock is not None:
        with suppress(RuntimeError):  # (not this thread's: it let go when its thread ended)
            lock.release()


class AppSession(Session):
    """The app's session: SQLModel's, with :meth:`connection` answered at once while the
    transaction holds its connection.

    A move asks for its transaction's connection five times or so (each prepared statement
    runs on it); SQLAlchemy's answer looks the bind up, checks the transaction's context and
    state through its decorators each time, and cost more than some of the statements. The
    answer is the same: the connection the transaction already holds for the session's bind.
    Anything else (no transaction yet, a transaction not active, a ``with session.begin()``
    context, arguments) goes SQLAlchemy's way."""

    def connection(self, bind_arguments: Any = None,
                   execution_options: Any = None) -> Connection:
        if not bind_arguments and not execution_options:
            transaction, bind = self._transaction, self.bind
            if (transaction is not None and bind is not None
                    and self._trans_context_manager is None
                    and transaction._state is SessionTransactionState.ACTIVE):
                held = transaction._connections.get(bind)
                if held is not None:
                    return held[0]
        return super().connection(bind_arguments, execution_options)


def session(engine: Engine, *, write: bool = False) -> Session:
    """A session; a read-only one on PostgreSQL runs in autocommit (no BEGIN/ROLLBACK trips)."""
    return AppSession(_binds(engine)[write], expire_on_commit=False)


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
