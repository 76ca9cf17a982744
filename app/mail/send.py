"""The sender: claims due outbox rows, renders them and delivers them over SMTP.

A row is *due* while it is unsent (``sent_at`` is NULL), has attempts left and its
``next_attempt_at`` is empty or past. Claiming is one conditional UPDATE that sets
``next_attempt_at`` to now + a lease, re-checking that condition row by row, so two senders
(threads, processes or machines) never both take one row: the second one's UPDATE no longer
matches. A claimed row is then

- delivered: ``sent_at`` is set (in the transaction that hands the next row over, or in one
  at the end of the batch: until then the row is handed over, which is never sent again);
- skipped, when rendering says it is not worth sending any more (its decision was answered
  before the mail went out, its invitation was issued again): ``sent_at`` is set and
  ``last_error`` says ``skipped: <why>``;
- held, while its player has the game open on a page (:mod:`app.features.live.presence`): a
  decision, or a notice that asks for something, is looked at again a minute later (answered by
  then, it is skipped); a notice of the game is skipped (the player saw it happen);
- failed: ``attempts`` grows, ``last_error`` keeps the reason and ``next_attempt_at`` moves out
  by an exponential backoff (1, 2, 4 ... minutes, at most 6 hours); after ``max_attempts`` (or at
  once on a permanent 5xx refusal) the row is given up (it is never due again) and keeps its
  ``last_error``.

No mail twice. SMTP cannot tell a sender that died after writing a message whether the relay
took it: the relay accepts a message once it reads the end of its data (the ``.`` line), and
the sender learns so only from the reply. So the sender commits ``handed_at`` on the row (with
its lease renewed, and only while the claim is still its own) just before it writes that line.
A row with ``handed_at`` and no ``sent_at`` is never sent again: once its lease runs out (its
sender is gone) the next claim settles it as sent, with ``last_error`` starting
``unconfirmed:``; a connection lost while waiting for the relay's reply settles it the same way
at once. Before that point a crash leaves the relay with half a message, which it discards, and
the row is sent again after its lease. The price is a narrow window (between the commit and the
write of the ``.`` line) in which a crash loses the mail instead of doubling it; reminders,
the game page and ``titanpost admin resend`` cover a lost turn mail, and ``/healthz`` counts the
unconfirmed rows.

The connection to a relay (``TITANPOST_SMTP_URL``, TLS, the end-of-data hook that the
hand-over is committed in, TCP_NODELAY) is :mod:`app.mail.relay`'s. The setting may name a
second, fallback relay: which relay each mail goes by (its address's own, the other after a
refusal or a long failure) is :mod:`app.features.delivery.routing`'s; a round opens one
connection per relay it uses, so that a relay that is down does not hold up the other's mail.
A row handed to one relay is never offered to the other (its ``handed_at`` stays until the
relay answers). With no URL the sender does nothing and mail stays in the outbox, shown on the
development page ``/dev/mail``.
"""

from __future__ import annotations

import logging
import smtplib
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from email.message import EmailMessage
from typing import Any

from sqlalchemy import and_, or_, update
from sqlmodel import col, select

from app.core.config import Settings
from app.core.models import OutboxMail, table_of, utcnow
from app.features.delivery.routing import Refusal, Refusals, Relays, record_relay_trouble
from app.features.delivery.standing import (
    ASKED_FOR,
    UNDELIVERABLE_RECHECK,
    held_why,
    left_out_why,
    record_bounce,
    record_delivered,
    undeliverable_among,
)
from app.features.delivery.verp import bounce_address, bounce_token
from app.features.live.presence import (
    HELD_FOR,
    HELD_WHY,
    HOLD,
    LEAVE_OUT,
    LEFT_OUT_WHY,
    watched_rows,
    while_watched,
)
from app.mail.collector import collector_held
from app.mail.notify import INVITATION
from app.mail.outbox_statements import DELIVERED, HAND_OVER
from app.mail.relay import (
    HandoverMixin,
    SmtpTarget,
    connect,
    describe_error,
    quit_or_close,
)
from app.mail.render import MailError, MailRenderer, build_message
from app.mail.send_report import SendReport
from app.mail.signing import signer_for, wire_form
from app.service import GameService

