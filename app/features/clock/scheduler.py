"""The background jobs, driven by APScheduler: the clock (due reminders and timeouts), the normal
and strong computer players' moves (every second: :mod:`app.features.clock.botturns`), the outbox
(when an SMTP relay is set), the webhooks' and Web Push outboxes, queued e-mail replies, the
daily digest and the nightly purge (:mod:`app.features.retention`).

In the embedded set-up ``titanpost serve`` runs them in a background thread of the web process;
for real deployments ``titanpost worker`` runs them in a process of its own and the web workers
never schedule. Every job is safe to run in several processes at once (each claims its rows).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.schedulers.blocking import BlockingScheduler

from app.features.clock import botturns
from app.features.clock.timekeeper import TickReport, Timekeeper, worker_name
from app.features.clock.timekeeper import install as install_timekeeper
from app.service import GameService
from app.web.idempotency import IdempotencyStore

log = logging.getLogger("titanpost.scheduler")

DIGEST_HOUR_UTC = 7
PURGE_HOUR_UTC = 3


class FailureLog:
    """Runs one job and logs its failures without flooding: the first with its traceback, then
    one line a minute while it goes on failing, and one line when it works again (while the
    database is away, every job fails at every run, several times a second in all)."""

    def __init__(self, name: str, every: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.every = every
        self.clock = clock
        self.failures = 0
        self.last_line = 0.0

    def run(self, job: Callable[[], object]) -> None:
        try:
            job()
        except Exception as exc:
            self._failed(exc)
            return
        if self.failures:
            log.warning("job %s works again after %d failed run(s)", self.name, self.failures)
            self.failures = 0

    def _failed(self, exc: Exception) -> None:
        now = self.clock()
        self.failures += 1
        if self.failures == 1:
            log.exception("job %s failed; it runs again at its next time", self.name)
            self.last_line = now
        elif now - self.last_line >= self.every:
            log.warning("job %s still failing (%d runs): %s: %s", self.name, self.failures,
                        type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
            self.last_line = now


class Jobs:
    """The jobs of one scheduler process, each a plain method (callable from tests too)."""

    def __init__(self, service: GameService) -> None:
        self.service = service
        self.settings = service.settings
        self.keeper: Timekeeper = install_timekeeper(service)
        self.worker = worker_name()
        self.sender: Any = None
        self.webhooks: Any = None
        self.push: Any = None
        if self.settings.smtp_url:
            from app.mail.send import Sender

            self.sender = Sender(service)

    def tick(self) -> TickReport:
        gap = self.settings.max_tick_gap_minutes
        report = self.keeper.process_due(
            worker=self.worker, max_gap=timedelta(minutes=gap) if gap else None
        )
        if report.claimed or report.outage:
            log.info("clock: %s", report.summary())
        self.forget_old_keys()
        return report

    def forget_old_keys(self) -> int:
        """Delete the Idempotency-Keys older than 24 hours (their answers with them)."""
        purged = IdempotencyStore(self.service.engine, self.settings.secret_key).purge()
        if purged:
            log.info("forgot %d idempotency keys older than 24 hours", purged)
        return purged

    def send_mail(self) -> None:
        if self.sender is None:
            return
        while True:
            report = self.sender.run_once()
            if report.claimed < self.sender.batch:
                return

    def send_webhooks(self) -> None:
        """Post the due webhook rows, batch after batch while batches come back full."""
        from app.features.webhooks.hooks import WebhookSender

        if self.webhooks is None:
            self.webhooks = WebhookSender(self.service)
        while self.webhooks.run_once().claimed >= self.webhooks.batch:
            pass

    def send_push(self) -> None:
        """Send the due Web Push rows, batch after batch while batches come back full."""
        from app.features.push.notifications import PushSender

        if self.push is None:
            self.push = PushSender(self.service)
        while self.push.run_once().claimed >= self.push.batch:
            pass

    def bot_turns(self) -> None:
        """Play the normal and strong computer seats' due decisions
        (:mod:`app.features.clock.botturns`)."""
        botturns.run_due(self.service, self.worker)

    def replies(self) -> None:
        from app.mail.inbound import process_inbound

        process_inbound(self.service, worker=self.worker)

    def digest(self) -> None:
        from app.mail.notify import write_digests

        write_digests(self.service)

    def purge(self) -> None:
        """Purge what the server keeps no longer (:mod:`app.features.retention`)."""
        from app.core.models import utcnow
        from app.features.retention.purge import purge

        with self.service.session(write=True) as s:
            report = purge(s, self.settings, utcnow())
        if not report.empty:
            log.info("purged %d game(s) never started, %d invitation(s) never accepted, "
                     "%d mail body(ies)", len(report.games), len(report.invitations),
                     report.mail_bodies)


def add_jobs(scheduler: BaseScheduler, jobs: Jobs) -> None:
    common: dict[str, Any] = {"max_instances": 1, "coalesce": True, "misfire_grace_time": None}

    def guarded(name: str, job: Callable[[], object]) -> dict[str, Any]:
        return {"func": FailureLog(name).run, "args": (job,), "id": name, **common}

    scheduler.add_job(trigger="interval", seconds=jobs.settings.tick_seconds,
                      next_run_time=datetime.now(UTC), **guarded("clock", jobs.tick))
    scheduler.add_job(trigger="interval", seconds=botturns.INTERVAL_SECONDS,
                      **guarded("bots", jobs.bot_turns))
    scheduler.add_job(trigger="interval", seconds=jobs.settings.mail_seconds,
                      **guarded("replies", jobs.replies))
    if jobs.sender is not None:
        scheduler.add_job(trigger="interval", seconds=jobs.settings.mail_seconds,
                          **guarded("outbox", jobs.send_mail))
    scheduler.add_job(trigger="interval", seconds=jobs.settings.mail_seconds,
                      **guarded("webhooks", jobs.send_webhooks))
    scheduler.add_job(trigger="interval", seconds=jobs.settings.mail_seconds,
                      **guarded("push", jobs.send_push))
    scheduler.add_job(trigger="cron", hour=DIGEST_HOUR_UTC, **guarded("digest", jobs.digest))
    scheduler.add_job(trigger="cron", hour=PURGE_HOUR_UTC, **guarded("purge", jobs.purge))


def _quiet_routine_lines() -> None:
    """Keep APScheduler's INFO lines (two per job run, a few dozen a minute) out of the log;
    its warnings (a missed run) and errors still come through."""
    logging.getLogger("apscheduler").setLevel(logging.WARNING)


def start_in_background(service: GameService) -> BackgroundScheduler:
    """Run the jobs in a daemon thread of this process (the embedded set-up)."""
    _quiet_routine_lines()
    scheduler = BackgroundScheduler(daemon=True, timezone="UTC")
    add_jobs(scheduler, Jobs(service))
    scheduler.start()
    return scheduler


def run_blocking(service: GameService) -> None:
    """Run the jobs in this process until it is stopped (``titanpost worker``); SIGTERM lets
    the running job finish first."""
    _quiet_routine_lines()
    scheduler = BlockingScheduler(timezone="UTC")
    add_jobs(scheduler, Jobs(service))

    def _stop(_signum: int, _frame: Any) -> None:
        scheduler.shutdown(wait=True)

    signal.signal(signal.SIGTERM, _stop)
    with contextlib.suppress(KeyboardInterrupt, SystemExit):
        scheduler.start()
