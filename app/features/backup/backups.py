"""A backup of the whole database, and its restore into an empty one.

:func:`backup` reads every table (but Alembic's own) in ONE read transaction, so the copy is a
single consistent moment of the database even while players move: on PostgreSQL a
``SERIALIZABLE READ ONLY DEFERRABLE`` transaction (a snapshot that waits for no lock and blocks
nobody), on SQLite one ``BEGIN`` transaction (WAL mode: writers go on beside it). It streams the
rows, table by table in foreign-key order, to a gzip-compressed JSON-lines file:

- the first line is the header: ``format`` (``titanpost-backup``), ``version``, ``schema`` (the
  Alembic revision the database is at), ``created_at``, ``database`` (its kind) and, per table in
  restore order, its ``columns`` (name and kind: ``json``, ``datetime``, ``bytes`` or ``value``)
  and its ``rows`` count;
- then one line per row, ``{"t": table, "r": [values in column order]}`` (times as ISO 8601 in
  UTC, bytes as base64);
- the last line is the trailer ``{"end": true, "rows": total}``, so that a file cut short at a
  line boundary is recognised too.

The file is written to a temporary name beside the target (mode 0600: it holds the seats'
secrets, token hashes and queued mail) and renamed over it only once complete.

:func:`restore` loads such a file into an empty database in ONE write transaction, keeping every
primary key (game ids, seat ids, token hashes and seat secrets, so links and API tokens go on
working), and moves PostgreSQL's id sequences past the restored ids. The move log's append-only
triggers allow INSERT. A database with no schema yet gets it first, at the backup's revision, and
is upgraded to the newest after the load (so a backup made by an older Titan Post restores). A
database holding data, a backup from a schema revision this Titan Post does not know, and a
damaged or truncated file are refused with a one-line :class:`BackupError`, changing nothing.

Neither function checks the games: the caller replays them afterwards (``admin restore`` runs
:meth:`GameService.verify` on every started game).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import os
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Final, Protocol

import sqlalchemy as sa
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Connection, Engine

from app.core import migrate
from app.core.db import WRITE

FORMAT: Final = "titanpost-backup"
VERSION: Final = 1
VERSION_TABLE: Final = "alembic_version"
CACHE_TABLES: Final = frozenset({"snapshots"})
"""Tables that only cache what can be rebuilt from the log (``--without-snapshots`` skips)."""
LIVE_TABLES: Final = frozenset({"page_watchers"})
"""Tables of what is happening now, not of the games: the pages open on them
(app/features/live/presence.py). Never backed up; a restore leaves them as they are (a server
that answers pages while the restore runs may hold rows there)."""
REPLACED_TABLES: Final = frozenset({"clock_ticks"})
"""Tables a restore replaces rather than requiring empty: a scheduler that ticked on the new,
empty database has written its last tick there. The backup's tick is restored, so the first
tick after the restore sees the time since the backup as an outage and extends deadlines."""
ORDER: Final = ("games", "seats", "moves", "sealed_orders", "snapshots", "api_tokens", "outbox",
                "deadlines", "absences", "inbound_mail", "clock_ticks", "idempotency_keys",
                "chat_messages", "webhooks", "webhook_outbox", "takebacks", "signins",
                "bot_turns")
"""The order tables are written in (foreign keys first: a table the code does not know yet
comes after those it refers to)."""
BATCH: Final = 500
"""Rows fetched, and inserted, at a time."""

JSON_KIND: Final = "json"
DATETIME_KIND: Final = "datetime"
BYTES_KIND: Final = "bytes"
VALUE_KIND: Final = "value"


class BackupError(RuntimeError):
    """A backup that cannot be made or restored; the message is one line a person can act on."""


class Progress(Protocol):
    """What :func:`backup` and :func:`restore` report as they go (a progress bar)."""

    def start(self, total: int) -> None:
        """The number of rows to copy, known once the transaction has counted them."""

    def advance(self, table: str, rows: int) -> None:
        """``rows`` more rows of ``table`` copied."""


class _Quiet:
    def start(self, total: int) -> None:
        pass

    def advance(self, table: str, rows: int) -> None:
        pass


@dataclass
class TableInfo:
    name: str
    columns: list[tuple[str, str]]
    rows: int


@dataclass
class Summary:
    """What a backup wrote or a restore loaded."""

    path: Path
    schema: str
    created_at: str
    database: str
    tables: dict[str, int] = field(default_factory=dict)
    """Rows per table, in restore order."""
    size: int = 0
    """Bytes of the file."""
    upgraded_to: str | None = None
    """The revision a restore upgraded the database to after loading (None: no upgrade)."""

    @property
    def rows(self) -> int:
        return sum(self.tables.values())


# ------------------------------------------------------------------ schema revisions


def known_revisions() -> list[str]:
    """Every revision in the migrations folder, oldest first."""
    return [script.revision for script in reversed(list(migrate.scripts().walk_revisions()))]


def _revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


def _tables(connection: Connection) -> list[sa.Table]:
    """The database's own tables (not Alembic's) as they are now: every table after those its
    foreign keys refer to, else in the order of ORDER."""
    metadata = sa.MetaData()
    metadata.reflect(bind=connection)
    tables = {t.name: t for t in metadata.tables.values() if t.name != VERSION_TABLE}
    ordered: list[sa.Table] = []

    def place(table: sa.Table, seen: frozenset[str]) -> None:
        if table in ordered or table.name in seen:
            return
        for key in sorted(table.foreign_keys, key=lambda k: k.column.table.name):
            referred = tables.get(key.column.table.name)
            if referred is not None and referred is not table:
                place(referred, seen | {table.name})
        ordered.append(table)

    rank = {name: index for index, name in enumerate(ORDER)}
    for name in sorted(tables, key=lambda n: (rank.get(n, len(ORDER)), n)):
        place(tables[name], frozenset())
    return ordered


def _kind(column: sa.Column[Any]) -> str:
    kind = column.type
    if isinstance(kind, sa.JSON):
        return JSON_KIND
    if isinstance(kind, sa.DateTime):
        return DATETIME_KIND
    if isinstance(kind, sa.LargeBinary):
        return BYTES_KIND
    return VALUE_KIND


# ------------------------------------------------------------------ values


def _utc(moment: datetime) -> datetime:
    """A stored time in UTC (SQLite gives naive UTC values back)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _encode(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == DATETIME_KIND:
        if not isinstance(value, datetime):
            raise BackupError(f"a time column holds {type(value).__name__} {value!r}")
        return _utc(value).isoformat()
    if kind == BYTES_KIND:
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


def _decode(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == DATETIME_KIND:
        return _utc(datetime.fromisoformat(value))
    if kind == BYTES_KIND:
        return base64.b64decode(value.encode("ascii"), validate=True)
    return value


def _line(data: Any) -> bytes:
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


# ------------------------------------------------------------------ backup


@contextlib.contextmanager
def _snapshot(engine: Engine) -> Iterator[Connection]:
    """A connection in one read transaction that sees one moment of the whole database."""
    if engine.dialect.name == "postgresql":
        options: dict[str, Any] = {"isolation_level": "SERIALIZABLE",
                                   "postgresql_readonly": True,
                                   "postgresql_deferrable": True}
        bind: Engine = engine.execution_options(**options)
    else:
        bind = engine  # app.core.db begins SQLite transactions with BEGIN: a snapshot in WAL mode
    with bind.connect() as connection, connection.begin():
        yield connection


def backup(engine: Engine, path: Path, *, snapshots: bool = True,
           progress: Progress | None = None, batch: int = BATCH) -> Summary:
    """Write the whole database to ``path`` (see the module); ``snapshots`` false leaves out the
    cache of engine states. Returns what was written."""
    progress = progress or _Quiet()
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise BackupError(f"cannot write {path}: the folder {folder} does not exist")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                             dir=folder)
    except OSError as exc:
        raise BackupError(f"cannot write in {folder}: {exc.strerror}") from None
    done = False
    try:
        os.fchmod(handle, 0o600)
        with os.fdopen(handle, "wb") as raw:
            summary = _write(engine, raw, path, snapshots=snapshots, progress=progress,
                             batch=batch)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(temporary, path)
        done = True
        summary.size = path.stat().st_size
        return summary
    except OSError as exc:
        raise BackupError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _write(engine: Engine, raw: IO[bytes], path: Path, *, snapshots: bool, progress: Progress,
           batch: int) -> Summary:
    with _snapshot(engine) as connection:
        revision = _revision(connection)
        if revision is None:
            raise BackupError("the database has no Titan Post schema: there is nothing to back "
                              "up (is the database URL right?)")
        tables = [table for table in _tables(connection) if table.name not in LIVE_TABLES
                  and (snapshots or table.name not in CACHE_TABLES)]
        infos = [TableInfo(table.name, [(c.name, _kind(c)) for c in table.columns],
                           int(connection.execute(
                               sa.select(sa.func.count()).select_from(table)).scalar_one()))
                 for table in tables]
        created = datetime.now(UTC).isoformat()
        header = {
            "format": FORMAT,
            "version": VERSION,
            "schema": revision,
            "created_at": created,
            "database": engine.dialect.name,
            "tables": [{"name": info.name, "columns": [list(c) for c in info.columns],
                        "rows": info.rows} for info in infos],
        }
        summary = Summary(path, revision, created, engine.dialect.name,
                          {info.name: info.rows for info in infos})
        progress.start(summary.rows)
        total = 0
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6) as out:
            out.write(_line(header))
            for table, info in zip(tables, infos, strict=True):
                written = 0
                for rows in _read(connection, table, batch):
                    out.write(b"".join(_line({"t": table.name, "r": row}) for row in rows))
                    written += len(rows)
                    progress.advance(table.name, len(rows))
                if written != info.rows:  # cannot happen inside one transaction
                    raise BackupError(f"table {table.name} changed while it was read "
                                      f"({info.rows} rows counted, {written} read)")
                total += written
            out.write(_line({"end": True, "rows": total}))
        return summary


