"""The deadline rows of a game as the clock reads and writes them inside a game transaction:
read in one statement (with the game's seats and their players' away dates, for a game event),
changed in memory, and the new ones inserted in one statement."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from itertools import accumulate
from typing import Any

from sqlalchemy import (
    Integer,
    and_,
    bindparam,
    case,
    exists,
    func,
    insert,
    inspect,
    literal_column,
    or_,
    union_all,
)
from sqlalchemy import select as core_select
from sqlalchemy.dialects.postgresql import REGCLASS
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm.base import NO_VALUE
from sqlalchemy.sql.elements import BindParameter
from sqlmodel import Session, col, select

from app.core.models import Absence, Deadline, PushSubscription, Seat, table_of
from app.core.statements import Prepared, Rows
from app.features.clock.arithmetic import Interval, aware

TIMEOUT_KIND = "timeout"
QUICK_TIMEOUT_KIND = "timeout-quick"
TIMEOUT_KINDS = (TIMEOUT_KIND, QUICK_TIMEOUT_KIND)
REMINDER_PREFIX = "reminder-"

DEADLINES = table_of(Deadline)
"""The deadlines table, for the statements written without the ORM."""


# The statements of every move, built once (building them costs more than running them).
_OPEN_FLOOR = select(func.min(Deadline.seq)).where(
    Deadline.game_id == bindparam("game_id"), col(Deadline.done_at).is_(None)).scalar_subquery()
_DECISION: BindParameter[int] = bindparam("decision_seq", type_=Integer)
_FROM_OPEN = select(Deadline).where(Deadline.game_id == bindparam("game_id"),
                                    col(Deadline.seq) >= _OPEN_FLOOR)
_FROM_OPEN_OR_DECISION = select(Deadline).where(
    Deadline.game_id == bindparam("game_id"),
    col(Deadline.seq) >= case((or_(_OPEN_FLOOR.is_(None), _OPEN_FLOOR > _DECISION), _DECISION),
                              else_=_OPEN_FLOOR))
_PART = union_all(select(literal_column("1").label("part")),
                  select(literal_column("2").label("part"))).subquery("part")
_HAS_DEVICES = exists().where(col(PushSubscription.seat_id) == col(Seat.id)).label("devices")
_SEAT_ROWS, _ABSENCE_ROWS, _DEADLINE_ROWS = Rows(Seat), Rows(Absence), Rows(Deadline)
_CLOCK_INPUTS = Prepared(
    core_select(*_SEAT_ROWS.columns, *_ABSENCE_ROWS.columns, *_DEADLINE_ROWS.columns,
                _HAS_DEVICES).select_from(_PART)
    .outerjoin(Seat, and_(_PART.c.part == 1, col(Seat.game_id) == bindparam("game_id")))
    .outerjoin(Absence, and_(col(Absence.email) == col(Seat.email), col(Absence.email) != "",
                             col(Absence.cancelled_at).is_(None)))
    .outerjoin(Deadline, and_(
        _PART.c.part == 2, col(Deadline.game_id) == bindparam("game_id"),
        col(Deadline.seq) >= case((or_(_OPEN_FLOOR.is_(None), _OPEN_FLOOR > _DECISION),
                                   _DECISION), else_=_OPEN_FLOOR))))
_DEADLINE_ID = _DEADLINE_ROWS.keys.index("id")
_ENDS = tuple(accumulate(len(rows.columns) for rows in (_SEAT_ROWS, _ABSENCE_ROWS,
                                                        _DEADLINE_ROWS)))
"""What a game event's clock work reads, in one statement: every seat, with its player's away dates
(the rows of part 1), and the deadline rows as :meth:`ClockRows.read` picks them given the pending
decision (the rows of part 2, without a seat: each seat is read once, not again with each of its
deadline rows, whose copies the ORM would decode anew). The two parts keep a seat's away dates and
the deadline rows from multiplying each other. ``devices``: whether the seat has a Web Push
subscription (app.features.push.notifications), so that a move of a game without any asks no
more."""
_SEATS_AND_AWAY = select(Seat, Absence).outerjoin(Absence, and_(
    col(Absence.email) == col(Seat.email), col(Absence.email) != "",
    col(Absence.cancelled_at).is_(None))).where(Seat.game_id == bindparam("game_id"))


@dataclass
class DeadlineColumns:
    """A deadline row's columns but its id, in a plain object (an ORM instance costs more to
    build than the rest of a move's clock work)."""

    game_id: int
    seq: int
    seat: int
    kind: str
    due_at: datetime
    opened_at: datetime | None = None
    allowance_seconds: int = 0
    extra_seconds: int = 0
    claimed_by: str | None = None
    claimed_at: datetime | None = None
    done_at: datetime | None = None
    result: str | None = None


