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
claimed by a process that died is claimed again once its lease has passed.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    and_,
    or_,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.core.i18n import N_
from app.core.models import (
    ACTIVE,
    ADMIN,
    AWAY,
    OPEN,
    OWNER,
    REACTIONS,
    TIMEOUT,
    Absence,
    ClockTick,
    Deadline,
    Game,
    Seat,
    utcnow,
)
from app.features.clock import botturns
from app.features.clock.arithmetic import (
    ClockSettings,
    Interval,
    Quiet,
    aware,
    bank_after,
    computer_from,
    counted,
    deadline_at,
    reminder_at,
)
from app.features.clock.rows import (
    DEADLINES,
    QUICK_TIMEOUT_KIND,
    REMINDER_PREFIX,
    TIMEOUT_KIND,
    TIMEOUT_KINDS,
    AwayBook,
    ClockRow,
    ClockRows,
    NewDeadline,
    clock_inputs,
    seats_and_away,
    taken_ahead,
)
from app.games import ruleset
from app.games.base import ASK, CONTINUES, QUICK
from app.mail.notify import AWAY as AWAY_NOTICE
from app.mail.notify import (
    DEADLINE,
    MAIL_MODES,
    OUTAGE,
    PAUSED,
    REMINDER,
    RESUMED,
    enqueue_notice,
    mail_mode,
)
from app.mail.notify import HANDOVER as HANDOVER_NOTICE
from app.service import (
    LANGUAGES,
    AnswerRecorder,
    BadRequest,
    GameEvent,
    GameMovedOn,
    GameService,
    Loaded,
    NotFound,
    ServiceError,
    check_quiet,
)

log = logging.getLogger("titanpost.clock")

RowHandler = Callable[[Session, Deadline, datetime], None]
"""What handles a due deadline row of another part (see :attr:`Timekeeper.row_handlers`)."""

SENT_BEFORE = "sent before"
SENT = ("sent", SENT_BEFORE)
"""Results of a reminder row that went out (for this decision, or for an earlier one of the
same turn)."""
STRETCH = "stretch"
COMPUTER_AWAY = "computer"
ABSENCE_MODES = (STRETCH, COMPUTER_AWAY)

AWAY_MODE_REFUSED = N_("the away mode is stretch or computer, not '{mode}'")
AWAY_BACKWARDS = N_("the away dates end before they start")
AWAY_TOO_LONG = N_("away dates last at most three months")
AWAY_OVER = N_("those away dates are already over")
WINDOWS_DEALT = N_("any-time reaction windows are dealt into the game when it starts: they can "
                   "only be changed before the start")
