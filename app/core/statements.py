"""Statements of the move path compiled once per database and run on the driver's cursor.

A move runs the same five statements every time. Through SQLAlchemy each one pays for its
execution machinery (an execution context, the compiled cache's lookup, the parameters'
processing and the result's metadata, set up anew per call) about 50 µs on this machine, ten
to twenty times what SQLite or psycopg take to run it; through the ORM, more again. A
:class:`Prepared` statement is a Core statement compiled once for each dialect it meets, with
its columns' own bind and result processors taken from SQLAlchemy's types (so values go in and
come out exactly as SQLAlchemy would send and return them), then run on the cursor of the
session's connection, inside the session's transaction.

What SQLAlchemy would otherwise do around a statement is kept: the engine's
``before_cursor_execute`` and ``after_cursor_execute`` listeners are called (the statement
counts of the tests and benchmarks see these statements too), and a driver error is raised as
SQLAlchemy's own exception (``IntegrityError`` for a key clash, the concurrency signal), the
connection invalidated first when the error says the database went away.

Only statements whose parameters are plain values qualify: no expanding ``IN`` lists, no
column defaults computed in Python for an INSERT (the caller gives every value).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from sqlalchemy import Connection, exc, inspect
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Session, make_transient_to_detached
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import Executable

Processor = Callable[[Any], Any] | None


@dataclass(frozen=True, slots=True)
class _Compiled:
    """A statement's SQL for one dialect and what its parameters and rows need."""

    sql: str
    positional: bool
    """A positional paramstyle (SQLite's ``?``): the parameters go as a sequence in the
    order of :attr:`slots`; else as a mapping by name."""
    slots: tuple[tuple[str, Processor, Any], ...]
    """Each parameter the driver gets, in order: its name, its bind processor and its value
    when the statement fixes it (a literal in a WHERE clause), else ``_REQUIRED``."""
    names: tuple[str, ...]
    returns_rows: bool
    results: tuple[tuple[int, Callable[[Any], Any]], ...]
    """The result columns that have a processor, by index, with it (the others are the
    driver's values as they are)."""


_REQUIRED = object()