@dataclass
class NewDeadline(DeadlineColumns):
    """A deadline row made by this transaction, for :meth:`ClockRows.write_new` to insert."""


@dataclass(eq=False)
class ReadDeadline(DeadlineColumns):
    """A deadline row read by a seat's move (:func:`read_ahead`) as a plain object, not the
    session's: the move's only copy of it, written by :meth:`ClockRows.write` in the columns
    that changed since it was read (``read``: the values as read)."""

    id: int = 0
    read: tuple[Any, ...] = ()

    @classmethod
    def of_values(cls, values: dict[str, Any]) -> ReadDeadline:
        row = cls(**values)
        row.read = row.current()
        return row

    def current(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _COLUMNS)

    def changed(self) -> set[str]:
        return {name for name, before, now in zip(_COLUMNS, self.read, self.current(),
                                                  strict=True) if before != now}


ClockRow = Deadline | NewDeadline | ReadDeadline
"""A row a game event works on: read from the table (the session's, or a move's own
:class:`ReadDeadline`), or new."""


class ClockRows:
    """The deadline rows of one game that an event can touch, read in one statement and then
    changed in memory (the session writes them with its next flush): every open row, every
    row of the decisions those belong to (their reminders already sent), and every row of the
    decision now pending."""

    def __init__(self, rows: list[ClockRow]) -> None:
        self.rows = rows
        self.new: list[NewDeadline] = []

    @classmethod
    def read(cls, s: Session, game_id: int, decision_seq: int | None = None) -> ClockRows:
        """Read through the index of open rows, then the game's rows from the oldest open
        decision (or ``decision_seq``) on: a long game's old rows are not read."""
        if decision_seq is None:
            rows = s.exec(_FROM_OPEN, params={"game_id": game_id}).all()
        else:
            rows = s.exec(_FROM_OPEN_OR_DECISION,
                          params={"game_id": game_id, "decision_seq": decision_seq}).all()
        return cls(list(rows))

    def add(self, row: NewDeadline) -> None:
        """A new row, written by :meth:`write_new`."""
        self.rows.append(row)
        self.new.append(row)

    def write_new(self, s: Session) -> None:
        """Insert the new rows in one statement (through the ORM, each row would be an INSERT
        of its own, to learn its id)."""
        if self.new:
            _INSERT_NEW.execute_many(s.connection(), [vars(row) for row in self.new])
            self.new = []

    def write(self, s: Session) -> None:
        """Write what changed of the rows read and insert the new ones, in one statement (an
        upsert on the id: the rows read update, the new ones insert), instead of the flush's
        UPDATE and :meth:`write_new`'s INSERT. A row read is written only in its columns
        that changed, as the flush would, and is then clean for the session."""
        changed = [(row, names) for row in self.rows if (names := _changed_columns(row))]
        if not changed:
            self.write_new(s)
            _written(s, self.rows)  # (set again to the values read, if at all)
            return
        params = [_upsert_params(None, row, names) for row, names in changed]
        params += [_upsert_params(vars(row), None, set()) for row in self.new]
        _UPSERT.execute_many(s.connection(), params)  # (no flush first: it would UPDATE them)
        _written(s, self.rows)
        self.new = []

    def of(self, seq: int, seat: int | None = None) -> list[ClockRow]:
        """The rows of decision ``seq`` (one seat's part in it), open or done."""
        return [row for row in self.rows
                if row.seq == seq and (seat is None or row.seat == seat)]

    def open_rows(self, *, seq: int | None = None, seat: int | None = None) -> list[ClockRow]:
        return [row for row in self.rows if row.done_at is None
                and (seq is None or row.seq == seq) and (seat is None or row.seat == seat)]

    def close(self, at: datetime, result: str, *, before: int | None = None,
              seq: int | None = None, seat: int | None = None) -> list[ClockRow]:
        """Mark open rows done: those of decisions before ``before``, or of decision ``seq``
        (one ``seat``'s part); returns them."""
        closed = [row for row in self.open_rows(seq=seq, seat=seat)
                  if before is None or row.seq < before]
        for row in closed:
            row.done_at, row.result = at, result
        return closed

    def timeout(self, seq: int, seat: int) -> ClockRow | None:
        """The timeout row of a seat's part in decision ``seq``, open or done."""
        return next((row for row in self.of(seq, seat) if row.kind in TIMEOUT_KINDS), None)

    def open_timeout(self, seat: int) -> ClockRow | None:
        """The seat's open timeout row of the latest decision."""
        found = [row for row in self.open_rows(seat=seat) if row.kind in TIMEOUT_KINDS]
        return max(found, key=lambda row: row.seq, default=None)

    def reminders(self, seq: int, seat: int) -> list[ClockRow]:
        return [row for row in self.of(seq, seat) if row.kind.startswith(REMINDER_PREFIX)]