MAIL_REFUSED = N_("mail must be one of {choices}, not '{mail}'")
LANGUAGE_REFUSED = N_("language must be one of {choices}, not '{language}'")
NOTHING_TO_CHANGE = N_("nothing to change: choose a setting to change")
REACTIONS_REFUSED = N_("reactions must be one of {choices}, not '{reactions}'")
"""Refusals a player meets on the settings page (catalogue messages; the away modes are
:data:`ABSENCE_MODES`)."""

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
    bot_moves: int = 0
    """Decisions of normal and strong computer seats played (:mod:`app.features.clock.botturns`)."""
    actions: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{self.claimed} due", f"{self.reminders} reminders",
                 f"{self.timeouts} timeouts", f"{self.answered} already answered"]
        if self.bot_moves:
            parts.append(f"{self.bot_moves} computer moves")
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.outage is not None:
            parts.append(f"outage of {self.outage} noticed: {self.extended} deadlines extended")
        return ", ".join(parts)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Timekeeper:
    """The game-service listener that keeps deadline rows, and the processing of due rows."""

    def __init__(self, service: GameService) -> None:
        self.service = service
        self.settings = service.settings
        self.row_handlers: dict[str, RowHandler] = {}
        """Handlers of deadline rows other parts keep in the table (by the prefix of their kind,
        e.g. app.features.takeback.takebacks's ``takeback-<id>``): called with the claimed row, in a
        write transaction the caller commits."""

    # ============================================================== inside game transactions

    def __call__(self, s: Session, event: GameEvent) -> None:
        loaded = event.loaded
        game = event.game
        ahead = taken_ahead(s, game.id)
        if event.kind in ("created", "invited") or game.id is None:
            return
        if loaded is None or loaded.state is None or game.status != ACTIVE:
            self._close_all(s, game.id, "finished", event.at)
            return
        if event.kind == "paused":
            # the seat whose missed deadline paused the game hears it from its deadline mail
            late = event.position if event.actor not in (OWNER, ADMIN) else None
            self._notify_all(s, loaded, PAUSED, loaded.seq,
                             {"reason": game.pause_reason, "by": event.actor,
                              "position": event.position}, skip=late)
            return
        # one read for the whole event: the deadline rows, the seats with their away dates
        if ahead is not None and event.kind == "moved":  # read with the game (a move)
            rows, seats, book = ahead.rows, ahead.seats, ahead.book
        else:
            rows, seats, book = clock_inputs(s, game.id, loaded.decision_seq)
        if event.kind == "sealed":  # a secret answer given: that seat's clock stops
            closed = rows.close(event.at, "answered", seq=loaded.decision_seq,
                                seat=event.position)
            self._settle_banks(s, loaded, seats, event, closed, book)
            return
        fired: list[ClockRow] = []
        if event.kind == "timed_out":
            fired = self._close_fired(rows, event)
        closed = rows.close(event.at, "answered", before=loaded.decision_seq)
        carried = self._settle_banks(s, loaded, seats, event, [*fired, *closed], book)
        if event.kind == "resumed":
            self._after_resume(s, loaded, event, rows, seats, book)
        if game.paused_at is None:
            self.open_decision(s, loaded, event.at, carried, seats, rows, book)
        rows.write(s)
        if event.kind == "timed_out":
            self._timeout_notices(s, loaded, event)

    @staticmethod
    def _close_all(s: Session, game_id: int, result: str, at: datetime) -> None:
        """Mark every open row of a game that no longer runs done (one statement)."""
        s.execute(update(DEADLINES)
                  .where(DEADLINES.c.game_id == game_id, DEADLINES.c.done_at.is_(None))
                  .values(done_at=at, result=result))

    @staticmethod
    def _close_fired(rows: ClockRows, event: GameEvent) -> list[ClockRow]:
        """The timeout row that fired is done, whatever the action did to the decision."""
        fired = rows.open_rows(seq=int(event.detail["decision_seq"]), seat=event.position)
        for row in fired:
            row.done_at = event.at
            row.result = "timed out" if row.kind in TIMEOUT_KINDS else "dropped"
            if event.actor == AWAY:
                row.result = "played while away" if row.kind in TIMEOUT_KINDS else "dropped"
        return fired

    def _settle_banks(self, s: Session, loaded: Loaded, seats: dict[int, Seat],
                      event: GameEvent, closed: Sequence[ClockRow],
                      book: AwayBook) -> dict[int, ClockRow]:
        """Charge the answering seat's time bank for the decision it answered, unless its turn
        goes on (then the turn's clock carries over to the next decision: returned by seat).
        A turn that timed out has used its whole clock, the bank with it."""
        carried: dict[int, ClockRow] = {}
        if event.kind not in ("moved", "timed_out", "sealed") or event.position is None:
            return carried
        clock = ClockSettings.of(loaded.game.settings)
        rules = loaded.rules
        pending = rules.pending(loaded.state) or {}
        continues = (event.kind == "moved"
                     and loaded.to_act() == [event.position]
                     and rules.clock_kind(pending) == CONTINUES)
        for row in closed:
            if row.seat != event.position or row.kind != TIMEOUT_KIND:
                continue
            if continues:
                carried[row.seat] = row
                continue
            seat = seats[row.seat]
            if seat.bank_seconds is None or row.opened_at is None:
                continue
            away = book.of(seat.email, STRETCH)
            used = counted(row.opened_at, event.at, away) - row.extra_seconds
            base, _ = clock.allowance(False, 0)
            seat.bank_seconds = bank_after(seat.bank_seconds, base, used, clock.increment)
            s.add(seat)
        return carried

    def open_decision(self, s: Session, loaded: Loaded, at: datetime,
                      carried: dict[int, ClockRow] | None = None,
                      seats: dict[int, Seat] | None = None,
                      rows: ClockRows | None = None, book: AwayBook | None = None) -> None:
        """Write the rows of the decision pending in ``loaded`` (nothing if already there).
        ``seats``: the game's seat rows read in this transaction (the service's may be a
        cached copy, and the time bank and quiet hours must be current); ``rows`` and
        ``book``: the game's deadline rows and its players' away dates, when the caller has
        read them already. The new rows are written with the transaction's next flush, in
        one statement."""
        clock = ClockSettings.of(loaded.game.settings)
        if not clock.running or loaded.state is None:
            return
        if seats is None or book is None:
            seats, book = seats_and_away(s, loaded.game_id)
        own = rows is None
        rows = rows if rows is not None else ClockRows.read(s, loaded.game_id,
                                                            loaded.decision_seq)
        pending = loaded.rules.pending(loaded.state) or {}
        quick = loaded.rules.clock_kind(pending) == QUICK
        for position in loaded.to_act():
            seat = seats[position]
            if seat.is_bot or rows.timeout(loaded.decision_seq, position) is not None:
                continue
            _, allowed = clock.allowance(quick, seat.bank_seconds)
            opened, extra = at, 0
            previous = (carried or {}).get(position)
            if previous is not None and previous.opened_at is not None and not quick:
                opened, allowed, extra = (previous.opened_at, previous.allowance_seconds,
                                          previous.extra_seconds)
            timeout = NewDeadline(
                game_id=loaded.game_id, seq=loaded.decision_seq, seat=position,
                kind=QUICK_TIMEOUT_KIND if quick else TIMEOUT_KIND, due_at=opened,
                opened_at=opened, allowance_seconds=allowed, extra_seconds=extra,
            )
            rows.add(timeout)
            self.reschedule(s, loaded.game, seat, clock, rows, book)
            if previous is not None and not quick:
                self._carry_reminders(rows, previous, timeout, at)
        if own:
            rows.write_new(s)

    @staticmethod
    def _carry_reminders(rows: ClockRows, previous: ClockRow, row: ClockRow,
                         at: datetime) -> None:
        """A turn's reminders go out once for the whole turn: a point already sent for an
        earlier decision of the turn, or already passed, is not sent again."""
        sent = {r.kind for r in rows.reminders(previous.seq, previous.seat) if r.result in SENT}
        for r in rows.reminders(row.seq, row.seat):
            if r.done_at is None and (r.kind in sent or aware(r.due_at) <= aware(at)):
                r.done_at, r.result = at, SENT_BEFORE if r.kind in sent else "dropped"

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

    def _away(self, s: Session, email: str, mode: str) -> list[Interval]:
        return AwayBook.read(s, [email]).of(email, mode)

    def _after_resume(self, s: Session, loaded: Loaded, event: GameEvent, rows: ClockRows,
                      seats: dict[int, Seat], book: AwayBook) -> None:
        """The pause did not count: open rows get its length as extra time. A timeout that
        paused the game gives its seat a fresh deadline from now (the seat's own time and what
        is left of its bank), with its reminder points."""
        paused = int(event.detail.get("paused_seconds", 0))
        for row in rows.open_rows():
            row.extra_seconds += paused if row.kind in TIMEOUT_KINDS else 0
        clock = ClockSettings.of(loaded.game.settings)
        for row in rows.of(loaded.decision_seq):
            if row.kind not in TIMEOUT_KINDS or row.result != "timed out":
                continue
            row.done_at, row.result, row.claimed_by, row.claimed_at = None, None, None, None
            row.opened_at, row.extra_seconds = event.at, 0
            _, row.allowance_seconds = clock.allowance(
                row.kind == QUICK_TIMEOUT_KIND, seats[row.seat].bank_seconds)
            for point in rows.reminders(row.seq, row.seat):
                if point.result == "dropped":
                    point.done_at, point.result, point.claimed_by, point.claimed_at = (
                        None, None, None, None)
        for position in loaded.to_act():
            self.reschedule(s, loaded.game, seats[position], clock, rows, book)
        self._notify_all(s, loaded, RESUMED, loaded.seq,
                         {"paused_seconds": paused, "by": event.actor,
                          "position": event.position})

    def _timeout_notices(self, s: Session, loaded: Loaded, event: GameEvent) -> None:
        if event.actor != TIMEOUT or event.position is None:
            return
        seat = loaded.seat(event.position)
        detail = event.detail
        enqueue_notice(s, self.settings, game=loaded.game, seat=seat, kind=DEADLINE,
                       seq=int(detail["decision_seq"]),
                       payload={"action": detail["mode"], "inputs": detail["inputs"],
                                "input": "; ".join(detail["inputs"]),
                                "handover": detail.get("handover"),
                                "missed": seat.missed_deadlines})
        if detail.get("handover"):
            payload = {"position": seat.position, "player": seat.player_name,
                       "to": detail["handover"], "missed": seat.missed_deadlines}
            owners = [p for p in loaded.seats
                      if p.email and p.email == loaded.game.owner_email and not p.is_bot]
            for other in owners or [p for p in loaded.seats if _human(p)]:
                if other.position != seat.position:
                    enqueue_notice(s, self.settings, game=loaded.game, seat=other,
                                   kind=HANDOVER_NOTICE, seq=loaded.seq, payload=payload)

    def _notify_all(self, s: Session, loaded: Loaded, kind: str, seq: int,
                    payload: dict[str, Any], skip: int | None = None) -> None:
        for seat in loaded.seats:
            if _human(seat) and seat.position != skip:
                enqueue_notice(s, self.settings, game=loaded.game, seat=seat, kind=kind,
                               seq=seq, payload=payload)

    # ============================================================== away dates

    def set_absence(self, email: str, starts_at: datetime, ends_at: datetime, mode: str,
                    at: datetime | None = None, *,
                    idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """Record a player's away dates for all their games; their open deadlines are
        recomputed and the other players of their running games are told."""
        email = email.strip().lower()
        starts_at, ends_at = aware(starts_at), aware(ends_at)
        if mode not in ABSENCE_MODES:
            raise ServiceError(f"the away mode is {' or '.join(ABSENCE_MODES)}, not '{mode}'",
                               words=(AWAY_MODE_REFUSED, {"mode": mode}))
        if ends_at <= starts_at:
            raise ServiceError(AWAY_BACKWARDS, words=(AWAY_BACKWARDS, {}))
        if ends_at - starts_at > timedelta(days=92):
            raise ServiceError(AWAY_TOO_LONG, words=(AWAY_TOO_LONG, {}))
        at = at or utcnow()
        if ends_at <= at:
            raise ServiceError(AWAY_OVER, words=(AWAY_OVER, {}))
        with self.service.session(write=True) as s:
            absence = Absence(email=email, starts_at=starts_at, ends_at=ends_at, mode=mode,
                              created_at=at)
            s.add(absence)
            s.flush()
            for game, seat in self._running_seats(s, email):
                self.reschedule(s, game, seat)
                self._tell_others(s, game, seat, absence)
            added = absence_json(absence)
            if idempotency is not None:
                idempotency.record(s, added)
            s.commit()
            return added

    def cancel_absence(self, email: str, absence_id: int) -> None:
        with self.service.session(write=True) as s:
            absence = s.get(Absence, absence_id)
            if absence is None or absence.email != email.strip().lower():
                raise NotFound(f"you have no away dates {absence_id}")
            if absence.cancelled_at is not None:
                raise BadRequest(f"the away dates {absence_id} were already cancelled")
            absence.cancelled_at = utcnow()
            s.add(absence)
            s.flush()
            for game, seat in self._running_seats(s, absence.email):
                self.reschedule(s, game, seat)
            s.commit()

    def absences(self, email: str) -> list[dict[str, Any]]:
        with self.service.session() as s:
            rows = s.exec(select(Absence).where(
                Absence.email == email.strip().lower(), col(Absence.cancelled_at).is_(None),
            ).order_by(col(Absence.starts_at))).all()
            return [absence_json(row) for row in rows]

    def set_quiet_hours(self, uid: str, position: int, quiet: str | None,
                        timezone: str | None) -> dict[str, str]:
        """Set a seat's quiet hours and time zone (None/empty clears them); its open deadline
        and reminders are recomputed. Returns the preferences now stored."""
        now = self.change_settings(uid, position,
                                   SettingsChange(quiet=quiet or "", timezone=timezone or ""))
        return {key: now[key] for key in ("quiet", "timezone") if now[key]}

    def change_settings(self, uid: str, position: int, change: SettingsChange) -> dict[str, Any]:
        """Change a player's own settings of a seat (every channel comes here: the ``/me``
        page, the API, the CLI, the unsubscribe link). With ``change.everywhere`` the mail,
        language and quiet hours go to every seat of the player's address in games not over
        yet. Each changed running game's open deadlines are recomputed (quiet hours move them).
        Bad values raise BadRequest before anything is stored. Returns this seat's settings
        now in force (:func:`seat_settings`)."""
        change.check()
        with self.service.session(write=True) as s:
            game = self.service.load(s, uid).game
            seat = next((p for p in self.service.seats(s, game) if p.position == position),
                        None)
            if seat is None:
                raise NotFound(f"game {uid} has no seat {position + 1}")
            if change.anytime_windows is not None and game.status != OPEN:
                raise BadRequest(WINDOWS_DEALT, words=(WINDOWS_DEALT, {}))
            choices = ruleset(game.ruleset).standing_choices
            if change.reactions is not None and change.reactions not in choices:
                raise BadRequest(REACTIONS_REFUSED.format(choices=", ".join(choices),
                                                          reactions=change.reactions),
                                 words=(REACTIONS_REFUSED, {"choices": ", ".join(choices),
                                                            "reactions": change.reactions}))
            targets = [(game, seat)]
            if change.everywhere and seat.email:
                targets += [(other_game, other) for other_game, other
                            in self._unfinished_seats(s, seat.email) if other.id != seat.id]
            for target_game, target in targets:
                change.apply(target, this_seat=target.id == seat.id)
                s.add(target)
                s.flush()
                if target_game.status == ACTIVE and change.touches_clock():
                    self.reschedule(s, target_game, target)
            s.commit()
            changed = {target_game.uid for target_game, _ in targets}
            result = seat_settings(game, seat)
        for changed_uid in changed:
            self.service.forget_seats(changed_uid)
        return result

    def settings_of(self, uid: str, position: int) -> dict[str, Any]:
        """A seat's own settings (:func:`seat_settings`)."""
        with self.service.session() as s:
            game = self.service.load(s, uid).game
            seat = next((p for p in self.service.seats(s, game) if p.position == position),
                        None)
            if seat is None:
                raise NotFound(f"game {uid} has no seat {position + 1}")
            return seat_settings(game, seat)

    def _unfinished_seats(self, s: Session, email: str) -> list[tuple[Game, Seat]]:
        rows = s.exec(select(Game, Seat).join(Seat, col(Seat.game_id) == col(Game.id)).where(
            Seat.email == email, col(Game.status).in_((OPEN, ACTIVE)),
            col(Seat.is_bot).is_(False))).all()
        return [(game, seat) for game, seat in rows]

    def _running_seats(self, s: Session, email: str) -> list[tuple[Game, Seat]]:
        rows = s.exec(select(Game, Seat).join(Seat, col(Seat.game_id) == col(Game.id)).where(
            Seat.email == email, Game.status == ACTIVE, col(Seat.is_bot).is_(False))).all()
        return [(game, seat) for game, seat in rows]

    def _tell_others(self, s: Session, game: Game, seat: Seat, absence: Absence) -> None:
        payload = {"position": seat.position, "player": seat.player_name,
                   "from": _iso(absence.starts_at), "until": _iso(absence.ends_at),
                   "mode": absence.mode}
        for other in s.exec(select(Seat).where(Seat.game_id == game.id)).all():
            if other.position != seat.position and _human(other):
                enqueue_notice(s, self.settings, game=game, seat=other, kind=AWAY_NOTICE,
                               seq=0, payload=payload, extra=f"a{absence.id}")

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
        if game is None or seat is None or not _human(seat):
            return
        enqueue_notice(s, self.settings, game=game, seat=seat, kind=OUTAGE, seq=row.seq,
                       payload={"from": _iso(last), "until": _iso(now),
                                "due_at": _iso(row.due_at)},
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
                               payload={"due_at": _iso(timeout.due_at) if timeout else None,
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

    # ============================================================== reading

    def deadlines_of(self, uid: str) -> list[dict[str, Any]]:
        """The open deadlines of a game (for pages, the API and the CLI)."""
        with self.service.session() as s:
            game = self.service.load(s, uid).game
            rows = s.exec(select(Deadline).where(
                Deadline.game_id == game.id, col(Deadline.done_at).is_(None),
            ).order_by(col(Deadline.due_at))).all()
            return [{"seat": r.seat, "seq": r.seq, "kind": r.kind, "due_at": _iso(r.due_at)}
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




@dataclass
class SettingsChange:
    """What a player asks to change of their own settings; None leaves a setting as it is.

    ``quiet`` and ``timezone``: an empty string clears them (no quiet hours; UTC), and a
    ``quiet`` given without ``timezone`` keeps the seat's time zone. ``anytime_windows`` (Titan
    Race: the chance to play an any-time card as another player's turn starts) is part of the
    dealt game, so it can only change before the start, and only for this seat.
    ``reactions`` is the seat's standing choice for its windows (one of its game's
    :attr:`Ruleset.standing_choices`), private to the seat and changed for this seat only."""

    mail: str | None = None
    language: str | None = None
    quiet: str | None = None
    timezone: str | None = None
    anytime_windows: bool | None = None
    reactions: str | None = None
    everywhere: bool = False

    def check(self) -> None:
        if self.mail is not None and self.mail not in MAIL_MODES:
            raise BadRequest(f"mail must be one of {', '.join(MAIL_MODES)}, not '{self.mail}'",
                             words=(MAIL_REFUSED, {"choices": ", ".join(MAIL_MODES),
                                                   "mail": self.mail}))
        if self.language is not None and self.language not in LANGUAGES:
            raise BadRequest(f"language must be one of {', '.join(LANGUAGES)}, "
                             f"not '{self.language}'",
                             words=(LANGUAGE_REFUSED, {"choices": ", ".join(LANGUAGES),
                                                       "language": self.language}))
        if self.touches_clock():
            check_quiet(self.quiet or None, self.timezone or None)
        if (self.mail, self.language, self.quiet, self.timezone, self.anytime_windows,
                self.reactions) == (None, None, None, None, None, None):
            raise BadRequest("nothing to change: give mail, language, quiet hours, a time "
                             "zone, anytime_windows or reactions",
                             words=(NOTHING_TO_CHANGE, {}))

    def touches_clock(self) -> bool:
        return self.quiet is not None or self.timezone is not None

    def apply(self, seat: Seat, *, this_seat: bool) -> None:
        notify = dict(seat.notify or {})
        if self.mail is not None:
            notify.pop("digest", None)  # the older form of mail: digest
            notify["mail"] = self.mail
        if self.language is not None:
            seat.language = self.language
        if self.touches_clock():
            quiet = notify.get("quiet") if self.quiet is None else self.quiet
            zone_name = notify.get("timezone") if self.timezone is None else self.timezone
            notify = {k: v for k, v in notify.items() if k not in ("quiet", "timezone")}
            notify |= check_quiet(quiet or None, zone_name or None)
        if self.anytime_windows is not None and this_seat:
            notify["anytime_windows"] = self.anytime_windows
        if self.reactions is not None and this_seat:
            notify[REACTIONS] = self.reactions
        seat.notify = notify


def seat_settings(game: Game, seat: Seat) -> dict[str, Any]:
    """A seat's own settings as the API, the CLI and the pages show them."""
    prefs = seat.notify or {}
    return {
        "game": game.uid,
        "position": seat.position,
        "mail": mail_mode(seat),
        "language": seat.language,
        "quiet": prefs.get("quiet"),
        "timezone": prefs.get("timezone"),
        "anytime_windows": bool(prefs.get("anytime_windows", False)),
        "ruleset": game.ruleset,
        "reactions": str(prefs.get(REACTIONS, ASK)),
        "reaction_choices": list(ruleset(game.ruleset).standing_choices),
    }


def seat_quiet(seat: Seat) -> Quiet | None:
    prefs = seat.notify or {}
    try:
        return Quiet.parse(prefs.get("quiet"), prefs.get("timezone"))
    except ValueError:
        return None


def absence_json(absence: Absence) -> dict[str, Any]:
    return {"id": absence.id, "email": absence.email, "from": _iso(absence.starts_at),
            "until": _iso(absence.ends_at), "mode": absence.mode}


def _human(seat: Seat) -> bool:
    return not seat.is_bot and bool(seat.email)


def _iso(moment: datetime | None) -> str | None:
    return aware(moment).isoformat() if moment is not None else None


def _hours_since(opened: datetime | None, now: datetime) -> int | None:
    if opened is None:
        return None
    return max(0, int((now - aware(opened)).total_seconds() // 3600))


def install(service: GameService) -> Timekeeper:
    """Add the timekeeper to ``service``'s listeners (once) and return it."""
    return service.listener(Timekeeper, lambda: Timekeeper(service))

