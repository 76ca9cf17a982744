"""SQLite's writers of one process queue on a lock of the engine's (app/core/db.py): a writer
waiting its turn starts when the previous write ends, not when SQLite's busy handler next wakes up;
a write that ends in any way (commit, rollback, a connection given back or dropped) lets the next
one go."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, event, text

from app.core.db import make_engine, session


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    made = make_engine(f"sqlite:///{tmp_path / 'writers.db'}")
    with made.begin() as conn:
        conn.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT NOT NULL)"))
    yield made
    made.dispose()


def _write(engine: Engine, who: str) -> None:
    with session(engine, write=True) as s:
        s.connection().execute(text("INSERT INTO t (who) VALUES (:who)"), {"who": who})
        s.commit()


def _rows(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        return [row[0] for row in conn.execute(text("SELECT who FROM t ORDER BY id"))]


def test_a_second_writer_waits_in_the_process_and_goes_on_when_the_first_commits(
        engine: Engine) -> None:
    asked: list[str] = []  # who asked SQLite for the write lock, in order
    event.listen(engine, "before_cursor_execute",
                 lambda _c, _k, statement, *_a: asked.append(threading.current_thread().name)
                 if statement == "BEGIN IMMEDIATE" else None)
    first = session(engine, write=True)
    first.connection().execute(text("INSERT INTO t (who) VALUES ('first')"))
    started = threading.Event()
    done = threading.Event()

    def second() -> None:
        started.set()
        _write(engine, "second")
        done.set()

    thread = threading.Thread(target=second, name="second")
    thread.start()
    assert started.wait(5)
    assert not done.wait(0.3)  # the first write holds the turn
    assert asked == ["MainThread"]  # and the second waits its turn here, not in SQLite
    first.commit()
    first.close()
    assert done.wait(5)
    thread.join()
    assert _rows(engine) == ["first", "second"]
    assert asked == ["MainThread", "second"]


@pytest.mark.parametrize("ending", ["rollback", "close", "invalidate"])
def test_a_write_that_ends_otherwise_lets_the_next_writer_go(engine: Engine,
                                                             ending: str) -> None:
    first = session(engine, write=True)
    connection = first.connection()
    connection.execute(text("INSERT INTO t (who) VALUES ('lost')"))
    if ending == "rollback":
        first.rollback()
    elif ending == "invalidate":  # (the database connection broke: SQLAlchemy drops it)
        connection.invalidate()
        first.rollback()
    first.close()
    done = threading.Event()
    thread = threading.Thread(target=lambda: (_write(engine, "next"), done.set()))
    thread.start()
    assert done.wait(5)
    thread.join()
    assert _rows(engine) == ["next"]


def test_one_thread_may_nest_a_read_in_its_write(engine: Engine) -> None:
    with session(engine, write=True) as s:
        s.connection().execute(text("INSERT INTO t (who) VALUES ('outer')"))
        with session(engine) as reader:  # a read beside the write never waits for the turn
            assert reader.connection().execute(text("SELECT count(*) FROM t")).scalar() == 0
        s.commit()
    _write(engine, "after")
    assert _rows(engine) == ["outer", "after"]


def test_many_threads_write_every_row_once(engine: Engine) -> None:
    threads = [threading.Thread(target=lambda n=n: [_write(engine, f"{n}-{i}")
                                                    for i in range(25)])
               for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    rows = _rows(engine)
    assert len(rows) == 150 and len(set(rows)) == 150