_COLUMNS = tuple(column.name for column in DEADLINES.columns if column.name != "id")
_COLUMN_SET = frozenset(_COLUMNS)
_NOT_NULL = frozenset(name for name in _COLUMNS if not DEADLINES.c[name].nullable)
"""The columns a row's INSERT must give even when the row is there to update (the databases
check them before they look for the conflict)."""
_BITS = {name: 1 << index for index, name in enumerate(_COLUMNS)}
"""Each column's bit in the ``set_mask`` parameter of :func:`_upsert`."""


def _changed_columns(row: ClockRow) -> set[str]:
    """The columns of a row read from the table that this session changed (not yet flushed):
    those whose value differs from the one read, as the flush would see them (the session
    keeps the value read of each attribute set since; asking each column's history costs
    more than the rest of the write). A new row has none: it is inserted whole."""
    if isinstance(row, ReadDeadline):
        return row.changed()
    if not isinstance(row, Deadline):
        return set()
    state = inspect(row)
    if not state.modified:
        return set()
    read = state.committed_state
    return {name for name in _COLUMN_SET.intersection(read)
            if not _same(read[name], getattr(row, name))}


def _written(s: Session, rows: Iterable[ClockRow]) -> None:
    """Mark the rows read that are now written as clean for the session, all their columns as
    read (the session's flush would otherwise look at each of them again at the commit, to
    find nothing to write)."""
    for row in rows:
        if isinstance(row, ReadDeadline):
            row.read = row.current()
        elif isinstance(row, Deadline):
            state = inspect(row)
            if state.modified:
                state._commit_all(state.dict, s.identity_map)


def _same(before: Any, after: Any) -> bool:
    """Whether an attribute set to ``after`` still holds the value read (``before``; NO_VALUE
    when it had not been loaded, which counts as a change)."""
    return before is not NO_VALUE and bool(before == after)


def _upsert_params(new: dict[str, Any] | None, row: ClockRow | None,
                   changed: set[str]) -> dict[str, Any]:
    """The parameters of one row of :func:`_upsert`: a new row's values (no id), or a row
    read with the columns that changed marked to be set (a bit each in ``set_mask``)."""
    if new is not None:
        params = {f"v_{name}": new[name] for name in _COLUMNS}
    else:  # (a nullable column left as it is goes as NULL: its value is not written)
        params = {f"v_{name}": getattr(row, name) if name in changed or name in _NOT_NULL
                  else None for name in _COLUMNS}
    params["row_id"] = getattr(row, "id", None) if new is None else None
    params["set_mask"] = sum(_BITS[name] for name in changed)
    return params