log = logging.getLogger("titanpost.mail")

MAX_ATTEMPTS = 8
BACKOFF_BASE = timedelta(minutes=1)
BACKOFF_CAP = timedelta(hours=6)
LEASE = timedelta(minutes=5)
"""How long a claimed row is reserved for the sender that claimed it."""
BATCH = 50


class LeaseLost(Exception):
    """The claimed row was taken over by another sender before its data was ended."""


UNCONFIRMED = "unconfirmed: "
"""``last_error`` prefix of a row settled as sent without the relay's answer."""


def backoff(attempts: int, base: timedelta = BACKOFF_BASE,
            cap: timedelta = BACKOFF_CAP) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: base, 2 x base, 4 x base ... cap."""
    return min(cap, base * (1 << min(30, max(0, attempts - 1))))


class Sender:
    """Delivers the outbox of one database (see the module documentation)."""

    def __init__(
        self,
        service: GameService,
        *,
        smtp_url: str | None = None,
        batch: int = BATCH,
        lease: timedelta = LEASE,
        max_attempts: int = MAX_ATTEMPTS,
        renderer: MailRenderer | None = None,
        connector: Callable[[SmtpTarget], smtplib.SMTP] = connect,
    ) -> None:
        self.service = service
        self.settings: Settings = service.settings
        self.relays = Relays.of(self.settings, smtp_url)
        self.batch = batch
        self.lease = lease
        self.max_attempts = max_attempts
        self.renderer = renderer or MailRenderer(service)
        self.connector = connector
        self.signer = signer_for(self.settings)  # (its keys read once: a bad one stops here)
        self.table = table_of(OutboxMail)
        self._delivered: list[tuple[OutboxMail, datetime]] = []
        """Rows the relay took whose delivery is not recorded yet (see :meth:`_sent`)."""
        self._reached: list[tuple[str, str | None]] = []
        """(address, relay) delivered this round: their standing is written once, at its end."""
        self._queue: dict[str, list[tuple[OutboxMail, EmailMessage]]] = {}
        """This round's rows still to deliver, by relay (see :meth:`_deliver`)."""
        self._refusals: Refusals | None = None

    # -------------------------------------------------------------- claiming

    def _due(self, now: datetime) -> Any:
        c = self.table.c
        return and_(
            c.sent_at.is_(None),
            c.handed_at.is_(None),
            c.body_purged_at.is_(None),  # (given up when purged: app/features/retention/)
            c.attempts < self.max_attempts,
            or_(c.next_attempt_at.is_(None), c.next_attempt_at <= now),
        )

    def settle_abandoned_handovers(self, now: datetime | None = None) -> int:
        """Settle as sent (unconfirmed) the rows whose sender stopped after handing their
        message to the relay and whose lease has run out; how many."""
        now = now or utcnow()
        c = self.table.c
        with self.service.session(write=True) as s:
            settled = list(s.execute(
                update(self.table)
                .where(c.sent_at.is_(None), c.handed_at.is_not(None),
                       c.next_attempt_at <= now)
                .values(sent_at=c.handed_at, next_attempt_at=None, attempts=c.attempts + 1,
                        last_error=UNCONFIRMED + "its sender stopped after handing it to the "
                        "relay and before the relay's answer; not sent again, so that it "
                        "cannot arrive twice")
                .returning(c.message_id)
            ).scalars())
            s.commit()
        for message_id in settled:
            log.warning("mail %s: its sender stopped while handing it to the relay; settled "
                        "as sent (unconfirmed), not sent again", message_id)
        return len(settled)

    def claim(self, now: datetime | None = None, limit: int | None = None) -> list[OutboxMail]:
        """Reserve up to ``limit`` due rows for this sender (for ``lease``) and return them."""
        now = now or utcnow()
        c = self.table.c
        with self.service.session(write=True) as s:
            candidates = list(s.execute(
                select(c.id).where(self._due(now)).order_by(c.id)
                .limit(limit or self.batch).with_for_update(skip_locked=True)
            ).scalars())
            if not candidates:
                s.rollback()
                return []
            claimed = list(s.execute(
                update(self.table)
                .where(c.id.in_(candidates), self._due(now))
                .values(next_attempt_at=now + self.lease)
                .returning(c.id)
            ).scalars())
            s.commit()
        if not claimed:
            return []
        with self.service.session() as s:
            rows = s.exec(
                select(OutboxMail).where(col(OutboxMail.id).in_(claimed))
                .order_by(col(OutboxMail.id))
            ).all()
            return list(rows)

    # -------------------------------------------------------------- settling

    def _settle(self, row: OutboxMail, **values: Any) -> None:
        """Record what became of a claimed row, if the claim is still this sender's (its lease
        may have run out and another sender taken the row over)."""
        with self.service.session(write=True) as s:
            s.execute(self._settling(row, **values))
            s.commit()

    def _settling(self, row: OutboxMail, **values: Any) -> Any:
        """The UPDATE that :meth:`_settle` runs."""
        if row.kind == INVITATION and values.get("sent_at") is not None:
            # the invitation token is only ever needed for this one mail
            payload = dict(row.payload or {})
            payload.pop("link", None)
            values["payload"] = payload | {"link_removed": True}
        c = self.table.c
        return update(self.table).where(
            c.id == row.id, c.sent_at.is_(None), c.next_attempt_at == row.next_attempt_at
        ).values(**values)

    def _record_delivered(self, s: Any = None) -> None:
        """Write the deliveries not yet recorded (see :meth:`_sent`): in session ``s``, the
        next row's hand-over (committed with it), or in a transaction of their own, with the
        addresses' standing of the whole round (one statement a round, not one a mail)."""
        self._reached += [(row.recipient, row.relay) for row, _ in self._delivered]
        if s is not None or not (self._delivered or self._reached):
            if s is not None:
                self._write_delivered(s)
            return
        with self.service.session(write=True) as own:
            self._write_delivered(own)
            record_delivered(own, self._reached, utcnow())
            own.commit()
        self._reached.clear()

    def _write_delivered(self, s: Any) -> None:
        """The UPDATEs of :meth:`_record_delivered` (an invitation's also drops its link)."""
        plain = [{"row_id": row.id, "lease": row.next_attempt_at, "at": at,
                  "tries": row.attempts + 1} for row, at in self._delivered
                 if row.kind != INVITATION]
        DELIVERED.execute_many(s.connection(), plain)
        for row, at in self._delivered:
            if row.kind == INVITATION:
                s.execute(self._settling(row, sent_at=at, attempts=row.attempts + 1,
                                         next_attempt_at=None, last_error=None))
        self._delivered.clear()

    def _hand_over(self, row: OutboxMail) -> None:
        """Mark a row as handed to the relay and renew its lease, just before its data is
        ended; raise LeaseLost when the lease ran out and another sender took the row (then
        this one must not send it too)."""
        now = utcnow()
        until = now + self.lease
        with self.service.session(write=True) as s:
            self._record_delivered(s)
            renewed = HAND_OVER.first(s.connection(), {
                "row_id": row.id, "lease": row.next_attempt_at, "until": until, "now": now,
                "token": row.bounce_token, "via": row.relay})
            s.commit()
        if renewed is None:
            log.warning("mail %s: its lease ran out and another sender has it; not sent here",
                        row.message_id)
            raise LeaseLost(row.message_id)
        row.next_attempt_at = until

    def _sent(self, row: OutboxMail, now: datetime) -> None:
        """The relay took the row's message: recorded with the next row's hand-over (one
        transaction a message instead of two) or at the end of the batch's delivery. Until
        then the row is handed over and not sent, which is never sent again either (if this
        sender stops in between, the row is settled as unconfirmed after its lease)."""
        self._delivered.append((row, now))

    def _unconfirmed(self, row: OutboxMail, now: datetime, error: str,
                     report: SendReport) -> None:
        """The connection broke after the data was ended: the relay may have the message."""
        report.unconfirmed += 1
        report.errors.append(error)
        log.warning("mail %s to %s: no answer after the message was handed over (%s); settled "
                    "as sent (unconfirmed), not sent again", row.message_id, row.recipient,
                    error)
        self._settle(row, sent_at=now, attempts=row.attempts + 1, next_attempt_at=None,
                     last_error=(UNCONFIRMED + f"no answer from the relay after the message "
                                 f"was handed over: {error}")[:2000])

    def _skipped(self, row: OutboxMail, now: datetime, why: str) -> None:
        self._settle(row, sent_at=now, next_attempt_at=None, last_error=f"skipped: {why}"[:2000])

    def _failed(self, row: OutboxMail, now: datetime, error: str, *, permanent: bool,
                report: SendReport) -> None:
        attempts = row.attempts + 1
        give_up = permanent or attempts >= self.max_attempts
        if give_up:
            attempts = max(attempts, self.max_attempts)
            report.gave_up += 1
            log.warning("mail %s to %s: giving up: %s", row.message_id, row.recipient, error)
        else:
            report.failed += 1
            log.info("mail %s to %s: attempt %d failed: %s", row.message_id, row.recipient,
                     attempts, error)
        report.errors.append(error)
        self._settle(
            row,
            attempts=attempts,
            next_attempt_at=None if give_up else now + backoff(attempts),
            last_error=(("gave up: " if give_up else "") + error)[:2000],
            handed_at=None,  # (the relay answered: it did not take the message)
        )

    def _refused_at_rcpt(self, row: OutboxMail, now: datetime, error: str) -> None:
        """The relay (each relay, when there are two) refused the recipient for good: the
        address is undeliverable at once, as a bounce would make it."""
        with self.service.session(write=True) as s:
            record_bounce(s, row.recipient, error, now, permanent=True)
            s.commit()
        log.warning("mail %s: the relays refused %s for good; the address is marked "
                    "undeliverable", row.message_id, row.recipient)

    def _envelope_sender(self, row: OutboxMail, relay: str) -> str:
        """The row's own envelope sender (:mod:`app.features.delivery.verp`): its bounce comes
        back to it, naming the row. Its token and relay are written at the hand-over."""
        row.bounce_token = bounce_token(self.settings.secret_key, row.message_id)
        row.relay = relay
        return bounce_address(self.settings.mail_domain, row.bounce_token)

    def _release(self, row: OutboxMail) -> None:
        """Hand back a claimed row that was not attempted (it is due again at once)."""
        self._settle(row, next_attempt_at=None, handed_at=None)

    # -------------------------------------------------------------- one round

    def run_once(self, now: datetime | None = None) -> SendReport:
        """Claim one batch of due rows and deliver it; report what happened."""
        report = SendReport()
        if self.relays is None:
            report.disabled = True
            return report
        now = now or utcnow()
        report.unconfirmed += self.settle_abandoned_handovers(now)
        rows = self.claim(now)
        report.claimed = len(rows)
        ready = self._render(rows, now, report)
        if ready:
            self._deliver(ready, now, report)
        return report

    def _render(self, rows: list[OutboxMail], now: datetime,
                report: SendReport) -> list[tuple[OutboxMail, EmailMessage]]:
        """The messages of the claimed rows worth sending (the others settled as skipped or
        failed), rendered in one read session with the garbage collector held back
        (:mod:`app.mail.collector`: the delivery, which may wait on the relay, is not)."""
        ready: list[tuple[OutboxMail, EmailMessage]] = []
        with collector_held(), self.service.session() as reading:
            watched = watched_rows(reading, rows)
            blocked = undeliverable_among(
                reading, [row.recipient for row in rows if row.kind not in ASKED_FOR])
            self.renderer.prefetch(reading, rows)
            for row in rows:
                rule = while_watched(row.kind) if row.id in watched else None
                bounced = blocked.get(row.recipient.strip().lower())
                if rule == LEAVE_OUT or (bounced is not None and while_watched(row.kind) != HOLD):
                    why = left_out_why(bounced) if bounced is not None else LEFT_OUT_WHY
                    self._skipped(row, now, why)
                    report.skipped += 1
                    continue
                try:
                    mail = self.renderer.render(row, session=reading)
                except MailError as exc:
                    self._failed(row, now, f"cannot render: {exc}", permanent=True,
                                 report=report)
                    continue
                except Exception as exc:  # a template or board bug: retry later, keep why
                    log.exception("mail %s: rendering failed", row.message_id)
                    self._failed(row, now, f"rendering failed: {exc!r}", permanent=False,
                                 report=report)
                    continue
                if mail.skip:
                    self._skipped(row, now, mail.skip)
                    report.skipped += 1
                    continue
                if bounced is not None:  # (looked at again later: answered, or cleared)
                    self._settle(row, next_attempt_at=utcnow() + UNDELIVERABLE_RECHECK,
                                 last_error=held_why(bounced))
                    report.held += 1
                    continue
                if rule == HOLD:  # (looked at again later: answered, or the page closed)
                    self._settle(row, next_attempt_at=utcnow() + HELD_FOR, last_error=HELD_WHY)
                    report.held += 1
                    continue
                ready.append((row, build_message(self.settings, row, mail)))
        return ready

    def _deliver(self, ready: list[tuple[OutboxMail, EmailMessage]], now: datetime,
                 report: SendReport) -> None:
        """Send the rendered rows, each by its relay (:mod:`app.features.delivery.routing`),
        over one connection per relay; a row one relay refused is offered to the other after
        (over a new connection to it, if its turn had passed)."""
        assert self.relays is not None
        with self.service.session() as s:
            self._queue = self.relays.plan(s, ready, lambda item: item[0].recipient, now)
        self._refusals = Refusals(self.relays)
        try:
            while self._queue:
                relay = next(iter(self._queue))
                self._deliver_by(relay, self._queue.pop(relay), now, report)
        finally:
            self._queue = {}
            self._record_delivered()

    def _deliver_by(self, relay: str, rows: list[tuple[OutboxMail, EmailMessage]],
                    now: datetime, report: SendReport) -> None:
        """Send ``rows`` by ``relay`` over one connection (a new one after a row whose lease
        was lost, since that message had to be abandoned half-sent)."""
        smtp: smtplib.SMTP | None = None
        try:
            for index, (row, message) in enumerate(rows):
                if smtp is None:
                    smtp = self._connect(relay, rows[index:], now, report)
                    if smtp is None:
                        return
                outcome = self._deliver_one(smtp, relay, row, message, now, report)
                if outcome == "abandoned":
                    smtp.close()
                    smtp = None
                elif outcome == "broken":
                    for rest, _ in rows[index + 1:]:
                        self._release(rest)
                    return
        except BaseException:
            # (the database went away, say, perhaps in the middle of a message's data: a QUIT
            # would be taken as more data, so just drop the connection)
            if smtp is not None:
                smtp.close()
                smtp = None
            raise
        finally:
            if smtp is not None:
                quit_or_close(smtp)

    def _connect(self, relay: str, rows: list[tuple[OutboxMail, EmailMessage]],
                 now: datetime, report: SendReport) -> smtplib.SMTP | None:
        """A connection to the relay, or None after failing ``rows`` (a refused login too: the
        settings are to be fixed, the mail is not at fault)."""
        assert self.relays is not None
        target = self.relays.targets[relay]
        try:
            return self.connector(target)
        except (OSError, smtplib.SMTPException) as exc:
            error = f"cannot connect to {target.describe()}: {describe_error(exc)}"
            for row, _ in rows:
                self._failed(row, now, error, permanent=False, report=report)
            self._trouble(relay, [row for row, _ in rows], now)
            return None

    def _trouble(self, relay: str, rows: list[OutboxMail], now: datetime) -> None:
        """``relay`` failed for the rows' addresses (no connection, a 4xx answer)."""
        with self.service.session(write=True) as s:
            record_relay_trouble(s, [(row.recipient, relay) for row in rows], now)
            s.commit()

    def _refused(self, relay: str, row: OutboxMail, message: EmailMessage, refusal: Refusal,
                 now: datetime, report: SendReport) -> None:
        """``relay`` refused the row for good (a 5xx answer): the other relay has it next, if
        it has not refused it too; else the row is given up, and its address undeliverable if
        every relay refused the address itself."""
        assert self._refusals is not None
        after = self._refusals.refused(row.id or 0, refusal)
        if after is not None:
            log.info("mail %s to %s: the %s relay refused it (%s); offered to the %s relay",
                     row.message_id, row.recipient, relay, refusal.error, after)
            self._settle(row, handed_at=None)  # (the relay answered: it did not take it)
            self._queue.setdefault(after, []).append((row, message))
            return
        error = self._refusals.why(row.id or 0)
        self._failed(row, now, error, permanent=True, report=report)
        if self._refusals.undeliverable(row.id or 0):
            self._refused_at_rcpt(row, now, error)

    def _deliver_one(self, smtp: smtplib.SMTP, relay: str, row: OutboxMail,
                     message: EmailMessage, now: datetime, report: SendReport) -> str:
        """Send one row: "sent", "failed", "abandoned" (its lease was lost mid-message: the
        connection must be dropped) or "broken" (the connection is unusable)."""
        handed = False
        envelope = self._envelope_sender(row, relay)

        def hand_over() -> None:
            nonlocal handed
            self._hand_over(row)
            handed = True

        if isinstance(smtp, HandoverMixin):
            smtp.before_end_of_data = hand_over
        else:  # a connector without the hook: hand over before the transaction starts
            try:
                hand_over()
            except LeaseLost:
                report.lost_lease += 1
                return "failed"
        data, options = wire_form(message)
        if self.signer is not None:
            data = self.signer.sign(data)
        try:
            smtp.sendmail(envelope, [row.recipient], data,
                          mail_options=options)
        except LeaseLost:
            report.lost_lease += 1
            return "abandoned"
        except smtplib.SMTPRecipientsRefused as exc:
            codes = [code for code, _ in exc.recipients.values()]
            error = "refused: " + "; ".join(
                f"{code} {text.decode('utf-8', 'replace') if isinstance(text, bytes) else text}"
                for code, text in exc.recipients.values())
            if bool(codes) and min(codes) >= 500:
                self._refused(relay, row, message, Refusal(relay, error, True), now, report)
            else:
                self._failed(row, now, error, permanent=False, report=report)
                self._trouble(relay, [row], now)
            return "failed"
        except smtplib.SMTPResponseException as exc:
            # an answer, also after the end of data: the relay did not take the message
            if exc.smtp_code >= 500:
                refusal = Refusal(relay, describe_error(exc), False)
                self._refused(relay, row, message, refusal, now, report)
            else:
                self._failed(row, now, describe_error(exc), permanent=False, report=report)
                self._trouble(relay, [row], now)
            return "broken" if exc.smtp_code == 421 else "failed"  # 421: it is closing
        except (OSError, smtplib.SMTPException) as exc:
            if handed:
                self._unconfirmed(row, utcnow(), describe_error(exc), report)
            else:  # the relay cannot have the whole message: send it again later
                self._failed(row, now, describe_error(exc), permanent=False, report=report)
                self._trouble(relay, [row], now)
            return "broken"
        finally:
            if isinstance(smtp, HandoverMixin):
                smtp.before_end_of_data = None
        self._sent(row, utcnow())
        report.sent += 1
        return "sent"

    # -------------------------------------------------------------- the loop

    def run(self, *, interval: float = 10.0, stop: threading.Event | None = None,
            echo: Callable[[str], None] | None = None) -> None:
        """Send until ``stop`` is set: a full batch is followed at once by the next one,
        otherwise the sender sleeps ``interval`` seconds."""
        stop = stop or threading.Event()
        while not stop.is_set():
            started = time.monotonic()
            try:
                report = self.run_once()
            except Exception:  # the database is away: try again after the interval
                log.exception("sending the outbox failed")
                stop.wait(interval)
                continue
            if echo is not None and report.claimed:
                echo(f"{time.strftime('%H:%M:%S')} {report} "
                     f"in {time.monotonic() - started:.2f}s")
            if report.claimed < self.batch:
                stop.wait(interval)