def _read(connection: Connection, table: sa.Table, batch: int) -> Iterator[list[list[Any]]]:
    """The rows of ``table`` in primary-key order, encoded, ``batch`` at a time."""
    kinds = [_kind(c) for c in table.columns]
    order = list(table.primary_key.columns) or list(table.columns)
    result = connection.execution_options(stream_results=True, yield_per=batch).execute(
        sa.select(table).order_by(*order))
    for part in result.partitions(batch):
        yield [[_encode(kind, value) for kind, value in zip(kinds, row, strict=True)]
               for row in part]


# ------------------------------------------------------------------ reading a backup


class _Reader:
    """The lines of a backup file, with every way it can be damaged turned into BackupError."""

    def __init__(self, path: Path, file: gzip.GzipFile) -> None:
        self.path = path
        self.file = file
        self.number = 0

    def _damaged(self, why: str) -> BackupError:
        return BackupError(f"{self.path} is not a complete Titan Post backup: {why}")

    def next(self) -> Any:
        """The next line's JSON value, or None at the end of the file."""
        try:
            line = self.file.readline()
        except (gzip.BadGzipFile, zlib.error) as exc:
            raise self._damaged(f"it is not a readable gzip file ({exc})") from None
        except EOFError:
            raise self._damaged(f"it is cut short after line {self.number}") from None
        except OSError as exc:
            raise BackupError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        if not line:
            return None
        self.number += 1
        if not line.endswith(b"\n"):
            raise self._damaged(f"it is cut short in line {self.number}")
        try:
            return json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise self._damaged(f"line {self.number} is not JSON") from None


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[_Reader]:
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise BackupError(f"cannot read {path}: {exc.strerror or exc}") from None
    with raw, gzip.GzipFile(fileobj=raw, mode="rb") as file:
        yield _Reader(path, file)