def _upsert(dialect: str) -> Any:  # (prepared once per dialect below: _UPSERT)
    """``INSERT ... ON CONFLICT (id) DO UPDATE``: a row with an id already there has only its
    columns whose bit is set in ``set_mask`` updated; a row without an id is inserted with a
    new one (SQLite gives a NULL id the next one; PostgreSQL takes it from the id's
    sequence). The bits are written into the statement, not sent with each row: a row's
    parameters, not the database's work, are most of what the statement costs."""
    row_id: Any = bindparam("row_id", type_=Integer)
    if dialect == "postgresql":
        statement: Any = postgresql_insert(DEADLINES)
        row_id = func.coalesce(row_id, func.nextval(
            func.pg_get_serial_sequence(DEADLINES.name, "id").cast(REGCLASS)))
    else:
        statement = sqlite_insert(DEADLINES)
    statement = statement.values(
        {"id": row_id, **{name: bindparam(f"v_{name}", type_=DEADLINES.c[name].type)
                          for name in _COLUMNS}})
    mask: Any = bindparam("set_mask", type_=Integer)
    statement = statement.on_conflict_do_update(index_elements=[DEADLINES.c.id], set_={
        name: case((mask.op("&")(literal_column(str(_BITS[name]))) != literal_column("0"),
                    statement.excluded[name]), else_=DEADLINES.c[name])
        for name in _COLUMNS})
    return statement


_UPSERT = Prepared({dialect: _upsert(dialect) for dialect in ("postgresql", "sqlite")})
_INSERT_NEW = Prepared(insert(DEADLINES), _COLUMNS)


class AwayBook:
    """Players' away dates, read in one statement for a set of addresses."""

    def __init__(self, intervals: dict[tuple[str, str], list[Interval]]) -> None:
        self.intervals = intervals

    @classmethod
    def read(cls, s: Session, emails: Iterable[str]) -> AwayBook:
        wanted = sorted({email for email in emails if email})
        if not wanted:
            return cls({})
        return cls.of_rows(s.exec(select(Absence).where(
            col(Absence.email).in_(wanted), col(Absence.cancelled_at).is_(None))).all())

    @classmethod
    def of_rows(cls, absences: Iterable[Absence]) -> AwayBook:
        intervals: dict[tuple[str, str], list[Interval]] = {}
        for absence in absences:
            intervals.setdefault((absence.email, absence.mode), []).append(
                (aware(absence.starts_at), aware(absence.ends_at)))
        return cls(intervals)

    def of(self, email: str, mode: str) -> list[Interval]:
        return self.intervals.get((email, mode), [])


def seats_and_away(s: Session, game_id: int) -> tuple[dict[int, Seat], AwayBook]:
    """The game's seat rows as this transaction sees them, by position, and their players'
    away dates, in one statement."""
    seats: dict[int, Seat] = {}
    absences: dict[int, Absence] = {}  # (one player may hold two seats)
    for seat, absence in s.exec(_SEATS_AND_AWAY, params={"game_id": game_id}).all():
        seats[seat.position] = seat
        if absence is not None and absence.id is not None:
            absences[absence.id] = absence
    return seats, AwayBook.of_rows(absences.values())


