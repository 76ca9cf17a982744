"""Claiming due rows of an outbox table (the webhook and Web Push outboxes) for one worker.

A row is due while it is unsent, has attempts left and its next attempt has come. A worker takes
a batch by setting each row's next attempt to the end of its lease in one transaction: the
rows another worker locked are skipped (PostgreSQL's ``SKIP LOCKED``; SQLite takes the write lock
up front), and the UPDATE repeats the due condition, so two workers never both take a row. A row
whose worker dies comes back when its lease ends.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Table, and_, or_, select, update

from app.service import GameService

MAX_ATTEMPTS = 8
"""Tries of a row before it is given up."""
BACKOFF_BASE = timedelta(minutes=1)
BACKOFF_CAP = timedelta(hours=6)
LEASE = timedelta(minutes=2)
"""How long a claimed row is its worker's before another may take it."""


def backoff(attempts: int) -> timedelta:
    """The wait after the ``attempts``-th failed try: doubling from a minute, six hours at most."""
    delay: timedelta = BACKOFF_BASE * 2 ** max(attempts - 1, 0)
    return min(delay, BACKOFF_CAP)


def settle(service: GameService, table: Table, row_id: int, lease_until: datetime,
           **values: Any) -> None:
    """Record a row's outcome, if its lease (until ``lease_until``) is still the claimer's."""
    c = table.c
    with service.session(write=True) as s:
        s.execute(update(table).where(c.id == row_id, c.sent_at.is_(None),
                                      c.next_attempt_at == lease_until).values(**values))
        s.commit()


def after_failure(attempts: int, now: datetime, error: str, *,
                  permanent: bool) -> tuple[bool, dict[str, Any]]:
    """Whether a row that failed its ``attempts``-th try is given up, and the values to
    :func:`settle` it with (its next try after :func:`backoff`, else none)."""
    give_up = permanent or attempts >= MAX_ATTEMPTS
    return give_up, {"attempts": max(attempts, MAX_ATTEMPTS) if give_up else attempts,
                     "next_attempt_at": None if give_up else now + backoff(attempts),
                     "last_error": (("gave up: " if give_up else "") + error)[:2000]}


def due(table: Table, now: datetime, max_attempts: int) -> Any:
    """The condition of ``table``'s rows due at ``now``."""
    c = table.c
    return and_(c.sent_at.is_(None), c.attempts < max_attempts,
                or_(c.next_attempt_at.is_(None), c.next_attempt_at <= now))


def claim_due(service: GameService, table: Table, *, now: datetime, until: datetime,
              batch: int, max_attempts: int) -> list[int]:
    """Lease up to ``batch`` due rows of ``table`` until ``until``: their ids, oldest first."""
    c = table.c
    condition = due(table, now, max_attempts)
    with service.session(write=True) as s:
        candidates = list(s.execute(
            select(c.id).where(condition).order_by(c.id).limit(batch)
            .with_for_update(skip_locked=True)).scalars())
        if not candidates:
            s.rollback()
            return []
        ids = list(s.execute(update(table).where(c.id.in_(candidates), condition)
                             .values(next_attempt_at=until).returning(c.id)).scalars())
        s.commit()
    return sorted(ids)
