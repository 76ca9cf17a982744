"""The clock at work: deadline rows for every pending decision, and the processing of what is due.

:class:`Timekeeper` is a game-service listener. Inside each game transaction it closes the rows of
decisions that were answered (settling the answering seat's time bank) and writes rows for the
decision now pending: one ``timeout`` row per seat to act (``timeout-quick`` for reaction windows
and pirate choices) and one ``reminder-N`` row per reminder point. A timeout row keeps what its due
time is computed from (see :mod:`app.features.clock.arithmetic`), so vacations, quiet hours, pauses
and outages recompute it.

:meth:`Timekeeper.process_due` is the one function the scheduler runs, as of a given time. It
claims due rows atomically (``FOR UPDATE SKIP LOCKED`` on PostgreSQL; on SQLite the claim is a
conditional UPDATE under the database's write lock), so two scheduler processes never act on the
same row; a reminder is written to the outbox in the same transaction that marks its row done,
and a timeout goes through :meth:`GameService.act_for`, which does nothing when the decision was
answered meanwhile and otherwise closes the row in the transaction of the move it makes. A row
claimed by a process that died is claimed again once its lease has passed. The timeout of a seat
whose mail bounces is extended once and its game's owner told (:mod:`.unreachable`).

The timekeeper's other parts are modules of their own, on :class:`.keeperbase.KeeperBase` (the
service, a seat's deadline worked out again): :mod:`.listener`, the rows kept inside game
transactions, and :mod:`.playersettings`, a player's away dates and own settings.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, or_, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.core.models import ACTIVE, AWAY, TIMEOUT, ClockTick, Deadline, Game, Seat, utcnow
from app.features.clock import botturns, unreachable
from app.features.clock.arithmetic import ClockSettings, Interval, aware, computer_from
from app.features.clock.keeperbase import COMPUTER_AWAY, RowHandler, human_with_address, iso_or_none
from app.features.clock.listener import ClockListener
from app.features.clock.playersettings import PlayerSettings
from app.features.clock.rows import DEADLINES, TIMEOUT_KINDS, AwayBook
from app.mail.notify import OUTAGE, REMINDER, enqueue_notice
from app.service import GameMovedOn, GameService

log = logging.getLogger("titanpost.clock")


LEASE = timedelta(minutes=5)
"""A claimed row whose claimer has not finished it within this is claimed again."""
MAIN_CLOCK = "main"


@dataclass
class TickReport:
    """What one run of :meth:`Timekeeper.process_due` did."""

    now: datetime
    claimed: int = 0
    reminders: int = 0
    timeouts: int = 0
    answered: int = 0
    failed: int = 0
    outage: timedelta | None = None
    extended: int = 0
    held: int = 0
    """Timeouts extended once since their seat's mail bounces (:mod:`.unreachable`)."""
    bot_moves: int = 0
    """Decisions of normal and strong computer seats played (:mod:`app.features.clock.botturns`)."""
    actions: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{self.claimed} due", f"{self.reminders} reminders",
                 f"{self.timeouts} timeouts", f"{self.answered} already answered"]
        if self.held:
            parts.append(f"{self.held} held (mail bounces)")
        if self.bot_moves:
            parts.append(f"{self.bot_moves} computer moves")
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.outage is not None:
            parts.append(f"outage of {self.outage} noticed: {self.extended} deadlines extended")
        return ", ".join(parts)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Timekeeper(ClockListener, PlayerSettings):
    """The game-service listener that keeps deadline rows, and the processing of due rows."""

    # ============================================================== the scheduler's work

    def process_due(self, now: datetime | None = None, *, worker: str | None = None,
                    max_gap: timedelta | None = None, batch: int = 100,
                    limit: int = 10_000) -> TickReport:
        """Do what is due as of ``now``: idempotent, safe to run in several processes at once. Then
        play the due moves of normal and strong computer seats (:mod:`app.features.clock.botturns`).

        Past an outage longer than ``max_gap`` (the time since the last tick by any process),
        the open deadlines are first extended by the outage and the players whose deadline
        passed meanwhile are told, instead of timing them all out at once.

        A tick as of a given time (``now``; ``admin tick --now``) may be ahead of the real
        clock; the next real-time tick then finds the last tick in the future and takes the
        real time back as the last tick, so outages are noticed again.
        """
        real = now is None
        now = aware(now or utcnow())
        worker = worker or worker_name()
        report = TickReport(now)
        self._mark_tick(now, worker, max_gap, report, real=real)
        while report.claimed < limit:
            claimed = self._claim(now, worker, min(batch, limit - report.claimed))
            if not claimed:
                break
            report.claimed += len(claimed)
            for row_id in claimed:
                self._process(row_id, now, worker, report)
        if report.claimed:
            self._count_processed(report.claimed)
        bots = botturns.run_due(self.service, worker)
        report.bot_moves, report.failed = bots.played, report.failed + bots.failed
        return report

    def _count_processed(self, count: int) -> None:
        """Add to the clock's running count of processed rows (for the health check)."""
        with self.service.session(write=True) as s:
            s.execute(update(ClockTick).where(col(ClockTick.name) == MAIN_CLOCK)
                      .values(processed=col(ClockTick.processed) + count))
            s.commit()

    def _mark_tick(self, now: datetime, worker: str, max_gap: timedelta | None,
                   report: TickReport, *, real: bool = False) -> None:
        with self.service.session(write=True) as s:
            tick = s.get(ClockTick, MAIN_CLOCK, with_for_update=True)
            if tick is None:
                s.add(ClockTick(name=MAIN_CLOCK, last_tick_at=now, worker=worker))
                try:
                    s.commit()
                    return
                except IntegrityError:  # another process's first tick, at the same moment
                    s.rollback()
                    tick = s.get(ClockTick, MAIN_CLOCK, with_for_update=True)
                    assert tick is not None
            last = aware(tick.last_tick_at)
            if now <= last:
                if real and now < last:  # the last tick was a simulated one, ahead of time
                    tick.last_tick_at, tick.worker = now, worker
                    s.add(tick)
                    s.commit()
                return
            gap = now - last
            if max_gap is not None and max_gap.total_seconds() > 0 and gap > max_gap:
                report.outage = gap
                report.extended = self._extend(s, last, now, gap)
            tick.last_tick_at, tick.worker = now, worker
            s.add(tick)
            s.commit()

    def _extend(self, s: Session, last: datetime, now: datetime, gap: timedelta) -> int:
        """Move every open deadline on by the outage; tell whoever's deadline passed in it.
        (A paused game's deadlines stand still: its resume adds the whole pause.)"""
        rows = s.exec(select(Deadline).join(Game, col(Game.id) == col(Deadline.game_id)).where(
            col(Deadline.done_at).is_(None), col(Game.paused_at).is_(None))).all()
        told: set[tuple[int, int]] = set()
        for row in rows:
            was_due = aware(row.due_at)
            row.due_at = was_due + gap
            if row.kind in TIMEOUT_KINDS:
                row.extra_seconds += int(gap.total_seconds())
                if was_due <= now and (row.game_id, row.seat) not in told:
                    told.add((row.game_id, row.seat))
                    self._tell_outage(s, row, last, now)
            s.add(row)
        return len(rows)

    def _tell_outage(self, s: Session, row: Deadline, last: datetime, now: datetime) -> None:
        game = s.get(Game, row.game_id)
        seat = s.exec(select(Seat).where(Seat.game_id == row.game_id,
                                         Seat.position == row.seat)).first()
        if game is None or seat is None or not human_with_address(seat):
            return
        enqueue_notice(s, self.settings, game=game, seat=seat, kind=OUTAGE, seq=row.seq,
                       payload={"from": iso_or_none(last), "until": iso_or_none(now),
                                "due_at": iso_or_none(row.due_at)},
                       extra=now.strftime("%Y%m%d%H%M"))

    def _claim(self, now: datetime, worker: str, count: int) -> list[int]:
        """Claim up to ``count`` due rows for ``worker``; returns their ids."""
        with self.service.session(write=True) as s:
            dialect = s.get_bind().dialect.name
            stale = now - LEASE
            due = (
                select(Deadline.id)
                .join(Game, col(Game.id) == col(Deadline.game_id))
                .where(
                    col(Deadline.done_at).is_(None),
                    col(Deadline.due_at) <= now,
                    or_(col(Deadline.claimed_at).is_(None), col(Deadline.claimed_at) < stale),
                    col(Game.paused_at).is_(None),
                )
                .order_by(col(Deadline.due_at))
                .limit(count)
            )
            if dialect == "postgresql":
                due = due.with_for_update(skip_locked=True, of=DEADLINES)
            # A CTE, run once: as "id IN (subquery)" PostgreSQL may rescan the subquery for
            # every row it updates, each rescan skipping the rows just claimed, and so claim
            # every due row in one statement whatever the LIMIT.
            chosen = due.cte("due")
            statement = (
                update(DEADLINES)
                .where(and_(DEADLINES.c.id == chosen.c.id, DEADLINES.c.done_at.is_(None)))
                .values(claimed_by=worker, claimed_at=now)
                .returning(DEADLINES.c.id)
            )
            ids = [int(row[0]) for row in s.execute(statement).all()]
            s.commit()
            return sorted(ids)

    def _process(self, row_id: int, now: datetime, worker: str, report: TickReport) -> None:
        try:
            with self.service.session() as s:
                row = s.get(Deadline, row_id)
                if row is None or row.done_at is not None or row.claimed_by != worker:
                    return
                game = s.get(Game, row.game_id)
                assert game is not None
                uid, kind, seq, position = game.uid, row.kind, row.seq, row.seat
            handler = next((h for prefix, h in self.row_handlers.items()
                            if kind.startswith(prefix)), None)
            if handler is not None:
                self._handle(row_id, worker, handler, now)
            elif kind in TIMEOUT_KINDS:
                self._time_out(row_id, uid, position, seq, now, report)
            else:
                self._remind(row_id, uid, position, seq, now, report)
        except Exception:  # one bad row must not stop the others; its lease retries it
            report.failed += 1
            log.exception("deadline %s failed", row_id)

    def _time_out(self, row_id: int, uid: str, position: int, seq: int, now: datetime,
                  report: TickReport) -> None:
        with self.service.session() as s:
            game = self.service.load(s, uid).game
            seat = next(p for p in self.service.seats(s, game) if p.position == position)
            away = computer_from(now, now + timedelta(seconds=1),
                                 self._away(s, seat.email, COMPUTER_AWAY)) is not None
        if not away and unreachable.hold(self, row_id, uid, position, seq, now):
            report.held += 1  # (a seat whose mail bounces: extended once, the owner told)
            return
        clock = ClockSettings.of(game.settings)
        mode, actor = ("bot", AWAY) if away else (clock.on_timeout, TIMEOUT)
        try:
            result = self.service.act_for(uid, position, seq, mode=mode, actor=actor, at=now)
        except GameMovedOn:
            # another entry took the same place in the log first (usually the player's answer,
            # on PostgreSQL): look again, which finds the decision answered or still pending
            result = self.service.act_for(uid, position, seq, mode=mode, actor=actor, at=now)
        if result["acted"]:
            report.timeouts += 1
            report.actions.append(f"{uid} seat {position + 1}: {result['mode']} {result['inputs']}")
        elif result.get("paused"):
            self._release(row_id)
        else:
            report.answered += 1
            self._finish(row_id, now, "answered")

    def _remind(self, row_id: int, uid: str, position: int, seq: int, now: datetime,
                report: TickReport) -> None:
        with self.service.session(write=True) as s:
            row = s.get(Deadline, row_id)
            if row is None or row.done_at is not None:
                return
            loaded = self.service.load(s, uid)
            if loaded.game.status == ACTIVE and loaded.game.paused_at is not None:
                row.claimed_by, row.claimed_at = None, None  # paused since the claim
                s.add(row)
                s.commit()
                return
            seat = loaded.seat(position)
            pending = (loaded.game.status == ACTIVE and loaded.game.paused_at is None
                       and loaded.decision_seq == seq and not seat.is_bot
                       and position in loaded.to_act())
            if pending:
                timeout = s.exec(select(Deadline).where(
                    Deadline.game_id == row.game_id, Deadline.seq == seq,
                    Deadline.seat == position, col(Deadline.kind).in_(TIMEOUT_KINDS))).first()
                clock = ClockSettings.of(loaded.game.settings)
                enqueue_notice(s, self.settings, game=loaded.game, seat=seat, kind=REMINDER,
                               seq=seq, extra=row.kind,
                               payload={"due_at": iso_or_none(timeout.due_at) if timeout else None,
                                        "action": clock.on_timeout,
                                        "hours": _hours_since(row.opened_at, now)})
                report.reminders += 1
            else:
                report.answered += 1
            row.done_at, row.result = now, "sent" if pending else "answered"
            s.add(row)
            s.commit()

    def _handle(self, row_id: int, worker: str, handler: RowHandler, now: datetime) -> None:
        """A row of another part's (:attr:`row_handlers`), still open and still this
        worker's, handed to its handler in a transaction of its own."""
        with self.service.session(write=True) as s:
            row = s.get(Deadline, row_id)
            if row is None or row.done_at is not None or row.claimed_by != worker:
                return
            handler(s, row, now)
            s.commit()

    def _release(self, row_id: int) -> None:
        """Give a claimed row back: its game was paused after the claim (its resume moves
        the row on by the pause)."""
        with self.service.session(write=True) as s:
            s.execute(update(DEADLINES)
                      .where(DEADLINES.c.id == row_id, DEADLINES.c.done_at.is_(None))
                      .values(claimed_by=None, claimed_at=None))
            s.commit()

    def _finish(self, row_id: int, now: datetime, result: str) -> None:
        with self.service.session(write=True) as s:
            s.execute(update(DEADLINES)
                      .where(DEADLINES.c.id == row_id, DEADLINES.c.done_at.is_(None))
                      .values(done_at=now, result=result))
            s.commit()

    def _away(self, s: Session, email: str, mode: str) -> list[Interval]:
        return AwayBook.read(s, [email]).of(email, mode)

    # ============================================================== reading

    def deadlines_of(self, uid: str) -> list[dict[str, Any]]:
        """The open deadlines of a game (for pages, the API and the CLI)."""
        with self.service.session() as s:
            game = self.service.load(s, uid).game
            rows = s.exec(select(Deadline).where(
                Deadline.game_id == game.id, col(Deadline.done_at).is_(None),
            ).order_by(col(Deadline.due_at))).all()
            return [{"seat": r.seat, "seq": r.seq, "kind": r.kind, "due_at": iso_or_none(r.due_at)}
                    for r in rows]

    def open_timeouts_of(self, uid: str, position: int) -> list[dict[str, Any]]:
        """A seat's open timeouts (the calendar feed's events), soonest first."""
        with self.service.session() as s:
            game = self.service.load(s, uid).game
            rows = s.exec(select(Deadline).where(
                Deadline.game_id == game.id, Deadline.seat == position,
                col(Deadline.kind).in_(TIMEOUT_KINDS), col(Deadline.done_at).is_(None),
            ).order_by(col(Deadline.due_at))).all()
            return [{"seq": r.seq, "kind": r.kind, "due_at": aware(r.due_at)} for r in rows]

    def last_tick(self) -> datetime | None:
        with self.service.session() as s:
            tick = s.get(ClockTick, MAIN_CLOCK)
            return aware(tick.last_tick_at) if tick is not None else None


def _hours_since(opened: datetime | None, now: datetime) -> int | None:
    if opened is None:
        return None
    return max(0, int((now - aware(opened)).total_seconds() // 3600))


def install(service: GameService) -> Timekeeper:
    """Add the timekeeper to ``service``'s listeners (once) and return it."""
    return service.listener(Timekeeper, lambda: Timekeeper(service))