def _header(reader: _Reader) -> tuple[dict[str, Any], list[TableInfo]]:
    header = reader.next()
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise BackupError(f"{reader.path} is not a Titan Post backup (made by titanpost admin "
                          "backup)")
    if header.get("version") != VERSION:
        raise BackupError(f"{reader.path} is a backup of format version "
                          f"{header.get('version')}: this Titan Post reads version {VERSION}")
    try:
        infos = [TableInfo(str(t["name"]), [(str(n), str(k)) for n, k in t["columns"]],
                           int(t["rows"])) for t in header["tables"]]
        str(header["schema"])
    except (KeyError, TypeError, ValueError):
        raise reader._damaged("its header is malformed") from None
    return header, infos


def read_header(path: Path) -> dict[str, Any]:
    """The header of the backup at ``path`` (BackupError when it is none)."""
    with _reading(Path(path)) as reader:
        return dict(_header(reader)[0])


# ------------------------------------------------------------------ restore


def restore(engine: Engine, path: Path, *, progress: Progress | None = None,
            batch: int = BATCH) -> Summary:
    """Load the backup at ``path`` into the empty database of ``engine`` (see the module)."""
    progress = progress or _Quiet()
    path = Path(path)
    with _reading(path) as reader:
        header, infos = _header(reader)
        schema = str(header["schema"])
        known = known_revisions()
        if schema not in known:
            raise BackupError(f"{path} was made at schema revision {schema}, which this "
                              f"Titan Post does not know (it knows up to {known[-1]}): restore it "
                              "with the Titan Post that made it, or a newer one")
        with engine.connect() as connection:
            current = _revision(connection)
            has_tables = bool(sa.inspect(connection).get_table_names())
        url = engine.url.render_as_string(hide_password=False)
        if current is None and not has_tables:
            migrate.upgrade(url, schema)  # a new database: its schema, as the backup's
            current = schema
        elif current is None:
            raise BackupError("the database has tables but no Titan Post schema revision: "
                              "restore into an empty database")
        if current != schema:
            if current not in known:
                raise BackupError(f"the database is at schema revision {current}, which this "
                                  "Titan Post does not know: restore with a newer Titan Post")
            raise BackupError(f"{path} was made at schema revision {schema} but the database "
                              f"is at {current}: restore into a new database without a schema "
                              f"(restore creates it at {schema} and upgrades it)")
        summary = Summary(path, schema, str(header.get("created_at", "")),
                          str(header.get("database", "")), {i.name: i.rows for i in infos})
        with engine.execution_options(**{WRITE: True}).begin() as connection:
            _load(connection, reader, infos, progress, batch)
        summary.size = path.stat().st_size
        if schema != known[-1]:
            migrate.upgrade(url)
            summary.upgraded_to = known[-1]
        return summary