class Prepared:
    """A Core statement run on the driver's cursor (see the module's docstring)."""

    def __init__(self, statement: Executable | Mapping[str, Executable],
                 column_keys: Sequence[str] | None = None) -> None:
        self.statement = statement
        """The statement, or one per dialect name (an upsert is written in each's own terms)."""
        self.column_keys = list(column_keys) if column_keys is not None else None
        """For an INSERT or an upsert: the columns its rows give (compiled into its VALUES)."""
        self._by_dialect: dict[str, _Compiled] = {}

    def rows(self, connection: Connection, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Run the statement once; its rows, each value processed as SQLAlchemy would."""
        compiled = self._compiled(connection.dialect)
        cursor = _run(connection, compiled, [_bound(compiled, params)], many=False)
        try:
            # (not asked of the cursor: psycopg builds every column's description anew)
            fetched = cursor.fetchall() if compiled.returns_rows else []
        finally:
            cursor.close()
        processors = compiled.results
        if not processors:
            return [tuple(row) for row in fetched]
        made = []
        for row in fetched:
            values = list(row)
            for index, process in processors:
                value = values[index]
                if value is not None:
                    values[index] = process(value)
            made.append(tuple(values))
        return made

    def first(self, connection: Connection, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
        found = self.rows(connection, params)
        return found[0] if found else None

    def execute(self, connection: Connection, params: Mapping[str, Any]) -> None:
        """Run a statement that returns no rows (an INSERT, an UPDATE) once."""
        compiled = self._compiled(connection.dialect)
        _run(connection, compiled, [_bound(compiled, params)], many=False).close()

    def execute_many(self, connection: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        """Run a statement that returns no rows once for each of ``rows`` (executemany)."""
        if not rows:
            return
        compiled = self._compiled(connection.dialect)
        bound = [_bound(compiled, params) for params in rows]
        _run(connection, compiled, bound, many=len(bound) > 1).close()

    def _compiled(self, dialect: Dialect) -> _Compiled:
        compiled = self._by_dialect.get(dialect.name)
        if compiled is None:
            statement = (self.statement[dialect.name] if isinstance(self.statement, Mapping)
                         else self.statement)
            compiled = self._by_dialect[dialect.name] = _compile(statement, dialect,
                                                                 self.column_keys)
        return compiled


def _compile(statement: Executable, dialect: Dialect,
             column_keys: list[str] | None) -> _Compiled:
    compiler = statement.compile(dialect=dialect, column_keys=column_keys)  # type: ignore[attr-defined]
    assert isinstance(compiler, SQLCompiler)
    sql = str(compiler)
    if "POSTCOMPILE" in sql or compiler.insert_prefetch or compiler.update_prefetch:
        raise ValueError("a prepared statement takes plain parameters only: "
                         f"{sql.splitlines()[0]}")
    by_name = {}
    for bind, name in compiler.bind_names.items():
        impl = bind.type.dialect_impl(dialect)
        value = _REQUIRED if bind.required else bind.effective_value
        by_name[name] = (name, impl.bind_processor(dialect), value)
    positional = bool(compiler.positional)
    order = compiler.positiontup if positional and compiler.positiontup else list(by_name)
    columns = getattr(statement, "selected_columns", ()) if statement.is_select else ()
    results = tuple(
        (index, process) for index, column in enumerate(columns)
        if (process := column.type.dialect_impl(dialect).result_processor(dialect, None))
        is not None)
    returns_rows = bool(statement.is_select) or getattr(compiler, "returning", None) is not None
    return _Compiled(sql, positional, tuple(by_name[name] for name in order), tuple(order),
                     returns_rows, results)


def _bound(compiled: _Compiled, params: Mapping[str, Any]) -> Any:
    """The driver's parameters for one run: a list in order, or a mapping by name."""
    values = []
    for name, process, fixed in compiled.slots:
        value = params[name] if fixed is _REQUIRED else params.get(name, fixed)
        values.append(process(value) if process is not None and value is not None else value)
    return values if compiled.positional else dict(zip(compiled.names, values, strict=True))


def _run(connection: Connection, compiled: _Compiled, params: list[Any], *, many: bool) -> Any:
    """The cursor after running ``compiled`` with ``params`` (one set, or many)."""
    dialect = connection.dialect
    cursor = connection.connection.cursor()
    sent = params if many else params[0]
    dispatch = connection.dispatch
    before, after = dispatch.before_cursor_execute, dispatch.after_cursor_execute
    if before:  # (empty, the call would still walk the engine's and the connection's lists)
        before(connection, cursor, compiled.sql, sent, None, many)
    try:
        if many:
            cursor.executemany(compiled.sql, sent)
        else:
            cursor.execute(compiled.sql, sent)
    except dialect.loaded_dbapi.Error as error:
        cursor.close()
        raise _wrapped(connection, compiled.sql, sent, error) from error
    if after:
        after(connection, cursor, compiled.sql, sent, None, many)
    return cursor


def _wrapped(connection: Connection, sql: str, params: Any,
             error: Any) -> exc.StatementError:
    """The driver's ``error`` as SQLAlchemy raises it; a lost connection is invalidated so
    that the pool gives a fresh one next time."""
    dialect = connection.dialect
    lost = dialect.is_disconnect(error, connection.connection.dbapi_connection, None)
    if lost and not connection.invalidated:
        connection.invalidate(error)
    wrapped: exc.StatementError = exc.DBAPIError.instance(
        sql, params, error, dialect.loaded_dbapi.Error, connection_invalidated=lost,
        dialect=dialect)
    return wrapped


# ---------------------------------------------------------------------- rows as ORM objects

Entity = TypeVar("Entity")


class Rows(Generic[Entity]):
    """How a mapped class's columns sit in a row of a :class:`Prepared` select, and the
    session's persistent object made of them: what the ORM's own loading gives (an object in
    the session's identity map, its changes flushed with the session), without the ORM's
    statement machinery, which costs more than the rest of reading a row."""

    def __init__(self, cls: type[Entity]) -> None:
        self.cls = cls
        self.mapper = inspect(cls)
        self.table = self.mapper.local_table
        self.columns = tuple(self.table.columns)
        self.keys = tuple(self.mapper.get_property_by_column(column).key
                          for column in self.columns)
        self._pk = tuple(self.columns.index(column) for column in self.mapper.primary_key)

    def of(self, s: Session, values: Sequence[Any]) -> Entity | None:
        """The persistent object of the row whose columns are ``values`` (in the table's
        order; None for an outer join's missing row): the session's own if it holds it."""
        identity = tuple(values[index] for index in self._pk)
        if any(value is None for value in identity):
            return None
        key = self.mapper.identity_key_from_primary_key(identity)
        held = s.identity_map.get(key)
        if held is not None:  # (as the ORM: the object held, its expired values loaded)
            for name in inspect(held).expired_attributes:
                set_committed_value(held, name, values[self.keys.index(name)])
            return cast(Entity, held)
        made = self.mapper.class_manager.new_instance()
        made.__dict__.update(zip(self.keys, values, strict=True))
        make_transient_to_detached(made)
        s.add(made)
        return cast(Entity, made)
