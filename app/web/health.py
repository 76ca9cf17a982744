"""``GET /healthz``: is this web process able to serve (its database answers), and when did a
scheduler last tick.

The answer is 200 when the database answers, 503 when it does not. The worker's last tick is
reported (and how long ago it was); with ``?worker=1`` a tick older than three tick intervals
also makes it 503, for a check that watches the scheduler. ``mail`` counts the addresses
marked undeliverable, the mails that bounced and those whose hand-over was not confirmed
(``titanpost admin mail-status`` lists them).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, current_app, request
from sqlalchemy import func, or_, text
from sqlmodel import col, select

from app.core.models import ClockTick, OutboxMail
from app.features.clock.arithmetic import aware
from app.features.delivery.standing import mail_counts
from app.mail.send import MAX_ATTEMPTS, UNCONFIRMED
from app.service import GameService

health = Blueprint("health", __name__)

STALE_TICKS = 3
"""A scheduler whose last tick is older than this many tick intervals is reported stale."""


@health.get("/healthz")
def healthz() -> tuple[dict[str, Any], int]:
    service: GameService = current_app.extensions["titanpost.service"]
    settings = service.settings
    body: dict[str, Any] = {"status": "ok"}
    started = time.perf_counter()
    try:
        with service.session() as s:
            s.exec(select(text("1"))).one()
            tick = s.get(ClockTick, "main")
            unsent = col(OutboxMail.sent_at).is_(None)
            given_up = col(OutboxMail.attempts) >= MAX_ATTEMPTS
            now = datetime.now(UTC)
            due = s.exec(select(func.count()).select_from(OutboxMail).where(
                unsent, ~given_up, or_(col(OutboxMail.next_attempt_at).is_(None),
                                       col(OutboxMail.next_attempt_at) <= now))).one()
            failed = s.exec(select(func.count()).select_from(OutboxMail).where(
                unsent, given_up)).one()
            counts = mail_counts(s, UNCONFIRMED)
    except Exception as exc:  # any failure to reach the database
        return {"status": "unavailable",
                "database": {"ok": False, "error": type(exc).__name__}}, 503
    body["database"] = {"ok": True, "ms": round((time.perf_counter() - started) * 1000, 2)}
    # mail due to go out now (growing: the sender is stuck), mail given up on after every
    # retry (each one a player who was not told), and mail whose sender stopped while handing
    # it to the relay (settled as sent without the relay's answer: perhaps never arrived)
    body["outbox"] = {"due": int(due), "given_up": int(failed),
                      "unconfirmed": counts.unconfirmed_mails}
    # addresses whose mail bounced for good (their players are not mailed: the table sees
    # it), mails a delivery status notification said could not be delivered
    body["mail"] = {"undeliverable_addresses": counts.undeliverable_addresses,
                    "bounced_mails": counts.bounced_mails,
                    "unconfirmed_mails": counts.unconfirmed_mails}
    worker: dict[str, Any] = {"last_tick": None, "age_seconds": None, "ok": False}
    if tick is not None:
        age = (datetime.now(UTC) - aware(tick.last_tick_at)).total_seconds()
        worker = {"last_tick": aware(tick.last_tick_at).isoformat(), "by": tick.worker,
                  "age_seconds": round(age, 1), "processed": tick.processed,
                  "ok": age <= STALE_TICKS * settings.tick_seconds}
    body["worker"] = worker
    if request.args.get("worker") and not worker["ok"]:
        body["status"] = "worker stale"
        return body, 503
    return body, 200
