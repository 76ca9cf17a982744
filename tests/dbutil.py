"""Real databases for tests: a fresh SQLite file, or a fresh PostgreSQL database.

PostgreSQL is reached at ``TITANPOST_TEST_PG`` (default the CI machine's server,
``postgresql+psycopg://postgres@127.0.0.1:5432``); where none answers, PostgreSQL tests skip with
the reason shown in pytest's summary.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

PG_SERVER = os.environ.get("TITANPOST_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432")


def pg_unavailable_reason() -> str | None:
    """None when a PostgreSQL server answers, else why PostgreSQL tests cannot run."""
    import psycopg

    try:
        with psycopg.connect(_libpq(PG_SERVER, "postgres"), connect_timeout=3):
            return None
    except psycopg.Error as exc:
        return f"no PostgreSQL server at {PG_SERVER}: {str(exc).strip().splitlines()[0]}"


def _libpq(url: str, database: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://") + f"/{database}"


@contextmanager
def fresh_postgres() -> Iterator[str]:
    """Create an empty database, yield its SQLAlchemy URL, drop it afterwards."""
    import psycopg

    name = f"titanpost_test_{uuid.uuid4().hex[:12]}"
    admin = _libpq(PG_SERVER, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{PG_SERVER}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def fresh_sqlite(folder: Path) -> Iterator[str]:
    yield f"sqlite:///{folder / 'titanpost-test.db'}"


def fresh_database(kind: str, folder: Path) -> AbstractContextManager[str]:
    """A fresh database of ``kind`` (``sqlite`` in ``folder``, or ``postgresql``); the test
    is skipped, saying why, where no PostgreSQL server answers."""
    if kind == "sqlite":
        return fresh_sqlite(folder)
    reason = pg_unavailable_reason()
    if reason is not None:
        import pytest

        pytest.skip(reason)
    return fresh_postgres()
