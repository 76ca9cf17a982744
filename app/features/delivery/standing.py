"""The state of each address the server mails: delivered, bouncing, undeliverable.

One ``mail_addresses`` row per address (lower-cased), written only when something happens to it:

- a relay took a mail for it (:func:`record_delivered`: the time and the relay, which the
  address then sticks to);
- a mail to it bounced (:func:`record_bounce`), from a delivery status notification or a
  relay's refusal at RCPT. A permanent failure (5.x.x) marks it *undeliverable* with the date
  and the reason: mail to it stops (the sender holds a decision, leaves the rest out) until its
  player gives another address or asks for a test mail (:func:`clear`), and the table sees it;
  a temporary one is only remembered;
- its player asked for it to be tried again (:func:`clear`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col

from app.core.models import MailAddress, OutboxMail, table_of
from app.mail.notify import ADDRESS_TEST as ADDRESS_TEST  # (the kind, named here too)
from app.mail.notify import SIGNIN

_TABLE: Final = table_of(MailAddress)
REASON_LENGTH: Final = 500


def normal(address: str) -> str:
    """The form an address is kept under: without spaces or angle brackets, lower-cased."""
    return address.strip().strip("<>").strip().lower()


def upsert(s: Session, rows: list[dict[str, Any]], changes: dict[str, Any]) -> None:
    """Insert ``rows``; an address already there gets ``changes`` (column -> expression, where
    ``excluded`` names the row that was to be inserted) instead."""
    dialect = postgresql if s.get_bind().dialect.name == "postgresql" else sqlite
    insert = dialect.insert(_TABLE).values(rows)
    excluded = insert.excluded
    s.execute(insert.on_conflict_do_update(
        index_elements=[_TABLE.c.address],
        set_={name: value(excluded) if callable(value) else value
              for name, value in changes.items()}))


def record_delivered(s: Session, deliveries: Iterable[tuple[str, str | None]],
                     at: datetime) -> None:
    """A relay took a mail for each (address, relay): one statement for them all."""
    latest = {normal(address): relay for address, relay in deliveries}
    if not latest:
        return
    rows = [{"address": address, "last_delivered_at": at, "relay": relay, "bounces": 0}
            for address, relay in latest.items()]
    upsert(s, rows, {
        "last_delivered_at": lambda x: x.last_delivered_at,
        "relay": lambda x: func.coalesce(x.relay, _TABLE.c.relay),
        "relay_trouble_since": None,
    })


def record_bounce(s: Session, address: str, reason: str, at: datetime, *,
                  permanent: bool) -> None:
    """A mail to ``address`` bounced; a permanent failure makes it undeliverable (since the
    first such failure: a second one keeps the date)."""
    reason = " ".join(reason.split())[:REASON_LENGTH]
    row = {"address": normal(address), "last_bounce_at": at, "bounce_reason": reason,
           "bounces": 1, "undeliverable_since": at if permanent else None}
    changes: dict[str, Any] = {
        "last_bounce_at": lambda x: x.last_bounce_at,
        "bounce_reason": lambda x: x.bounce_reason,
        "bounces": _TABLE.c.bounces + 1,
    }
    if permanent:
        changes["undeliverable_since"] = func.coalesce(_TABLE.c.undeliverable_since,
                                                       at)
    upsert(s, [row], changes)


def clear(s: Session, address: str) -> bool:
    """Mail to ``address`` may be tried again (its player asked for a test mail): whether it
    was undeliverable. Its last bounce stays on record."""
    done = s.execute(update(_TABLE).where(
        _TABLE.c.address == normal(address), _TABLE.c.undeliverable_since.is_not(None)
    ).values(undeliverable_since=None))
    return bool(getattr(done, "rowcount", 0))


def state_of(s: Session, address: str) -> MailAddress | None:
    """What is known of ``address`` (None: nothing has happened to it yet)."""
    return s.get(MailAddress, normal(address))


def undeliverable_among(s: Session, addresses: Iterable[str]) -> dict[str, MailAddress]:
    """The undeliverable ones of ``addresses``, by their normal form."""
    wanted = {normal(address) for address in addresses if address}
    if not wanted:
        return {}
    found = s.execute(select(MailAddress).where(
        col(MailAddress.address).in_(wanted),
        col(MailAddress.undeliverable_since).is_not(None))).scalars().all()
    return {row.address: row for row in found}


@dataclass(frozen=True)
class MailCounts:
    """What ``/healthz`` and ``titanpost admin mail-status`` count."""

    undeliverable_addresses: int
    bounced_mails: int
    unconfirmed_mails: int


def mail_counts(s: Session, unconfirmed_prefix: str) -> MailCounts:
    outbox = table_of(OutboxMail)
    undeliverable = s.execute(select(func.count()).select_from(_TABLE).where(
        _TABLE.c.undeliverable_since.is_not(None))).scalar_one()
    bounced = s.execute(select(func.count()).select_from(outbox).where(
        outbox.c.bounced_at.is_not(None))).scalar_one()
    unconfirmed = s.execute(select(func.count()).select_from(outbox).where(
        outbox.c.last_error.like(unconfirmed_prefix + "%"))).scalar_one()
    return MailCounts(int(undeliverable), int(bounced), int(unconfirmed))


ASKED_FOR: Final = frozenset({ADDRESS_TEST, SIGNIN})
"""Mails the player asked for just now: sent to an undeliverable address too (a test mail or a
sign-in link is how its player shows the address works again)."""
UNDELIVERABLE_RECHECK: Final = timedelta(hours=1)
"""A decision's mail to an undeliverable address is looked at again after this long (sent if
the address was cleared meanwhile, skipped if the decision was answered)."""


def held_why(state: MailAddress) -> str:
    """``last_error`` of a mail held for an undeliverable address."""
    return f"held: the address is undeliverable since {_day(state)}"


def left_out_why(state: MailAddress) -> str:
    """Why a mail to an undeliverable address is not sent (``skipped: ...``)."""
    reason = f" ({state.bounce_reason})" if state.bounce_reason else ""
    return f"the address is undeliverable since {_day(state)}{reason}"


def _day(state: MailAddress) -> str:
    since = state.undeliverable_since
    return since.strftime("%Y-%m-%d %H:%M UTC") if since else "?"
