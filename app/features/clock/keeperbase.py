"""What the timekeeper's parts stand on, as app/service/base.py is for the service:
:class:`KeeperBase` holds the game service and its settings, the handlers of the deadline rows
other parts keep in the table, and works a seat's open deadline and reminders out again
(:meth:`KeeperBase.reschedule`), which a move, a resume, away dates and quiet hours all ask for.
Beside it the away modes, a seat's quiet hours, and two helpers of the clock's mails."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlmodel import Session

from app.core.models import Deadline, Game, Seat, utcnow
from app.features.clock.arithmetic import (
    ClockSettings,
    Quiet,
    aware,
    computer_from,
    deadline_at,
    reminder_at,
)
from app.features.clock.rows import REMINDER_PREFIX, AwayBook, ClockRows, NewDeadline
from app.service import GameService

RowHandler = Callable[[Session, Deadline, datetime], None]
"""What handles a due deadline row of another part (see :attr:`Timekeeper.row_handlers`)."""

STRETCH = "stretch"
COMPUTER_AWAY = "computer"
ABSENCE_MODES = (STRETCH, COMPUTER_AWAY)


class KeeperBase:
    """The service a timekeeper serves, and a seat's deadline rows worked out again."""

    def __init__(self, service: GameService) -> None:
        self.service = service
        self.settings = service.settings
        self.row_handlers: dict[str, RowHandler] = {}
        """Handlers of deadline rows other parts keep in the table (by the prefix of their kind,
        e.g. app.features.takeback.takebacks's ``takeback-<id>``): called with the claimed row, in a
        write transaction the caller commits."""

    def reschedule(self, s: Session, game: Game, seat: Seat,
                   clock: ClockSettings | None = None, rows: ClockRows | None = None,
                   book: AwayBook | None = None) -> None:
        """Recompute when the seat's open timeout fires and when its reminders go out, from the
        decision's opening, its allowance, the player's away dates and quiet hours.
        (``rows``, ``book``: already read in this transaction; else they are read here.)"""
        assert game.id is not None
        clock = clock or ClockSettings.of(game.settings)
        own = rows is None
        rows = rows if rows is not None else ClockRows.read(s, game.id)
        timeout = rows.open_timeout(seat.position)
        if timeout is None or timeout.opened_at is None:
            return
        book = book if book is not None else AwayBook.read(s, [seat.email])
        quiet = seat_quiet(seat)
        stretch_away = book.of(seat.email, STRETCH)
        opened = aware(timeout.opened_at)
        due = deadline_at(opened, timeout.allowance_seconds + timeout.extra_seconds,
                          stretch_away, quiet)
        computer = computer_from(opened, due, book.of(seat.email, COMPUTER_AWAY))
        timeout.due_at = computer if computer is not None else due
        existing = {row.kind: row for row in rows.reminders(timeout.seq, seat.position)}
        for index, point in enumerate(clock.reminders, start=1):
            kind = f"{REMINDER_PREFIX}{index}"
            moment = None if computer is not None else reminder_at(
                point, opened, due, stretch_away, quiet)
            row = existing.get(kind)
            if row is not None and row.done_at is not None:
                continue
            if moment is None:
                if row is not None:
                    row.done_at, row.result = utcnow(), "dropped"
                continue
            if row is None:
                rows.add(NewDeadline(game_id=timeout.game_id, seq=timeout.seq,
                                     seat=seat.position, kind=kind, due_at=moment,
                                     opened_at=opened))
            else:
                row.due_at = moment
        if own:
            rows.write_new(s)


def seat_quiet(seat: Seat) -> Quiet | None:
    prefs = seat.notify or {}
    try:
        return Quiet.parse(prefs.get("quiet"), prefs.get("timezone"))
    except ValueError:
        return None


def human_with_address(seat: Seat) -> bool:
    return not seat.is_bot and bool(seat.email)


def iso_or_none(moment: datetime | None) -> str | None:
    return aware(moment).isoformat() if moment is not None else None

