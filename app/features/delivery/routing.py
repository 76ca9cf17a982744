"""Which relay each mail goes by, when ``TITANPOST_SMTP_URL`` names two.

``TITANPOST_SMTP_URL`` is one relay's URL, or two separated by spaces or a comma: the *primary*
and the *fallback* (:func:`app.core.config.smtp_urls`). Relays keep suppression lists of their
own (an address that bounced once through a relay is refused by it from then on), so, as
lichess does, each address sticks to one relay: the one that last took a mail for it
(``mail_addresses.relay``, written by :func:`app.features.delivery.standing.record_delivered`;
an address never mailed is on the primary). It moves to the other relay only

- when its relay *refused* it (a 5xx answer at RCPT or to the message's data): the same mail is
  offered to the other relay in the same round (:class:`Refusals`), and the address is
  undeliverable only once both refused it at RCPT;
- or when its relay has kept *failing* for it (no connection, a 4xx answer) for longer than
  ``TITANPOST_SMTP_FAILOVER_MINUTES`` (``mail_addresses.relay_trouble_since``, written by
  :func:`record_relay_trouble`, cleared by a delivery); before that, the mail is retried on
  the same relay with the sender's backoff.

A failure of the other relay puts the address on that relay, in trouble since then: with both
relays failing, an address goes back and forth once every failover time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final, TypeVar

from sqlalchemy import case, func
from sqlmodel import Session, col, select

from app.core.config import Settings, smtp_urls
from app.core.models import MailAddress, table_of
from app.features.delivery.standing import normal, upsert
from app.mail.relay import SmtpTarget, SmtpUrlError, parse_smtp_url

PRIMARY: Final = "primary"
"""The relay of ``TITANPOST_SMTP_URL``'s first URL (kept on each row and address it took)."""
FALLBACK: Final = "fallback"
"""The relay of its second URL."""

_TABLE: Final = table_of(MailAddress)
T = TypeVar("T")


@dataclass(frozen=True)
class Relays:
    """The relays of the setting, by name (the primary first), and the failover time."""

    targets: dict[str, SmtpTarget]
    failover: timedelta

    @classmethod
    def of(cls, settings: Settings, smtp_url: str | None = None) -> Relays | None:
        """The relays of the settings, or of ``smtp_url`` (the setting's form) when given;
        None: no relay (mail stays in the outbox)."""
        text = smtp_url if smtp_url is not None else " ".join(
            url for url in (settings.smtp_url, settings.smtp_fallback_url) if url)
        failover = timedelta(minutes=settings.smtp_failover_minutes)
        return cls.from_setting(text, failover) if text.strip() else None

    @classmethod
    def from_setting(cls, text: str, failover: timedelta) -> Relays:
        urls = smtp_urls(text)
        if not urls or len(urls) > 2:
            raise SmtpUrlError("the SMTP URL setting names one relay, or two (the second the "
                               "fallback) separated by a space or a comma")
        return cls(dict(zip((PRIMARY, FALLBACK), map(parse_smtp_url, urls), strict=False)),
                   failover)

    def describe(self) -> str:
        """The relays' URLs without their passwords (the primary's first)."""
        return ", ".join(target.describe() for target in self.targets.values())

    def other(self, name: str) -> str | None:
        """The relay that is not ``name`` (None: there is one relay)."""
        return next((other for other in self.targets if other != name), None)

    def route(self, state: MailAddress | None, now: datetime) -> str:
        """The relay for an address in ``state`` (None: nothing known of it)."""
        name = state.relay if state is not None and state.relay in self.targets else PRIMARY
        since = state.relay_trouble_since if state is not None else None
        other = self.other(name)
        if since is not None and other is not None and now - _aware(since) >= self.failover:
            return other
        return name

    def plan(self, s: Session, items: Sequence[T], address: Callable[[T], str],
             now: datetime) -> dict[str, list[T]]:
        """``items`` grouped by the relay each goes by (the primary's first; no group empty)."""
        if len(self.targets) == 1:
            return {PRIMARY: list(items)} if items else {}
        wanted = {normal(address(item)) for item in items}
        states = {state.address: state for state in s.exec(
            select(MailAddress).where(col(MailAddress.address).in_(wanted))).all()}
        groups: dict[str, list[T]] = {name: [] for name in self.targets}
        for item in items:
            groups[self.route(states.get(normal(address(item))), now)].append(item)
        return {name: group for name, group in groups.items() if group}


@dataclass(frozen=True)
class Refusal:
    relay: str
    error: str
    at_rcpt: bool
    """Refused at RCPT (the address), not the message's data."""


@dataclass
class Refusals:
    """The relays that refused each mail of one round of the sender, by the mail's key."""

    relays: Relays
    seen: dict[int, list[Refusal]] = field(default_factory=dict)

    def refused(self, key: int, refusal: Refusal) -> str | None:
        """Note a refusal: the relay to offer the mail to next (None: every relay refused)."""
        seen = self.seen.setdefault(key, [])
        seen.append(refusal)
        tried = {earlier.relay for earlier in seen}
        return next((name for name in self.relays.targets if name not in tried), None)

    def why(self, key: int) -> str:
        """What the relays answered (each named, when there are two)."""
        seen = self.seen.get(key, [])
        if len(self.relays.targets) == 1:
            return "; ".join(refusal.error for refusal in seen)
        return "; ".join(f"{refusal.error} (by the {refusal.relay} relay)" for refusal in seen)

    def undeliverable(self, key: int) -> bool:
        """Whether every relay refused the address itself (not a message's data)."""
        seen = self.seen.get(key, [])
        return bool(seen) and all(refusal.at_rcpt for refusal in seen)


def record_relay_trouble(s: Session, failures: Iterable[tuple[str, str]],
                         at: datetime) -> None:
    """``relay`` failed for each (address, relay) at ``at`` (see the module documentation):
    the trouble of an address on that relay dates from its first failure; an address on the
    other relay moves to this one, in trouble since ``at``."""
    latest = {normal(address): relay for address, relay in failures}
    if not latest:
        return
    rows = [{"address": address, "relay": relay, "relay_trouble_since": at, "bounces": 0}
            for address, relay in latest.items()]
    upsert(s, rows, {
        "relay": lambda x: x.relay,
        "relay_trouble_since": lambda x: case(
            (func.coalesce(_TABLE.c.relay, PRIMARY) == x.relay,
             func.coalesce(_TABLE.c.relay_trouble_since, x.relay_trouble_since)),
            else_=x.relay_trouble_since),
    })


def _aware(moment: datetime) -> datetime:
    """(SQLite gives naive UTC times back.)"""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