def _load(connection: Connection, reader: _Reader, infos: list[TableInfo],
          progress: Progress, batch: int) -> None:
    tables = {table.name: table for table in _tables(connection)}
    _lock(connection, list(tables.values()))
    for info in infos:
        table = tables.get(info.name)
        if table is None:
            raise BackupError(f"the backup has a table {info.name} that the database lacks")
        missing = [name for name, _ in info.columns if name not in table.columns]
        if missing:
            raise BackupError(f"the database's table {info.name} lacks the backup's columns "
                              f"{', '.join(missing)}")
    held = {name: count for name, count in
            ((table.name, _count(connection, table)) for table in tables.values()
             if table.name not in REPLACED_TABLES | LIVE_TABLES) if count}
    if held:
        words = ", ".join(f"{name}: {count}" for name, count in held.items())
        raise BackupError(f"the database already holds data ({words}): restore goes into an "
                          "empty database (a new one, with titanpost db upgrade or none)")
    for replaced in REPLACED_TABLES & tables.keys() & {info.name for info in infos}:
        connection.execute(tables[replaced].delete())
    progress.start(sum(info.rows for info in infos))
    by_name = {info.name: info for info in infos}
    counts = dict.fromkeys(by_name, 0)
    pending: list[dict[str, Any]] = []
    pending_table: str | None = None

    def flush() -> None:
        if pending and pending_table is not None:
            connection.execute(tables[pending_table].insert(), pending)
            progress.advance(pending_table, len(pending))
            pending.clear()

    total: int | None = None
    for entry in _entries(reader):
        if entry.get("end") is True:
            total = entry.get("rows")
            break
        name, values = entry.get("t"), entry.get("r")
        found = by_name.get(name) if isinstance(name, str) else None
        if found is None or not isinstance(values, list) or len(values) != len(found.columns):
            raise reader._damaged(f"line {reader.number} is not a row of a table in its header")
        info = found
        if name != pending_table:
            flush()
            pending_table = name
        try:
            pending.append({column: _decode(kind, value)
                            for (column, kind), value in zip(info.columns, values, strict=True)})
        except (TypeError, ValueError, AttributeError):
            raise reader._damaged(f"line {reader.number} holds a malformed value") from None
        counts[info.name] += 1
        if counts[info.name] > info.rows:
            raise reader._damaged(f"it has more rows of {info.name} than its header says "
                                  f"({info.rows})")
        if len(pending) >= batch:
            flush()
    flush()
    if total is None:
        raise reader._damaged(f"it ends after line {reader.number}, before its last line")
    if reader.next() is not None:
        raise reader._damaged(f"it goes on after its last line ({reader.number})")
    wrong = [f"{name} {counts[name]} of {info.rows}" for name, info in by_name.items()
             if counts[name] != info.rows]
    if wrong or total != sum(counts.values()):
        raise reader._damaged(f"its rows disagree with its header ({', '.join(wrong)})")
    if connection.dialect.name == "postgresql":
        _reset_sequences(connection, list(tables.values()))


