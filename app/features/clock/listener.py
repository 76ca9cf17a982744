"""The timekeeper as a game-service listener, a part of the
:class:`~app.features.clock.timekeeper.Timekeeper` (:class:`ClockListener`): inside each game
transaction it closes the rows of decisions that were answered (settling the answering seat's time
bank) and writes rows for the decision now pending, and tells the players what the clock did (a
pause, a resume, a passed deadline, a seat handed over)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import update
from sqlmodel import Session

from app.core.models import ACTIVE, ADMIN, AWAY, OWNER, TIMEOUT, Seat
from app.features.clock.arithmetic import ClockSettings, aware, bank_after, counted
from app.features.clock.keeperbase import STRETCH, KeeperBase, human_with_address
from app.features.clock.rows import (
    DEADLINES,
    QUICK_TIMEOUT_KIND,
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
from app.games.base import CONTINUES, QUICK
from app.mail.notify import DEADLINE, PAUSED, RESUMED, enqueue_notice
from app.mail.notify import HANDOVER as HANDOVER_NOTICE
from app.service import GameEvent, Loaded

SENT_BEFORE = "sent before"
SENT = ("sent", SENT_BEFORE)
"""Results of a reminder row that went out (for this decision, or for an earlier one of the
same turn)."""


class ClockListener(KeeperBase):
    """The deadline rows of a game kept in its transactions, and the notices of the clock."""

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
            for other in owners or [p for p in loaded.seats if human_with_address(p)]:
                if other.position != seat.position:
                    enqueue_notice(s, self.settings, game=loaded.game, seat=other,
                                   kind=HANDOVER_NOTICE, seq=loaded.seq, payload=payload)

    def _notify_all(self, s: Session, loaded: Loaded, kind: str, seq: int,
                    payload: dict[str, Any], skip: int | None = None) -> None:
        for seat in loaded.seats:
            if human_with_address(seat) and seat.position != skip:
                enqueue_notice(s, self.settings, game=loaded.game, seat=seat, kind=kind,
                               seq=seq, payload=payload)