def clock_input_rows(s: Session, game_id: int, decision_seq: int, *, plain: bool = False
                     ) -> list[tuple[Seat | None, Absence | None, ClockRow | None, bool | None]]:
    """The rows of :data:`_CLOCK_INPUTS` as the session's objects: (seat, one of its player's
    away dates, deadline row, whether the seat has a Web Push subscription); ``plain``: the
    deadline rows as :class:`ReadDeadline`, not the session's (for a move, the only reader
    of its game's rows in its transaction)."""
    found: list[tuple[Seat | None, Absence | None, ClockRow | None, bool | None]] = []
    for row in _CLOCK_INPUTS.rows(s.connection(), {"game_id": game_id,
                                                   "decision_seq": decision_seq}):
        values = row[_ENDS[1]:_ENDS[2]]
        deadline: ClockRow | None
        if not plain:
            deadline = _DEADLINE_ROWS.of(s, values)
        elif values[_DEADLINE_ID] is None:
            deadline = None
        else:
            deadline = ReadDeadline.of_values(dict(zip(_DEADLINE_ROWS.keys, values,
                                                       strict=True)))
        found.append((_SEAT_ROWS.of(s, row[:_ENDS[0]]),
                      _ABSENCE_ROWS.of(s, row[_ENDS[0]:_ENDS[1]]), deadline, row[_ENDS[2]]))
    return found


def clock_inputs(s: Session, game_id: int, decision_seq: int, *, plain: bool = False
                 ) -> tuple[ClockRows, dict[int, Seat], AwayBook]:
    """The game's deadline rows as ``ClockRows.read(s, game_id, decision_seq)`` reads them,
    and its seats and their players' away dates as :func:`seats_and_away` reads them, in one
    statement (every deadline row belongs to a seat of its game)."""
    seats: dict[int, Seat] = {}
    absences: dict[int, Absence] = {}
    deadlines: list[ClockRow] = []
    with_devices: set[int] = set()
    for seat, absence, deadline, devices in clock_input_rows(s, game_id, decision_seq,
                                                             plain=plain):
        if seat is not None:
            seats[seat.position] = seat
            if devices and seat.id is not None:
                with_devices.add(seat.id)
        if absence is not None and absence.id is not None:
            absences[absence.id] = absence
        if deadline is not None:
            deadlines.append(deadline)
    s.info[SEATS_WITH_DEVICES] = (game_id, frozenset(with_devices))
    return ClockRows(deadlines), seats, AwayBook.of_rows(absences.values())


SEATS_WITH_DEVICES = "titanpost.seats_with_devices"
"""The key in a session's ``info`` of ``(game id, the ids of its seats with a Web Push
subscription)`` as :func:`clock_inputs` last read them (app.features.push.notifications asks no more
of that game)."""
READ_AHEAD = "titanpost.clock_inputs"
"""The key of :class:`ReadAhead` in a session's ``info``."""


@dataclass
class ReadAhead:
    """What :func:`clock_inputs` read for a game when its command read the game (the seats
    a command needs anyway, in the same statement as the clock's rows), kept in the session
    for the clock's work on the command's one event."""

    game_id: int
    rows: ClockRows
    seats: dict[int, Seat]
    book: AwayBook


def read_ahead(s: Session, game_id: int, decision_seq: int) -> list[Seat]:
    """Read the game's clock inputs now, while its decision ``decision_seq`` is pending, and
    keep them in the session for :func:`taken_ahead`; the seats in seat order.

    The rows read are those of :func:`clock_inputs` for the decision the command then opens
    and more: every open row (the same, the command writing no deadline rows before its
    event), and the rows of the decisions from ``decision_seq`` on, done ones included,
    which the clock never asks for again (it asks for open rows and for the rows of the
    decision it opens, which come after)."""
    rows, seats, book = clock_inputs(s, game_id, decision_seq, plain=True)
    s.info[READ_AHEAD] = ReadAhead(game_id, rows, seats, book)
    return [seats[position] for position in sorted(seats)]


def taken_ahead(s: Session, game_id: int | None) -> ReadAhead | None:
    """The clock inputs :func:`read_ahead` kept in the session for game ``game_id``, taken
    (a second event of the transaction reads them again, as its rows may have changed)."""
    ahead: ReadAhead | None = s.info.pop(READ_AHEAD, None)
    return ahead if ahead is not None and ahead.game_id == game_id else None
