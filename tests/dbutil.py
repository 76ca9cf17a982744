"""Real databases for tests: a fresh SQLite file, or a fresh PostgreSQL database.

PostgreSQL is reached at ``TITANPOST_TEST_PG`` (default the CI machine's server,
``postgresql+psycopg://postgres@127.0.0.1:5432``); where none answers, PostgreSQL tests skip with
the reason shown in pytest's summary.

Three things keep the many database tests quick without sharing state between them. A migrated
database is a copy of a template migrated once per test process (``CREATE DATABASE ...
TEMPLATE``, or SQLite's backup API), not a new run of every migration. A migrated PostgreSQL
database is emptied after its test and handed to the next one (:class:`_Emptied`): a copy of
the template and its drop cost the server some 175 ms of CPU a test, emptying it a few. And a
PostgreSQL test database is dropped by a background thread: ``DROP DATABASE`` waits for a
checkpoint, which the next test need not wait for (:func:`finish` waits for them all at the end
of the session).
"""

from __future__ import annotations

import itertools
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
from typing import Any

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
    from app.core.migrate import upgrade

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


def _new_name() -> str:
    return f"titanpost_test_{uuid.uuid4().hex[:12]}"


@contextmanager
def fresh_postgres(template: str | None = None) -> Iterator[str]:
    """Create an empty database (a copy of ``template`` when given), yield its SQLAlchemy URL,
    have it dropped afterwards."""
    name = _new_name()
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
    from app.core.migrate import upgrade

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


class _Emptied:
    """Migrated PostgreSQL databases of this process that a test has finished with, emptied for
    the next: every connection to it ended, every table's rows deleted (the migrations' own
    revision table aside) and every sequence started again, in one transaction
    (:data:`_EMPTY_SQL`). A database is handed on only when it then has the shape of a new copy
    of the template: at the newest revision with the same tables, columns, indexes,
    constraints, triggers, functions and sequences; else (a test that downgraded or altered
    its schema) it is dropped as before and the next test gets a new copy."""

    def __init__(self) -> None:
        self.free: list[str] = []
        self.shape: str | None = None

    def take(self) -> str:
        if self.free:
            return self.free.pop()
        name = _new_name()
        _create(name, _template("postgresql"))
        if self.shape is None:  # (of a new copy: a connection to the template would stop
            self.shape = _shape(name)  # the next copy being made of it)
        return name

    def give_back(self, name: str) -> None:
        try:
            emptied = _empty(name) == self.shape
        except Exception:  # (whatever went wrong, the database is not handed on)
            emptied = False
        if emptied:
            self.free.append(name)
        else:
            _DROPPER.drop(name)

    def finish(self) -> None:
        for name in self.free:
            _DROPPER.drop(name)
        self.free.clear()
        self.shape = None


_EMPTIED = _Emptied()
_HANDED_OUT = itertools.count(1)

_SHAPE_SQL = """
SELECT concat_ws(' | ',
  (SELECT string_agg(version_num, ',' ORDER BY version_num) FROM alembic_version),
  (SELECT string_agg(a.attrelid::regclass::text || '.' || a.attname || ':'
                     || format_type(a.atttypid, a.atttypmod) || ':' || a.attnotnull::text || ':'
                     || coalesce(pg_get_expr(d.adbin, d.adrelid), ''),
                     ',' ORDER BY a.attrelid::regclass::text, a.attname)
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'p')
       AND a.attnum > 0 AND NOT a.attisdropped),
  (SELECT string_agg(indexdef, ',' ORDER BY indexdef) FROM pg_indexes
     WHERE schemaname = 'public'),
  (SELECT string_agg(conname || ':' || pg_get_constraintdef(oid), ',' ORDER BY conname)
     FROM pg_constraint WHERE connamespace = 'public'::regnamespace),
  (SELECT string_agg(tgname || ':' || tgenabled::text, ',' ORDER BY tgname) FROM pg_trigger
     WHERE NOT tgisinternal),
  (SELECT string_agg(proname || ':' || md5(prosrc), ',' ORDER BY proname) FROM pg_proc
     WHERE pronamespace = 'public'::regnamespace),
  (SELECT string_agg(sequencename || ':' || coalesce(last_value, 0), ',' ORDER BY sequencename)
     FROM pg_sequences WHERE schemaname = 'public'))
"""
"""What a migrated database's schema is, and where its sequences stand, as one text."""

_EMPTY_SQL = """
SET session_replication_role = replica;
DO $$
DECLARE name text; left_over boolean;
BEGIN
  FOR name IN SELECT tablename FROM pg_tables
              WHERE schemaname = 'public' AND tablename <> 'alembic_version' LOOP
    EXECUTE format('DELETE FROM %I', name);
    EXECUTE format('SELECT EXISTS (SELECT FROM %I)', name) INTO left_over;
    IF left_over THEN
      RAISE EXCEPTION 'rows are left in %', name;
    END IF;
  END LOOP;
  PERFORM setval(format('%I', sequencename)::regclass, start_value, false)
    FROM pg_sequences WHERE schemaname = 'public';
END $$;
"""
"""Every table's rows deleted but the revision's (an error if any is left), every sequence
back at its start (the triggers off: the move log refuses deletes, and the foreign keys'
checks are triggers)."""


def _shape(name: str) -> str:
    import psycopg

    with psycopg.connect(_libpq(PG_SERVER, name)) as conn:
        return _shape_of(conn)


def _shape_of(conn: Any) -> str:
    row = conn.execute(_SHAPE_SQL).fetchone()
    return str(row[0]) if row is not None else ""


def _empty(name: str) -> str:
    """Empty database ``name`` (see :class:`_Emptied`), its other connections ended first; its
    shape then."""
    import psycopg

    with psycopg.connect(_libpq(PG_SERVER, "postgres"), autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE datname = %s AND pid <> pg_backend_pid()", (name,))
    with psycopg.connect(_libpq(PG_SERVER, name)) as conn:
        conn.execute(_EMPTY_SQL)
        conn.commit()
        return _shape_of(conn)


@contextmanager
def migrated_postgres() -> Iterator[str]:
    """A PostgreSQL database at the newest revision: a copy of the template, new or emptied
    after an earlier test (:class:`_Emptied`)."""
    name = _EMPTIED.take()
    # (a URL of its own for each test, as a new database had: the server keeps what it read
    # of a database, such as its push keys, by the database's URL)
    url = f"{PG_SERVER}/{name}?application_name=titanpost-test-{next(_HANDED_OUT)}"
    _MIGRATED.add(url)
    try:
        yield url
    finally:
        _MIGRATED.discard(url)
        _EMPTIED.give_back(name)


def finish() -> list[str]:
    """Drop this process's templates and emptied databases, and wait for every drop; the drops
    that failed."""
    _EMPTIED.finish()
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
