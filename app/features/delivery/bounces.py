"""Applying a bounce: the outbox row it names and its recipient's standing.

A bounce that names a token of ours (:mod:`app.features.delivery.verp`: the envelope recipient
it came to, or the headers and report of a bounce sent elsewhere) is about that token's outbox
row: a permanent failure sets the row's ``bounced_at`` and ``bounce`` and makes its recipient
undeliverable (:func:`app.features.delivery.standing.record_bounce`); a temporary one (a delay
warning) writes ``bounce`` alone and records the bounce without making the address
undeliverable. The row is not sent again either way: the relay took it, and the receiving
servers keep retrying a delayed mail themselves. A token no row has (a mail long gone, or made
up) is logged and ignored.

A bounce without a token is only believed for its permanent failures, each of an address that
was handed a mail in the last :data:`UNTOKENED_WINDOW` (the newest such row is the one marked),
and only for the addresses its caller allows: anyone can send a made-up bounce, and one that
could make an opponent's address undeliverable would stop their turn mail and let their clock
run out. So a bounce that came to a seat's reply address counts for that seat's own address
only (the reply address went to that player alone).

The same bounce applied twice changes nothing more: each row is marked by a conditional UPDATE
(``bounced_at`` still empty, and for a temporary failure ``bounce`` not already these words),
and the address's standing is recorded only when that UPDATE changed the row.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from sqlalchemy import Engine, func, or_, select, update
from sqlmodel import Session

from app.core.db import session as open_session
from app.core.models import OutboxMail, table_of, utcnow

from .dsn import Failure, Reading, read_bounce
from .standing import REASON_LENGTH, normal, record_bounce

log = logging.getLogger("titanpost.mail")

UNTOKENED_WINDOW: Final = timedelta(days=7)
"""How far back a bounce without a token is matched to a mail handed over to its address."""
_OUTBOX: Final = table_of(OutboxMail)


@dataclass
class Applied:
    """What applying one bounce did: the addresses recorded as ``(address, permanent)``, and
    what was read and left aside, for the log and the inbound row's detail."""

    how: str
    marked: list[tuple[str, bool]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        done = ", ".join(f"{address} ({'permanent' if permanent else 'temporary'})"
                         for address, permanent in self.marked)
        said = f"{self.how}: " + (f"marked {done}" if done else "nothing marked")
        return said + (f" ({'; '.join(self.notes)})" if self.notes else "")


def apply_bounce(engine: Engine, domain: str, raw: bytes, *, tokens: Iterable[str] = (),
                 allowed: frozenset[str] | None = frozenset(),
                 at: datetime | None = None) -> Applied:
    """Read ``raw`` as a bounce to this server's ``domain`` and apply it, in one transaction.

    ``tokens`` are those of the bounce addresses it was delivered to (its envelope); those it
    names itself are added. Without any token, only the permanent failures of the addresses in
    ``allowed`` count (None: any address, for an operator's own bounce file)."""
    reading = read_bounce(raw, domain)
    named = list(dict.fromkeys([*tokens, *reading.tokens]))
    with open_session(engine, write=True) as s:
        applied = apply_reading(s, reading, named, allowed, at or utcnow())
        s.commit()
    log.info("bounce: %s", applied)
    return applied


def apply_reading(s: Session, reading: Reading, tokens: list[str],
                  allowed: frozenset[str] | None, at: datetime) -> Applied:
    """Apply what ``reading`` says to the rows ``tokens`` name, or without a token to the
    newest mail to each allowed address (see the module's documentation)."""
    applied = Applied(reading.how)
    if not reading.failures:
        applied.notes.append("no failed recipient in it")
        return applied
    if tokens:
        for token in tokens:
            _apply_token(s, reading, token, at, applied)
        return applied
    for failure in reading.failures:
        _apply_untokened(s, failure, allowed, at, applied)
    return applied


def _apply_token(s: Session, reading: Reading, token: str, at: datetime,
                 applied: Applied) -> None:
    row = s.execute(select(_OUTBOX.c.id, _OUTBOX.c.recipient).where(
        _OUTBOX.c.bounce_token == token)).first()
    if row is None:
        log.warning("bounce for token %s: no mail has it (long gone, or made up); ignored",
                    token)
        applied.notes.append(f"unknown token {token}")
        return
    failure = reading.for_address(row.recipient)
    assert failure is not None  # (the reading has failures)
    _mark(s, row.id, row.recipient, failure, at, applied)


def _apply_untokened(s: Session, failure: Failure, allowed: frozenset[str] | None,
                     at: datetime, applied: Applied) -> None:
    address = normal(failure.address)
    if not failure.permanent:
        applied.notes.append(f"{address}: temporary, without a token")
        return
    if allowed is not None and address not in {normal(a) for a in allowed}:
        applied.notes.append(f"{address}: not an address this bounce may speak for")
        return
    row_id = s.execute(select(_OUTBOX.c.id).where(
        func.lower(_OUTBOX.c.recipient) == address,
        _OUTBOX.c.handed_at >= at - UNTOKENED_WINDOW,
    ).order_by(_OUTBOX.c.handed_at.desc(), _OUTBOX.c.id.desc()).limit(1)).scalar()
    if row_id is None:
        applied.notes.append(f"{address}: no mail handed over to it lately")
        return
    _mark(s, row_id, address, failure, at, applied)


def _mark(s: Session, row_id: int, recipient: str, failure: Failure, at: datetime,
          applied: Applied) -> None:
    """Mark one outbox row and, when that changed it, its recipient's standing."""
    reason = " ".join(failure.reason.split())[:REASON_LENGTH] or "bounced"
    values: dict[str, object] = {"bounce": reason}
    unmarked = [_OUTBOX.c.id == row_id, _OUTBOX.c.bounced_at.is_(None)]
    if failure.permanent:
        values["bounced_at"] = at
    else:  # (a second delay warning in the same words is the same news)
        unmarked.append(or_(_OUTBOX.c.bounce.is_(None), _OUTBOX.c.bounce != reason))
    done = s.execute(update(_OUTBOX).where(*unmarked).values(**values))
    if not getattr(done, "rowcount", 0):
        applied.notes.append(f"{normal(recipient)}: already recorded")
        return
    record_bounce(s, recipient, reason, at, permanent=failure.permanent)
    applied.marked.append((normal(recipient), failure.permanent))
    log.warning("mail to %s bounced (%s): %s", normal(recipient),
                "permanent: the address is undeliverable" if failure.permanent else "temporary",
                reason)
