"""Real databases for tests: a fresh SQLite file, or a fresh PostgreSQL database.

PostgreSQL is reached at ``TITANPOST_TEST_PG`` (default the CI machine's server,
``postgresql+psycopg://postgres@127.0.0.1:5432``); where none answers, PostgreSQL tests skip with
the reason shown in pytest's summary.

Two things keep the many database tests quick without sharing state between them. A migrated
database is a copy of a template migrated once per test process (``CREATE DATABASE ...
TEMPLATE``, or SQLite's backup API), not a new run of every migration. And a PostgreSQL test
database is dropped by a background thread: ``DROP DATABASE`` waits for a checkpoint, which the
next test need not wait for (:func:`finish` waits for them all at the end of the session).
"""

from __future__ import annotations

import os
import queue
import sqlite3
import tempfile
import threading
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import cache
from pathlib import Path

PG_SERVER = os.environ.get("TITANPOST_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432")


@cache
def pg_unavailable_reason() -> str | None:
    """None when a PostgreSQL server answers, else why PostgreSQL tests cannot run (asked once
    per test process)."""
    import psycopg

    try:
        with psycopg.connect(_libpq(PG_SERVER, "postgres"), connect_timeout=3):
            return None
    except psycopg.Error as exc:
        return f"no PostgreSQL server at {PG_SERVER}: {str(exc).strip().splitlines()[0]}"


def _libpq(url: str, database: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://") + f"/{database}"


class _Dropper:
    """Drops PostgreSQL databases one after another on a thread of its own."""

    def __init__(self) -> None:
        self.names: queue.Queue[str | None] = queue.Queue()
        self.thread: threading.Thread | None = None
        self.failures: list[str] = []

    def drop(self, name: str) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="drop-test-databases",
                                           daemon=True)
            self.thread.start()
        self.names.put(name)

    def _run(self) -> None:
        while (name := self.names.get()) is not None:
            try:
                _drop_now(name)
            except Exception as exc:  # reported by finish(), never lost in the thread
                self.failures.append(f"{name}: {exc}")

    def finish(self) -> list[str]:
        if self.thread is not None:
            self.names.put(None)
            self.thread.join()
            self.thread = None
        return self.failures


_DROPPER = _Dropper()
_TEMPLATES: dict[str, str] = {}
_MIGRATED: set[str] = set()
"""The URLs of the databases this process copied from a migrated template: already at the
newest revision, so :func:`migrate` need not ask Alembic again (about 50 ms a test)."""


def migrate(url: str) -> None:
    """Bring the database at ``url`` to the newest revision, unless it is a migrated copy."""
    if url in _MIGRATED:
        return
    from app.migrate import upgrade

    upgrade(url)


def _drop_now(name: str) -> None:
    import psycopg

    with psycopg.connect(_libpq(PG_SERVER, "postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _create(name: str, template: str | None = None) -> None:
    """Create database ``name`` (a copy of ``template`` when given) whose sessions commit
    without waiting for the write-ahead log to reach the disk (``synchronous_commit = off``):
    a commit is still atomic, isolated and seen by every other session at once, and only a
    crash of the PostgreSQL server itself, which no test causes, could lose the last ones. An
    fsync a commit cost the PostgreSQL tests some 4 ms for each of their thousands of commits.
    (The setting is the database's own, so the commands and servers the tests start as
    subprocesses have it too.)"""
    import psycopg

    copy = f' TEMPLATE "{template}"' if template else ""
    with psycopg.connect(_libpq(PG_SERVER, "postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"{copy}')
        conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')


@contextmanager
def fresh_postgres(template: str | None = None) -> Iterator[str]:
    """Create an empty database (a copy of ``template`` when given), yield its SQLAlchemy URL,
    have it dropped afterwards."""
    name = f"titanpost_test_{uuid.uuid4().hex[:12]}"
    _create(name, template)
    try:
        yield f"{PG_SERVER}/{name}"
    finally:
        _DROPPER.drop(name)


@contextmanager
def fresh_sqlite(folder: Path) -> Iterator[str]:
    yield f"sqlite:///{folder / 'titanpost-test.db'}"


def _template(kind: str) -> str:
    """This process's migrated template of ``kind``: a SQLite file's path or a PostgreSQL
    database's name, migrated to the newest revision the first time it is asked for."""
    if kind in _TEMPLATES:
        return _TEMPLATES[kind]
    from app.migrate import upgrade

    if kind == "sqlite":
        path = Path(tempfile.mkdtemp(prefix="titanpost-template-")) / "template.db"
        upgrade(f"sqlite:///{path}")
        _TEMPLATES[kind] = str(path)
    else:
        name = f"titanpost_template_{uuid.uuid4().hex[:12]}"
        _create(name)
        try:
            upgrade(f"{PG_SERVER}/{name}")
        except BaseException:
            _DROPPER.drop(name)
            raise
        _TEMPLATES[kind] = name
    return _TEMPLATES[kind]


@contextmanager
def migrated_sqlite(folder: Path) -> Iterator[str]:
    """A SQLite file already migrated to the newest revision (a copy of the template)."""
    target = folder / "titanpost-test.db"
    with sqlite3.connect(_template("sqlite")) as source, sqlite3.connect(target) as copy:
        source.backup(copy)
    url = f"sqlite:///{target}"
    _MIGRATED.add(url)
    try:
        yield url
    finally:
        _MIGRATED.discard(url)


@contextmanager
def migrated_postgres() -> Iterator[str]:
    """A PostgreSQL database already migrated to the newest revision (a copy of the template)."""
    with fresh_postgres(_template("postgresql")) as url:
        _MIGRATED.add(url)
        try:
            yield url
        finally:
            _MIGRATED.discard(url)


def finish() -> list[str]:
    """Drop this process's templates and wait for every drop; the drops that failed."""
    template = _TEMPLATES.pop("postgresql", None)
    if template is not None:
        _DROPPER.drop(template)
    _TEMPLATES.pop("sqlite", None)
    return _DROPPER.finish()


def fresh_database(kind: str, folder: Path) -> AbstractContextManager[str]:
    """An empty database of ``kind`` (``sqlite`` in ``folder``, or ``postgresql``); the test
    is skipped, saying why, where no PostgreSQL server answers."""
    return _database(kind, folder, migrated=False)


def migrated_database(kind: str, folder: Path) -> AbstractContextManager[str]:
    """Like :func:`fresh_database`, migrated to the newest revision (a template's copy)."""
    return _database(kind, folder, migrated=True)


def _database(kind: str, folder: Path, *, migrated: bool) -> AbstractContextManager[str]:
    if kind == "sqlite":
        return migrated_sqlite(folder) if migrated else fresh_sqlite(folder)
    reason = pg_unavailable_reason()
    if reason is not None:
        import pytest

        pytest.skip(reason)
    return migrated_postgres() if migrated else fresh_postgres()