def _entries(reader: _Reader) -> Iterable[dict[str, Any]]:
    while True:
        entry = reader.next()
        if entry is None:
            return
        if not isinstance(entry, dict):
            raise reader._damaged(f"line {reader.number} is not a row")
        yield entry


def _count(connection: Connection, table: sa.Table) -> int:
    return int(connection.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


def _lock(connection: Connection, tables: list[sa.Table]) -> None:
    """On PostgreSQL, keep every other writer out until the restore commits (SQLite's write
    transaction, BEGIN IMMEDIATE, does that already)."""
    if connection.dialect.name != "postgresql" or not tables:
        return
    preparer = connection.dialect.identifier_preparer
    names = ", ".join(preparer.format_table(table) for table in tables)
    connection.exec_driver_sql(f"LOCK TABLE {names} IN EXCLUSIVE MODE")


def _reset_sequences(connection: Connection, tables: list[sa.Table]) -> None:
    """Move each id sequence past the largest restored id (setval to max(id))."""
    for table in tables:
        for column in table.primary_key.columns:
            sequence = connection.execute(
                sa.text("SELECT pg_get_serial_sequence(:table, :column)"),
                {"table": table.name, "column": column.name}).scalar_one()
            if sequence is None:
                continue
            highest = connection.execute(sa.select(sa.func.max(column))).scalar_one()
            if highest is not None:
                connection.execute(sa.text("SELECT setval(:sequence, :value, true)"),
                                   {"sequence": sequence, "value": int(highest)})


__all__ = ["BackupError", "Progress", "Summary", "backup", "known_revisions", "read_header",
           "restore"]
